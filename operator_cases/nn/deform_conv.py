"""DeformConv: convolution whose taps sample the input at learned fractional offsets, optionally
scaled by a mask (ONNX spec: DeformConv-19, 22; arXiv 1703.06211 and 1811.11168).

X is (N, C, D1..Dn), W (oC, C/group, k1..kn), ``offset`` (N, offset_group * k1 * ... * kn * n,
o1..on), the optional B (oC) and ``mask`` (N, offset_group * k1 * ... * kn, o1..on) (its 2-D
shape in the text; see below). The output size is Conv's with explicit pads. Tap ``j`` of output
``o`` samples, for the channels of offset group ``og`` (C / offset_group consecutive channels),
the location ``o * stride - pad_begin + j * dilation + offset[og, j, axis, o]`` (the offset
channels ordered offset group, then tap in row-major order, then axis), "Use linear
interpolation for fractional offset values": the value there is the multilinear interpolation
of the 2^n neighbouring cells, a neighbour outside the input being 0 (zero padding). The sample
is multiplied by ``mask[og, j, o]`` (default ones) and the taps are combined as in Conv with
``group`` (C and oC divided into groups). DeformConv-22 adds bfloat16.

Spec-silent: "Sampling locations outside of the padded input tensor gives zero". A location
within one cell outside an *unpadded* border (in (-1, 0) with pad_begin 0, or in (D - 1, D) with
pad_end 0) is outside the padded tensor, so the text gives 0; the common implementations
(the papers' code, torchvision) interpolate it with the border cell, which the text does not
exclude either (a location between two cells is "outside" only by reading it literally). We
take the literal zero; the invariant is that each such output is the result under one reading
or the other. Farther out both readings give 0 (every neighbour is padding or beyond).

Not drawn: ranks other than 2 (the mask's N-D shape in the text, ``offset_group * k1 * ... * kn
* n``, contradicts its 2-D shape ``offset_group * kH * kW``; ONNX Runtime implements 2-D only).

Spec-silent: a NaN or an infinity beside a whole sampling location (``weight_zero_neighbour``).
Interpolation there is the cell itself (ours: neighbours of weight 0 skipped); a weighted sum
over every in-range neighbour makes 0 * NaN = NaN (ONNX Runtime, onnx.reference and the kernel
engine). Both are readings, the example ``nan_beside_whole_location`` reaches it; the NaN/inf
example ``nan_inf_half_offsets`` samples at half offsets, where every weight is 1/4.

A location wholly outside the padded input gives 0 whatever the input holds (the text says so):
``nan_cell_not_sampled`` puts a NaN in a corner cell that only such locations touch, where
implementations that read a clamped neighbour and weight it 0 produce NaN.

Evaluated in float64 (neighbours with weight 0 skipped) and rounded once. The fuzz template
keeps every pad at 1 or more and offsets inside (-1, 1), so the spec-silent band never arises.
"""

from __future__ import annotations

import itertools

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan, abs_bound, size_of
from harness.registry import Example, Operator, SilentCheck

from .._common import back, wide
from ._conv_util import ramp, stated_window_attrs, sub_normal
from .._reduce_util import float_grid
from ._window_util import ints

op = Operator("DeformConv")
st = S.st
VERSIONS = (19, 22)


def _geometry(x, kernel, strides, dilations, pads):
    sp = list(np.shape(x)[2:])
    r = len(sp)
    s, d, p = ints(strides, r, 1), ints(dilations, r, 1), ints(pads, 2 * r, 0)
    out = [(sp[i] + p[i] + p[i + r] - ((kernel[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(r)]
    return sp, s, d, p, out


def locations(x, offset, kernel, strides, dilations, pads, offset_group):
    """Per axis, the sampling locations (N, offset_group, K, o1..or)."""
    sp, s, d, p, out = _geometry(x, kernel, strides, dilations, pads)
    r, n, k = len(sp), np.shape(x)[0], int(np.prod(kernel))
    off = wide(offset).reshape(n, int(offset_group), k, r, *out)
    taps = np.indices(kernel).reshape(r, k)
    grid = np.indices(out) if out else np.zeros((0,))
    pos = []
    for i in range(r):
        base = grid[i][None] * s[i] - p[i] + taps[i].reshape((k,) + (1,) * r) * d[i]  # (K, o..)
        pos.append(base[None, None] + off[:, :, :, i])
    return pos, (sp, s, d, p, out)


def deform(x, w, offset, b=None, mask=None, *, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None,
           strides=None, literal=True, weight_zero_taps=False):
    x, w = np.asarray(x), np.asarray(w)
    kernel = list(kernel_shape) if kernel_shape is not None else list(w.shape[2:])
    sp, _, _, p, out = _geometry(x, kernel, strides, dilations, pads)
    r, (n, c), k, og = len(sp), x.shape[:2], int(np.prod(kernel)), int(offset_group)
    if tuple(np.shape(offset)) != (n, og * k * r, *out):
        raise ValueError(f"DeformConv: offset {np.shape(offset)} is not {(n, og * k * r, *out)}")
    pos, _ = locations(x, offset, kernel, strides, dilations, pads, offset_group)
    size = int(np.prod(sp))
    xg = wide(x).reshape(n, og, c // og, size)
    cols = np.zeros((n, og, c // og, k, *out))
    lows = [np.floor(q) for q in pos]
    for corner in itertools.product((0, 1), repeat=r):
        weight = np.ones(pos[0].shape)
        valid = np.ones(pos[0].shape, dtype=bool)
        flat = np.zeros(pos[0].shape, dtype=np.int64)
        for i in range(r):
            idx = lows[i] + corner[i]
            frac = pos[i] - lows[i]
            weight = weight * (frac if corner[i] else 1 - frac)
            valid &= (idx >= 0) & (idx < sp[i])
            flat = flat * sp[i] + np.clip(idx, 0, sp[i] - 1).astype(np.int64)
        use = valid if weight_zero_taps else valid & (weight != 0)
        if not size or not n:
            continue
        taken = np.take_along_axis(xg, np.broadcast_to(flat.reshape(n, og, 1, -1), (n, og, c // og, flat[0, 0].size)), axis=3)
        taken = taken.reshape(n, og, c // og, k, *out)
        cols = cols + np.where(use[:, :, None], taken * weight[:, :, None], 0.0)
    if literal:  # outside [-pad_begin, D - 1 + pad_end] on some axis: 0
        inside = np.ones(pos[0].shape, dtype=bool)
        for i in range(r):
            inside &= (pos[i] >= -p[i]) & (pos[i] <= sp[i] - 1 + p[i + r])
        cols = np.where(inside[:, :, None], cols, 0.0)
    if mask is not None:
        cols = cols * wide(mask).reshape(n, og, 1, k, *out)
    groups, m = int(group), w.shape[0]
    cols = cols.reshape(n, groups, c // groups, k, int(np.prod(out)))
    ww = wide(w).reshape(groups, m // groups, c // groups, k)
    y = np.einsum("ngckq,gmck->ngmq", cols, ww).reshape(n, m, *out)
    if b is not None:
        y = y + wide(b).reshape((m,) + (1,) * r)
    return back(y, x)


@op.reference(*VERSIONS)
def deform_conv(x, w, offset, b=None, mask=None, **attrs):
    return deform(x, w, offset, b, mask, **attrs)


def border_band(inputs: list, attrs: dict, expected: list, since: int) -> list:
    """Open: outputs with a tap in (-1, 0) before an unpadded begin or in (D - 1, D) after an
    unpadded end."""
    x, w, offset = inputs[:3]
    kernel = list(attrs.get("kernel_shape") or np.shape(w)[2:])
    pos, (sp, _, _, p, out) = locations(x, offset, kernel, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                                        attrs.get("offset_group", 1))
    r = len(sp)
    band = np.zeros(pos[0].shape, dtype=bool)
    for i in range(r):
        band |= ((pos[i] > -1) & (pos[i] < 0) & (p[i] == 0)) | ((pos[i] > sp[i] - 1) & (pos[i] < sp[i]) & (p[i + r] == 0))
    hit = band.reshape(band.shape[0], -1, *out).any(axis=1) if band.size else np.zeros((band.shape[0], *out), dtype=bool)
    return [np.broadcast_to(hit[:, None], np.shape(expected[0]))]


def either_reading(c: SilentCheck) -> bool:
    mask = c.masks[0]
    ins = list(c.inputs) + [None] * (5 - len(c.inputs))
    got = np.asarray(c.actual[0]).astype(np.float64)[mask]
    outs = [np.asarray(deform(*ins[:5], **c.attrs, literal=lit)).astype(np.float64)[mask] for lit in (True, False)]
    close = [np.isclose(got, o, rtol=1e-2, atol=1e-3, equal_nan=True) for o in outs]  # within any dtype's rounding
    return bool(np.all(close[0] | close[1]))


op.spec_silent(
    "border_sampling", VERSIONS,
    spec="Performs deformable convolution as described in https://arxiv.org/abs/1703.06211 and https://arxiv.org/abs/1811.11168.",
    expected="0 for a location outside [-pad_begin, D - 1 + pad_end]: the offset input's text read literally ('Sampling locations "
             "outside of the padded input tensor gives zero'); implementations commonly interpolate with the border cell within "
             "one cell of an unpadded border",
    where=border_band,
    invariants={"each such output is the literal result or the one interpolating with zeros beyond the border": either_reading},
    readings={"bilinear interpolation with zeros beyond the unpadded border (within one cell of it), as the papers' "
              "implementations sample": lambda c: [_interpolating(c)]})


def _nonfinite_at_weight_zero(inputs: list, attrs: dict, expected: list, since: int) -> list:
    """Open: outputs whose value changes when the in-range neighbours of weight 0 are taken too
    (a NaN or an infinity beside a whole sampling location: 0 * NaN and 0 * inf are NaN)."""
    x = np.asarray(inputs[0])
    if not S.is_float(S.label_of(x.dtype)) or x.size == 0 or np.isfinite(x.astype(np.float64)).all():
        return [None]
    ins = list(inputs) + [None] * (5 - len(inputs))
    with np.errstate(all="ignore"):
        skipped, taken = (np.asarray(deform(*ins[:5], **attrs, weight_zero_taps=z), dtype=np.float64) for z in (False, True))
    return [~np.isclose(skipped, taken, rtol=0, atol=0, equal_nan=True)]


op.spec_silent(
    "weight_zero_neighbour", VERSIONS,
    spec="Performs deformable convolution as described in https://arxiv.org/abs/1703.06211 and https://arxiv.org/abs/1811.11168.",
    expected="the cell itself at a whole sampling location: bilinear interpolation there is the cell's value, its "
             "neighbours of weight 0 take no part (the text names no weighted sum that would make 0 * NaN count)",
    where=_nonfinite_at_weight_zero,
    invariants={"each such output is NaN or the value without the weight-0 neighbours": lambda c: _nan_or_ours(c)},
    readings={"every in-range neighbour weighted, 0 included: 0 * NaN = 0 * inf = NaN (ONNX Runtime, onnx.reference)":
              lambda c: [_weighted_all(c)]})


def _weighted_all(c: SilentCheck) -> np.ndarray:
    ins = list(c.inputs) + [None] * (5 - len(c.inputs))
    with np.errstate(all="ignore"):
        return back(deform(*ins[:5], **c.attrs, weight_zero_taps=True), np.asarray(c.inputs[0]))


def _nan_or_ours(c: SilentCheck) -> bool:
    got = np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]
    ours = np.asarray(c.expected[0]).astype(np.float64)[c.masks[0]]
    return bool(np.all(np.isnan(got) | np.isclose(got, ours, rtol=1e-2, atol=1e-3, equal_nan=True)))


def _interpolating(c: SilentCheck) -> np.ndarray:
    ins = list(c.inputs) + [None] * (5 - len(c.inputs))
    return np.asarray(deform(*ins[:5], **c.attrs, literal=False)).astype(np.asarray(c.expected[0]).dtype)


def quarters(d, shape, lo, hi):
    """Multiples of 1/4 in [lo, hi] (exact in every float type)."""
    count = int(np.prod(shape))
    return np.array(d(st.lists(st.integers(int(lo * 4), int(hi * 4)), min_size=count, max_size=count)), dtype=np.float64).reshape(shape) / 4


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    t = S.np_dtype(dtype)
    n, c = d(st.integers(1, 2)), d(st.sampled_from([1, 2, 4]))
    group = d(st.sampled_from([g for g in (1, 2) if c % g == 0]))
    og = d(st.sampled_from([g for g in (1, 2, 4) if c % g == 0]))
    m = group * d(st.integers(1, 2))
    for _ in range(16):
        sp = [d(st.integers(1, 5)) for _ in range(2)]
        kernel = [d(st.integers(1, 3)) for _ in range(2)]
        s = [d(st.sampled_from([1, 1, 2])) for _ in range(2)]
        dil = [d(st.sampled_from([1, 1, 2])) for _ in range(2)]
        pads = [d(st.integers(0, 2)) for _ in range(4)]
        attrs = {"kernel_shape": kernel, **stated_window_attrs(d, s, dil, pads)}
        out = _geometry(np.zeros((1, 1, *sp)), kernel, s, dil, pads)[4]
        if min(out) >= 1 and n * c * int(np.prod(sp)) <= 128 and n * og * int(np.prod(kernel)) * 2 * int(np.prod(out)) <= 256:
            break
    else:
        sp, kernel, attrs, out = [2, 2], [1, 1], {"kernel_shape": [1, 1]}, [2, 2]
    if d(st.booleans()):
        del attrs["kernel_shape"]
    if group != 1 or d(st.integers(0, 3)) == 0:
        attrs["group"] = group
    if og != 1 or d(st.integers(0, 3)) == 0:
        attrs["offset_group"] = og
    k = int(np.prod(kernel))
    terms = c // group * k + 1
    x = float_grid(d, dtype, (n, c, *sp), terms, 4.0, 2)
    w = float_grid(d, dtype, (m, c // group, *kernel), terms, 4.0, 2)
    step = d(st.sampled_from([1.0, 0.25, 0.5]))  # whole, quarter or half offsets
    offset = (np.round(quarters(d, (n, og * k * 2, *out), -2.5, 2.5) / step) * step).astype(t)
    b = float_grid(d, dtype, (m,), terms, 4.0, 2) if d(st.booleans()) else None
    mask = quarters(d, (n, og * k, *out), 0, 1.25).astype(t) if d(st.booleans()) else None
    return Example([x, w, offset, b, mask], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    x = ramp(t, (1, 2, 4, 4))
    w = ramp(t, (2, 2, 2, 2), start=2, mod=5, offset=2)
    zeros = np.zeros((1, 8, 3, 3), dtype=t)
    half = np.full((1, 8, 3, 3), 0.5, dtype=t)
    mixed = (ramp(np.float64, (1, 8, 3, 3), mod=9, offset=4) / 4).astype(t)  # quarters in [-1, 1]
    mask = (ramp(np.float64, (1, 4, 3, 3), start=0, mod=5, offset=0) / 4).astype(t)
    bias = np.array([0.5, -1], dtype=t)
    out = [
        Example([x, w, zeros], {}, name="zero_offsets_is_conv"),
        Example([x, w, np.zeros((1, 8, 4, 4), dtype=t), bias], {"pads": [1, 0, 0, 1]}, name="zero_offsets_pads_bias"),
        Example([x, w, half], {}, name="half_offsets"),
        Example([x, w, mixed, bias, mask], {}, name="quarter_offsets_mask"),
        Example([x, w, np.full((1, 8, 3, 3), 7, dtype=t)], {}, name="far_outside_is_zero"),
        Example([x, w, np.full((1, 8, 4, 4), -0.5, dtype=t)], {"pads": [1, 1, 0, 0]}, name="into_padding"),
        Example([x, w, np.full((1, 8, 3, 3), -0.5, dtype=t)], {}, name="border_band"),  # spec-silent
        Example([x, w, np.full((1, 8, 3, 3), 0.75, dtype=t)], {}, name="border_band_end"),  # spec-silent
        Example([x, w, np.zeros((1, 8, 2, 2), dtype=t)], {"strides": [2, 2], "kernel_shape": [2, 2]}, name="strided"),
        Example([x, w, (ramp(np.float64, (1, 8, 2, 2), mod=5, offset=2) / 2).astype(t)], {"dilations": [2, 2]}, name="dilated"),
        Example([x, ramp(t, (2, 1, 2, 2)), np.concatenate([mixed, -mixed], axis=1), None, np.concatenate([mask, mask[:, ::-1]], axis=1)],
                {"group": 2, "offset_group": 2}, name="groups_offset_groups"),
        Example([x, w, np.concatenate([mixed, half], axis=1)], {"offset_group": 2}, name="offset_group2"),
        Example([ramp(t, (1, 1, 3, 3)), ramp(t, (1, 1, 1, 1), start=5), (ramp(np.float64, (1, 2, 3, 3)) / 2).astype(t)], {},
                name="kernel_1x1"),
        Example([x, w, zeros, None, np.zeros((1, 4, 3, 3), dtype=t)], {}, name="mask_zero"),
    ]
    special = ramp(np.float64, (1, 1, 4, 4))
    special[0, 0, 1, 1], special[0, 0, 2, 2], special[0, 0, 0, 3] = np.nan, np.inf, -np.inf
    out.append(Example([special.astype(t), np.ones((1, 1, 2, 2), dtype=t), half], {}, name="nan_inf_half_offsets"))
    # a NaN cell that no tap samples (every location of the first row and column lies wholly outside the input)
    lone = np.array([[[[np.nan, 1], [2, 3]]]]).astype(t)
    out.append(Example([lone, np.ones((1, 1, 1, 1), dtype=t), np.full((1, 2, 4, 4), -0.5, dtype=t)], {"pads": [1, 1, 1, 1]},
                       name="nan_cell_not_sampled"))
    # a NaN beside whole sampling locations (DeformConv.weight_zero_neighbour): zero offsets, a 1x1 kernel
    beside = ramp(np.float64, (1, 1, 3, 3))
    beside[0, 0, 1, 1] = np.nan
    out.append(Example([beside.astype(t), np.ones((1, 1, 1, 1), dtype=t), np.zeros((1, 2, 3, 3), dtype=t)], {},
                       name="nan_beside_whole_location"))
    out.append(Example([sub_normal(x), w, half], {}, name="subnormal_signed_zero"))
    out.append(Example([np.zeros((0, 2, 4, 4), dtype=t), w, np.zeros((0, 8, 3, 3), dtype=t)], {}, name="empty_batch"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=4.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    """A 2-D deformable convolution of a pool value with constant weights and offsets. Every pad
    is at least 1 and every offset inside (-1, 1), so no location falls in the spec-silent band
    one cell outside an unpadded border (both readings agree everywhere)."""
    # spatial dims of 2 or more: onnx.reference raises on a size-1 one (operator_cases/crosscheck.toml)
    x = c.take("float", 0, lambda v: v.rank == 4 and v.size > 0 and min(v.shape[2:]) >= 2)
    if x is None:
        return None
    n, channels, sp = x.shape[0], x.shape[1], x.shape[2:]
    kernel = [1 + c.pick(min(3, s + 2)) for s in sp]
    pads = [1 + c.pick(2) for _ in range(4)]
    attrs = {"kernel_shape": kernel, "pads": pads}
    out = _geometry(np.zeros((1, 1, *sp)), kernel, None, None, pads)[4]
    og = c.choice([g for g in (1, channels) if channels % g == 0])
    k = size_of(tuple(kernel))
    if min(out) < 1 or n * og * k * 2 * size_of(tuple(out)) > MAX_ELEMENTS or n * channels * size_of(tuple(out)) > MAX_ELEMENTS:
        return None
    if og > 1:
        attrs["offset_group"] = og
    out_channels = 1 + c.pick(2)
    w = c.const(c.floats((out_channels, channels, *kernel)))
    offset = c.const(c.floats((n, og * k * 2, *out), -0.875, 0.875))
    ins = [x, w, offset] + ([c.const(c.floats((out_channels,)))] if c.pick(2) else [])
    return Plan(ins, attrs, n_acc=4 * channels * k + 1)
