"""Range: start, start + delta, ... up to ``limit`` exclusive (ONNX spec: Range-11, 27).

"number_of_elements = max( ceil( (limit - start) / delta ) , 0 )" and "output[i] = start + (i *
delta)". Our reference follows that pseudocode in the type it computes in: the input type T
(integers exactly), or for float16 and bfloat16 in Range-27 the ``stash_type`` ("Setting
`stash_type` to `1` (float) causes `start`, `limit`, and `delta` to be cast to 32-bit float
before the loop, with the output cast back"; the default is 1; the cases also take 11, double).
Range-27 adds float16 and bfloat16.

Drawn starts, limits and deltas are multiples of 1/4 (integers for integer types), so the count
is exact in every type and the cases test the formula, not a division's rounding. An infinite
delta or start gives 0 elements by the formula (ceil of 0 or of -inf); an infinite limit, a
zero delta or a NaN anywhere gives no finite count, so no example holds one (the coverage's
NO_NAN names Range for that reason).
"""

import math

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("Range")
st = S.st
MAX_OUT = 64


def _range(start, limit, delta, compute):
    t = np.asarray(start).dtype
    if t.kind in "iu":
        s, l, d = int(start), int(limit), int(delta)
        if d == 0:
            raise ValueError("Range: delta = 0 gives no count")
        n = max(-((s - l) // d), 0)  # ceil((l - s) / d), exactly
        return np.array([s + i * d for i in range(n)], dtype=np.int64).astype(t)
    with np.errstate(all="ignore"):
        s, l, d = (np.asarray(v).astype(compute) for v in (start, limit, delta))
        q = np.ceil((l - s) / d)
        if not np.isfinite(q) and not q < 0:
            raise ValueError(f"Range: no finite count for start={s}, limit={l}, delta={d}")
        n = int(max(q, 0)) if np.isfinite(q) else 0
        i = np.arange(n).astype(compute)
        return (s + i * d).astype(compute).astype(t)


@op.reference(11)
def range_11(start, limit, delta):
    return _range(start, limit, delta, np.asarray(start).dtype)


@op.reference(27)
def range_27(start, limit, delta, *, stash_type=1):
    t = np.asarray(start).dtype
    compute = S.np_dtype(S.label_of(int(stash_type))) if S.label_of(t) in ("float16", "bfloat16") else t
    return _range(start, limit, delta, compute)


def _scalar(v, dtype):
    if S.is_int(dtype):
        return np.array(int(v), dtype=object).astype(S.np_dtype(dtype))
    return np.array(v, dtype=np.float64).astype(S.np_dtype(dtype))


@op.strategy(11, 27)
def draw(d, dtype, opset):
    step = 1 if S.is_int(dtype) else 0.25
    lo, hi = (-40, 40) if dtype != "int8" else (-20, 20)
    start = d(st.integers(lo, hi)) * step
    delta = d(st.integers(1, 12)) * step * d(st.sampled_from([1, -1]))
    n = d(st.integers(0, MAX_OUT)) if d(st.integers(0, 5)) else -d(st.integers(0, 3))  # a few empty ranges
    limit = start + n * delta - d(st.integers(0, 3)) * step * (1 if delta > 0 else -1)
    if S.is_int(dtype):
        low, high = S.finite_range(dtype)
        limit = int(min(max(limit, low), high))
    attrs = {}
    if opset >= 27 and dtype in ("float16", "bfloat16") and d(st.booleans()):
        attrs["stash_type"] = d(st.sampled_from([1, S.onnx_code("float64")]))
    return Example([_scalar(start, dtype), _scalar(limit, dtype), _scalar(delta, dtype)], attrs)


@op.edges(11, 27)
def edges(dtype, opset):
    x = lambda *v: [_scalar(a, dtype) for a in v]  # noqa: E731
    out = [
        Example(x(3, 9, 3), name="spec_example_1"),        # [3, 6]
        Example(x(10, 4, -2), name="spec_example_2"),      # [10, 8, 6]
        Example(x(2, 2, 1), name="empty_equal"),
        Example(x(5, 1, 1), name="empty_wrong_direction"),
        Example(x(0, 7, 2), name="count_rounds_up"),       # [0, 2, 4, 6]
        Example(x(-3, 2, 5), name="one_element"),
    ]
    low, high = S.finite_range(dtype)
    if S.is_int(dtype):
        out += [Example(x(high - 2, high, 1), name="up_to_max"), Example(x(low, low + 6, 2), name="from_min"),
                Example(x(high, high - 5, -2), name="down_from_max")]
    else:
        tiny = S.smallest_subnormal(dtype)
        inf = math.inf
        out += [
            Example(x(-0.0, 2, 1), name="neg_zero_start"),
            Example(x(0.5, -1.25, -0.25), name="negative_fraction"),
            Example(x(tiny, 1, 1), name="subnormal_start"),
            Example(x(0, 5, inf), name="inf_delta_empty"),
            Example(x(inf, 0, 1), name="inf_start_empty"),
            Example(x(high, high, 1), name="max_empty"),
        ]
        if dtype in ("float16", "bfloat16"):
            big = 2048 if dtype == "float16" else 256  # where x + 1 == x in the type itself
            out.append(Example(x(big, big + 12, 1), name="large_start"))
            out.append(Example(x(0.5, 30, 0.1), name="tenth_steps"))  # i * delta rounds in the type it is computed in
            if opset >= 27:
                out.append(Example(x(0.5, 30, 0.1), {"stash_type": S.onnx_code("float64")}, name="tenth_steps_stash_double"))
    if opset >= 27:
        out.append(Example(x(1, 4, 1), {"stash_type": 1}, name="stash_float"))
    return out
