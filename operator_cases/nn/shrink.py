"""Shrink: y = x + bias if x < -lambd, y = x - bias if x > lambd, y = 0 otherwise, elementwise
(ONNX spec: Shrink-9).

Shrink-9 allows the integer types and float16/float/double. Attributes are floats (lambd
default 0.5, bias default 0.0):
- lambd is drawn >= 0 (with lambd < 0 the two cases overlap and the spec does not say which
  wins);
- for integer inputs, lambd and bias are drawn integral, and x so that x +- bias stays inside
  the type: the spec does not say how a float bias or an out-of-range result is brought back to
  an integer type. Integer results are computed exactly with Python ints;
- for float inputs, lambd and bias are exact in the input type (a kernel comparing in the input
  type sees the same thresholds); results are computed in float64 and rounded.
By the spec's "otherwise", NaN gives 0 (both comparisons are false); NaN is tested in an
example of its own ("nan").
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back, wide
from .._unary_util import attr_float, f32, standard_edges, unary_template, values

op = Operator("Shrink")
BIAS = 10  # integer bias drawn from [-BIAS, BIAS]


@op.reference(9)
def shrink(x, bias=0.0, lambd=0.5):
    bias, lambd = f32(bias), f32(lambd)
    if S.is_int(S.label_of(x.dtype)):
        if bias != int(bias):
            raise ValueError("Shrink: a non-integral bias has no result the spec defines for integer inputs")
        xo, b = x.astype(object), int(bias)
        below = np.array([v < -lambd for v in xo.flat], dtype=bool).reshape(x.shape)
        above = np.array([v > lambd for v in xo.flat], dtype=bool).reshape(x.shape)
        y = np.where(below, xo + b, np.where(above, xo - b, 0))
        return np.asarray(y, dtype=object).astype(x.dtype)
    w = wide(x)
    return back(np.where(w < -lambd, w + bias, np.where(w > lambd, w - bias, 0.0)), x)


@op.strategy(9)
def draw(d, dtype, opset):
    has_lambd, has_bias = d(S.st.booleans()), d(S.st.booleans())
    if S.is_int(dtype):
        low, high = S.finite_range(dtype)
        lambd = d(S.st.integers(0, 20 if dtype in ("int8", "uint8") else 1000)) if has_lambd else 0.5
        top = BIAS if low < 0 else min(BIAS, int(lambd))  # unsigned: x > lambd >= bias keeps x - bias >= 0
        bias = d(S.st.integers(-BIAS, top))
        x = S.arrays(d, dtype, lo=low + BIAS if low < 0 else 0, hi=high - BIAS)
        lambd, bias = float(lambd), float(bias)
    else:
        x = S.arrays(d, dtype, lo=-10.0, hi=10.0)
        lambd, bias = attr_float(d, dtype, 0.0, 5.0), attr_float(d, dtype, -5.0, 5.0)
    attrs = {}
    if has_lambd:
        attrs["lambd"] = lambd
    if has_bias:
        attrs["bias"] = bias
    return Example([x], attrs)


@op.edges(9)
def edges(dtype, opset):
    if S.is_int(dtype):
        low, high = S.finite_range(dtype)
        vals = [v for v in (low + 3, -3, -2, -1, 0, 1, 2, 3, high - 3) if v >= low]
        x = np.array(vals, dtype=object).astype(S.np_dtype(dtype))
        return standard_edges(dtype) + [Example([x], {"lambd": 2.0, "bias": 1.0}, name="thresholds")]
    out = standard_edges(dtype, [{}, {"lambd": 1.0, "bias": 0.5}], isolate={"nan": np.isnan})
    out.append(Example([values(dtype, -1.5, -1.0, -0.5, 0.0, -0.0, 0.5, 1.0, 1.5)], {"lambd": 1.0, "bias": 0.25},
                       name="thresholds"))
    out.append(Example([values(dtype, -1.0, -0.0, 0.0, 1.0)], {"lambd": 0.0, "bias": 2.0}, name="lambd_zero"))
    return out


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"bias": 0.1, "lambd": 0.5}, {"bias": 0.0, "lambd": 1.0}], jumps=True, ulps=2.0)
