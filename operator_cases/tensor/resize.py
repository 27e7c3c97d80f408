"""Resize: resample a tensor along some or all of its axes (ONNX spec: Resize-10, 11, 13, 18, 19).

Resize-10: ``scales`` only, modes nearest and linear, "output_dimension = floor(input_dimension
* scale)" and no coordinate mapping (spec-silent ``legacy_mapping``, see _resize_util).
Resize-11 adds ``roi``, ``sizes`` (with ``scales`` an empty tensor), mode cubic
(``cubic_coeff_a``, ``exclude_outside``), ``coordinate_transformation_mode`` (half_pixel by
default; tf_crop_and_resize with ``extrapolation_value``) and ``nearest_mode``. Resize-13 makes
roi / scales / sizes optional inputs, adds bfloat16 and drops tf_half_pixel_for_nn. Resize-18
adds ``axes`` (negative ones count from the back), ``antialias`` and
``keep_aspect_ratio_policy``; Resize-19 adds half_pixel_symmetric.

The reference follows the formulas in exact rational arithmetic for coordinates and float64
for the weighted sums (every reading and spec-silent choice is in _resize_util's docstring).
Linear and cubic are drawn for float and integer data; string and bool data are drawn with
nearest only (no weighted average of them exists).
"""

from __future__ import annotations


import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, Ctx, Plan
from harness.registry import Example, Operator

from . import _resize_util as R

op = Operator("Resize")  # the swept type: X's (T at 10, T1 from 11)
st = S.st
VERSIONS = (10, 11, 13, 18, 19)


def _since(opset: int) -> int:
    return max(v for v in VERSIONS if v <= opset)


# -- references -----------------------------------------------------------------------------------
@op.reference(10)
def resize_10(x, scales, *, mode="nearest"):
    return R.legacy(x, scales, mode)


def _modern(since, x, roi, scales, sizes, *, antialias=0, axes=None, coordinate_transformation_mode="half_pixel",
            cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
            mode="nearest", nearest_mode="round_prefer_floor"):
    p = R.params(mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value,
                 antialias, R.ctm_of(since))
    if keep_aspect_ratio_policy not in R.POLICIES:
        raise ValueError(f"Resize: unknown keep_aspect_ratio_policy {keep_aspect_ratio_policy!r}")
    axes_plan = R.plan_axes(np.shape(x), roi, scales, sizes, axes, keep_aspect_ratio_policy, coordinate_transformation_mode)
    return axes_plan, p


@op.reference(11)
def resize_11(x, roi, scales, sizes=None, **attrs):
    return R.resize(x, *_modern(11, x, roi, scales, sizes, **attrs))


@op.reference(13)
def resize_13(x, roi=None, scales=None, sizes=None, **attrs):
    return R.resize(x, *_modern(13, x, roi, scales, sizes, **attrs))


@op.reference(18)
def resize_18(x, roi=None, scales=None, sizes=None, **attrs):
    return R.resize(x, *_modern(18, x, roi, scales, sizes, **attrs))


@op.reference(19)
def resize_19(x, roi=None, scales=None, sizes=None, **attrs):
    return R.resize(x, *_modern(19, x, roi, scales, sizes, **attrs))


def _context(inputs, attrs, since):
    """(x, axes plan, params) of a case: what the reference computes from."""
    x = inputs[0]
    if since == 10:
        return x, R.legacy_axes(np.shape(x), inputs[1]), R.params({"bilinear": "linear"}.get(attrs.get("mode", "nearest"), attrs.get("mode", "nearest")), "asymmetric", "floor")
    ins = list(inputs) + [None] * (4 - len(inputs))
    plan, p = _modern(since, x, ins[1], ins[2], ins[3], **attrs)
    return x, plan, p


R.declare_points(op, VERSIONS, _context, {10: "Resize the input tensor."})


def legacy_open(scales, attrs, expected):
    """Open under the legacy mapping (Resize-10, Upsample): every output of a linear resize that
    changes a length or of a nearest one with a non-integer scale."""
    scales = np.asarray(scales, dtype=np.float64).reshape(-1)
    if np.size(expected[0]) == 0:
        return [None]
    if attrs.get("mode", "nearest") == "nearest":
        open_ = bool(np.any(scales != np.round(scales)))
    else:
        open_ = bool(np.any(scales != 1))
    return [np.full(np.shape(expected[0]), open_)]


def _legacy_where(inputs, attrs, expected, since):
    return legacy_open(inputs[1], attrs, expected)


def _legacy_invariant(c) -> bool:
    x, got = np.asarray(c.inputs[0]), np.asarray(c.actual[0])
    if got.shape != np.shape(c.expected[0]):
        return False
    if x.dtype == object or x.dtype == bool:
        return bool(np.all(np.isin(got[c.masks[0]], x)))
    xf, g = x.astype(np.float64), got.astype(np.float64)[c.masks[0]]
    if not np.isfinite(xf).all():
        return True
    if c.attrs.get("mode", "nearest") == "nearest":
        return bool(np.all(np.isin(g, xf)))
    tol = 1e-3 * (1 + np.abs(xf).max())
    return bool(np.all((g >= xf.min() - tol) & (g <= xf.max() + tol)))


LEGACY_POINT = dict(
    expected="x_original = x_resized / scale (asymmetric), nearest by floor: the mapping that gives the Upsample-1 "
             "example for every integer scale, and what Upsample and Resize-10 implementations took",
    where=_legacy_where,
    invariants={"nearest takes input values; linear stays within the input's range (a convex combination)": _legacy_invariant})
op.spec_silent("legacy_mapping", (10,), spec="Resize the input tensor. Each dimension value of the output tensor is: "
               "output_dimension = floor(input_dimension * scale).", **LEGACY_POINT,
               readings=R.legacy_readings(lambda inputs, attrs, since: inputs[1]))


def _fractional_where(inputs, attrs, expected, since):
    """Open: pytorch_half_pixel where the fractional target length is above 1 and the resized
    length is 1; tf_crop_and_resize from scales whose target length is fractional."""
    if since < 11 or np.size(expected[0]) == 0:
        return [None]
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel")
    if ctm not in ("pytorch_half_pixel", "tf_crop_and_resize"):
        return [None]
    x, plan, p = _context(inputs, attrs, since)
    mask = np.zeros(np.shape(expected[0]), dtype=bool)
    for a, ax in plan.items():
        if ctm == "pytorch_half_pixel":
            hit = ax.l_out == 1 and ax.target > 1
        else:
            length = ax.l_in * (ax.roi[1] - ax.roi[0]) * ax.scale
            hit = ax.l_out > 1 and length != ax.l_out and _has_scales(inputs)
        if hit:
            mask[...] = True
    return [mask]


def _has_scales(inputs) -> bool:
    return len(inputs) > 2 and inputs[2] is not None and np.asarray(inputs[2]).size > 0


op.spec_silent(
    "fractional_length", (11, 13, 18, 19),
    spec="output_dimension = floor(input_dimension * (roi_end - roi_start) * scale)",
    expected="the target length is fractional, and the coordinate formulas name only length_resized: we take "
             "the integer length of the resized tensor in pytorch_half_pixel's test and tf_crop_and_resize's "
             "division (the last output then lands on end_x); align_corners and the /scale formulas take the fractional target "
             "length (the spec's resize_downsample_scales_linear_align_corners example)",
    where=_fractional_where,
    invariants={"the output has the expected shape": lambda c: np.shape(c.actual[0]) == np.shape(c.expected[0])})


# -- examples ------------------------------------------------------------------------------------------
def example(since, x, attrs=None, *, roi=None, scales=None, sizes=None, name=""):
    attrs = dict(attrs or {})
    f32 = lambda v: None if v is None else np.asarray(v, dtype=np.float32)  # noqa: E731
    if since == 10:
        return Example([x, f32(scales)], attrs, name=name)
    roi_a = f32(roi)
    sizes_a = None if sizes is None else np.asarray(sizes, dtype=np.int64)
    if since == 11:  # roi and scales are required inputs: empty tensors when unused
        return Example([x, roi_a if roi_a is not None else np.zeros(0, np.float32),
                        f32(scales) if scales is not None else np.zeros(0, np.float32), sizes_a], attrs, name=name)
    return Example([x, roi_a, f32(scales), sizes_a], attrs, name=name)


def _too_big(shape, outs) -> bool:
    return int(np.prod(outs)) > 96 or int(np.prod(shape)) > 48


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = _since(opset)
    rank = d(st.integers(1, 4))
    shape = R.small_shape(d, rank)
    modes = ["nearest", "linear"] + ([] if since == 10 else ["cubic"])
    mode = d(st.sampled_from(modes)) if R.numeric(dtype) else "nearest"
    attrs: dict = {} if mode == "nearest" and d(st.booleans()) else {"mode": mode}
    x = R.data(d, dtype, shape, mode)
    if since == 10:
        scales = [d(st.sampled_from(R.ALL_SCALES)) for _ in range(rank)]
        while _too_big(shape, [int(n * s) for n, s in zip(shape, scales)]):
            scales = [min(s, 1.0) for s in scales]
            break
        return example(10, x, attrs, scales=scales)
    ctm = d(st.sampled_from([m for m in R.ctm_of(since) if dtype != "string" or m != "tf_crop_and_resize"]))
    if ctm != "half_pixel" or d(st.booleans()):
        attrs["coordinate_transformation_mode"] = ctm
    if mode == "nearest" and d(st.booleans()):
        attrs["nearest_mode"] = d(st.sampled_from(R.NEAREST_MODES))
    if mode == "cubic" and d(st.booleans()):
        attrs["cubic_coeff_a"] = d(st.sampled_from([-0.5, -0.75, -0.625]))
    if mode != "nearest" and d(st.integers(0, 3)) == 0:
        attrs["exclude_outside"] = 1
    axes = list(range(rank))
    if since >= 18 and d(st.booleans()):
        axes = sorted(set(d(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank))))
        axes = [a - rank if d(st.booleans()) else a for a in axes]
        attrs["axes"] = axes
        d(st.randoms()).shuffle(attrs["axes"])
        axes = attrs["axes"]
    if since >= 18 and mode != "nearest" and d(st.booleans()):
        attrs["antialias"] = 1
    roi = None
    if ctm == "tf_crop_and_resize":
        starts = [d(st.sampled_from([-0.25, 0.0, 0.0, 0.25, 0.5])) for _ in axes]
        ends = [d(st.sampled_from([0.5, 0.75, 1.0, 1.0, 1.25])) for _ in axes]
        roi = starts + ends
        if d(st.booleans()):
            attrs["extrapolation_value"] = d(st.sampled_from([-1.5, 2.0, 7.0]))
    elif since == 11 or d(st.integers(0, 4)) == 0:
        roi = [0.5] * len(axes) + [0.75] * len(axes) if d(st.booleans()) else None  # ignored outside tf_crop_and_resize
    use_sizes = d(st.booleans())
    if use_sizes:
        sizes = [d(st.integers(1, 5)) for _ in axes]
        outs = list(shape)
        for a, s in zip(axes, sizes):
            outs[a] = s
        if _too_big(shape, outs):
            sizes = [min(s, 2) for s in sizes]
        if since >= 18 and d(st.booleans()):
            attrs["keep_aspect_ratio_policy"] = d(st.sampled_from(R.POLICIES))
        return example(since, x, attrs, roi=roi, sizes=sizes)
    scales = [d(st.sampled_from(R.ALL_SCALES)) for _ in axes]
    outs = list(shape)
    for a, s in zip(axes, scales):
        outs[a] = int(shape[a] * s)
    if _too_big(shape, outs):
        scales = [min(s, 1.0) for s in scales]
    return example(since, x, attrs, roi=roi, scales=scales)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = _since(opset)
    ex = lambda x, attrs=None, name="", **kw: example(since, R.as_dtype(x, dtype), attrs, name=name, **kw)  # noqa: E731
    ramp = np.arange(4.0).reshape(1, 4) * 3
    out = [
        ex(np.zeros((0, 3)), {}, "empty", scales=[1.0, 2.0]),
        ex(S.edge_values(dtype).reshape(1, -1), {}, "edge_values_nearest", scales=[1.0, 2.0]),
        ex(ramp, {}, "nearest_downsample", scales=[1.0, 0.5]),
    ]
    if dtype in ("bool", "string"):
        return out
    spatial = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]], dtype=np.float64)
    out += [
        ex(ramp, {"mode": "linear"}, "linear_upsample", scales=[1.0, 2.0]),
        ex(spatial, {"mode": "linear"}, "linear_downsample", scales=[0.5, 0.75]),
    ]
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        mid = 0 if lo < 0 else hi // 2
        out += [
            ex(np.array([[0, 1, 2, 5]]), {"mode": "linear"}, "linear_rounding_ties", scales=[1.0, 2.0]),
            ex(np.array([[mid, hi, hi, mid]]), {"mode": "linear"} if since == 10 else {"mode": "cubic"}, "cubic_overshoot", scales=[1.0, 2.0]),
        ]
        return out
    tiny = S.smallest_subnormal(dtype)
    special = np.array([[1.0, np.nan, 3.0, 4.0], [np.inf, 2.0, -np.inf, -0.0]])
    out += [
        ex(special, {"mode": "linear"}, "nan_inf_linear", scales=[1.0, 2.0]),
        ex(ramp * tiny, {"mode": "linear"}, "subnormal_linear", scales=[1.0, 2.0]),
        ex(np.array([[-0.0, -0.0, 1.0]]), {"mode": "linear"}, "neg_zero_linear", scales=[1.0, 2.0]),
    ]
    if since == 10:
        return out + [ex(spatial, {"mode": "linear"}, "linear_fractional", scales=[1.0, 1.5])]
    out += [
        ex(special, {"mode": "cubic"}, "nan_inf_cubic", scales=[1.0, 2.0]),
        ex(spatial, {"mode": "cubic"}, "cubic_upsample", scales=[2.0, 2.0]),
        ex(spatial, {"mode": "cubic", "cubic_coeff_a": -0.5}, "cubic_a_-0.5", scales=[1.0, 2.0]),
        ex(spatial, {"mode": "cubic", "exclude_outside": 1}, "cubic_exclude_outside", scales=[0.75, 1.5]),
        ex(spatial, {"mode": "linear", "exclude_outside": 1}, "linear_exclude_outside", scales=[1.0, 1.5]),
        ex(spatial, {"mode": "cubic"}, "cubic_downsample", scales=[0.5, 0.75]),
        ex(spatial, {"mode": "linear"}, "roi_ignored", roi=[0.5, 0.5, 0.75, 0.75], scales=[1.0, 1.5]),
        ex(spatial, {"mode": "linear"}, "sizes", sizes=[3, 5]),
        ex(np.arange(1.0, 9.0).reshape(1, 1, 2, 4), {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, "spec_align_corners_fractional",
           scales=[1.0, 1.0, 0.6, 0.6]),
        ex(spatial, {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, "pytorch_half_pixel_length_1", scales=[1.0, 0.25]),
        ex(spatial, {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 10.0},
           "tf_crop_extrapolation", roi=[-0.5, 0.25, 1.5, 0.75], sizes=[3, 3]),
        ex(spatial, {"coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": -2.5},
           "tf_crop_nearest", roi=[0.25, -0.25, 0.75, 1.25], scales=[2.0, 1.0]),
    ]
    for ctm in R.ctm_of(since):
        if ctm != "tf_crop_and_resize":
            out.append(ex(spatial, {"mode": "linear", "coordinate_transformation_mode": ctm}, f"linear_{ctm}", scales=[1.0, 1.25]))
    for nm in R.NEAREST_MODES:
        # asymmetric x 2: x_original = j / 2 reaches every half; half_pixel x 0.5: 2j + 0.5, every one a tie
        out.append(ex(ramp, {"coordinate_transformation_mode": "asymmetric", "nearest_mode": nm}, f"nearest_{nm}_upsample_ties", scales=[1.0, 2.0]))
        out.append(ex(np.arange(8.0).reshape(1, 8), {"nearest_mode": nm}, f"nearest_{nm}_downsample_ties", scales=[1.0, 0.5]))
    if since >= 18:
        wide = np.arange(24.0).reshape(3, 8) % 7
        out += [
            ex(wide, {"mode": "linear", "antialias": 1}, "antialias_linear", scales=[1.0, 0.5]),
            ex(wide, {"mode": "cubic", "antialias": 1}, "antialias_cubic", scales=[0.75, 0.5]),
            ex(wide, {"mode": "cubic", "antialias": 1, "exclude_outside": 1}, "antialias_cubic_exclude_outside", scales=[1.0, 0.25]),
            ex(wide, {"keep_aspect_ratio_policy": "not_larger"}, "not_larger", sizes=[2, 6]),
            ex(wide, {"mode": "linear", "keep_aspect_ratio_policy": "not_smaller"}, "not_smaller", sizes=[2, 6]),
            ex(wide.reshape(1, 3, 8), {"mode": "linear", "axes": [-1]}, "axes_negative", scales=[0.75]),
            ex(wide.reshape(1, 3, 8), {"mode": "linear", "axes": [2, 1], "coordinate_transformation_mode": "tf_crop_and_resize"},
               "axes_tf_crop", roi=[0.25, 0.0, 0.75, 1.0], sizes=[3, 2]),
        ]
    if since == 19:
        out.append(ex(spatial, {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, "half_pixel_symmetric_fractional",
                      scales=[1.0, 1.75]))
    return out


# -- how it enters a generated graph ----------------------------------------------------------------------
@op.fuzz(nan=NAN_ASSUMED, ulps=4.0, type_param="T1")
def fuzz(c: Ctx) -> Plan | None:
    """Nearest or linear (half_pixel or asymmetric) upsampling by 1 or 2 along the last one or
    two axes of a float value: every output is an input value or a convex combination of two."""
    if c.since < 11 or c.exact:
        return None
    x = c.take("float", 0, lambda v: 1 <= v.rank <= 4 and 0 < v.size <= 32)
    if x is None:
        return None
    scales = [1.0] * x.rank
    scales[-1] = float(c.choice([1.0, 2.0]))
    if x.rank >= 2 and c.pick(2):
        scales[-2] = 2.0
    attrs = {}
    if c.pick(2):
        attrs["mode"] = "linear"
        attrs["coordinate_transformation_mode"] = c.choice(["half_pixel", "asymmetric", "align_corners"])
    # roi and scales have fixed types (T2 float, tensor(float)), not the graph's: constants kept as given
    roi = None if c.since >= 13 else c.const(np.zeros(0, np.float32), "int")
    return Plan([x, roi, c.const(np.array(scales, np.float32), "int")], attrs, n_acc=4)
