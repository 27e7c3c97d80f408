"""Neural-network operators: convolution, pooling, normalization, softmax, dropout, losses.

Pooling follows the spec's output-size rules (explicit pads, ``auto_pad``, ``ceil_mode``
where a window that would start in the right padding is dropped, dilations). The common case
(symmetric pads no larger than half the kernel, floating point) runs on torch's own pooling
kernels; every other case runs through a general window extraction (``Tensor.unfold``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..base import Unsupported
from ..lowering import conv_transpose_pads, softmax_like
from ._util import auto_pads, consumed, ints, pair_pads, scalar
from .registry import lowers

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _flat_pads(pads: list[tuple[int, int]]) -> list[int]:
    """(begin, end) per spatial axis -> the last-axis-first list F.pad takes."""
    out: list[int] = []
    for begin, end in reversed(pads):
        out += [begin, end]
    return out


def _spatial_pads(node, x, kernel, strides, dilations, pads, auto_pad):
    n = len(kernel)
    chosen = auto_pads(auto_pad, list(x.shape[2:]), kernel, strides, dilations)
    return chosen if chosen is not None else pair_pads(pads, n)


# -- convolution -----------------------------------------------------------------------------
def _window(node, table, x, w, kernel_shape, strides, dilations):
    """Conv's and ConvTranspose's spatial rank (one ``table`` has a torch function for), kernel,
    strides and dilations, the spec's defaults filled in."""
    n = x.dim() - 2
    if n not in table:
        raise Unsupported(f"{node.op} with {n} spatial dimensions")
    return n, list(kernel_shape or w.shape[2:]), list(strides or [1] * n), list(dilations or [1] * n)


@lowers("Conv", 1, 11, 22)
def conv(node, x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    n, kernel, strides, dilations = _window(node, _CONV, x, w, kernel_shape, strides, dilations)
    sp = _spatial_pads(node, x, kernel, strides, dilations, pads, auto_pad)
    if all(p[0] == p[1] for p in sp):
        padding = [p[0] for p in sp]
    else:
        x = F.pad(x, _flat_pads(sp))
        padding = [0] * n
    return _CONV[n](x, w, b, stride=strides, padding=padding, dilation=dilations, groups=group)


@lowers("ConvTranspose", 1, 11, 22)
def conv_transpose(node, x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
                   output_padding=None, output_shape=None, pads=None, strides=None):
    n, kernel, strides, dilations = _window(node, _CONV_T, x, w, kernel_shape, strides, dilations)
    out_pad = list(output_padding or [0] * n)
    sizes = list(x.shape[2:])
    sp = conv_transpose_pads(node.since, sizes, kernel, strides, dilations, out_pad, auto_pad, output_shape, pads)
    y = _CONV_T[n](x, w, None, stride=strides, padding=0, output_padding=0, groups=group, dilation=dilations)
    # output_padding adds elements at the end; then the pads are cut off (or added, if negative)
    for k in range(n):
        axis = 2 + k
        begin, end = sp[k]
        end -= out_pad[k]
        length = y.shape[axis]
        if begin < 0 or end < 0:
            grow = [0, 0] * n
            grow[2 * (n - 1 - k)] = max(-begin, 0)
            grow[2 * (n - 1 - k) + 1] = max(-end, 0)
            y = F.pad(y, grow)
            begin, end = max(begin, 0), max(end, 0)
            length = y.shape[axis]
        y = y.narrow(axis, begin, length - begin - end)
    if b is not None:
        y = y + b.reshape([1, -1] + [1] * n)
    return y


def _int_conv(x, w, x_zp, w_zp, group, kwargs):
    xi = x.to(torch.float64) - (x_zp.to(torch.float64) if x_zp is not None else 0)
    wf = w.to(torch.float64)
    if w_zp is not None:
        wf = wf - w_zp.to(torch.float64).reshape([-1] + [1] * (w.dim() - 1)) if w_zp.numel() > 1 else wf - w_zp.to(torch.float64)
    return conv(None, xi, wf, None, group=group, **kwargs)


@lowers("ConvInteger", 10)
def conv_integer(node, x, w, x_zero_point=None, w_zero_point=None, *, group=1, **kwargs):
    # exact in float64: int8 products summed over any realistic kernel stay below 2**53
    return torch.round(_int_conv(x, w, x_zero_point, w_zero_point, group, kwargs)).to(torch.int32)


@lowers("QLinearConv", 10)
def qlinear_conv(node, x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, b=None, *, group=1, **kwargs):
    acc = _int_conv(x, w, x_zp, w_zp, group, kwargs)
    if b is not None:
        acc = acc + b.to(torch.float64).reshape([1, -1] + [1] * (x.dim() - 2))
    ws = w_scale.to(torch.float64)
    ws = ws.reshape([1, -1] + [1] * (x.dim() - 2)) if ws.numel() > 1 else ws
    y = acc * (x_scale.to(torch.float64) * ws) / y_scale.to(torch.float64)
    y = torch.round(y) + y_zp.to(torch.float64)
    info = torch.iinfo(y_zp.dtype)
    return y.clamp(info.min, info.max).to(y_zp.dtype)


# -- pooling ---------------------------------------------------------------------------------
def _pool_geometry(x, kernel, strides, dilations, sp, ceil_mode):
    """Per spatial axis: output size and the padding to add at the end beyond explicit pads."""
    outs, extra = [], []
    for i, k in enumerate(kernel):
        size = x.shape[2 + i]
        begin, end = sp[i]
        eff = (k - 1) * dilations[i] + 1
        span = size + begin + end - eff
        if ceil_mode:
            o = -(-span // strides[i]) + 1
            if (o - 1) * strides[i] >= size + begin:  # a window starting in the right padding is dropped
                o -= 1
        else:
            o = span // strides[i] + 1
        outs.append(max(o, 0))
        extra.append(max((o - 1) * strides[i] + eff - (size + begin + end), 0))
    return outs, extra


def _windows(t, kernel, strides, dilations, outs):
    """(N, C, *spatial) padded -> (N, C, *outs, window elements)."""
    n = len(kernel)
    for i in range(n):
        eff = (kernel[i] - 1) * dilations[i] + 1
        t = t.unfold(2 + i, eff, strides[i]).narrow(2 + i, 0, outs[i])
        if dilations[i] > 1:
            t = t[..., :: dilations[i]]
    return t.reshape(list(t.shape[: 2 + n]) + [math.prod(kernel)])  # explicit: an empty batch has no -1


def _pad_two(t, sp, extra, explicit_value, extra_value):
    t = F.pad(t, _flat_pads(sp), value=explicit_value)
    if any(extra):
        t = F.pad(t, _flat_pads([(0, e) for e in extra]), value=extra_value)
    return t


def _pool_args(x, kernel_shape, strides, dilations, pads, auto_pad):
    kernel = list(kernel_shape)
    n = len(kernel)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    sp = _spatial_pads(None, x, kernel, strides, dilations, pads, auto_pad)
    return kernel, strides, dilations, sp


def _fast_ok(x, kernel, dilations, sp, n_max=3):
    return (x.dtype in (torch.float32, torch.float64) and 1 <= len(kernel) <= n_max
            and all(b == e and b <= ((k - 1) * d + 1) // 2 for (b, e), k, d in zip(sp, kernel, dilations)))


@lowers("MaxPool", 1, 8, 10, 11, 12, 22)
def max_pool(node, x, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None, storage_order=0, strides=None):
    kernel, strides, dilations, sp = _pool_args(x, kernel_shape, strides, dilations, pads, auto_pad)
    n = len(kernel)
    want_indices = node.wants(1)
    spatial = list(x.shape[2:])
    plane = math.prod(spatial)
    if _fast_ok(x, kernel, dilations, sp) and auto_pad in ("NOTSET", "", "VALID") and not (want_indices and storage_order):
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
        y, idx = fn(x, kernel, strides, [b for b, _ in sp], dilations, ceil_mode=bool(ceil_mode), return_indices=True)
        if not want_indices:
            return y
        offsets = torch.arange(x.shape[0] * x.shape[1], device=x.device).reshape(x.shape[0], x.shape[1], *([1] * n)) * plane
        return y, idx + offsets
    outs, extra = _pool_geometry(x, kernel, strides, dilations, sp, ceil_mode)
    work = x.to(torch.float64) if not x.dtype.is_floating_point else x
    padded = _pad_two(work, sp, extra, -math.inf, -math.inf)
    win = _windows(padded, kernel, strides, dilations, outs)
    top, arg = win.max(dim=-1)
    y = top.to(x.dtype)
    if not want_indices:
        return y
    # the same windows over the positions of the input, to read back where each max came from
    if storage_order:  # column-major numbering of the spatial plane (reference: h + w * height)
        coords = torch.meshgrid(*[torch.arange(s, device=x.device) for s in spatial], indexing="ij")
        pos = sum(c * math.prod(spatial[:i]) for i, c in enumerate(coords))
    else:
        pos = torch.arange(plane, device=x.device).reshape(spatial)
    pos = _pad_two(pos.reshape([1, 1] + spatial).to(torch.float64), sp, extra, -1, -1)
    pos_win = _windows(pos, kernel, strides, dilations, outs).expand(list(win.shape))
    # the first input position holding the maximum: a padding cell equal to it (an input of -inf
    # beside the -inf fill) is never the answer
    top = top.unsqueeze(-1)
    hit = ((win == top) | (torch.isnan(win) & torch.isnan(top))) & (pos_win >= 0)
    arg = torch.where(hit.any(-1), hit.to(torch.uint8).argmax(dim=-1), arg)
    idx = torch.gather(pos_win, -1, arg.unsqueeze(-1)).squeeze(-1).to(torch.int64)
    offsets = torch.arange(x.shape[0] * x.shape[1], device=x.device).reshape(x.shape[0], x.shape[1], *([1] * n)) * plane
    return y, idx + offsets


@lowers("AveragePool", 1, 7, 10, 11, 19, 22)
def average_pool(node, x, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, kernel_shape, pads=None, strides=None):
    kernel, strides, dilations, sp = _pool_args(x, kernel_shape, strides, dilations, pads, auto_pad)
    n = len(kernel)
    if _fast_ok(x, kernel, dilations, sp) and all(d == 1 for d in dilations) and auto_pad in ("NOTSET", "", "VALID"):
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
        return fn(x, kernel, strides, [b for b, _ in sp], ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
    outs, extra = _pool_geometry(x, kernel, strides, dilations, sp, ceil_mode)
    work = x if x.dtype in (torch.float32, torch.float64) else x.float()
    total = _windows(_pad_two(work, sp, extra, 0, 0), kernel, strides, dilations, outs).sum(-1)
    ones = torch.ones([1, 1] + list(x.shape[2:]), dtype=work.dtype, device=x.device)
    count = _windows(_pad_two(ones, sp, extra, 1.0 if count_include_pad else 0.0, 0.0), kernel, strides, dilations, outs).sum(-1)
    return (total / count).to(x.dtype)


@lowers("LpPool", 11, 18, 22)
def lp_pool(node, x, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, p=2, pads=None, strides=None):
    kernel, strides, dilations, sp = _pool_args(x, kernel_shape, strides, dilations, pads, auto_pad)
    outs, extra = _pool_geometry(x, kernel, strides, dilations, sp, ceil_mode)
    win = _windows(_pad_two(x.abs(), sp, extra, 0, 0), kernel, strides, dilations, outs)
    return torch.pow(torch.pow(win, p).sum(-1), 1.0 / p).to(x.dtype)


@lowers("GlobalAveragePool", 1, 22)
def global_average_pool(node, x):
    return x.mean(dim=list(range(2, x.dim())), keepdim=True)


@lowers("GlobalMaxPool", 1, 22)
def global_max_pool(node, x):
    return torch.amax(x, dim=list(range(2, x.dim())), keepdim=True)


@lowers("GlobalLpPool", 2, 22)
def global_lp_pool(node, x, *, p=2):
    return torch.pow(torch.pow(x.abs(), p).sum(dim=list(range(2, x.dim())), keepdim=True), 1.0 / p).to(x.dtype)


@lowers("MaxUnpool", 9, 11, 22)
def max_unpool(node, x, indices, output_shape=None, *, kernel_shape, pads=None, strides=None):
    n = len(kernel_shape)
    strides = list(strides or [1] * n)
    sp = pair_pads(pads if output_shape is None else None, n)  # "If 'output_shape' is specified, 'pads' values are ignored"
    inferred = list(x.shape[:2]) + [(i - 1) * s + k - b - e for i, s, k, (b, e) in zip(x.shape[2:], strides, kernel_shape, sp)]
    out = torch.zeros(math.prod(inferred), dtype=x.dtype, device=x.device)
    out.scatter_(0, indices.reshape(-1).to(torch.int64), x.reshape(-1))
    out = out.reshape(inferred)
    if output_shape is None:
        return out
    # a larger output_shape pads the unpooled tensor at the end (indices keep the inferred layout)
    shape = ints(output_shape)
    canvas = torch.zeros(shape, dtype=x.dtype, device=x.device)
    canvas[tuple(slice(0, d) for d in inferred)] = out
    return canvas


# -- normalization ---------------------------------------------------------------------------
def _channel(t, rank):
    """Per-channel values against (N, C, D1, ...); a 1-D input is N values of one channel
    (BatchNormalization: "single dimension input of size N in which case C is assumed to be 1")."""
    return t.reshape(-1) if rank == 1 else t.reshape([1, -1] + [1] * (rank - 2))


@lowers("BatchNormalization", 9, 14, 15)
def batch_norm(node, x, scale, bias, mean, var, *, epsilon=1e-5, momentum=0.9, training_mode=0):
    # computed in float64 and rounded once to each output's type: from version 15 the
    # parameters (T1) and statistics (T2) may be narrower than X, and var + epsilon in a half
    # type loses the epsilon
    r = x.dim()
    xw, sw, bw = x.double(), scale.double(), bias.double()
    if training_mode:
        dims = [0] + list(range(2, r))
        cur_mean = xw.mean(dim=dims)
        cur_var = xw.var(dim=dims, unbiased=False)
        y = (xw - _channel(cur_mean, r)) / torch.sqrt(_channel(cur_var, r) + epsilon) * _channel(sw, r) + _channel(bw, r)
        run_mean = mean.double() * momentum + cur_mean * (1 - momentum)
        run_var = var.double() * momentum + cur_var * (1 - momentum)
        return y.to(x.dtype), run_mean.to(mean.dtype), run_var.to(var.dtype)
    mw, vw = mean.double(), var.double()
    y = (xw - _param(mw, r)) / torch.sqrt(_param(vw, r) + epsilon) * _param(sw, r) + _param(bw, r)
    return y.to(x.dtype)


def _param(t, rank):
    """A per-channel parameter against X; a (C, D1, ...) one (versions 1-7 with spatial = 0)
    broadcasts as it is."""
    return _channel(t, rank) if t.dim() == 1 else t


@lowers("BatchNormalization", 7)
def batch_norm_7(node, x, scale, bias, mean, var, *, epsilon=1e-5, momentum=0.9, spatial=1):
    # "spatial: If true, compute the mean and variance across per activation. If false,
    # compute the mean and variance across per feature over each mini-batch": with spatial = 0
    # the parameters have X's shape without N, which _param broadcasts as they are
    return batch_norm(node, x, scale, bias, mean, var, epsilon=epsilon)


@lowers("BatchNormalization", 6)
def batch_norm_6(node, x, scale, bias, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9, spatial=1):
    if not is_test:
        raise Unsupported(f"BatchNormalization-{node.since} in training mode (is_test = 0): its saved statistics are not specified")
    y = batch_norm(node, x, scale, bias, mean, var, epsilon=epsilon)
    return y if not node.wants(1) else (y, mean, var)


lowers("BatchNormalization", 1)(consumed(batch_norm_6))


@lowers("InstanceNormalization", 6, 22)
def instance_norm(node, x, scale, bias, *, epsilon=1e-5):
    dims = list(range(2, x.dim()))
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    mean = work.mean(dim=dims, keepdim=True)
    var = work.var(dim=dims, keepdim=True, unbiased=False)
    y = (work - mean) / torch.sqrt(var + epsilon) * _channel(scale, x.dim()) + _channel(bias, x.dim())
    return y.to(x.dtype)


lowers("InstanceNormalization", 1)(consumed(instance_norm))


#: stash_type (a TensorProto element type) -> torch dtype: "Type of Mean and InvStdDev. This also
#: specifies stage one's computation precision."
_STASH = {1: torch.float32, 10: torch.float16, 11: torch.float64, 16: torch.bfloat16}


def _stash(x, stash_type):
    if stash_type not in _STASH:
        raise Unsupported(f"stash_type {stash_type}")
    return x.to(_STASH[stash_type])


@lowers("LayerNormalization", 17)
def layer_norm(node, x, scale, bias=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    a = axis + x.dim() if axis < 0 else axis
    dims = list(range(a, x.dim()))
    work = _stash(x, stash_type)
    mean = work.mean(dim=dims, keepdim=True)
    var = ((work - mean) ** 2).mean(dim=dims, keepdim=True)
    inv = 1.0 / torch.sqrt(var + epsilon)
    normed = ((work - mean) * inv).to(x.dtype)
    y = normed * scale
    if bias is not None:
        y = y + bias
    return y.to(x.dtype), mean, inv


@lowers("RMSNormalization", 23)
def rms_norm(node, x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    a = axis + x.dim() if axis < 0 else axis
    dims = list(range(a, x.dim()))
    work = _stash(x, stash_type)
    rms = torch.sqrt((work * work).mean(dim=dims, keepdim=True) + epsilon)
    return ((work / rms).to(x.dtype) * scale).to(x.dtype)


@lowers("GroupNormalization", 18, 21)
def group_norm(node, x, scale, bias, *, epsilon=1e-5, num_groups, stash_type=1):
    n, c = x.shape[:2]
    work = _stash(x, stash_type).reshape(n, num_groups, (c // num_groups) * math.prod(x.shape[2:]))  # explicit: n may be 0
    mean = work.mean(dim=-1, keepdim=True)
    var = ((work - mean) ** 2).mean(dim=-1, keepdim=True)
    normed = ((work - mean) / torch.sqrt(var + epsilon)).reshape(x.shape).to(x.dtype)
    if node.since == 18:  # scale and bias per group
        scale = scale.repeat_interleave(c // num_groups)
        bias = bias.repeat_interleave(c // num_groups)
    return (normed * _channel(scale, x.dim()) + _channel(bias, x.dim())).to(x.dtype)


@lowers("LpNormalization", 1, 22)
def lp_norm(node, x, *, axis=-1, p=2):
    if p == 1:
        norm = x.abs().sum(dim=axis, keepdim=True)
    else:
        norm = torch.sqrt((x * x).sum(dim=axis, keepdim=True))
    return torch.where(norm == 0, torch.zeros_like(x), x / norm)  # 0 / 0 is 0 here


@lowers("MeanVarianceNormalization", 9, 13)
def mean_variance_norm(node, x, *, axes=(0, 2, 3)):
    dims = [a + x.dim() if a < 0 else a for a in axes]
    mean = x.mean(dim=dims, keepdim=True)
    var = (x * x).mean(dim=dims, keepdim=True) - mean * mean
    return (x - mean) / (torch.sqrt(var) + 1e-9)  # the spec's function body adds 1e-9


@lowers("LRN", 1, 13)
def lrn(node, x, *, alpha=1e-4, beta=0.75, bias=1.0, size):
    sq = (x * x).unsqueeze(1)  # N, 1, C, ...
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    pad = [0, 0] * (x.dim() - 2) + [before, after]
    sq = F.pad(sq, pad)
    windows = sq.unfold(2, size, 1)  # N, 1, C, ..., size
    total = windows.sum(-1).squeeze(1)
    return x / torch.pow(bias + alpha / size * total, beta)


# -- softmax family --------------------------------------------------------------------------
def _coerced(fn, x, axis):
    """Softmax-1/11 semantics: flatten to 2-D at ``axis``, apply along the second dimension."""
    a = axis + x.dim() if axis < 0 else axis
    shape = x.shape
    flat = x.reshape(math.prod(shape[:a]), math.prod(shape[a:]))
    return fn(flat, 1).reshape(shape)


def _hardmax(x, dim):
    if x.shape[dim] == 0:  # nothing to choose: the empty output
        return torch.zeros_like(x)
    idx = torch.argmax(x, dim=dim, keepdim=True)  # the first maximum wins
    return torch.zeros_like(x).scatter(dim, idx, 1)


lowers("Softmax", 1, 11, 13)(softmax_like(lambda x, d: torch.softmax(x, d), _coerced))
lowers("LogSoftmax", 1, 11, 13)(softmax_like(lambda x, d: torch.log_softmax(x, d), _coerced))
lowers("Hardmax", 1, 11, 13)(softmax_like(_hardmax, _coerced))


# -- dropout and losses ----------------------------------------------------------------------
@lowers("Dropout", 12, 13, 22)
def dropout(node, x, ratio=None, training_mode=None, *, seed=None):
    training = bool(scalar(training_mode)) if training_mode is not None else False
    if not training:
        return x, torch.ones_like(x, dtype=torch.bool)
    r = float(scalar(ratio)) if ratio is not None else 0.5
    gen = torch.Generator(device=x.device)
    if seed is not None:
        gen.manual_seed(int(seed))
    else:
        gen.seed()
    keep = torch.rand(x.shape, generator=gen, device=x.device) >= r
    scale = 1.0 / (1.0 - r) if r < 1 else 0.0
    return x * keep.to(x.dtype) * scale, keep


@lowers("Dropout", 7, 10)
def dropout_10(node, x, *, ratio=0.5):
    # no training_mode before version 12: inference, the identity; the mask is "T1: tensor(bool)"
    # from version 10, of the data's type T before
    return x, torch.ones_like(x, dtype=torch.bool if node.since >= 10 else x.dtype)


@lowers("Dropout", 6)
def dropout_6(node, x, *, is_test=0, ratio=0.5):
    # "is_test: (int, default 0) if nonzero, run dropout in test mode where the output is simply
    # Y = X": the default is a random dropout; the mask is of type T
    if is_test:
        return x, torch.ones_like(x)
    y, keep = dropout(node, x, torch.tensor(ratio), torch.tensor(True))
    return y, keep.to(x.dtype)


lowers("Dropout", 1)(consumed(dropout_6))


def _nll(scores, target, weight, ignore_index, reduction):
    """scores: (N, C, d...) log-probabilities; target: (N, d...)."""
    target = target.to(torch.int64)
    ignored = target == ignore_index if ignore_index is not None else torch.zeros_like(target, dtype=torch.bool)
    safe = torch.where(ignored, torch.zeros_like(target), target)
    picked = -torch.gather(scores, 1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(ignored, torch.zeros_like(w), w)
    loss = picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


@lowers("NegativeLogLikelihoodLoss", 12, 13, 22)
def nll_loss(node, scores, target, weight=None, *, ignore_index=None, reduction="mean"):
    return _nll(scores, target, weight, ignore_index, reduction).to(scores.dtype)


@lowers("SoftmaxCrossEntropyLoss", 12, 13)
def softmax_cross_entropy(node, scores, labels, weights=None, *, ignore_index=None, reduction="mean"):
    log_prob = torch.log_softmax(scores, dim=1)
    loss = _nll(log_prob, labels, weights, ignore_index, reduction).to(scores.dtype)
    return (loss, log_prob) if node.wants(1) else loss
