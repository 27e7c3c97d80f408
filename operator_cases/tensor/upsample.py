"""Upsample: Resize's older form (ONNX spec: Upsample-1, 7, 9, 10).

Upsample-1 (experimental): a 4-D input, ``height_scale`` and ``width_scale`` (required, "greater
than or equal to 1"), modes nearest and bilinear, "output_width = floor(input_width *
width_scale)"; its example (2x2 -> 4x4, nearest) is the only mapping the text gives.
Upsample-7: ``scales`` (one per dimension, >= 1) as an attribute, modes nearest and linear
("including bilinear, trilinear, etc"); Upsample-9: ``scales`` an input; Upsample-10: the same
text, deprecated in favour of Resize. onnx.checker and ONNX Runtime refuse a model holding
Upsample-10, so it has no case (``dtypes_for`` sweeps nothing for a deprecated op-version); its
reference stays, written from its text.

None of the texts gives a coordinate mapping (spec-silent ``legacy_mapping``): we take
``x_original = x_resized / scale`` and floor for nearest (Upsample-1's example for every integer
scale), as Resize-10 (see _resize_util). Linear on integer data rounds half to even and
saturates (spec-silent ``integer_rounding``); string and bool data are drawn with nearest only.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from . import _resize_util as R
from .resize import LEGACY_POINT, legacy_open

op = Operator("Upsample")
st = S.st
VERSIONS = (1, 7, 9, 10)


@op.reference(1)
def upsample_1(x, *, height_scale, width_scale, mode="nearest"):
    if np.ndim(x) != 4:
        raise ValueError(f"Upsample-1 takes a 4-D input, not rank {np.ndim(x)}")
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"Upsample-1: unknown mode {mode!r}")
    return R.legacy(x, [1.0, 1.0, height_scale, width_scale], mode)


@op.reference(7)
def upsample_7(x, *, scales, mode="nearest"):
    if mode not in ("nearest", "linear"):
        raise ValueError(f"Upsample-7: unknown mode {mode!r}")
    return R.legacy(x, scales, mode)


@op.reference(9, 10)
def upsample_9(x, scales, *, mode="nearest"):
    if mode not in ("nearest", "linear"):
        raise ValueError(f"Upsample: unknown mode {mode!r}")
    return R.legacy(x, scales, mode)


def _scales(inputs, attrs, since):
    if since == 1:
        return [1.0, 1.0, attrs["height_scale"], attrs["width_scale"]]
    return attrs["scales"] if since == 7 else inputs[1]


def _context(inputs, attrs, since):
    x = inputs[0]
    mode = {"bilinear": "linear"}.get(attrs.get("mode", "nearest"), attrs.get("mode", "nearest"))
    return x, R.legacy_axes(np.shape(x), _scales(inputs, attrs, since)), R.params(mode, "asymmetric", "floor")


R.declare_points(op, VERSIONS, _context, {1: "Upsample the input tensor."})


def _legacy_where(inputs, attrs, expected, since):
    return legacy_open(_scales(inputs, attrs, since), attrs, expected)


op.spec_silent("legacy_mapping", VERSIONS, spec={1: "The width and height of the output tensor are: output_width = floor(input_width * width_scale), "
                                                    "output_height = floor(input_height * height_scale).",
                                                 7: "Each dimension value of the output tensor is: output_dimension = floor(input_dimension * scale)."},
               **{**LEGACY_POINT, "where": _legacy_where}, readings=R.legacy_readings(_scales))


def _example(since, x, mode, scales, name=""):
    attrs = {} if mode == "nearest" and not name.startswith("mode") else {"mode": mode}
    if since == 1:
        return Example([x], {**attrs, "height_scale": float(scales[2]), "width_scale": float(scales[3])}, name=name)
    if since == 7:
        return Example([x], {**attrs, "scales": [float(s) for s in scales]}, name=name)
    return Example([x, np.asarray(scales, dtype=np.float32)], attrs, name=name)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = max(v for v in VERSIONS if v <= opset)
    rank = 4 if since == 1 else d(st.integers(1, 4))
    shape = R.small_shape(d, rank, 3)
    linear = "bilinear" if since == 1 else "linear"
    mode = d(st.sampled_from(["nearest", linear])) if R.numeric(dtype) else "nearest"
    scales = [d(st.sampled_from(R.UP_SCALES)) for _ in range(rank)]
    if since == 1:
        scales[0] = scales[1] = 1.0
    while int(np.prod([int(n * s) for n, s in zip(shape, scales)])) > 96:
        k = int(np.argmax(scales))
        scales[k] = 1.0
    return _example(since, R.data(d, dtype, shape, mode), mode, scales)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = max(v for v in VERSIONS if v <= opset)
    t = S.np_dtype(dtype)
    linear = "bilinear" if since == 1 else "linear"
    four = lambda a: R.as_dtype(np.asarray(a).reshape((1, 1) + np.shape(a)[-2:]), dtype) if np.asarray(a).dtype != t else np.asarray(a).reshape((1, 1) + np.shape(a)[-2:])  # noqa: E731
    sc = [1.0, 1.0, 2.0, 2.0]
    out = [
        _example(since, four(np.array([[1, 2], [3, 4]], dtype=np.float64) % 2 if dtype == "bool" else np.array([[1, 2], [3, 4]])),
                 "nearest", sc, "spec_example"),
        _example(since, four(S.edge_values(dtype).reshape(1, -1)), "nearest", [1.0, 1.0, 1.0, 3.0], "edge_values_nearest"),
        _example(since, R.as_dtype(np.zeros((1, 1, 0, 2)), dtype), "nearest", sc, "empty"),
        _example(since, four(np.arange(6.0).reshape(2, 3) % 2 if dtype == "bool" else np.arange(6.0).reshape(2, 3)), "nearest",
                 [1.0, 1.0, 1.5, 2.5], "nearest_fractional"),
    ]
    if dtype in ("bool", "string"):
        return out
    ramp = np.arange(4.0).reshape(1, 4) * 3
    out += [
        _example(since, four(ramp), linear, [1.0, 1.0, 1.0, 2.0], "linear_upsample"),
        _example(since, four(np.array([[1, 2], [3, 4]])), linear, [1.0, 1.0, 2.0, 1.5], "linear_fractional"),
    ]
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        return out + [_example(since, four(np.array([[0, 1, 2, 5]])), linear, [1.0, 1.0, 1.0, 2.0], "linear_rounding_ties"),
                      _example(since, four(np.array([[lo, hi]])), linear, [1.0, 1.0, 1.0, 3.0], "linear_extremes")]
    tiny = S.smallest_subnormal(dtype)
    out += [
        _example(since, four(np.array([[1.0, np.nan, 3.0, 4.0], [np.inf, 2.0, -np.inf, -0.0]])), linear, sc, "nan_inf_linear"),
        _example(since, four(ramp * tiny), linear, [1.0, 1.0, 1.0, 2.0], "subnormal_linear"),
    ]
    if since >= 7:
        out.append(_example(since, R.as_dtype(np.arange(8.0).reshape(2, 2, 2), dtype), linear, [2.0, 1.0, 1.5], "trilinear"))
    return out
