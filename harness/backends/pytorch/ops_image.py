"""Image and geometry operators: Resize, Upsample, GridSample, AffineGrid, RoiAlign, Col2Im,
NonMaxSuppression, DeformConv.

Resize is separable: for each resized axis we build an (output x input) interpolation matrix
from the spec's coordinate transformation and the mode's coefficients (nearest with its
rounding rule, linear, cubic with ``cubic_coeff_a``, the antialiasing filters, edge clamping or
``exclude_outside``), then contract the axis with it, in float64. Positions that
``tf_crop_and_resize`` maps outside the input take ``extrapolation_value``.
"""

from __future__ import annotations

import math

import onnx
import torch
import torch.nn.functional as F

from ..base import Unsupported
from ._util import ints, pair_pads, scalar
from .registry import lowers


# -- Resize ----------------------------------------------------------------------------------
def _source_coords(mode, out_len, in_len, scale, roi, target):
    """x_original for every output index (float64), and the mask of those tf_crop_and_resize puts
    outside the input. ``target`` is the fractional length in * scale (align_corners divides
    by it, as the spec's align_corners example); pytorch_half_pixel's test and tf_crop_and_resize's
    division take the integer length of the resized tensor."""
    y = torch.arange(out_len, dtype=torch.float64)
    if mode == "align_corners":
        return (torch.zeros(out_len, dtype=torch.float64) if target == 1 else y * (in_len - 1) / (target - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out_len > 1:
            x = start * (in_len - 1) + y * (end - start) * (in_len - 1) / (out_len - 1)
        else:
            x = torch.full((out_len,), 0.5 * (start + end) * (in_len - 1), dtype=torch.float64)
        return x, (x < 0) | (x > in_len - 1)
    if mode == "pytorch_half_pixel":
        return ((y + 0.5) / scale - 0.5 if out_len > 1 else torch.zeros(out_len, dtype=torch.float64)), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = in_len / 2 * (1 - out_len / target)
        return offset + (y + 0.5) / scale - 0.5, None
    raise Unsupported(f"Resize coordinate_transformation_mode {mode!r}")


def _cubic_kernel(d, a):
    d = d.abs()
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return torch.where(d <= 1, near, torch.where(d < 2, far, torch.zeros_like(d)))


def _nearest_index(x, nearest_mode, in_len):
    if nearest_mode == "round_prefer_floor":
        idx = torch.ceil(x - 0.5)
    elif nearest_mode == "round_prefer_ceil":
        idx = torch.floor(x + 0.5)
    elif nearest_mode == "floor":
        idx = torch.floor(x)
    elif nearest_mode == "ceil":
        idx = torch.ceil(x)
    else:
        raise Unsupported(f"Resize nearest_mode {nearest_mode!r}")
    return idx.clamp(0, max(in_len - 1, 0)).to(torch.int64)


def _coefficients(mode, ratio, scale, antialias, cubic_a):
    """(start offset, coefficients [out, n]) for neighbours base+start .. base+start+n-1,
    where base = x - ratio and ratio lies in (0, 1] (an integer x has ratio 1)."""
    r = ratio.unsqueeze(1)
    s = min(scale, 1.0) if antialias else 1.0
    if mode == "linear":
        start = int(math.floor(-1 / s) + 1)
        n = 2 - 2 * start
        args = (torch.arange(start, start + n, dtype=torch.float64).unsqueeze(0) - r) * s
        c = (1 - args.abs()).clamp(0, 1)
    elif mode == "cubic":
        start = int(math.floor(-2 / s) + 1)
        n = 2 - 2 * start
        args = (torch.arange(start, start + n, dtype=torch.float64).unsqueeze(0) - r) * s
        c = _cubic_kernel(args, cubic_a)
    else:
        raise Unsupported(f"Resize mode {mode!r}")
    if antialias:
        c = c / c.sum(dim=1, keepdim=True)
    return start, c


def _resize_matrix(x, in_len, mode, scale, cubic_a, exclude_outside, antialias):
    base = torch.floor(x)
    ratio = x - base
    integer = ratio == 0
    ratio = torch.where(integer, torch.ones_like(ratio), ratio)
    base = torch.where(integer, base - 1, base).to(torch.int64)
    start, coeffs = _coefficients(mode, ratio, scale, antialias, cubic_a)
    idx = base.unsqueeze(1) + start + torch.arange(coeffs.shape[1]).unsqueeze(0)
    if exclude_outside:
        inside = (idx >= 0) & (idx < in_len)
        coeffs = torch.where(inside, coeffs, torch.zeros_like(coeffs))
        coeffs = coeffs / coeffs.sum(dim=1, keepdim=True)
    idx = idx.clamp(0, in_len - 1)  # edge padding
    w = torch.zeros(x.shape[0], in_len, dtype=torch.float64)
    w.scatter_add_(1, idx, coeffs)
    return w


_RESIZE_MODES = {"nearest": "nearest", "linear": "linear", "bilinear": "linear", "cubic": "cubic"}


@lowers("Resize", 11, 13, 18, 19)
def resize(node, x, roi=None, scales=None, sizes=None, *, antialias=0, axes=None, coordinate_transformation_mode="half_pixel",
           cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
           mode="nearest", nearest_mode="round_prefer_floor"):
    rank = x.dim()
    axes = [a + rank if a < 0 else a for a in (axes if axes is not None else range(rank))]
    n = len(axes)
    crop = coordinate_transformation_mode == "tf_crop_and_resize"
    roi_v = [float(v) for v in roi.reshape(-1).tolist()] if roi is not None and roi.numel() else None
    rois = [(roi_v[k], roi_v[k + n]) if crop and roi_v is not None else (0.0, 1.0) for k in range(n)]
    if scales is not None and scales.numel():
        scale_list = [float(v) for v in scales.reshape(-1).tolist()]
        outs = [int(math.floor(x.shape[a] * (r[1] - r[0]) * s)) for a, s, r in zip(axes, scale_list, rois)]
        targets = [x.shape[a] * s for a, s in zip(axes, scale_list)]
    elif sizes is not None and sizes.numel():
        target = ints(sizes)
        scale_list = [t / x.shape[a] for a, t in zip(axes, target)]
        if keep_aspect_ratio_policy != "stretch":
            s = min(scale_list) if keep_aspect_ratio_policy == "not_larger" else max(scale_list)
            scale_list = [s] * len(axes)
            outs = [int(math.floor(s * x.shape[a] + 0.5)) for a in axes]  # round half up (spec)
            targets = [s * x.shape[a] for a in axes]
        else:
            outs = target
            targets = [float(t) for t in target]
    else:
        raise ValueError("Resize needs scales or sizes")
    return _resize(x, axes, scale_list, outs, targets, rois, mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
                   exclude_outside, antialias, extrapolation_value, node.in_type(0))


#: unsigned ONNX types torch carries in a wider (or same-width signed) dtype: (range, carrier holds the bits)
_UNSIGNED = {onnx.TensorProto.UINT16: (65535, False), onnx.TensorProto.UINT32: (2**32 - 1, False),
             onnx.TensorProto.UINT64: (2**64 - 1, True)}


def _to_wide(x, onnx_type):
    """Integer data as float64 values (a uint64 carried as int64 bits read back as unsigned)."""
    y = x.to(torch.float64)
    if onnx_type in _UNSIGNED and _UNSIGNED[onnx_type][1]:
        y = torch.where(x < 0, y + 2.0**64, y)
    return y


def _from_wide(y, x, onnx_type):
    """float64 averages back to x's (carrier) integer dtype: rounded half to even, saturated to
    the ONNX type's range."""
    if onnx_type in _UNSIGNED:
        top, bits = _UNSIGNED[onnx_type]
        y = torch.round(y).clamp(0, float(top))
        if bits:  # back to int64 bits; float(2**64 - 1) is 2**64, which saturates to the top (all ones)
            top_bits = y >= 2.0**64
            y = torch.where(y >= 2.0**63, y - 2.0**64, y)
            return torch.where(top_bits, torch.tensor(-1, dtype=torch.int64, device=y.device), y.to(torch.int64))
        return y.to(x.dtype)
    info = torch.iinfo(x.dtype)
    y = torch.round(y).clamp(info.min, info.max)
    if x.dtype == torch.int64:  # float(2**63 - 1) is 2**63, which .to(int64) wraps to -2**63
        return torch.where(y >= 2.0**63, torch.tensor(info.max, device=y.device), y.clamp(max=2.0**63 - 1024).to(torch.int64))
    return y.to(x.dtype)


def _apply_weights(y, w):
    """y (..., in) resampled by w (out, in). Over NaN or inf input, tap by tap over w's nonzero
    weights: an output that takes nothing from such an element keeps its value, where a matrix
    product spreads 0 * NaN to every output."""
    if bool(torch.isfinite(y).all()):
        return y @ w.T
    rows, cols = torch.nonzero(w, as_tuple=True)
    return y.new_zeros(y.shape[:-1] + (w.shape[0],)).index_add_(y.dim() - 1, rows, y[..., cols] * w[rows, cols])


def _resize(x, axes, scale_list, outs, targets, rois, mode, coord_mode, nearest_mode, cubic_a, exclude_outside, antialias, extrapolation,
            onnx_type=None):
    mode = _RESIZE_MODES.get(mode, mode)
    if mode not in ("nearest", "linear", "cubic"):
        raise Unsupported(f"Resize mode {mode!r}")
    nearest = mode == "nearest"
    if not nearest and (x.dtype == torch.bool or x.dtype.is_complex):
        raise Unsupported(f"Resize {mode} on {x.dtype}")
    y = x if nearest else (x.to(torch.float64) if x.dtype.is_floating_point else _to_wide(x, onnx_type))
    outside_all = None
    for k, a in enumerate(axes):
        in_len, out_len, s = x.shape[a], outs[k], scale_list[k]
        identity_map = coord_mode not in ("tf_crop_and_resize", "tf_half_pixel_for_nn")
        if identity_map and s == 1.0 and out_len == in_len:
            continue  # the identity along this axis
        coords, outside = _source_coords(coord_mode, out_len, in_len, s, rois[k], targets[k])
        if in_len == 0 or out_len == 0:
            shape = list(y.shape)
            shape[a] = out_len
            y = y.new_zeros(shape)
        elif nearest:
            y = y.index_select(a, _nearest_index(coords, nearest_mode, in_len).to(y.device))
        else:
            w = _resize_matrix(coords, in_len, mode, s, cubic_a, exclude_outside, antialias)
            y = _apply_weights(y.movedim(a, -1), w.to(y.device)).movedim(-1, a)
        if outside is not None:
            shape = [1] * x.dim()
            shape[a] = out_len
            m = outside.reshape(shape).to(y.device)
            outside_all = m if outside_all is None else outside_all | m
    if not nearest:
        y = y.to(x.dtype) if x.dtype.is_floating_point else _from_wide(y, x, onnx_type)
    if outside_all is not None and y.numel():
        fill = torch.tensor(float(extrapolation), dtype=torch.float64)
        if not x.dtype.is_floating_point and x.dtype != torch.bool:
            fill = _from_wide(fill, x, onnx_type)
        y = torch.where(outside_all.expand(y.shape), fill.to(y.dtype).to(y.device), y)
    return y


def _legacy(node, x, scales, mode):
    """Resize-10 and Upsample: x_original = x_resized / scale, nearest by floor."""
    s = [float(v) for v in scales]
    outs = [int(math.floor(d * f)) for d, f in zip(x.shape, s)]
    return _resize(x, list(range(x.dim())), s, outs, [d * f for d, f in zip(x.shape, s)], [(0.0, 1.0)] * x.dim(), mode,
                   "asymmetric", "floor", -0.75, 0, 0, 0.0, node.in_type(0))


@lowers("Resize", 10)
def resize_10(node, x, scales, *, mode="nearest"):
    return _legacy(node, x, scales.reshape(-1).tolist(), mode)


@lowers("Upsample", 9, 10)
def upsample_9(node, x, scales, *, mode="nearest"):
    return _legacy(node, x, scales.reshape(-1).tolist(), mode)


@lowers("Upsample", 7)
def upsample_7(node, x, *, mode="nearest", scales):
    return _legacy(node, x, [float(v) for v in torch.tensor(scales, dtype=torch.float32).tolist()], mode)


@lowers("Upsample", 1)
def upsample_1(node, x, *, mode="nearest", height_scale, width_scale):
    if x.dim() != 4:
        raise ValueError(f"Upsample-1 takes a 4-D input, not rank {x.dim()}")
    hw = torch.tensor([height_scale, width_scale], dtype=torch.float32).tolist()
    return _legacy(node, x, [1.0, 1.0] + hw, mode)


# -- grids -----------------------------------------------------------------------------------
@lowers("GridSample", 16, 20, 22)
def grid_sample(node, x, grid, *, align_corners=0, mode=None, padding_mode="zeros"):
    mode = mode or ("bilinear" if node.since == 16 else "linear")
    torch_mode = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest", "cubic": "bicubic", "bicubic": "bicubic"}[mode]
    spatial = x.dim() - 2
    if spatial not in (1, 2, 3) or (spatial == 3 and torch_mode == "bicubic"):
        # torch.nn.functional.grid_sample takes 4-D (any mode) and 5-D (bilinear, nearest) input only
        raise Unsupported(f"GridSample with {spatial} spatial dimensions in mode {mode}")
    work = x if x.dtype in (torch.float32, torch.float64) else x.float()
    g = grid.to(work.dtype)
    # NaN positions (and infinite ones under reflection, reflected without end) sample nothing: NaN
    # (spec-silent, GridSample.nonfinite_grid); an infinite position is out of bound, which torch
    # only sees as such when it is finite: move it to 4 (beyond [-1, 1] for any size)
    nowhere = g.isnan().any(dim=-1)
    if padding_mode == "reflection":
        nowhere |= g.isinf().any(dim=-1)
    g = torch.where(g.isinf(), g.sign() * 4.0, g)
    g = torch.where(nowhere.unsqueeze(-1), torch.zeros_like(g), g)
    if spatial == 1:
        # a 1-D signal as an image of height 1 sampled on its only row (y = 0 maps to row 0 with either align_corners)
        work, g = work.unsqueeze(2), torch.stack([g[..., 0], torch.zeros_like(g[..., 0])], dim=-1).unsqueeze(1)
    y = F.grid_sample(work, g, mode=torch_mode, padding_mode=padding_mode, align_corners=bool(align_corners))
    if spatial == 1:
        y, nowhere = y.squeeze(2), nowhere
    mask = nowhere.unsqueeze(1).expand_as(y)
    if x.dtype.is_floating_point:
        y = torch.where(mask, torch.full_like(y, float("nan")), y)
        return y.to(x.dtype)
    # integer outputs: "computed as floating point and cast to integer at the end" (torch's cast truncates)
    return torch.where(mask, torch.zeros_like(y), y).to(x.dtype)


@lowers("AffineGrid", 20)
def affine_grid(node, theta, size, *, align_corners=0):
    dims = ints(size)
    if dims[0] == 0:  # torch refuses N = 0; the grid is an empty (0, [D,] H, W, 2 or 3) tensor
        return torch.zeros([0, *dims[2:], len(dims) - 2], dtype=theta.dtype, device=theta.device)
    work = theta if theta.dtype in (torch.float32, torch.float64) else theta.float()
    return F.affine_grid(work, dims, align_corners=bool(align_corners)).to(theta.dtype)


# -- RoiAlign --------------------------------------------------------------------------------
@lowers("RoiAlign", 10, 16, 22)
def roi_align(node, x, rois, batch_indices, *, coordinate_transformation_mode=None, mode="avg", output_height=1,
              output_width=1, sampling_ratio=0, spatial_scale=1.0):
    # RoiAlign-10 had no coordinate_transformation_mode and behaved as "output_half_pixel"
    half_pixel = (coordinate_transformation_mode or ("output_half_pixel" if node.since == 10 else "half_pixel")) == "half_pixel"
    n_rois = rois.shape[0]
    _, c, h, w = x.shape
    work = x.to(torch.float64)
    out = torch.zeros((n_rois, c, output_height, output_width), dtype=torch.float64, device=x.device)
    offset = 0.5 if half_pixel else 0.0
    for r in range(n_rois):
        b = int(batch_indices[r])
        x1, y1, x2, y2 = [float(v) * spatial_scale - offset for v in rois[r].tolist()]
        rw, rh = x2 - x1, y2 - y1
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bin_h, bin_w = rh / output_height, rw / output_width
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / output_height))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / output_width))
        count = max(gh * gw, 1)
        ys = torch.tensor([y1 + ph * bin_h + (iy + 0.5) * bin_h / gh for ph in range(output_height) for iy in range(gh)], dtype=torch.float64)
        xs = torch.tensor([x1 + pw * bin_w + (ix + 0.5) * bin_w / gw for pw in range(output_width) for ix in range(gw)], dtype=torch.float64)
        yy, xx = torch.meshgrid(ys, xs, indexing="ij")
        valid = (yy >= -1.0) & (yy <= h) & (xx >= -1.0) & (xx <= w)
        yy, xx = yy.clamp(min=0), xx.clamp(min=0)
        y_low = yy.floor().to(torch.int64).clamp(max=h - 1)
        x_low = xx.floor().to(torch.int64).clamp(max=w - 1)
        y_high = (y_low + 1).clamp(max=h - 1)
        x_high = (x_low + 1).clamp(max=w - 1)
        yy = torch.where(y_low >= h - 1, y_low.to(torch.float64), yy)
        xx = torch.where(x_low >= w - 1, x_low.to(torch.float64), xx)
        ly, lx = yy - y_low, xx - x_low
        hy, hx = 1 - ly, 1 - lx
        img = work[b]  # C, H, W
        parts = [hy * hx * img[:, y_low, x_low], hy * lx * img[:, y_low, x_high],
                 ly * hx * img[:, y_high, x_low], ly * lx * img[:, y_high, x_high]]
        # each sample is the bilinear interpolation of its four neighbours (0 outside the map);
        # a bin pools its samples' values by their mean ("avg") or their largest ("max")
        samples = torch.where(valid, sum(parts), torch.zeros_like(parts[0]))
        samples = samples.reshape(c, output_height, gh, output_width, gw)
        pooled = samples.amax(dim=(2, 4)) if mode == "max" else samples.sum(dim=(2, 4)) / count
        out[r] = pooled
    return out.to(x.dtype)


# -- Col2Im ----------------------------------------------------------------------------------
@lowers("Col2Im", 18)
def col2im(node, x, image_shape, block_shape, *, dilations=None, pads=None, strides=None):
    image = ints(image_shape)
    block = ints(block_shape)
    n = len(image)
    dilations = list(dilations or [1] * n)
    strides = list(strides or [1] * n)
    sp = pair_pads(pads, n)
    if n == 2 and all(b == e for b, e in sp):
        return F.fold(x, image, block, dilation=dilations, padding=[b for b, _ in sp], stride=strides)
    batch, cols, _ = x.shape
    channels = cols // math.prod(block)
    padded = [d + b + e for d, (b, e) in zip(image, sp)]
    counts = [(p - ((k - 1) * dl + 1)) // s + 1 for p, k, dl, s in zip(padded, block, dilations, strides)]
    out = torch.zeros([batch, channels, *padded], dtype=x.dtype, device=x.device)
    blocks = x.reshape(batch, channels, *block, *counts)
    for kpos in torch.cartesian_prod(*[torch.arange(k) for k in block]).reshape(-1, n).tolist():
        for opos in torch.cartesian_prod(*[torch.arange(c) for c in counts]).reshape(-1, n).tolist():
            at = [o * s + k * dl for o, s, k, dl in zip(opos, strides, kpos, dilations)]
            out[(slice(None), slice(None), *at)] += blocks[(slice(None), slice(None), *kpos, *opos)]
    return out[(slice(None), slice(None), *[slice(b, b + d) for (b, _), d in zip(sp, image)])]


# -- NonMaxSuppression -----------------------------------------------------------------------
@lowers("NonMaxSuppression", 10, 11)
def non_max_suppression(node, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None, *,
                        center_point_box=0):
    limit = int(scalar(max_output_boxes_per_class)) if max_output_boxes_per_class is not None and max_output_boxes_per_class.numel() else 0
    iou_t = float(scalar(iou_threshold)) if iou_threshold is not None and iou_threshold.numel() else 0.0
    score_t = float(scalar(score_threshold)) if score_threshold is not None and score_threshold.numel() else None
    b = boxes.to(torch.float64)
    if center_point_box:
        cx, cy, bw, bh = b.unbind(-1)
        y1, x1, y2, x2 = cy - bh / 2, cx - bw / 2, cy + bh / 2, cx + bw / 2
    else:
        y1, x1, y2, x2 = b.unbind(-1)
        y1, y2 = torch.minimum(y1, y2), torch.maximum(y1, y2)
        x1, x2 = torch.minimum(x1, x2), torch.maximum(x1, x2)
    area = (y2 - y1) * (x2 - x1)
    selected = []
    for n in range(scores.shape[0]):
        for cls in range(scores.shape[1]):
            s = scores[n, cls].to(torch.float64)
            order = torch.sort(s, descending=True, stable=True).indices.tolist()
            keep: list[int] = []
            for i in order:
                if len(keep) >= limit:
                    break
                if score_t is not None and not float(s[i]) >= score_t:
                    break  # "Bounding boxes with score less than score_threshold are removed": equal stays
                ok = True
                for j in keep:
                    ih = (torch.minimum(y2[n, i], y2[n, j]) - torch.maximum(y1[n, i], y1[n, j])).clamp(min=0)
                    iw = (torch.minimum(x2[n, i], x2[n, j]) - torch.maximum(x1[n, i], x1[n, j])).clamp(min=0)
                    inter = ih * iw
                    union = area[n, i] + area[n, j] - inter
                    if union > 0 and float(inter / union) > iou_t:
                        ok = False
                        break
                if ok:
                    keep.append(i)
            selected += [[n, cls, i] for i in keep]
    return torch.tensor(selected, dtype=torch.int64, device=boxes.device).reshape(-1, 3)


# -- DeformConv ------------------------------------------------------------------------------
def _bilinear_zero(img, yy, xx):
    """img (C, H, W); yy, xx (...) float64 -> (C, ...) with zeros outside the image."""
    _, h, w = img.shape
    y0, x0 = torch.floor(yy), torch.floor(xx)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            yi, xi = y0 + dy, x0 + dx
            wgt = (1 - (yy - yi).abs()) * (1 - (xx - xi).abs())
            inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            v = img[:, yi.clamp(0, h - 1).to(torch.int64), xi.clamp(0, w - 1).to(torch.int64)]
            # a corner outside the image adds nothing, not even the NaN or inf of the clamped edge cell it reads
            out = out + torch.where(inside, wgt * v, torch.zeros((), dtype=v.dtype))
    return out


@lowers("DeformConv", 19, 22)
def deform_conv(node, x, w, offset, b=None, mask=None, *, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None, strides=None):
    if x.dim() != 4:
        raise Unsupported(f"DeformConv with {x.dim() - 2} spatial dimensions")
    n, c, h, wd = x.shape
    kh, kw = kernel_shape or list(w.shape[2:])
    sh, sw = strides or [1, 1]
    dh, dw = dilations or [1, 1]
    (pt, pb), (pl, pr) = pair_pads(pads, 2)
    oh = (h + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
    work = x.to(torch.float64)
    off = offset.to(torch.float64).reshape(n, offset_group, kh * kw, 2, oh, ow)
    msk = mask.to(torch.float64).reshape(n, offset_group, kh * kw, oh, ow) if mask is not None else None
    oy = torch.arange(oh, dtype=torch.float64).reshape(oh, 1) * sh - pt
    ox = torch.arange(ow, dtype=torch.float64).reshape(1, ow) * sw - pl
    per_group = c // offset_group
    cols = torch.zeros((n, c, kh * kw, oh, ow), dtype=torch.float64)
    for bi in range(n):
        for g in range(offset_group):
            img = work[bi, g * per_group:(g + 1) * per_group]
            for k in range(kh * kw):
                ky, kx = divmod(k, kw)
                yy = oy + ky * dh + off[bi, g, k, 0]
                xx = ox + kx * dw + off[bi, g, k, 1]
                sampled = _bilinear_zero(img, yy, xx)
                if msk is not None:
                    sampled = sampled * msk[bi, g, k]
                cols[bi, g * per_group:(g + 1) * per_group, k] = sampled
    oc = w.shape[0]
    cg, og = c // group, oc // group
    wt = w.to(torch.float64).reshape(group, og, cg, kh * kw)
    cols = cols.reshape(n, group, cg, kh * kw, oh, ow)
    y = torch.einsum("gock,ngckyx->ngoyx", wt, cols).reshape(n, oc, oh, ow)
    if b is not None:
        y = y + b.to(torch.float64).reshape(1, -1, 1, 1)
    return y.to(x.dtype)
