"""GridSample (ONNX spec: GridSample-16, GridSample-20, GridSample-22).

"Given an input `X` and a flow-field `grid`, computes the output `Y` using `X` values and pixel
locations from `grid`." GridSample-16 takes 4-D X (N, C, H, W) and grid (N, H_out, W_out, 2);
GridSample-20 generalises to "an input `X` of rank r+2 with shape (N, C, d1, ..., dr)" and grid
(N, D1_out, ..., Dr_out, r) whose vector lists the coordinates "from the innermost tensor
dimension to the outermost"; GridSample-22 adds bfloat16. Modes: bilinear / nearest / bicubic at
16, renamed linear / nearest / cubic (N-linear, N-cubic) at 20.

Coordinates. A normalized value g along an axis of length L maps to the pixel coordinate
``(g + 1) / 2 * (L - 1)`` when align_corners=1 ("the extrema (-1 and 1) are considered as referring
to the center points of the input's corner pixels") and ``((g + 1) * L - 1) / 2`` when
align_corners=0 ("referring to the corner points of the input's corner pixels").

Interpolation reads pixel taps around that coordinate: nearest one tap (the nearest index;
GridSample-20: "rounds to the nearest even index when the sampling point falls halfway between
two indices"), linear 2 per axis (weights 1 - t, t), cubic 4 per axis with the cubic
convolution kernel of torch.nn.functional.grid_sample, which the spec names ("See also"), A =
-0.75. A tap outside the image takes its value from ``padding_mode``: zeros "use 0 for
out-of-bound grid locations", border "use border values", reflection "use values at locations
reflected by the border": the border is the centre of the edge pixels with align_corners=1
("If index 0 represents the margin pixel, the reflected value at index -1 will be the same as
the value at index 1") and their outer edge (-0.5, L - 0.5) with align_corners=0, reflected
"until becoming in bound". Nearest moves the sampling point first (clamped to the border or
reflected) and then takes the nearest pixel, as torch and ONNX Runtime do (a reflected point can
land halfway: spec-silent point ``reflected_tie``); linear pads each tap, which equals moving
the point first; cubic pads each of its 4^r taps and never moves the point (torch's rule;
onnx.reference moves it: spec-silent point ``cubic_padding``).

"For integer input types, intermediate values are computed as floating point and cast to
integer at the end": we compute in float64 and truncate toward zero, as C's conversion and
numpy's astype do; the spec does not name the rounding of that cast (spec-silent point
``int_cast``). Floats are computed in float64 and rounded once to X's type.

Types: T1 allows string, bool and complex too. Interpolating a string has no meaning the text
gives (what is "0" of a string for zeros padding?) and the harness has no complex label, so the
sweep covers the numeric types and bool (``op.restrict``). A bool X is sampled as 0 and 1 and
the result is True where it is not 0; for nearest that copies a pixel (zeros padding: False),
for linear and cubic the rule is ours (spec-silent point ``bool_cast``).

Spec-silent points: GridSample-16's nearest ties (``nearest_tie``, the rule 20 later states: half
to even); a reflected nearest point halfway between two pixels (``reflected_tie``); cubic taps
outside the image under border or reflection padding (``cubic_padding``); a bool X interpolated
(``bool_cast``); a NaN grid position, or an infinite one under reflection (``nonfinite_grid``: we give
NaN); a tap of weight exactly 0 that reads inf or NaN (``zero_weight_nonfinite``: we sum every tap,
so 0 x inf = NaN, as the weighted-sum formula evaluated in IEEE arithmetic does); the integer
cast (``int_cast``). An infinite grid value under zeros or border padding is a location out of
bound, which the text fixes (0, or the border value).

The drawn cases sample 2-D and 3-D X (3-D linear and nearest only) with sides of 2 or more and
a float32 grid; 1-D, 4-D and 3-D cubic sampling, size-1 axes and the other grid types are in the
named edges (``one_d_*``, ``four_d_*``, ``volumetric_cubic_*``, ``size1_axis_*``, ``grid_*``), so
the backends that lack them are classified by name. For the same reason GridSample-16's drawn
cases and the drawn integer cases use 'nearest': onnx.reference rejects GridSample-16's own mode
names 'bilinear' and 'bicubic' and returns 0 for integer X in linear and cubic modes between pixels (see
harness/expectations/reference.toml); the named edges ``{mode}_{padding}_align{0,1}`` hold every
mode, padding and align_corners of every version and dtype. Drawn grids are multiples of 1/16 and sides small, so every pixel coordinate and every linear
weight is exact in each float type the grid may have (no coordinate lands on the other side
of a floor or a tie by rounding).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

op = Operator("GridSample")
st = S.st
VERSIONS = (16, 20, 22)
CUBIC_A = -0.75
SWEPT = S.FLOATS + S.INTS + ("bool",)
op.restrict(*VERSIONS, dtypes=SWEPT)  # string, complex: no interpolation the spec defines (docstring)


def _text(v, default):
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


def _cubic(d):
    d = np.abs(d)
    a = CUBIC_A
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _reflect(i, lo, hi):
    """The location ``i`` reflected by the borders lo and hi until it lies in [lo, hi].

    The spec: "reflection: use values at locations reflected by the border for out-of-bound grid
    locations. [...] For location far away from the border, it will keep being reflected until
    becoming in bound. If pixel location x = -3.5 reflects by border -1 and becomes x' = 1.5, then
    reflects by border 1 and becomes x'' = 0.5."  Reflecting by lo and then by hi shifts a point by
    twice the span, so the folded line repeats with period 2 * span: fold the distance from lo into
    one period, then the first half of the period runs up from lo and the second half back down to lo.
    A zero span (one pixel, align_corners=1) leaves only the border itself."""
    span = hi - lo
    if span <= 0:
        return np.zeros_like(i)
    period = 2.0 * span
    t = np.mod(i - lo, period)  # in [0, period) whatever the sign of i - lo
    rising = t <= span
    return np.where(rising, lo + t, lo + (period - t))


def _pad(idx, size, padding, align):
    """(index into the axis, valid) for integer tap positions ``idx`` (float64 array)."""
    if padding == "zeros":
        valid = (idx >= 0) & (idx <= size - 1)
        return np.clip(idx, 0, size - 1), valid
    if padding == "border":
        return np.clip(idx, 0, size - 1), np.ones(idx.shape, dtype=bool)
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    return np.clip(np.round(_reflect(idx, lo, hi)), 0, size - 1), np.ones(idx.shape, dtype=bool)


TIE_RULES = {"even": np.rint, "up": lambda c: np.floor(c + 0.5), "down": lambda c: np.ceil(c - 0.5),
             "away": lambda c: np.sign(c) * np.floor(np.abs(c) + 0.5)}


def _axis_taps(c, size, mode, padding, align, tie="even"):
    """Per tap of one axis: (index, weight, valid); ``c`` holds finite pixel coordinates."""
    if mode == "nearest":
        offsets, base = [0.0], TIE_RULES[tie](c)  # the spec (20): halves to even
        weights = [np.ones_like(c)]
    elif mode == "linear":
        base = np.floor(c)
        t = c - base
        offsets, weights = [0.0, 1.0], [1 - t, t]
    else:
        base = np.floor(c)
        t = c - base
        offsets = [-1.0, 0.0, 1.0, 2.0]
        weights = [_cubic(t + 1), _cubic(t), _cubic(1 - t), _cubic(2 - t)]
    out = []
    for o, w in zip(offsets, weights):
        idx, valid = _pad(base + o, size, padding, align)
        out.append((idx.astype(np.int64), w, valid))
    return out


def _coords(grid, spatial, align):
    """Pixel coordinates per spatial axis (outermost first), from grid (N, *out, r) in float64."""
    g = np.asarray(grid).astype(np.float64)
    r = len(spatial)
    out = []
    for axis in range(r):
        gi = g[..., r - 1 - axis]  # the vector lists the innermost dimension first
        size = spatial[axis]
        out.append((gi + 1) / 2 * (size - 1) if align else ((gi + 1) * size - 1) / 2)
    return out


def _attrs(since, attrs):
    mode = _text(attrs.get("mode"), "bilinear" if since == 16 else "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    return mode, _text(attrs.get("padding_mode"), "zeros"), int(attrs.get("align_corners", 0))


def _taps(x_shape, grid, mode, padding, align, tie="even", move_point=False, round_first=False):
    """Every tap combination: (flat spatial index (N, *out), weight, valid), plus the mask of
    output positions whose grid vector is NaN (or infinite under reflection) and the pixel
    coordinates with inf replaced by a point far outside (an out-of-bound location)."""
    spatial = tuple(int(s) for s in x_shape[2:])
    coords = _coords(grid, spatial, align)
    bad = np.zeros(np.shape(grid)[:-1], dtype=bool)
    for c, size in zip(coords, spatial):
        bad |= np.isnan(c)
        if padding == "reflection":
            bad |= np.isinf(c)
    # an infinite location under zeros or border padding is out of bound: a point a few pixels out is
    # as good (reflection keeps every finite point: its reflection depends on how far out it lies)
    coords = [np.where(bad, 0.0, c if padding == "reflection" else np.clip(c, -size - 4.0, 2.0 * size + 4.0))
              for c, size in zip(coords, spatial)]
    if mode == "nearest" and padding != "zeros" and not round_first:
        # the nearest pixel to the location moved to the border or reflected by it ("use values at
        # locations reflected by the border"): move first, then round (a reflected point can land on a half)
        move_point = True
    if move_point and padding == "border":  # the other reading of cubic padding (spec-silent point cubic_padding)
        coords = [np.clip(c, 0, size - 1) for c, size in zip(coords, spatial)]
    elif move_point and padding == "reflection":
        coords = [np.clip(_reflect(c, *((0.0, size - 1.0) if align else (-0.5, size - 0.5))), 0, size - 1)
                  for c, size in zip(coords, spatial)]
    per_axis = [_axis_taps(c, size, mode, padding, align, tie) for c, size in zip(coords, spatial)]
    strides = [int(np.prod(spatial[a + 1:], dtype=np.int64)) for a in range(len(spatial))]
    combos = []
    for combo in np.ndindex(*[len(t) for t in per_axis]):
        flat = np.zeros(bad.shape, dtype=np.int64)
        w = np.ones(bad.shape)
        valid = np.ones(bad.shape, dtype=bool)
        for axis, k in enumerate(combo):
            idx, wk, vk = per_axis[axis][k]
            flat += idx * strides[axis]
            w = w * wk
            valid &= vk
        combos.append((flat, w, valid))
    return combos, bad


def _sample(x, grid, mode, padding, align, skip_zero_weight=False, tie="even", move_point=False, round_first=False):
    """The float64 result (N, C, *out): the sum over taps of weight x value (0 for a tap out
    of bound under zeros padding); NaN where the grid position is open (see ``_taps``)."""
    xw = np.asarray(x).astype(np.float64)
    n, ch = xw.shape[:2]
    out_shape = np.shape(grid)[1:-1]
    y = np.zeros((n, ch) + tuple(out_shape))
    if y.size == 0:
        return y
    flat_x = xw.reshape(n, ch, -1)
    combos, bad = _taps(xw.shape, grid, mode, padding, align, tie, move_point, round_first)
    for flat, w, valid in combos:
        idx = flat.reshape(n, 1, -1)
        vals = np.take_along_axis(flat_x, np.broadcast_to(idx, (n, ch, idx.shape[-1])), axis=2).reshape(y.shape)
        keep = valid if not skip_zero_weight else valid & (w != 0)
        with np.errstate(invalid="ignore"):
            y = y + np.where(keep[:, None], w[:, None] * vals, 0.0)
    return np.where(bad[:, None], np.nan, y)


def _finish(y, x):
    x = np.asarray(x)
    if x.dtype == bool:  # False is 0, True 1; the result is True where the value is not 0 (point bool_cast)
        return np.nan_to_num(y) != 0
    if S.is_int(S.label_of(x.dtype)):
        with np.errstate(invalid="ignore"):
            return np.trunc(np.nan_to_num(y)).astype(x.dtype)
    with np.errstate(all="ignore"):
        return y.astype(x.dtype)


def grid_sample(since, x, grid, attrs):
    mode, padding, align = _attrs(since, attrs)
    if since == 16 and np.ndim(x) != 4:
        raise ValueError("GridSample-16 takes 4-D X only")
    if np.shape(grid)[-1] != np.ndim(x) - 2 or np.shape(grid)[0] != np.shape(x)[0]:
        raise ValueError(f"grid {np.shape(grid)} does not fit X {np.shape(x)}")
    return _finish(_sample(x, grid, mode, padding, align), x)


@op.reference(16)
def grid_sample_16(x, grid, *, align_corners=0, mode="bilinear", padding_mode="zeros"):
    return grid_sample(16, x, grid, {"align_corners": align_corners, "mode": mode, "padding_mode": padding_mode})


@op.reference(20, 22)
def grid_sample_20(x, grid, *, align_corners=0, mode="linear", padding_mode="zeros"):
    return grid_sample(20, x, grid, {"align_corners": align_corners, "mode": mode, "padding_mode": padding_mode})


# -- spec-silent points ------------------------------------------------------------------------
def _reading(**how):
    """GridSample's output sampled as ``how`` says (the options of ``_sample``), cast as ours is."""
    def reading(c):
        mode, padding, align = _attrs(c.since, c.attrs)
        return [_finish(_sample(c.inputs[0], c.inputs[1], mode, padding, align, **how), c.inputs[0])]
    return reading


def _matches(y, a, x):
    """Where ``a`` (a backend's output) is ``y`` (a float64 sample): NaN for NaN, the floor or the
    ceiling for an integer type (the cast is open: point int_cast), within 1e-2 relative for floats
    (the comparator has judged the closeness already; this only tells which reading was taken)."""
    with np.errstate(invalid="ignore"):
        if np.asarray(x).dtype == bool:
            return a == (np.nan_to_num(y) != 0)
        if S.is_int(S.label_of(np.asarray(x).dtype)):
            return (a == np.floor(y)) | (a == np.ceil(y))
        return (np.isnan(y) & np.isnan(a)) | (y == a) | (np.abs(y - a) <= 1e-2 * np.abs(y) + 1e-2)


def _one_of(hows):
    """An invariant: each output of the point matches the sample under one of ``hows(since)``
    (option sets of ``_sample``), as ``_matches`` tells."""
    def check(c):
        mode, padding, align = _attrs(c.since, c.attrs)
        a = np.asarray(c.actual[0]).astype(np.float64)
        ok = np.zeros(a.shape, dtype=bool)
        for how in hows(c.since):
            ok |= _matches(_sample(c.inputs[0], c.inputs[1], mode, padding, align, **how), a, c.inputs[0])
        return bool(ok[c.masks[0]].all())
    return check


def _tie_where(inputs, attrs, expected, since):
    mode, padding, align = _attrs(since, attrs)
    x, grid = inputs[0], inputs[1]
    if mode != "nearest" or np.size(expected[0]) == 0:
        return [None]
    coords = _coords(grid, np.shape(x)[2:], align)
    tie = np.zeros(np.shape(grid)[:-1], dtype=bool)
    finite = np.ones(tie.shape, dtype=bool)
    for c in coords:
        with np.errstate(invalid="ignore"):
            tie |= np.isfinite(c) & (c - np.floor(c) == 0.5)
        finite &= np.isfinite(c)
    tie &= finite  # a NaN or infinite coordinate on another axis: point nonfinite_grid's, or out of bound
    return [np.broadcast_to(tie[:, None], np.shape(expected[0]))]


#: each tied point takes the value of one of its two neighbouring pixels: the output equals the
#: sample under one of the rounding rules (half to even, up, down, away from zero)
_taps_of_neighbours = _one_of(lambda since: [{"tie": tie} for tie in TIE_RULES])


op.spec_silent(
    "nearest_tie", (16,),
    spec="using a specified interpolation method (the mode)",
    expected="half to even (mode: 'Three interpolation modes: bilinear (default), nearest and bicubic', no rounding named), the rule GridSample-20 states ('rounds to the nearest even index when the sampling point falls "
             "halfway between two indices') and torch.nn.functional.grid_sample (nearbyint), which the spec refers to",
    where=_tie_where,
    invariants={"a tied point takes the value of one of its two neighbouring pixels (per tied axis)": _taps_of_neighbours},
    readings={"the tie rounded half away from zero (C's round())": _reading(tie="away")})



def _reflected_tie_where(inputs, attrs, expected, since):
    """Nearest under reflection where the location is out of bound and it, or its reflection,
    falls halfway between two indices: rounding before or after reflecting picks different pixels."""
    mode, padding, align = _attrs(since, attrs)
    x, grid = inputs[0], inputs[1]
    if mode != "nearest" or padding != "reflection" or np.size(expected[0]) == 0:
        return [None]
    hit = np.zeros(np.shape(grid)[:-1], dtype=bool)
    for c, size in zip(_coords(grid, np.shape(x)[2:], align), np.shape(x)[2:]):
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        with np.errstate(invalid="ignore"):
            r = _reflect(np.nan_to_num(c), lo, hi)
            half = (c - np.floor(c) == 0.5) | (r - np.floor(r) == 0.5)
            hit |= np.isfinite(c) & ((c < lo) | (c > hi)) & half
    return [np.broadcast_to(hit[:, None], np.shape(expected[0]))]


_either_rounding_order = _one_of(lambda since: [{"tie": tie, "round_first": first} for first in (False, True)
                                                for tie in (TIE_RULES if since == 16 else ("even",))])


op.spec_silent(
    "reflected_tie", VERSIONS,
    spec={16: "a padding mode (for grid positions falling outside the 2-dimensional image)",
          20: "a padding mode (for `grid` positions falling outside the 2-dimensional image)"},
    expected="reflect the location first, then take the nearest index (half to even): the pixel nearest to the reflected "
             "location, as torch.nn.functional.grid_sample and ONNX Runtime do; rounding first (the out-of-bound point "
             "halfway between two indices) and reflecting the index can pick the other neighbour",
    where=_reflected_tie_where,
    invariants={"the output is the nearest sample with the rounding taken before or after the reflection": _either_rounding_order},
    readings={"the out-of-bound location rounded first (half to even), then the index reflected": _reading(round_first=True)})


def _nonfinite_grid_where(inputs, attrs, expected, since):
    mode, padding, align = _attrs(since, attrs)
    grid = np.asarray(inputs[1]).astype(np.float64)
    if grid.size == 0 or np.size(expected[0]) == 0:
        return [None]
    bad = np.isnan(grid).any(axis=-1)
    if padding == "reflection":
        bad |= np.isinf(grid).any(axis=-1)
    return [np.broadcast_to(bad[:, None], np.shape(expected[0]))]


def _nan_or_in_hull(c):
    """NaN, or a value inside [min, max] of the channel's values and 0 (linear and nearest only
    mix values with non-negative weights; cubic may overshoot, so it keeps only NaN-or-finite)."""
    x = np.asarray(c.inputs[0]).astype(np.float64)
    a = np.asarray(c.actual[0]).astype(np.float64)
    m = c.masks[0]
    mode, _, _ = _attrs(c.since, c.attrs)
    if mode == "cubic":
        return bool((np.isnan(a[m]) | np.isfinite(a[m])).all())
    axes = tuple(range(2, x.ndim))
    with np.errstate(invalid="ignore"):
        lo = np.minimum(np.nanmin(x, axis=axes, initial=np.inf), 0).reshape(x.shape[:2] + (1,) * (a.ndim - 2))
        hi = np.maximum(np.nanmax(x, axis=axes, initial=-np.inf), 0).reshape(x.shape[:2] + (1,) * (a.ndim - 2))
    ok = np.isnan(a) | ((a >= lo) & (a <= hi))
    return bool(ok[m].all())


op.spec_silent(
    "nonfinite_grid", VERSIONS,
    spec={16: "a padding mode (for grid positions falling outside the 2-dimensional image)",
          20: "a padding mode (for `grid` positions falling outside the 2-dimensional image)"},
    expected="NaN: a position that is not a number samples no pixel; an infinite one reflected without end has no "
             "location either (under zeros or border padding an infinite position is out of bound: 0 or the border value)",
    where=_nonfinite_grid_where,
    invariants={"the output is NaN or a value between the channel's extremes and 0 (finite or NaN for cubic)": _nan_or_in_hull})


def _zero_weight_where(inputs, attrs, expected, since):
    mode, padding, align = _attrs(since, attrs)
    x = np.asarray(inputs[0]).astype(np.float64)
    if mode == "nearest" or np.isfinite(x).all() or np.size(expected[0]) == 0:
        return [None]
    n, ch = x.shape[:2]
    flat_x = x.reshape(n, ch, -1)
    combos, bad = _taps(x.shape, inputs[1], mode, padding, align)
    mask = np.zeros((n, ch) + bad.shape[1:], dtype=bool)
    for flat, w, valid in combos:
        idx = flat.reshape(n, 1, -1)
        vals = np.take_along_axis(flat_x, np.broadcast_to(idx, (n, ch, idx.shape[-1])), axis=2).reshape(mask.shape)
        mask |= ((w == 0) & valid)[:, None] & ~np.isfinite(vals)
    return [mask & ~bad[:, None]]


_with_or_without_zero_taps = _one_of(lambda since: [{"skip_zero_weight": skip} for skip in (False, True)])


op.spec_silent(
    "zero_weight_nonfinite", VERSIONS,
    spec={16: "They are used to interpolate output values of `Y[N, C, H_out, W_out]`.",
          20: "They are used to interpolate output values of `Y[n, c, h_out, w_out]`."},
    expected="NaN: every tap enters the weighted sum, and 0 x inf or 0 x NaN is NaN in IEEE arithmetic "
             "(torch.nn.functional.grid_sample multiplies every tap too); an implementation may skip taps of weight 0",
    where=_zero_weight_where,
    invariants={"the output is the weighted sum with or without the taps of weight 0": _with_or_without_zero_taps})


def _cubic_padding_where(inputs, attrs, expected, since):
    """Cubic samples with a tap outside the image under border or reflection padding."""
    mode, padding, align = _attrs(since, attrs)
    x = np.asarray(inputs[0])
    if mode != "cubic" or padding == "zeros" or np.size(expected[0]) == 0:
        return [None]
    spatial = np.shape(x)[2:]
    reach = np.zeros(np.shape(inputs[1])[:-1], dtype=bool)
    for c, size in zip(_coords(inputs[1], spatial, align), spatial):
        with np.errstate(invalid="ignore"):
            base = np.floor(np.nan_to_num(c))
            reach |= np.isfinite(c) & ((base - 1 < 0) | (base + 2 > size - 1))
    return [np.broadcast_to(reach[:, None], np.shape(expected[0]))]


_either_cubic_padding = _one_of(lambda since: [{"move_point": move} for move in (False, True)])


op.spec_silent(
    "cubic_padding", VERSIONS,
    spec={16: "a padding mode (for grid positions falling outside the 2-dimensional image)",
          20: "a padding mode (for `grid` positions falling outside the 2-dimensional image)"},
    expected="each of the 4 taps per axis outside the image takes the border (or reflected) pixel, the point itself is not "
             "moved: torch.nn.functional.grid_sample's bicubic, which the spec refers to, and ONNX Runtime; onnx.reference "
             "moves the point to the border (or reflects it) first and interpolates there",
    where=_cubic_padding_where,
    invariants={"the output is the cubic sample under one of the two readings (taps padded, or the point moved first)":
                _either_cubic_padding},
    readings={"the point moved to the border (or reflected) first, then interpolated (onnx.reference)": _reading(move_point=True)})


def _int_cast_where(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if not S.is_int(S.label_of(x.dtype)) or np.size(expected[0]) == 0:
        return [None]
    mode, padding, align = _attrs(since, attrs)
    y = _sample(x, inputs[1], mode, padding, align)
    return [np.isfinite(y) & (y != np.trunc(np.nan_to_num(y)))]


def _floor_or_ceil(c):
    x, grid = c.inputs[0], c.inputs[1]
    mode, padding, align = _attrs(c.since, c.attrs)
    y = _sample(x, grid, mode, padding, align)
    a = np.asarray(c.actual[0]).astype(np.float64)
    m = c.masks[0]
    return bool(((a[m] == np.floor(y[m])) | (a[m] == np.ceil(y[m]))).all())


op.spec_silent(
    "int_cast", VERSIONS,
    spec="computes the output `Y` using `X` values and pixel locations from",
    expected="truncation toward zero, as C's float-to-integer conversion and numpy's astype do: output Y says 'For integer "
             "input types, intermediate values are computed as floating point and cast to integer at the end', naming no rounding",
    where=_int_cast_where,
    invariants={"the output is the floor or the ceiling of the interpolated value": _floor_or_ceil})


def _bool_where(inputs, attrs, expected, since):
    mode, _, _ = _attrs(since, attrs)
    x = np.asarray(inputs[0])
    if x.dtype != bool or mode == "nearest" or np.size(expected[0]) == 0:
        return [None]
    return [np.ones(np.shape(expected[0]), dtype=bool)]


def _false_where_zero(c):
    """Where every tap of non-zero weight is False (the value is 0), the output is False."""
    mode, padding, align = _attrs(c.since, c.attrs)
    y = np.nan_to_num(_sample(c.inputs[0], c.inputs[1], mode, padding, align))
    a = np.asarray(c.actual[0])
    return a.shape == y.shape and not bool(a[y == 0].any())


op.spec_silent(
    "bool_cast", VERSIONS,
    spec="computes the output `Y` using `X` values and pixel locations from",
    expected="False as 0 and True as 1, interpolated in floating point, True where the value is not 0 (as Cast to bool); "
             "the text's rule for integer types ('computed as floating point and cast to integer at the end') names no bool",
    where=_bool_where,
    invariants={"a sample whose taps are all False (value 0) is False": _false_where_zero})


# -- strategy --------------------------------------------------------------------------------
MODES = {16: ("bilinear", "nearest", "bicubic"), 20: ("linear", "nearest", "cubic")}
PADDINGS = ("zeros", "border", "reflection")


def _since(opset):
    return schema.schema_at("GridSample", opset).since_version


def _x_values(d, dtype, shape, cubic):
    if dtype == "bool":
        return S.arrays(d, dtype, shape=shape)
    if S.is_float(dtype):
        return S.arrays(d, dtype, shape=shape, lo=-4, hi=4)
    if dtype in S.UNSIGNED:
        # cubic weights overshoot: values in [40, 60] keep every result of a 3-D cubic above 0
        return S.arrays(d, dtype, shape=shape, lo=40 if cubic else 0, hi=60)
    return S.arrays(d, dtype, shape=shape, lo=-20, hi=20)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = _since(opset)
    modes = MODES[16 if since == 16 else 20]
    # 1-D, 4-D and 3-D cubic sampling are in the named edges (one_d_*, four_d_*, volumetric_cubic_*)
    # only, so the backends that lack them (torch and ONNX Runtime take 4-D and 5-D X, cubic in 4-D
    # only) are classified by name
    r = 2 if since == 16 else d(st.sampled_from([2, 2, 3]))
    n, ch = d(st.integers(1, 2)), d(st.integers(1, 2))
    side = 4 if r < 3 else 3
    spatial = tuple(d(st.integers(2, side)) for _ in range(r))  # size-1 axes: the edges size1_axis_*
    out = tuple(d(st.integers(1, 3)) for _ in range(r))
    attrs = {}
    if since == 16 or S.is_int(dtype) or dtype == "bool":
        mode = modes[1]  # nearest; the others in the named edges (see the docstring)
    else:
        mode = d(st.sampled_from(modes + (None,) if r == 2 else modes[:2] + (None,)))
    if mode is not None:
        attrs["mode"] = mode
    padding = d(st.sampled_from(PADDINGS + (None,)))
    if dtype in S.UNSIGNED and mode in ("bicubic", "cubic") and padding in ("zeros", None):
        padding = "border"  # zeros next to positive values under a negative lobe: below 0, no uint8 holds it
    if padding is not None:
        attrs["padding_mode"] = padding
    if d(st.booleans()):
        attrs["align_corners"] = d(st.integers(0, 1))
    wide = d(st.booleans())
    limit = 48 if wide else 20  # multiples of 1/16: inside [-1.25, 1.25], or [-3, 3]
    gvals = d(st.lists(st.integers(-limit, limit), min_size=n * int(np.prod(out)) * r, max_size=n * int(np.prod(out)) * r))
    # grid in float32 (ONNX Runtime's only grid type); the other grid types are the edges grid_*
    grid = (np.array(gvals, dtype=np.float64) / 16).reshape((n,) + out + (r,)).astype(np.float32)
    x = _x_values(d, dtype, (n, ch) + spatial, mode in ("bicubic", "cubic"))
    return Example([x, grid], attrs)


# -- edges -----------------------------------------------------------------------------------
def _edge_x(dtype, shape):
    """A ramp with distinct values (small integers, exact in every type)."""
    vals = (np.arange(int(np.prod(shape))) * 7 % 11).astype(np.float64) + (40 if dtype in S.UNSIGNED else -5)
    if dtype == "bool":
        return (vals.reshape(shape) % 2 == 0)
    return vals.reshape(shape).astype(S.np_dtype(dtype))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = _since(opset)
    modes = MODES[16 if since == 16 else 20]
    t = S.np_dtype(dtype)
    is_float = S.is_float(dtype)
    x = _edge_x(dtype, (1, 2, 3, 4))
    # a grid reaching every region: inside, the extrema, just and far outside, the spec's -3.5
    pts = np.array([[-1.0, -1.0], [1.0, 1.0], [0.25, -0.5], [-1.125, 0.0], [1.3125, 0.75], [-3.5, 0.5],
                    [2.75, -2.25], [0.0, 0.0]])
    grid = pts.reshape(1, 2, 4, 2).astype(np.float32)
    out = []
    for mode in modes:
        for padding in PADDINGS:
            for align in (0, 1):
                xm = x
                if dtype in S.UNSIGNED and mode != "nearest" and padding == "zeros":
                    xm = _edge_x(dtype, (1, 2, 3, 4))  # unsigned zeros padding: cubic may go below 0 (int_cast / overflow)
                    if "cubic" in mode:
                        continue
                out.append(Example([xm, grid], {"mode": mode, "padding_mode": padding, "align_corners": align},
                                   name=f"{mode}_{padding}_align{align}"))
    out.append(Example([x, grid], {}, name="defaults"))
    # nearest ties: pixel coordinates exactly halfway, every value dyadic (exact in float32):
    # align_corners=0 on a 4 x 4 image, g = k / 2 - 1 puts c at k - 0.5; align_corners=1 on 5 x 5,
    # g = (2k + 1) / 4 - 1 puts c at k + 0.5
    x4 = _edge_x(dtype, (1, 2, 4, 4))
    ties0 = np.array([[k / 2 - 1, j / 2 - 1] for k in range(5) for j in (0, 3)]).reshape(1, 2, 5, 2)
    out.append(Example([x4, ties0.astype(np.float32)], {"mode": modes[1]}, name="nearest_ties_align0"))
    out.append(Example([x4, ties0.astype(np.float32)], {"mode": modes[1], "padding_mode": "reflection"},
                       name="nearest_ties_reflection"))
    x5 = _edge_x(dtype, (1, 1, 5, 5))
    ties1 = np.array([[(2 * k + 1) / 4 - 1, (2 * j + 1) / 4 - 1] for k in range(-1, 5) for j in (-1, 2)]).reshape(1, 2, 6, 2)
    out.append(Example([x5, ties1.astype(np.float32)], {"mode": modes[1], "align_corners": 1}, name="nearest_ties_align1"))
    out.append(Example([np.zeros((0, 2, 3, 4), dtype=t), np.zeros((0, 2, 2, 2), dtype=np.float32)], {}, name="empty_batch"))
    out.append(Example([x, np.zeros((1, 0, 3, 2), dtype=np.float32)], {}, name="empty_grid"))
    # a spatial axis of size 1 (align_corners=1 divides nothing: every g maps to 0)
    x1 = _edge_x(dtype, (1, 1, 1, 3))
    for align in (0, 1):
        out.append(Example([x1, grid[:, :1]], {"align_corners": align}, name=f"size1_axis_align{align}"))
    grid64 = pts.reshape(1, 2, 4, 2).astype(np.float64)
    out.append(Example([x, grid64], {"mode": modes[0]}, name="grid_float64"))
    out.append(Example([x, pts.reshape(1, 2, 4, 2).astype(np.float16)], {"mode": modes[2], "padding_mode": "border"},
                       name="grid_float16"))
    if since >= 22:
        out.append(Example([x, pts.reshape(1, 2, 4, 2).astype(S.np_dtype("bfloat16"))], {}, name="grid_bfloat16"))
    if is_float:
        # NaN / inf / -0.0 / subnormal / extremes in X, sampled at non-integer points (every tap weight > 0)
        ev = S.edge_values(dtype)
        xe = np.resize(ev, 12).reshape(1, 1, 3, 4).astype(t)
        inner = np.array([[-0.625, -0.5], [0.125, 0.1875], [0.625, 0.5], [-0.1875, 0.8125]]).reshape(1, 1, 4, 2)
        for mode in modes:
            out.append(Example([xe, inner.astype(np.float32)], {"mode": mode}, name=f"edge_values_{mode}"))
        # a tap of weight 0 on inf / NaN: pixel centres exactly (align_corners=1 maps -1, 1 to the corners)
        # (3 x 5 image: column 2 (g + 1), row g + 1 are exact centres)
        xz = np.arange(15, dtype=np.float64).reshape(1, 1, 3, 5)
        xz[0, 0, 1, 2], xz[0, 0, 2, 3] = np.inf, np.nan
        centres = np.array([[0.0, 0.0], [-0.5, 0.0], [0.5, 1.0], [0.0, -1.0]]).reshape(1, 1, 4, 2)
        out.append(Example([xz.astype(t), centres.astype(np.float32)], {"align_corners": 1}, name="zero_weight_inf_nan"))
        tiny = S.smallest_subnormal(dtype)
        out.append(Example([(np.arange(12.0).reshape(1, 1, 3, 4) * tiny).astype(t), inner.astype(np.float32)], {},
                           name="subnormal"))
        out.append(Example([np.array([[[[-0.0, -0.0], [-0.0, -0.0]]]], dtype=t),
                            np.array([[[[0.25, 0.25], [3.0, 3.0]]]], dtype=np.float32)], {}, name="negative_zero"))
    # NaN and infinite grid positions (apart: an infinite one is out of bound, which the text fixes
    # under zeros and border padding; a NaN one is spec-silent)
    gnan = np.array([[np.nan, 0.125], [0.125, np.nan], [0.25, 0.5], [np.nan, np.nan]]).reshape(1, 1, 4, 2).astype(np.float32)
    ginf = np.array([[0.125, np.inf], [-np.inf, 0.5], [np.inf, np.inf], [0.25, -np.inf]]).reshape(1, 1, 4, 2).astype(np.float32)
    for padding in PADDINGS:
        for mode in modes[:2]:
            out.append(Example([x, gnan], {"padding_mode": padding, "mode": mode}, name=f"nan_grid_{mode}_{padding}"))
            out.append(Example([x, ginf], {"padding_mode": padding, "mode": mode}, name=f"inf_grid_{mode}_{padding}"))
    if since >= 20:
        x3 = _edge_x(dtype, (1, 1, 2, 3, 2))
        g3 = np.array([[-1, -1, -1], [1, 1, 1], [0.25, -0.5, 0.125], [1.5, -1.25, 0.5], [-0.375, 0.0625, 2.5],
                       [0.5, 0.5, 0.5]]).reshape(1, 2, 3, 1, 3).astype(np.float32)
        for mode in modes:
            for padding in PADDINGS:
                if dtype in S.UNSIGNED and mode == "cubic" and padding == "zeros":
                    continue
                out.append(Example([x3, g3], {"mode": mode, "padding_mode": padding}, name=f"volumetric_{mode}_{padding}"))
        x1d = _edge_x(dtype, (2, 1, 5))
        g1 = np.array([-1.0, -0.3125, 0.5, 1.25, 0.0, 3.0]).reshape(2, 3, 1).astype(np.float32)
        for mode in modes:
            out.append(Example([x1d, g1], {"mode": mode, "padding_mode": "border", "align_corners": 1}, name=f"one_d_{mode}"))
        x4 = _edge_x(dtype, (1, 1, 2, 2, 2, 2))
        g4 = np.array([[0.25, -0.25, 0.5, -0.5], [1.0, 1.0, -1.0, 0.0]]).reshape(1, 2, 1, 1, 1, 4).astype(np.float32)
        out.append(Example([x4, g4], {"mode": "linear"}, name="four_d_linear"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
def _channel_bound(ref, ins, attrs) -> np.ndarray:
    """A sample mixes the channel's values with weights of total magnitude at most 1 (linear,
    nearest); it rounds with the largest |x| of its channel, not its own magnitude."""
    y = np.asarray(ref(*ins, **attrs))
    x = np.abs(np.nan_to_num(np.asarray(ins[0], dtype=np.float64)))
    m = x.reshape(x.shape[0], x.shape[1], -1).max(axis=-1, initial=0.0) if x.size else np.zeros(x.shape[:2])
    return np.broadcast_to(m.reshape(m.shape + (1,) * (y.ndim - 2)), y.shape)


@op.fuzz(nan=None, ulps=4.0, bound=_channel_bound, type_param="T1")
def fuzz(c: Ctx) -> Plan | None:
    """Sample a 4-D value (N, C, H, W) at a constant grid: linear at multiples of 1/16 inside
    [-1, 1] (exact coordinates, a continuous function of X), or nearest at pixel centres only (no
    point near a half, where rounding could pick either pixel). Integer and bool graphs: none
    (the grid is float)."""
    x = c.take("float", 0, lambda v: v.rank == 4 and v.size > 0 and all(s > 0 for s in v.shape))
    if x is None:
        return None
    n, _, h, w = x.shape
    ho, wo = 1 + c.pick(3), 1 + c.pick(3)
    mode = c.pick(2)
    align = c.pick(2)
    if mode == 0:
        grid = c.rng.integers(-16, 17, size=(n, ho, wo, 2)) / 16.0
        attrs = {}
    else:
        # nearest at pixel centres only: index k's centre, so no tie and no rounding near a half
        cols = c.rng.integers(0, w, size=(n, ho, wo))
        rows = c.rng.integers(0, h, size=(n, ho, wo))
        if align:
            gx = np.where(w > 1, 2 * cols / max(w - 1, 1) - 1, 0.0)
            gy = np.where(h > 1, 2 * rows / max(h - 1, 1) - 1, 0.0)
        else:
            gx, gy = (2 * cols + 1) / w - 1, (2 * rows + 1) / h - 1
        grid = np.stack([gx, gy], axis=-1)
        attrs = {"mode": "nearest"}
    if align:
        attrs["align_corners"] = 1
    if c.pick(2):
        attrs["padding_mode"] = c.choice(["border", "reflection"])
    if c.exact:
        return None  # the grid is float; an integer graph has no float value to hold it
    return Plan([x, c.const(grid)], attrs, n_acc=4)
