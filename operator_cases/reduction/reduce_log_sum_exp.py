"""ReduceLogSumExp: log(sum(exp(x))) over ``axes`` (ONNX spec: ReduceLogSumExp-1, 11, 13, 18, 28).

``axes`` is an attribute up to ReduceLogSumExp-13 and an optional input from 18 (with
``noop_with_empty_axes``); ReduceLogSumExp-28 drops the integer types. "Reduction over an empty
set of values yields minus infinity (if supported by the datatype) or undefined otherwise": -inf
for floats (integers never reduce an empty set; the version-11 text says nothing, so its cases
avoid empty reductions). Floats are evaluated in float64 as m + log(sum(exp(x - m))) with m the
group's maximum, which is the mathematical value even where exp(x) alone would overflow, and
rounded once. That agrees with ReduceLogSumExp-18's function body (Cast to double, Exp,
ReduceSum, Log, CastLike) wherever exp() does not overflow double, so no case has |x| > 700.
For integer types the spec gives no rounding rule, so every integer group has one
element at least 64 above all the others: the result is then that element (to within e^-64).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import grows, reduce_template, register_reduce, value_drawer

op = Operator("ReduceLogSumExp")


def compute(x, axes, dtype):
    xf = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        m = np.max(xf, axis=axes, keepdims=True, initial=-np.inf)
        shift = np.where(np.isfinite(m), m, 0.0)
        out = shift + np.log(np.sum(np.exp(xf - shift), axis=axes, keepdims=True))
    return np.rint(out).astype(object) if x.dtype == object else out


def values(d, dtype, shape, n=64):
    return value_drawer((-10.0, 10.0), (-16, 16), (0, 16))(d, dtype, shape)


def fix(row, dtype):
    if not S.is_int(dtype) or len(row) < 2:
        return row
    if dtype.startswith("u"):
        top = row[0] + 64
        return [top] + [row[0] - min(v, row[0]) for v in row[1:]]
    top = row[0] + 40
    return [top] + [top - 64 - abs(v) for v in row[1:]]


def edge_values(dtype):
    if S.is_int(dtype):
        vals = [0, 1, 80] + ([-1, -80] if S.finite_range(dtype)[0] < 0 else [])
        return np.array(vals, dtype=object).astype(S.np_dtype(dtype))
    # |x| <= 700 only: ReduceLogSumExp-18's function body takes exp() in double, which overflows
    # (or underflows to 0) beyond that, where the mathematical value stays finite
    vals = S.edge_values(dtype)
    f = vals.astype(np.float64)
    return vals[~np.isfinite(f) | (np.abs(f) <= 700)]


def large(dtype, since, ex):
    if not S.is_float(dtype):
        return []
    # exp() of these overflows float16 (and float32 for the second row), the result does not
    big = 100.0 if dtype in ("float32", "float64") else 12.0
    x = np.array([[big, big - 1.0, -big], [2 * big, 2 * big, 0.0]], dtype=np.float64)
    if dtype == "bfloat16" or dtype == "float16":
        x = np.array([[big, big - 1.0, -big], [big, big, 0.0]])
    return [ex(x.astype(S.np_dtype(dtype)), [1], 0, "exp_overflows")]


register_reduce(op, (1, 11, 13), (18, 28), compute, values, fix=fix, empty_ok=S.is_float, edge_values=edge_values,
                extra_edges=large)
narrow_accumulation(op, (1, 11, 13), lambda a, v: a + np.exp(v), lambda a, n: np.log(a),
                    lambda t: [[12, 11, -12], [0, 1, 2]] if t == 2.0 ** 15 else [[89, 88, -89], [0, 1, 2]],
                    "the text's log(sum(exp(x))) without the maximum taken out: exp overflows")


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=8.0, bound=grows)
