"""Shared pieces of Resize and its older form Upsample (ONNX spec: Resize-10, 11, 13, 18, 19;
Upsample-1, 7, 9, 10).

Every resized axis is treated alone (the spec: "The coordinate of each dimension is transformed
individually"); N-linear and N-cubic interpolation are the 1-D ones applied axis after axis.

Coordinates. ``x_original`` is computed from the spec's formulas in exact rational arithmetic
(``fractions.Fraction``: the float32 scale, the float roi values and the integer lengths are
exact rationals), so the rounding of ``nearest_mode`` at an exact tie, and ``floor`` / ``ceil``
at an exact integer, is the formula's and not a float rounding's. ``scale`` is the given scale
(``scales``), ``sizes[i] / in`` (``sizes``, policy stretch) or the common ``Min``/``Max`` ratio
(``not_larger`` / ``not_smaller``); the spec's ``scale = length_resized / length_original``
then makes ``length_resized = scale * length_original``, fractional when it comes from a scale
factor (Resize-19: "output_width the target length on the axis x which can be a fractional
number when it is calculated out of a scale factor"). That is the value align_corners uses
(the spec's own example resize_downsample_scales_linear_align_corners: 2x4, scales 0.6 ->
[[1.0, 3.142857]], i.e. x_original = 1 * 3 / (2.4 - 1)). Two formulas compare or divide by
``length_resized`` where the two readings differ (spec-silent point ``fractional_length``):
``pytorch_half_pixel``'s ``length_resized > 1`` and ``tf_crop_and_resize``'s ``(length_resized - 1)``;
we take the integer length of the resized tensor there (the text: "the length of the resized
tensor"), so tf_crop_and_resize maps the last output exactly to ``end``.

Output size: ``floor(input_dimension * (roi_end - roi_start) * scale)`` with scales; the roi
"only takes effect when coordinate_transformation_mode is tf_crop_and_resize", so for the other
modes the factor is 1. ``round_int`` of keep_aspect_ratio_policy rounds halfway up.

Sampling. nearest: the rounded index (round_prefer_floor = ceil(x - 1/2), round_prefer_ceil =
floor(x + 1/2), floor, ceil). linear: the triangle kernel 1 - |d| on |d| < 1; cubic: Keys'
kernel with ``a = cubic_coeff_a`` on |d| < 2 (Equation (4) of the cited paper). With antialias
and scale < 1 the kernel is stretched by 1 / scale: weight k(d * scale) on |d| < radius / scale,
and the weights are divided by their sum ("a weighted average"); exclude_outside drops the
sampling locations outside [0, length - 1] and renormalises ("so that their sum is 1.0").
A sampling location of weight 0 is no part of the average (a NaN there does not reach the
output); every other one is summed in IEEE float64 arithmetic (inf - inf = NaN), and for int64 /
uint64 data in exact rationals (float64 holds neither their values nor weights such as 1/3).

Spec-silent points (declared with :func:`declare_points`):

- ``outside``: the value at a sampling location outside the input (exclude_outside = 0, or a
  nearest index rounded out of range), other than tf_crop_and_resize's extrapolation: the spec
  gives it a weight but no value; we take the border element (edge padding, what every runtime
  we know does);
- ``integer_rounding``: linear or cubic on an integer type: the weighted average is rarely an
  integer and the text gives no rounding; we round half to even and saturate to the type's range;
- ``nonfinite``: an output whose kernel support holds inf or NaN: whether a weight-0 location
  counts, and the order of the inf sums, is open;
- ``fractional_length`` (above);
- ``legacy_mapping``: Resize-10 and Upsample give no coordinate mapping at all; we take
  ``x_original = x_resized / scale`` (asymmetric) and, for nearest, floor (the only mapping that
  gives Upsample-1's example for every scale); fixed by that example only for nearest with integer scales.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF

st = S.st

CTM_11 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize")
CTM_13 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize")
CTM_19 = CTM_13 + ("half_pixel_symmetric",)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")


def ctm_of(since: int) -> tuple[str, ...]:
    return CTM_11 if since == 11 else CTM_19 if since >= 19 else CTM_13


def frac(v) -> Fraction:
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"Resize: non-finite scale or roi value {f}")
    return Fraction(f)


# -- one axis ----------------------------------------------------------------------------------
class Axis:
    """How one axis is resized: input length, output length, scale, the fractional target
    length, and (tf_crop_and_resize) the roi."""

    def __init__(self, l_in: int, l_out: int, scale: Fraction, target: Fraction, roi=(Fraction(0), Fraction(1))):
        self.l_in, self.l_out, self.scale, self.target, self.roi = l_in, l_out, scale, target, roi


def coordinate(ctm: str, j: int, ax: Axis) -> Fraction:
    """x_original of output index ``j`` (exact), from the spec's formulas."""
    s, l_in = ax.scale, ax.l_in
    if ctm == "half_pixel":
        return (j + Fraction(1, 2)) / s - Fraction(1, 2)
    if ctm == "half_pixel_symmetric":
        adjustment = Fraction(ax.l_out) / ax.target
        center = Fraction(l_in, 2)
        offset = center * (1 - adjustment)
        return offset + (j + Fraction(1, 2)) / s - Fraction(1, 2)
    if ctm == "pytorch_half_pixel":
        return (j + Fraction(1, 2)) / s - Fraction(1, 2) if ax.l_out > 1 else Fraction(0)
    if ctm == "align_corners":
        if ax.target == 1:  # 0 * (l_in - 1) / 0: the one output is at 0
            return Fraction(0)
        return j * Fraction(l_in - 1) / (ax.target - 1)
    if ctm == "asymmetric":
        return j / s
    if ctm == "tf_half_pixel_for_nn":
        return (j + Fraction(1, 2)) / s
    if ctm == "tf_crop_and_resize":
        start, end = ax.roi
        if ax.l_out > 1:
            return start * (l_in - 1) + j * (end - start) * (l_in - 1) / (ax.l_out - 1)
        return Fraction(1, 2) * (start + end) * (l_in - 1)
    raise ValueError(f"Resize: unknown coordinate_transformation_mode {ctm!r}")


def nearest_index(x: Fraction, nearest_mode: str) -> int:
    if nearest_mode == "round_prefer_floor":
        return math.ceil(x - Fraction(1, 2))
    if nearest_mode == "round_prefer_ceil":
        return math.floor(x + Fraction(1, 2))
    if nearest_mode == "floor":
        return math.floor(x)
    if nearest_mode == "ceil":
        return math.ceil(x)
    raise ValueError(f"Resize: unknown nearest_mode {nearest_mode!r}")


def cubic(d: float, a: float) -> float:
    d = abs(d)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def linear(d: float) -> float:
    return max(0.0, 1.0 - abs(d))


class Taps:
    """Per output index: (input indices, weights), whether it is extrapolated (tf_crop_and_resize
    outside [0, l_in - 1]) and whether a sampling location of nonzero weight lies outside the input."""

    def __init__(self):
        self.idx: list[list[int]] = []
        self.w: list[list[float]] = []
        self.all_idx: list[list[int]] = []  # every location of the kernel's support, weight 0 too
        #: the same taps with exact weights (Fractions), for 64-bit integer data (float64 cannot hold it)
        self.exact: list[tuple[list[int], list[Fraction]]] = []
        self.extrapolated: list[bool] = []
        self.outside: list[bool] = []


def axis_taps(ax: Axis, p: dict) -> Taps:
    t = Taps()
    mode, ctm = p["mode"], p["ctm"]
    for j in range(ax.l_out):
        x = coordinate(ctm, j, ax)
        t.extrapolated.append(ctm == "tf_crop_and_resize" and not (0 <= x <= ax.l_in - 1))
        if mode == "nearest":
            k = nearest_index(x, p["nearest_mode"])
            t.outside.append(not 0 <= k < ax.l_in)
            k = min(max(k, 0), ax.l_in - 1)
            t.idx.append([k])
            t.w.append([1.0])
            t.all_idx.append([k])
            t.exact.append(([k], [Fraction(1)]))
            continue
        radius = 1 if mode == "linear" else 2
        stretch = Fraction(1) / ax.scale if p.get("antialias") and ax.scale < 1 else Fraction(1)
        lo, hi = math.ceil(x - radius * stretch), math.floor(x + radius * stretch)
        locs, ws, wx = [], [], []
        for loc in range(lo, hi + 1):
            dx = (loc - x) / stretch
            w = linear(float(dx)) if mode == "linear" else cubic(float(dx), p["cubic_a"])
            w_exact = max(Fraction(0), 1 - abs(dx)) if mode == "linear" else Fraction(cubic(dx, Fraction(p["cubic_a"])))
            if p.get("exclude_outside") and not 0 <= loc < ax.l_in:
                w, w_exact = 0.0, Fraction(0)
            locs.append(loc)
            ws.append(w)
            wx.append(w_exact)
        if p.get("exclude_outside") or stretch != 1:
            total, total_exact = math.fsum(ws), sum(wx)
            ws = [w / total for w in ws] if total != 0 else ws
            wx = [w / total_exact for w in wx] if total_exact != 0 else wx
        t.outside.append(any(w != 0 and not 0 <= loc < ax.l_in for loc, w in zip(locs, ws)))
        clamped = [min(max(loc, 0), ax.l_in - 1) for loc in locs]
        # a sampling location outside the input: a runtime may clamp the coordinate and then
        # interpolate, giving the neighbours of the border weight 0 (a NaN or inf there reaches
        # the output as 0 * inf); they are part of the support too
        xc = min(max(x, 0), ax.l_in - 1)
        near = range(math.ceil(xc - radius * stretch), math.floor(xc + radius * stretch) + 1) if xc != x else ()
        t.all_idx.append(clamped + [min(max(loc, 0), ax.l_in - 1) for loc in near])
        t.idx.append([c for c, w in zip(clamped, ws) if w != 0])
        t.w.append([w for w in ws if w != 0])
        t.exact.append(([c for c, w in zip(clamped, wx) if w != 0], [w for w in wx if w != 0]))
    return t


def apply_axis(y: np.ndarray, axis: int, taps: Taps, touch: bool = False) -> np.ndarray:
    """Resample ``y`` (float64, Python ints and Fractions for 64-bit integers, or any dtype for nearest)
    along ``axis`` with ``taps``. With ``touch`` every location of the support counts with weight 1
    (where a value can reach)."""
    moved = np.moveaxis(y, axis, 0)
    exact = y.dtype == object
    rows = []
    for j in range(len(taps.idx)):
        idx, w = (taps.all_idx[j], [1.0] * len(taps.all_idx[j])) if touch else taps.exact[j] if exact else (taps.idx[j], taps.w[j])
        if len(w) == 1 and w[0] == 1.0 and not touch:
            rows.append(moved[idx[0]])
            continue
        acc = None
        for i, wi in zip(idx, w):
            term = wi * moved[i]
            acc = term if acc is None else acc + term
        rows.append(acc if acc is not None else np.zeros(moved.shape[1:]))
    out = np.stack(rows) if rows else np.zeros((0,) + moved.shape[1:], dtype=moved.dtype)
    return np.moveaxis(out, 0, axis)


def resample(x: np.ndarray, axes: dict[int, Axis], p: dict, touch: bool = False):
    """The resized tensor in float64 (or x's dtype for nearest), plus per-output masks:
    extrapolated, and sampled outside the input."""
    x = np.asarray(x)
    numeric = p["mode"] != "nearest" or touch
    # 64-bit integers in exact arithmetic (float64 rounds them: the average of -2^63 and 2^63 - 1 is exact)
    y = (x.astype(object) if wide_int(x) and not touch else x.astype(np.float64)) if numeric else x
    out_shape = list(x.shape)
    for a, ax in axes.items():
        out_shape[a] = ax.l_out
    extra = np.zeros(out_shape, dtype=bool)
    outside = np.zeros(out_shape, dtype=bool)
    with np.errstate(all="ignore"):
        for a, ax in axes.items():
            taps = axis_taps(ax, p)
            y = apply_axis(y, a, taps, touch)
            shape = [1] * x.ndim
            shape[a] = ax.l_out
            extra |= np.asarray(taps.extrapolated, dtype=bool).reshape(shape)
            outside |= np.asarray(taps.outside, dtype=bool).reshape(shape)
    y = np.asarray(y).reshape(out_shape)
    return y, extra, outside


def wide_int(x) -> bool:
    """64-bit integer data, whose values float64 cannot all hold."""
    return np.asarray(x).dtype in (np.dtype(np.int64), np.dtype(np.uint64))


def finish(y: np.ndarray, like: np.ndarray, mode: str) -> np.ndarray:
    """float64 back to the input type: floats rounded once; integers (linear/cubic) rounded half
    to even and saturated (spec-silent ``integer_rounding``)."""
    dtype = np.asarray(like).dtype
    if mode == "nearest":
        return np.asarray(y).astype(dtype)
    label = S.label_of(dtype)
    with np.errstate(all="ignore"):
        if S.is_int(label):
            lo, hi = S.finite_range(label)
            if np.asarray(y).dtype == object:  # exact values: round(Fraction) rounds half to even
                y = np.asarray(y)
                return np.array([min(max(round(Fraction(v)), lo), hi) for v in y.reshape(-1)], dtype=dtype).reshape(y.shape)
            return np.clip(np.rint(y), lo, hi).astype(dtype)
        return np.asarray(y).astype(dtype)


# -- the Resize-11+ sizes and scales ----------------------------------------------------------
def plan_axes(shape, roi, scales, sizes, axes, policy: str, ctm: str) -> dict[int, Axis]:
    r = len(shape)
    if axes is None:
        axes = list(range(r))
    axes = [int(a) for a in axes]
    if any(not -r <= a < r for a in axes):
        raise ValueError(f"Resize: axes {axes} outside [-{r}, {r - 1}]")
    axes = [a % r for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"Resize: repeated axis in {axes} (behaviour undefined)")
    n = len(axes)
    roi_v = None
    if roi is not None and np.asarray(roi).size and ctm == "tf_crop_and_resize":
        rv = np.asarray(roi).astype(np.float64).reshape(-1)
        if rv.size != 2 * n:
            raise ValueError(f"Resize: roi of {rv.size} values for {n} axes")
        roi_v = [(frac(rv[i]), frac(rv[i + n])) for i in range(n)]
    have_scales = scales is not None and np.asarray(scales).size > 0
    have_sizes = sizes is not None and np.asarray(sizes).size > 0
    if have_scales == have_sizes:
        raise ValueError("Resize: exactly one of scales and sizes must be given")
    out: dict[int, Axis] = {}
    if have_scales:
        sc = np.asarray(scales, dtype=np.float32).reshape(-1)
        if sc.size != n:
            raise ValueError(f"Resize: {sc.size} scales for {n} axes")
        for i, a in enumerate(axes):
            s = frac(sc[i])
            if s <= 0:
                raise ValueError(f"Resize: scale {float(s)} <= 0")
            roi_i = roi_v[i] if roi_v else (Fraction(0), Fraction(1))
            target = shape[a] * s
            l_out = math.floor(shape[a] * (roi_i[1] - roi_i[0]) * s) if ctm == "tf_crop_and_resize" else math.floor(target)
            out[a] = Axis(shape[a], max(l_out, 0), s, target, roi_i)
        return out
    sv = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(sv) != n:
        raise ValueError(f"Resize: {len(sv)} sizes for {n} axes")
    if any(shape[a] == 0 for a in axes):
        raise ValueError("Resize: sizes for an empty axis (no scale)")
    if policy == "stretch":
        for i, a in enumerate(axes):
            s = Fraction(sv[i], shape[a])
            out[a] = Axis(shape[a], sv[i], s, Fraction(sv[i]), roi_v[i] if roi_v else (Fraction(0), Fraction(1)))
        return out
    ratios = [Fraction(sv[i], shape[a]) for i, a in enumerate(axes)]
    if policy == "not_larger":
        s = min(ratios)
    elif policy == "not_smaller":
        s = max(ratios)
    else:
        raise ValueError(f"Resize: unknown keep_aspect_ratio_policy {policy!r}")
    for i, a in enumerate(axes):
        l_out = math.floor(s * shape[a] + Fraction(1, 2))  # round_int: halfway cases up
        out[a] = Axis(shape[a], l_out, s, s * shape[a], roi_v[i] if roi_v else (Fraction(0), Fraction(1)))
    return out


def params(mode, ctm, nearest_mode="round_prefer_floor", cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0,
           antialias=0, ctms=CTM_19) -> dict:
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"Resize: unknown mode {mode!r}")
    if ctm not in ctms:
        raise ValueError(f"Resize: coordinate_transformation_mode {ctm!r} not in this version ({ctms})")
    if nearest_mode not in NEAREST_MODES:
        raise ValueError(f"Resize: unknown nearest_mode {nearest_mode!r}")
    return {"mode": mode, "ctm": ctm, "nearest_mode": nearest_mode, "cubic_a": float(np.float32(cubic_coeff_a)),
            "exclude_outside": int(exclude_outside), "extrapolation_value": float(np.float32(extrapolation_value)),
            "antialias": int(antialias)}


def resize(x, axes: dict[int, Axis], p: dict) -> np.ndarray:
    x = np.asarray(x)
    label = S.label_of(x.dtype)
    if p["mode"] != "nearest" and not (S.is_float(label) or S.is_int(label)):
        raise ValueError(f"Resize: mode {p['mode']} on {label} (no weighted average of such values)")
    y, extra, _ = resample(x, axes, p)
    out = finish(y, x, p["mode"])
    if extra.any() and label == "string":
        raise ValueError("Resize: tf_crop_and_resize extrapolates a string tensor (extrapolation_value is a float)")
    if extra.any():
        fill = np.asarray(p["extrapolation_value"]).astype(np.float64)
        out = np.where(extra, finish(fill, x, "linear") if out.dtype.kind in "iu" else np.asarray(fill).astype(out.dtype), out)
    return out


# -- Resize-10 and Upsample ---------------------------------------------------------------------
def legacy_axes(shape, scales) -> dict[int, Axis]:
    sc = np.asarray(scales, dtype=np.float32).reshape(-1)
    if sc.size != len(shape):
        raise ValueError(f"{sc.size} scales for a rank-{len(shape)} input")
    out = {}
    for a, v in enumerate(sc):
        s = frac(v)
        if s <= 0:
            raise ValueError(f"scale {float(s)} <= 0")
        out[a] = Axis(shape[a], math.floor(shape[a] * s), s, shape[a] * s)
    return out


def legacy(x, scales, mode: str, ctm: str = "asymmetric", nearest_mode: str = "floor") -> np.ndarray:
    """Resize-10 / Upsample: asymmetric coordinates, nearest by floor (spec-silent ``legacy_mapping``;
    another ``ctm`` / ``nearest_mode``: one of its readings)."""
    mode = {"bilinear": "linear"}.get(mode, mode)
    if mode not in ("nearest", "linear"):
        raise ValueError(f"unknown mode {mode!r}")
    return resize(x, legacy_axes(np.shape(x), scales), params(mode, ctm, nearest_mode))


#: the other mappings Resize-10 / Upsample implementations took, each computed as a reading of
#: spec-silent ``legacy_mapping``: (mode, coordinate_transformation_mode, nearest_mode) by name
LEGACY_READINGS = {
    "linear with half_pixel coordinates (Resize-11's default; TensorFlow 2, PyTorch align_corners=False)": ("linear", "half_pixel", "floor"),
    "linear with align_corners coordinates": ("linear", "align_corners", "floor"),
    "linear with pytorch_half_pixel coordinates": ("linear", "pytorch_half_pixel", "floor"),
    "nearest, asymmetric, round_prefer_floor (Resize-11's default nearest_mode)": ("nearest", "asymmetric", "round_prefer_floor"),
    "nearest, asymmetric, round_prefer_ceil": ("nearest", "asymmetric", "round_prefer_ceil"),
    "nearest, half_pixel, round_prefer_floor": ("nearest", "half_pixel", "round_prefer_floor"),
    "nearest, align_corners, round_prefer_floor": ("nearest", "align_corners", "round_prefer_floor"),
}


def legacy_readings(scales_of) -> dict:
    """The readings of ``legacy_mapping`` for an op whose scales are ``scales_of(inputs, attrs, since)``:
    each reading speaks of the output only in its own mode."""
    def reading(mode, ctm, nearest_mode):
        def output(c):
            if {"bilinear": "linear"}.get(c.attrs.get("mode", "nearest"), c.attrs.get("mode", "nearest")) != mode:
                return [None]
            return [legacy(c.inputs[0], scales_of(c.inputs, c.attrs, c.since), mode, ctm, nearest_mode)]
        return output

    return {name: reading(*how) for name, how in LEGACY_READINGS.items()}


# -- spec-silent points ---------------------------------------------------------------------------
def _as_float(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


#: Resize-11 on: the sentence that makes every output a weighted average
AVERAGE = ("In general, it calculates every value in the output tensor as a weighted average of neighborhood "
           "(a.k.a. sampling locations) in the input tensor.")


def declare_points(op, versions: tuple[int, ...], context, legacy_words: dict[int, str]) -> None:
    """The spec-silent points of Resize / Upsample. ``context(inputs, attrs, since)`` -> (x, axes
    dict, params) of a case, the same plan the reference follows; ``legacy_words``: the words of the
    versions before Resize-11, which name neither sampling locations nor averages."""

    def words(text: str) -> dict[int, str]:
        out = dict(legacy_words)
        out.update({v: text for v in versions if v >= 11})
        return out

    def outside_where(inputs, attrs, expected, since):
        x, axes, p = context(inputs, attrs, since)
        if not axes or np.asarray(x).size == 0:
            return [None]
        _, extra, outside = resample(np.zeros(np.shape(x)), axes, p)
        return [outside & ~extra]

    def within_input_range(c) -> bool:
        x = _as_float(c.inputs[0]) if S.label_of(np.asarray(c.inputs[0]).dtype) != "string" else None
        got = np.asarray(c.actual[0])
        if got.shape != np.shape(c.expected[0]):
            return False
        if x is None or not np.isfinite(x).all():
            return True
        g = _as_float(got)[c.masks[0]]
        return bool(np.all((g >= min(x.min(), 0) - 1e-6 * (1 + abs(x.min()))) & (g <= max(x.max(), 0) + 1e-6 * (1 + abs(x.max())))))

    op.spec_silent(
        "outside", versions, spec=words(AVERAGE),
        expected="the border element (edge padding) at a sampling location outside the input: the value every runtime we know takes; "
                 "a nearest index rounded outside is clamped to the border (exclude_outside gives such a location a weight, and no value)",
        where=outside_where,
        invariants={"the output has the expected shape, and for linear/nearest on finite data lies within [min(x, 0), max(x, 0)]":
                    lambda c: within_input_range(c) if _mode_of(c) != "cubic" else np.shape(c.actual[0]) == np.shape(c.expected[0])})

    def rounding_where(inputs, attrs, expected, since):
        x, axes, p = context(inputs, attrs, since)
        if not S.is_int(S.label_of(np.asarray(x).dtype)) or np.asarray(x).size == 0:
            return [None]
        y = _exact(x, axes, p)
        lo, hi = S.finite_range(S.label_of(np.asarray(x).dtype))
        return [(~_on_grid(y, round) | (y < lo) | (y > hi)).astype(bool)]

    def _exact(x, axes, p):
        """The float64 result before the conversion to x's integer type (extrapolated: the fill)."""
        y, extra, _ = resample(x, axes, p)
        if p["mode"] == "nearest":  # copies are exact; only a fill can need rounding
            y = np.zeros(y.shape)
        return np.where(extra, p["extrapolation_value"], y)

    def floor_or_ceil(c) -> bool:
        x, axes, p = context(c.inputs, c.attrs, c.since)
        y = _exact(x, axes, p)
        lo, hi = S.finite_range(S.label_of(np.asarray(x).dtype))
        got = np.asarray(c.actual[0])
        if got.shape != y.shape:
            return False
        m = (c.masks[0] & (y >= lo) & (y <= hi)).astype(bool)
        g = got[m].astype(object)  # Python ints: exact for 64-bit data
        return bool(np.all((g == _on_grid(y[m], math.floor, True)) | (g == _on_grid(y[m], math.ceil, True))))

    op.spec_silent(
        "integer_rounding", versions,
        spec=words(AVERAGE),
        expected="round half to even, then saturate to the type's range (the weighted average is rarely an integer; the text gives no "
                 "rounding); so too a fractional extrapolation_value taken by an integer output",
        where=rounding_where,
        invariants={"an exact average inside the type's range becomes its floor or its ceiling": floor_or_ceil})

    def nonfinite_where(inputs, attrs, expected, since):
        x, axes, p = context(inputs, attrs, since)
        label = S.label_of(np.asarray(x).dtype)
        if p["mode"] == "nearest" or not S.is_float(label) or np.asarray(x).size == 0:
            return [None]
        bad = (~np.isfinite(_as_float(x))).astype(np.float64)
        if not bad.any():
            return [None]
        touched, extra, _ = resample(bad, axes, p, touch=True)
        return [(touched > 0) & ~extra]

    def nonfinite_kept(c) -> bool:
        want = _as_float(c.expected[0])
        got = np.asarray(c.actual[0])
        if got.shape != want.shape:
            return False
        g, w = _as_float(got)[c.masks[0]], want[c.masks[0]]
        # a kept value may differ by the rounding of the weighted sum: 8 unit roundoffs of the output type
        kept = np.isclose(g, w, rtol=8 * ROUNDOFF.get(S.label_of(got.dtype), 0.0), atol=0.0)
        return bool(np.all(np.where(np.isfinite(w), kept | np.isnan(g), ~np.isfinite(g))))

    op.spec_silent(
        "nonfinite", versions,
        spec=words(AVERAGE),
        expected="a location of weight 0 is no part of the average (its NaN or inf does not reach the output); the others are summed "
                 "in IEEE arithmetic (inf - inf = NaN)",
        where=nonfinite_where,
        invariants={"a non-finite expected value stays non-finite; a finite one is kept or is NaN (a weight-0 NaN or inf summed in)": nonfinite_kept})


def _on_grid(y, to_int, values: bool = False) -> np.ndarray:
    """``to_int`` (round, floor, ceil) of each exact value of ``y`` (floats or Fractions): those values as
    Python ints (``values``), or where a value equals it."""
    y = np.asarray(y)
    ints = np.array([to_int(Fraction(v)) for v in y.reshape(-1)], dtype=object).reshape(y.shape)
    if values:
        return ints
    return np.array([Fraction(v) == k for v, k in zip(y.reshape(-1), ints.reshape(-1))], dtype=bool).reshape(y.shape)


def _mode_of(c) -> str:
    mode = c.attrs.get("mode", "nearest")
    return {"bilinear": "linear"}.get(mode, mode)


# -- drawing -------------------------------------------------------------------------------------------
#: scales drawn: dyadic, so x_original is exact in binary floating point too (a backend computing in
#: float32 reaches the spec's exact ties and integers)
UP_SCALES = (1.0, 1.5, 2.0, 2.5, 3.0)
ALL_SCALES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)


def data(d, dtype: str, shape, mode: str) -> np.ndarray:
    if S.is_int(dtype) and mode != "nearest":
        lo, hi = S.finite_range(dtype)
        return S.arrays(d, dtype, shape=shape, lo=max(lo, -100), hi=min(hi, 100))
    return S.arrays(d, dtype, shape=shape, lo=-10, hi=10)


def small_shape(d, rank: int, max_side: int = 4) -> tuple[int, ...]:
    return tuple(d(st.integers(1, max_side if rank <= 2 else 3)) for _ in range(rank))


def as_dtype(a, dtype: str) -> np.ndarray:
    """Numbers as ``dtype``; for strings their decimal text (nearest only moves them)."""
    a = np.asarray(a)
    if dtype == "string":
        return np.array([str(v) for v in a.reshape(-1).tolist()], dtype=object).reshape(a.shape)
    with np.errstate(all="ignore"):
        return a.astype(S.np_dtype(dtype))


def numeric(dtype: str) -> bool:
    return S.is_float(dtype) or S.is_int(dtype)
