"""DynamicQuantizeLinear: scale, zero point and uint8 quantization of a float tensor computed from
its own range (ONNX spec: DynamicQuantizeLinear-11).

The op is a function; its text and body fix every step in float32:
``y_scale = (maximum(0, max(x)) - minimum(0, min(x))) / (qmax - qmin)`` with [qmin, qmax] = [0, 255];
``intermediate_zero_point = qmin - min(x) / y_scale``, ``y_zero_point = cast(round(saturate(...)))``
(the body: Sub, Div, Sub, Clip to [0, 255], Round, Cast); ``y = saturate(round(x / y_scale) +
y_zero_point)`` (the body's QuantizeLinear). "rounding to nearest ties to even". Each step is one
IEEE float32 operation: the reference computes it exactly (float64 holds the exact result of
one float32 operation) and rounds once to float32.

Spec-silent:
* ``zero_range``: when max(0, max x) - min(0, min x) is 0 (x all zeros, or empty; or a range so
  small that y_scale underflows to 0), the steps divide by y_scale = 0: 0 / 0 = NaN feeds
  Clip, Round and a Cast to uint8, which the spec leaves undefined. We give y_zero_point 0 and
  y = 0 (the range [0, 0] is the real 0, quantized); y_scale stays defined (0).
* ``nonfinite``: with NaN in x, ReduceMin / ReduceMax name no NaN rule, and every output
  follows from them; with +-inf, inf / inf or a NaN zero point reaches the uint8 Cast. Every
  output element built from such a value is open (an infinite range with finite x is defined:
  y_scale = inf, y_zero_point = 0, y = 0 for finite x).
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("DynamicQuantizeLinear")
st = S.st


def _f32(v) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64)


def _to_uint8(v: np.ndarray) -> np.ndarray:
    v = np.where(np.isnan(v), 0.0, v)
    return np.clip(v, 0, 255).astype(np.uint8)


def dynamic_quantize(x, nan_zero_point: float = 0.0):
    """The three outputs; ``nan_zero_point``: the zero point a NaN intermediate zero point becomes
    (0, our choice; 255 where the saturate is written with comparisons, the nonfinite point's reading)."""
    x = np.asarray(x, dtype=np.float32)
    x64 = x.astype(np.float64)
    # maximum(0, max(x)), minimum(0, min(x)): a NaN propagates (numpy's, as IEEE 754-2019 maximum; Python's max would drop it)
    lo = float(np.minimum(0.0, np.min(x64))) if x.size else 0.0
    hi = float(np.maximum(0.0, np.max(x64))) if x.size else 0.0
    with np.errstate(all="ignore"):
        rng = _f32(hi - lo)
        scale = _f32(rng / 255.0)
        if scale == 0:  # the spec-silent point zero_range: y = 0, zero point 0
            return [np.zeros(x.shape, np.uint8), np.array(scale, dtype=np.float32), np.array(0, dtype=np.uint8)]
        min_scaled = _f32(lo / scale)
        zp_fp = _f32(0.0 - min_scaled)
        zp = np.rint(np.clip(zp_fp, 0.0, 255.0))
        zp = np.where(np.isnan(zp) & (nan_zero_point != 0), nan_zero_point, zp)
        q = np.rint(_f32(x64 / scale)) + zp
    zp_u8 = _to_uint8(np.asarray(zp))
    return [_to_uint8(q).reshape(x.shape), np.array(scale, dtype=np.float32), np.asarray(zp_u8, dtype=np.uint8).reshape(())]


@op.reference(11)
def dynamic_quantize_linear(x):
    return dynamic_quantize(x)


def _zero_range(inputs, attrs, expected, since):
    if float(np.asarray(expected[1])) != 0:
        return [None, None, None]
    return [np.ones(np.shape(expected[0]), bool), None, np.ones((), bool)]


def _zeros_alike(c) -> bool:
    x = np.asarray(c.inputs[0], dtype=np.float64)
    y = np.asarray(c.actual[0]).astype(np.int64)
    return y.shape == x.shape and len(set(y[x == 0].tolist())) <= 1


def _scale_nan_or_without(c) -> bool:
    """y_scale is NaN or infinite, or the y_scale of x with its non-finite elements left out."""
    s = float(np.asarray(c.actual[1], dtype=np.float64))
    x = np.asarray(c.inputs[0], dtype=np.float32)
    rest = x[np.isfinite(x)]
    return not np.isfinite(s) or s == float(dynamic_quantize(rest)[1])


def _ieee_zero_range(c) -> list:
    """DynamicQuantizeLinear with y_scale 0: -min(x) / 0 is +inf (y_zero_point 255) for a negative min, and x / 0 is
    +-inf, saturated (255 above 0, 0 below); 0 / 0 is NaN, cast as 0."""
    x = np.asarray(c.inputs[0], dtype=np.float64)
    zp = 255 if x.size and np.nanmin(x) < 0 else 0
    with np.errstate(all="ignore"):
        y = np.where(x > 0, 255, np.where(x < 0, 0, zp))
    return [y.astype(np.asarray(c.expected[0]).dtype), None, np.asarray(zp).astype(np.asarray(c.expected[2]).dtype)]


def _clamped_zero_range(c) -> list:
    """DynamicQuantizeLinear with y_scale 0, the zero point's saturate written as max(qmin, min(qmax, v)) with
    comparisons (C's and Python's min / max: a comparison with NaN is false, so min(qmax, NaN) keeps qmax): the
    zero point qmin - min(x) / 0 is +inf or 0 / 0 = NaN, either way 255; y = saturate(round(x / 0) + 255) is 255
    above 0, 0 below, and 0 / 0 (x = 0) cast as 0."""
    x = np.asarray(c.inputs[0], dtype=np.float64)
    y = np.where(x > 0, 255, 0)
    return [y.astype(np.asarray(c.expected[0]).dtype), None, np.asarray(255).astype(np.asarray(c.expected[2]).dtype)]


op.spec_silent(
    "zero_range", (11,),
    spec="intermediate_zero_point = qmin - min(x)/y_scale y_zero_point = cast(round(saturate(intermediate_zero_point)))",
    expected="y_zero_point 0 and y 0: with y_scale = 0 (x all zeros, empty, or a range that underflows) the steps divide "
             "0 by 0 and cast NaN to uint8; the adjusted range [0, 0] holds only the real 0",
    where=_zero_range,
    invariants={"every element of y whose x is 0 holds the same value (the one conversion of 0 / 0)": _zeros_alike},
    readings={"the steps in IEEE arithmetic, saturated (x / 0 is +-inf; 0 / 0 cast as 0)": _ieee_zero_range,
              "the zero point saturated by comparisons (a NaN zero point becomes qmax = 255); y's 0 / 0 cast as 0":
              _clamped_zero_range})



def _nonfinite(inputs, attrs, expected, since):
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.size == 0 or np.isfinite(x).all():
        return [None, None, None]
    if np.isnan(x).any():
        return [np.ones(x.shape, bool), np.ones((), bool), np.ones((), bool)]
    zp_open = bool(np.isinf(x.min()) and np.isinf(x.max()) and x.min() < 0 < x.max()) or bool(x.min() == -np.inf)
    return [~np.isfinite(x) | zp_open, None, np.array(zp_open)]


def _nan_left_out(c) -> list:
    """The outputs of x without its NaN elements (the range of the rest), x's NaN elements quantized as 0."""
    x = np.asarray(c.inputs[0], dtype=np.float32)
    _, scale, zp = dynamic_quantize(x[~np.isnan(x)])
    with np.errstate(all="ignore"):
        q = np.rint(_f32(x.astype(np.float64) / float(scale))) + float(zp)
    return [_to_uint8(q).reshape(x.shape), scale, zp]


op.spec_silent(
    "nonfinite", (11,),
    spec="y_scale = (maximum(0, max(x)) - minimum(0, min(x))) / (qmax - qmin)",
    expected="NaN propagates through max and min (IEEE 754-2019 maximum, as our ReduceMax/ReduceMin references) and "
             "every output it reaches is NaN cast to uint8 (0 here); +-inf in x: inf / inf and the uint8 Cast of NaN "
             "are open, the other elements are IEEE's (y_scale = inf, y = 0)",
    where=_nonfinite,
    invariants={"y_scale is NaN or infinite, or the y_scale of x with its non-finite elements left out": _scale_nan_or_without},
    readings={"NaN left out of the range (max and min as C's fmax / fmin): the other elements' y_scale and zero "
              "point, a NaN element quantized as 0": _nan_left_out,
              "NaN propagated, the zero point saturated by comparisons (a NaN zero point becomes qmax = 255)":
              lambda c: [np.asarray(o) for o in dynamic_quantize(c.inputs[0], nan_zero_point=255.0)]})


@op.strategy(11)
def draw(d, dtype, opset):
    shape = S.shapes(d, max_dims=3, min_side=1, max_side=5)
    kind = d(st.sampled_from(["mixed", "mixed", "positive", "negative", "small"]))
    lo, hi = {"mixed": (-50.0, 50.0), "positive": (0.0, 20.0), "negative": (-20.0, 0.0), "small": (-1.0 / 1024, 1.0 / 1024)}[kind]
    x = S.arrays(d, dtype, shape=shape, lo=lo, hi=hi)
    if not np.any(x):  # a zero range (spec-silent) is the edges all_zero, empty, subnormal_range
        x.reshape(-1)[0] = np.float32(hi if hi > 0 else lo)
    return Example([x])


@op.edges(11)
def edges(dtype, opset):
    f = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
    sub = float(S.smallest_subnormal("float32"))
    return [
        Example([f([0.0, 2.0, -3.0, 1000.0, -1000.0, 0.5, -0.5])], name="mixed"),
        Example([f([1.0, 2.5, 255.0, 127.5, 0.5])], name="positive_only"),  # zero point 0
        Example([f([-1.0, -2.5, -255.0, -127.5, -0.5])], name="negative_only"),  # zero point 255
        Example([f([-1.0, 1.0, 0.0, 0.5, -0.5, 0.25])], name="symmetric_zero_point_tie"),  # 127.5 rounded in float32 steps
        Example([f([-2.0, 0.0, 253.0, 1.0, 3.0])], name="unit_scale"),  # scale 1, zero point 2: exact ties in x
        Example([f(np.zeros((2, 3)))], name="all_zero"),  # spec-silent zero_range
        Example([f(np.zeros((0, 3)))], name="empty"),  # spec-silent zero_range
        Example([f(3.5)], name="rank0"),
        Example([f([3e38, -3e38, 1.0, 0.0])], name="range_overflow"),  # y_scale = inf: IEEE gives zero point 0, y 0
        Example([f([sub, 2 * sub, 0.0])], name="subnormal_range"),  # y_scale underflows to 0: zero_range
        Example([f([np.nan, 1.0, -1.0])], name="nan"),  # spec-silent nonfinite
        Example([f([np.inf, 1.0, -1.0])], name="inf"),
        Example([f([-0.0, 1.0, 2.0])], name="negative_zero"),
    ]
