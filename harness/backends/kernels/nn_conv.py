"""Convolution kernels: Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv, Col2Im.

Conv is im2col (one strided copy per kernel position, never a loop over output pixels; with
strides and many positions a phase, one per phase and then runs of consecutive elements)
followed by a single (grouped) GEMM; 1x1 unstrided unpadded convolutions are a plain matmul.
Three shapes take their own path: depthwise convolutions (group = C = M) go through
cache-sized blocks of channels; unit-stride 2-D convolutions with twice as many input as output
channels sum shifted GEMMs without im2col; unit-stride 3x3 convolutions with 64+ channels on
each side run Winograd's F(2x2, 3x3).
ConvTranspose is the mirror image: one GEMM, then a col2im scatter-add per kernel position.
"""

from __future__ import annotations

import functools

import numpy as np

from ..base import Unsupported
from .nn_util import (
    IdentityCache,
    as_compute,
    im2col,
    ints,
    kernel_offsets,
    pad_to_windows,
    prod,
    round_half_even_saturate,
    spatial_geometry,
    tap_sources,
    window,
)
from .registry import register


# --------------------------------------------------------------------------- helpers


#: im2col is done in chunks of output rows whose column matrix stays about this size, so the
#: chunk is still in cache when the GEMM reads it (measured ~10-15% faster than one big im2col)
_COLS_CHUNK_BYTES = 1 << 21


def conv_core(x, w, group, strides, dilations, begin, out):
    """Grouped N-d correlation of compute-dtype ``x`` (N, C, *in) with ``w`` (M, C/g, *k).

    Nothing is kept between calls: buffers kept per node (a padded input, an im2col chunk)
    doubled ShuffleNet's peak memory at batch 8 and saved no measurable time.
    """
    N, C = x.shape[:2]
    M = w.shape[0]
    kernel = tuple(w.shape[2:])
    Cg = C // group
    Mg = M // group
    K = prod(kernel)
    P = prod(out)
    simple = (
        K == 1
        and all(s == 1 for s in strides)
        and not any(begin)
        and tuple(out) == tuple(x.shape[2:])
    )
    if simple:
        if group == 1:
            y = np.matmul(w.reshape(M, C), x.reshape(N, C, P))
        else:
            y = np.matmul(w.reshape(group, Mg, Cg), x.reshape(N, group, Cg, P))
        return y.reshape((N, M) + tuple(out))
    if group == C == M and K > 1 and N * P:
        return _depthwise(x, w, kernel, out, begin, strides, dilations)
    if group == 1 and len(out) == 2 and K > 1 and C >= 2 * M and all(s == 1 for s in strides) and N * P:
        return _conv_shifted(x, w, kernel, out, begin, dilations)
    xp = pad_to_windows(x, out, begin, strides, dilations, kernel, 0)
    item = x.dtype.itemsize
    if N * C * K * P * item <= _COLS_CHUNK_BYTES or P == 0:
        cols = im2col(xp, kernel, out, strides, dilations)
        if group == 1:
            y = np.matmul(w.reshape(M, C * K), cols.reshape(N, C * K, P))
        else:
            y = np.matmul(w.reshape(group, Mg, Cg * K), cols.reshape(N, group, Cg * K, P))
        return y.reshape((N, M) + tuple(out))
    # chunked: per image, per block of rows along the first spatial axis
    OH = out[0]
    inner_shape = tuple(out[1:])
    inner = prod(inner_shape)
    rows = max(1, min(OH, _COLS_CHUNK_BYTES // max(1, C * K * inner * item)))
    nchunks = -(-OH // rows)
    rows = -(-OH // nchunks)  # balanced chunks
    wg = w.reshape(group, Mg, Cg * K)
    y = np.empty((N, group, Mg, OH, inner), dtype=x.dtype)
    bshape = (C, K, rows) + inner_shape
    buf = np.empty(bshape, dtype=x.dtype)
    for n in range(N):
        sources = tap_sources(xp[n], kernel, strides, dilations)
        for r0 in range(0, OH, rows):
            nr = min(rows, OH - r0)
            cols = buf if nr == rows else np.empty((C, K, nr) + inner_shape, dtype=x.dtype)
            for k, (src, first, step) in enumerate(sources):
                rows_k = window(first[0] + r0 * step[0], step[0], nr)
                cols[:, k] = src[(slice(None), rows_k) + tuple(map(window, first[1:], step[1:], out[1:]))]
            dst = y[n, :, :, r0 : r0 + nr].reshape(group, Mg, nr * inner)
            if group == 1:  # 2-D matmul writes through BLAS into the strided destination
                np.matmul(wg[0], cols.reshape(Cg * K, nr * inner), out=dst[0])
            else:  # stacked matmul only reaches BLAS with contiguous operands
                dst[...] = np.matmul(wg, cols.reshape(group, Cg * K, nr * inner))
    return y.reshape((N, M) + tuple(out))


def _frame(x_shape, padded, begin):
    """Where the part of an (N, C, *spatial) input inside a padded frame lands: the source and
    destination slices of its spatial axes (a negative end pad crops it), and whether any of it
    does."""
    size = [max(0, min(x_shape[2 + i], padded[i] - begin[i])) for i in range(len(padded))]
    return tuple(slice(0, n) for n in size), tuple(slice(b, b + n) for b, n in zip(begin, size)), all(size)


@functools.lru_cache(maxsize=256)
def _phase_starts(kernel, dilations, strides, padded):
    """The polyphase layout of a padded frame: along each axis the elements at positions
    p, p + s, p + 2s, ... (phase p of stride s) side by side, so that every window of a strided
    kernel position reads consecutive elements of one phase. Returns the phases the kernel
    positions read (tuples of p), the shape of a phase (ceil(padded / s) per axis) and, on the
    phases laid one after another and flattened, where each kernel position's window starts.
    With unit strides the one phase is the frame itself."""
    nsp = len(padded)
    shape = [-(-padded[i] // strides[i]) for i in range(nsp)]
    row = [prod(shape[i + 1:]) for i in range(nsp)]  # the flat stride of each axis
    phases: dict[tuple, int] = {}
    starts = []
    for off in kernel_offsets(kernel):
        at = [off[i] * dilations[i] for i in range(nsp)]
        j = phases.setdefault(tuple(a % s for a, s in zip(at, strides)), len(phases))
        starts.append(j * prod(shape) + sum(at[i] // strides[i] * row[i] for i in range(nsp)))
    return list(phases), shape, starts


#: the depthwise kernel works through blocks of channels whose columns take about this much
#: memory, so that a block's columns are still in cache when its products read them
_DEPTHWISE_BLOCK_BYTES = 1 << 20


def _depthwise(x, w, kernel, out, begin, strides, dilations, split=False):
    """Conv with one filter per channel (group = C = M). With ``split``, ``x`` is given as a
    view (N, A, B, *spatial) whose channel a * B + b is [:, a, b] (a channel shuffle's
    transposed view, which no 4-D view can hold): the copy into the padded blocks, which is
    made anyway, reads the channels in that order, so the shuffled input is never copied
    on its own.

    The channels go through in blocks whose im2col columns stay in cache (and whose buffers,
    reused from block to block, stay small: a fresh large block of memory is faulted in page
    by page on every run). A block is padded into a zeroed buffer laid out channel-major
    (C, N, padded plane); with strides it is then split into its phases (``_phase_starts``:
    one strided copy per phase instead of one per kernel position). The plane (or each phase)
    is flattened and every output row keeps the plane's (the phase's) width (the columns past
    each output row are computed and dropped), so each kernel position's window of a whole
    plane is one contiguous run and im2col copies whole runs. The products are one stacked
    (1 x K) @ (K x N * positions) GEMM per channel, the batch side by side."""
    N, C = x.shape[0], prod(x.shape[1:3]) if split else x.shape[1]
    B = x.shape[2] if split else 1  # the channels a block takes come in whole runs of B
    x_shape = (N, C) + x.shape[3 if split else 2 :]
    nsp = len(out)
    dt = x.dtype
    padded = [(out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(nsp)]
    phases, shape, starts = _phase_starts(tuple(kernel), tuple(dilations), tuple(strides), tuple(padded))
    K = len(starts)
    grid = (out[0],) + tuple(shape[1:])  # the output grid laid on a phase
    span = prod(grid)
    plane, size = prod(padded), prod(shape)
    tail = max(0, max(starts) + span - len(phases) * size)  # the last runs read past the end
    cb = max(1, min(C, _DEPTHWISE_BLOCK_BYTES // ((K + 1) * N * span * dt.itemsize)))
    cb = max(B, cb - cb % B)
    buf = np.zeros((cb, N, len(phases) * size + tail), dtype=dt)
    direct = all(s == 1 for s in strides)
    lead = (slice(None), slice(None))
    if direct:  # the one phase is the padded plane
        block = buf[:, :, :plane].reshape((cb, N) + tuple(padded))
        phase_copies = []
    else:
        block = np.zeros((cb, N) + tuple(padded), dtype=dt)
        phase_copies = [(buf[:, :, j * size : (j + 1) * size].reshape((cb, N) + tuple(shape)), block[lead + tuple(slice(q, None, s) for q, s in zip(p, strides))])
                 for j, p in enumerate(phases)]
        phase_copies = [(dst[lead + tuple(slice(0, n) for n in src.shape[2:])], src) for dst, src in phase_copies]
    src, dst, any_inside = _frame(x_shape, padded, begin)
    src, dst = (slice(None),) + src, (slice(None),) + dst
    channel_major = (1, 0) + tuple(range(2, 2 + nsp))
    # the input, channel-major, with its channels in runs of B: (C / B, B, N, *spatial)
    xt = x.transpose((1, 2, 0) + tuple(range(3, 3 + nsp)) if split else channel_major).reshape((C // B, B) + x_shape[:1] + x_shape[2:])
    runs_of = block.reshape((cb // B, B) + block.shape[1:])  # a view: splits the first axis
    wc = w.reshape(C, 1, K)
    cols = np.empty((cb, K, N, span), dtype=dt)
    if direct:  # every position's run at once: a strided view of the kernel's grid of runs
        row = [prod(padded[i + 1:]) * dt.itemsize for i in range(nsp)]
        runs = np.lib.stride_tricks.as_strided(
            buf, (cb,) + tuple(kernel) + (N, span), buf.strides[:1] + tuple(d * r for d, r in zip(dilations, row)) + buf.strides[1:],
            writeable=False)
        cols_grid = cols.reshape(runs.shape)
    prods = np.empty((cb, 1, N * span), dtype=dt)
    y = np.empty((N, C) + tuple(out), dtype=dt)
    keep = (slice(None), slice(None), slice(None)) + tuple(slice(0, o) for o in out[1:])
    for c0 in range(0, C, cb):
        n = min(cb, C - c0)
        if any_inside:
            runs_of[(slice(0, n // B), slice(None)) + dst] = xt[(slice(c0 // B, (c0 + n) // B), slice(None)) + src]
        for phase, part in phase_copies:
            phase[:n] = part[:n]
        if direct:  # one copy (nine separate ones write cols with a stride: several times slower)
            np.copyto(cols_grid[:n], runs[:n])
        else:
            for k, start in enumerate(starts):
                cols[:n, k] = buf[:n, :, start : start + span]
        res = np.matmul(wc[c0 : c0 + n], cols[:n].reshape(n, K, N * span), out=prods[:n])
        y[:, c0 : c0 + n] = res.reshape((n, N) + grid)[keep].transpose(channel_major)
    return y


def _conv_shifted(x, w, kernel, out, begin, dilations):
    """2-D convolution, group 1, unit strides, with at least twice as many input as output
    channels (DenseNet's 128 -> 32 3x3 layers), without im2col: per image, the sum over kernel
    positions k of W_k (M x C) @ the input shifted by k (C x positions). The padded image is
    flattened per channel and every output row keeps the padded width (the columns past each
    output row are computed and dropped), so each shifted input is a strided view that BLAS
    reads in place. Adding up K products of M rows costs less than copying K shifted copies of
    C rows when C > M."""
    N, C = x.shape[:2]
    M = w.shape[0]
    dt = x.dtype
    padded = [out[i] + (kernel[i] - 1) * dilations[i] for i in range(2)]
    row = padded[1]
    plane = padded[0] * row
    span = out[0] * row
    _, _, starts = _phase_starts(tuple(kernel), tuple(dilations), (1, 1), tuple(padded))
    # the last row of a plane reads up to starts[-1] past its end (into dropped columns)
    buf = np.zeros((C, plane + starts[-1]), dtype=dt)
    image = buf[:, :plane].reshape(C, *padded)
    src, dst, any_inside = _frame(x.shape, padded, begin)
    wk = np.ascontiguousarray(w.reshape(M, C, len(starts)).transpose(2, 0, 1))  # (K, M, C)
    acc = np.empty((M, span), dtype=dt)
    prod_k = np.empty((M, span), dtype=dt)
    y = np.empty((N, M) + tuple(out), dtype=dt)
    for n in range(N):
        if any_inside:
            image[(slice(None),) + dst] = x[(n, slice(None)) + src]
        np.matmul(wk[0], buf[:, starts[0] : starts[0] + span], out=acc)
        for k in range(1, len(starts)):
            np.matmul(wk[k], buf[:, starts[k] : starts[k] + span], out=prod_k)
            acc += prod_k
        y[n] = acc.reshape(M, out[0], row)[:, :, : out[1]]
    return y


def _conv_params(attrs, nsp, w_shape):
    kernel = attrs.get("kernel_shape") or list(w_shape[2:])
    strides = ints(attrs.get("strides"), nsp, 1)
    dilations = ints(attrs.get("dilations"), nsp, 1)
    return [int(k) for k in kernel], strides, dilations


def scatter_windows(cols, kernel, in_sizes, strides, dilations, full_shape):
    """col2im: add ``cols`` (N, C, K, *in) into a zero image of ``full_shape`` (N, C, *full)."""
    y = np.zeros(full_shape, dtype=cols.dtype)
    n = len(kernel)
    for k, off in enumerate(kernel_offsets(kernel)):
        idx = (slice(None), slice(None)) + tuple(
            slice(off[i] * dilations[i], off[i] * dilations[i] + (in_sizes[i] - 1) * strides[i] + 1, strides[i])
            for i in range(n)
        )
        y[idx] += cols[:, :, k]
    return y


def crop_or_pad(y, starts, sizes):
    """Region [starts, starts + sizes) of the spatial axes of ``y``, zero outside of ``y``."""
    n = len(sizes)
    if all(s >= 0 and s + z <= y.shape[2 + i] for i, (s, z) in enumerate(zip(starts, sizes))):
        return y[(slice(None), slice(None)) + tuple(slice(s, s + z) for s, z in zip(starts, sizes))]
    out = np.zeros(y.shape[:2] + tuple(sizes), dtype=y.dtype)
    src, dst = [slice(None)] * 2, [slice(None)] * 2
    for i in range(n):
        lo = max(starts[i], 0)
        hi = min(starts[i] + sizes[i], y.shape[2 + i])
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - starts[i], hi - starts[i]))
    out[tuple(dst)] = y[tuple(src)]
    return out


# --------------------------------------------------------------------------- Conv


#: Winograd's F(2x2, 3x3) is used for unit-stride 3x3 convolutions (group 1) with at least
#: this many input and output channels, where its 16 products of (M x C) @ (C x tiles) (2.25
#: times fewer multiplications than im2col's) outweigh its transforms (measured 10-35% faster
#: on ResNet's, VGG's and Inception's 3x3 layers of 64 channels and more; slower with 16 or 32
#: on either side: SqueezeNet's 16 -> 64, DenseNet's 128 -> 32)
_WINOGRAD_MIN_CHANNELS = 64
#: the tile rows of a band: its buffers (transformed input 16 x C x tiles, products 16 x M x
#: tiles, ...) take about this much memory, reused from band to band (a fresh large buffer is
#: faulted in page by page on every run, and falls out of cache)
_WINOGRAD_BAND_BYTES = 1 << 21
#: ... and at least this many 2 x 2 output tiles (a convolution with fewer is left to im2col),
#: so that each of the band's 16 GEMMs stays efficient (ResNet's 512-channel 7 x 7 layers at
#: batch 1, 16 tiles: slower than im2col)
_WINOGRAD_MIN_TILES = 48

#: G of F(2x2, 3x3): the filter transform U = G g G^T (Lavin and Gray, "Fast Algorithms for
#: Convolutional Neural Networks", 2015)
_WINOGRAD_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def winograd_filters(w):
    """(M, C, 3, 3) filters -> their F(2x2, 3x3) transforms (16, M, C), computed in float64."""
    M, C = w.shape[:2]
    u = np.einsum("ik,mckl,jl->ijmc", _WINOGRAD_G, w.astype(np.float64), _WINOGRAD_G)
    return np.ascontiguousarray(u.reshape(16, M, C).astype(w.dtype))


def _winograd_rows(d, out):
    """B^T applied along a list of four inputs (the rows or columns of 4 x 4 tiles), into
    ``out[0..3]``: d0 - d2, d1 + d2, d2 - d1, d1 - d3."""
    np.subtract(d[0], d[2], out=out[0])
    np.add(d[1], d[2], out=out[1])
    np.subtract(d[2], d[1], out=out[2])
    np.subtract(d[1], d[3], out=out[3])


def conv_winograd(x, u, begin, out):
    """3x3 correlation, unit strides, group 1, of ``x`` (N, C, H, W) with transformed filters
    ``u`` (16, M, C), as Winograd's F(2x2, 3x3): every 2 x 2 output block is A^T [U . (B^T d B)] A
    of the 4 x 4 input tile d under it. Tiles go through in bands of tile rows whose
    transforms stay in cache; the 16 element-wise products over C are 16 GEMMs per band."""
    N, C, H, W = x.shape
    M = u.shape[1]
    dt = x.dtype
    oh, ow = out
    th, tw = -(-oh // 2), -(-ow // 2)
    hp, wp = 2 * th + 2, 2 * tw + 2
    xp = np.zeros((C, N, hp, wp), dtype=dt)  # padded, channel-major (GEMM's C x tiles)
    src, dst, _ = _frame(x.shape, (hp, wp), begin)
    xp[(slice(None), slice(None)) + dst] = x[(slice(None), slice(None)) + src].transpose(1, 0, 2, 3)
    # a tile row's share of the band's buffers: rows, transformed input, products, output sums
    row_bytes = (4 * C * wp / tw + 16 * C + 16 * M + 9 * M) * N * tw * dt.itemsize
    tb = max(1, min(th, max(int(_WINOGRAD_BAND_BYTES // row_bytes), -(-_WINOGRAD_MIN_TILES // (N * tw)))))
    rows = np.empty((4, C, N, tb, wp), dtype=dt)
    v = np.empty((4, 4, C, N, tb, tw), dtype=dt)
    m = np.empty((16, M, N * tb * tw), dtype=dt)
    s = np.empty((2, 4, M, N, tb, tw), dtype=dt)
    t = np.empty((M, N, tb, tw), dtype=dt)
    y = np.empty((N, M, 2 * th, 2 * tw), dtype=dt)
    blocks = y.reshape(N, M, th, 2, tw, 2).transpose(3, 5, 1, 0, 2, 4)  # (2, 2, M, N, th, tw)
    for t0 in range(0, th, tb):
        b = min(tb, th - t0)
        T = N * b * tw
        # the GEMM's operands as contiguous leading parts of their buffers (a shorter last
        # band too: a strided operand or output takes numpy's matmul off BLAS)
        vb = v.reshape(-1)[: 16 * C * T].reshape(4, 4, C, N, b, tw)
        mb = m.reshape(-1)[: 16 * M * T].reshape(16, M, T)
        rb, sb, tt = rows[:, :, :, :b], s[..., :b, :], t[:, :, :b]
        _winograd_rows([xp[:, :, 2 * t0 + i : 2 * t0 + i + 2 * b : 2] for i in range(4)], rb)
        for i in range(4):
            _winograd_rows([rb[i][..., j : j + 2 * tw : 2] for j in range(4)], vb[i])
        prods = np.matmul(u, vb.reshape(16, C, T), out=mb).reshape(4, 4, M, N, b, tw)
        # A^T = [[1, 1, 1, 0], [0, 1, -1, -1]] on the rows, then on the columns
        np.add(prods[0], prods[1], out=sb[0])
        sb[0] += prods[2]
        np.subtract(prods[1], prods[2], out=sb[1])
        sb[1] -= prods[3]
        for i in range(2):
            np.add(sb[i, 0], sb[i, 1], out=tt)
            tt += sb[i, 2]
            blocks[i, 0, :, :, t0 : t0 + b] = tt
            np.subtract(sb[i, 1], sb[i, 2], out=tt)
            tt -= sb[i, 3]
            blocks[i, 1, :, :, t0 : t0 + b] = tt
    if (oh, ow) != (2 * th, 2 * tw):
        return np.ascontiguousarray(y[:, :, :oh, :ow])
    return y


@register("Conv", since=1)
def conv(node):
    attrs = node.attrs
    group = int(attrs.get("group", 1))
    auto_pad = attrs.get("auto_pad", "NOTSET")
    pads_attr = attrs.get("pads")
    geo_cache: dict = {}
    wcache = IdentityCache()

    def run(x, w, b=None, split=False):
        """``split``: ``x`` is a view (N, A, B, *spatial) of the input whose channel a * B + b
        is [:, a, b] (see ``_depthwise``); a depthwise Conv reads it as it is, any other
        merges it into (N, A * B, *spatial) first."""
        shape = (x.shape[0], x.shape[1] * x.shape[2]) + x.shape[3:] if split else x.shape
        nsp = len(shape) - 2
        key = (shape, w.shape)
        geo = geo_cache.get(key)
        if geo is None:
            kernel, strides, dilations = _conv_params(attrs, nsp, w.shape)
            out, begin, _ = spatial_geometry(shape[2:], kernel, strides, dilations, pads_attr, auto_pad)
            winograd = (
                group == 1 and nsp == 2 and kernel == [3, 3] and tuple(w.shape[2:]) == (3, 3)
                and strides == [1, 1] and dilations == [1, 1] and min(w.shape[:2]) >= _WINOGRAD_MIN_CHANNELS
                and shape[1] == w.shape[1] and shape[0] * -(-out[0] // 2) * -(-out[1] // 2) >= _WINOGRAD_MIN_TILES
            )
            geo = geo_cache[key] = (kernel, strides, dilations, begin, out, winograd)
        kernel, strides, dilations, begin, out, winograd = geo
        if split and not (group == shape[1] == w.shape[0] and prod(kernel) > 1 and prod(shape[:1] + tuple(out))):
            x, split = x.reshape(shape), False  # not depthwise's path: merged (a copy)
        xc = as_compute(x)
        if split:
            y = _depthwise(xc, wcache.get(as_compute, w), kernel, out, begin, strides, dilations, split=True)
        elif winograd and xc.dtype.kind == "f":
            u = wcache.get(lambda w: winograd_filters(as_compute(w)), w, key="winograd")
            y = conv_winograd(xc, u, begin, out)
        else:
            y = conv_core(xc, wcache.get(as_compute, w), group, strides, dilations, begin, out)
        if b is not None:
            y += b.astype(y.dtype).reshape((1, -1) + (1,) * nsp)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- ConvTranspose


@register("ConvTranspose", since=1)
def conv_transpose(node):
    attrs = node.attrs
    group = int(attrs.get("group", 1))
    auto_pad = attrs.get("auto_pad", "NOTSET") or "NOTSET"
    wcache = IdentityCache()

    def run(x, w, b=None):
        nsp = x.ndim - 2
        N, C = x.shape[:2]
        in_sizes = list(x.shape[2:])
        kernel = [int(k) for k in (attrs.get("kernel_shape") or w.shape[2:])]
        strides = ints(attrs.get("strides"), nsp, 1)
        dilations = ints(attrs.get("dilations"), nsp, 1)
        out_pad = ints(attrs.get("output_padding"), nsp, 0)
        Mg = w.shape[1]
        M = Mg * group
        Cg = C // group
        K = prod(kernel)
        full = [(in_sizes[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(nsp)]
        output_shape = attrs.get("output_shape")
        if output_shape:
            out = [int(v) for v in output_shape][-nsp:]
            begin = []
            for i in range(nsp):
                total = full[i] + out_pad[i] - out[i]
                begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = [in_sizes[i] * strides[i] for i in range(nsp)]
            begin = []
            for i in range(nsp):
                total = max(full[i] + out_pad[i] - out[i], 0)
                begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
        else:
            pads = ints(attrs.get("pads") if auto_pad != "VALID" else None, 2 * nsp, 0)
            begin = pads[:nsp]
            out = [full[i] + out_pad[i] - pads[i] - pads[i + nsp] for i in range(nsp)]

        def convert(w):
            wc = as_compute(w).reshape(group, Cg, Mg * K)
            return np.ascontiguousarray(wc.transpose(0, 2, 1))  # (g, Mg*K, Cg)

        wt = wcache.get(convert, w)
        xc = as_compute(x).reshape(N, group, Cg, prod(in_sizes))
        cols = np.matmul(wt, xc)  # (N, g, Mg*K, P)
        cols = cols.reshape((N, M, K) + tuple(in_sizes))
        ext = [full[i] + out_pad[i] for i in range(nsp)]
        y = scatter_windows(cols, kernel, in_sizes, strides, dilations, (N, M) + tuple(ext))
        y = crop_or_pad(y, begin, out)
        if b is not None:
            y = y + b.astype(y.dtype).reshape((1, -1) + (1,) * nsp)
        return (np.ascontiguousarray(y).astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- integer convs


def _zp(zp, ndim_w=None):
    if zp is None:
        return 0.0
    z = np.asarray(zp).astype(np.float64)
    if ndim_w is not None and z.ndim == 1 and z.size > 1:
        return z.reshape((-1,) + (1,) * (ndim_w - 1))
    return z.reshape(()) if z.size == 1 else z


def _int_conv(attrs, x, w, xzp, wzp):
    nsp = x.ndim - 2
    group = int(attrs.get("group", 1))
    kernel, strides, dilations = _conv_params(attrs, nsp, w.shape)
    out, begin, _ = spatial_geometry(
        x.shape[2:], kernel, strides, dilations, attrs.get("pads"), attrs.get("auto_pad", "NOTSET")
    )
    xf = x.astype(np.float64) - _zp(xzp)
    wf = w.astype(np.float64) - _zp(wzp, w.ndim)
    # exact: every partial sum of 8-bit products stays far below 2**53
    return conv_core(xf, wf, group, strides, dilations, begin, out)


@register("ConvInteger", since=10)
def conv_integer(node):
    attrs = node.attrs

    def run(x, w, x_zero_point=None, w_zero_point=None):
        y = _int_conv(attrs, x, w, x_zero_point, w_zero_point)
        return (np.rint(y).astype(np.int64).astype(np.int32),)

    return run


@register("QLinearConv", since=10)
def qlinear_conv(node):
    attrs = node.attrs

    def run(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None):
        acc = _int_conv(attrs, x, w, x_zero_point, w_zero_point)
        nsp = x.ndim - 2
        if B is not None:
            acc = acc + B.astype(np.float64).reshape((1, -1) + (1,) * nsp)
        ws = np.asarray(w_scale, dtype=np.float32)
        if ws.size > 1:
            ws = ws.reshape((1, -1) + (1,) * nsp)
        else:
            ws = ws.reshape(())
        mult = (np.float32(np.asarray(x_scale).reshape(())) * ws) / np.float32(np.asarray(y_scale).reshape(()))
        y = acc * mult.astype(np.float64)
        y = np.rint(y) + float(np.asarray(y_zero_point).reshape(()))
        ydt = np.asarray(y_zero_point).dtype
        return (round_half_even_saturate(y, ydt),)

    return run


# --------------------------------------------------------------------------- DeformConv


def _multilinear_gather(x, coords):
    """Sample x (N, G, Cg, *S) at coords (N, G, K, P, nd) with zero outside; -> (N, G, Cg, K, P)."""
    N, G, Cg = x.shape[:3]
    S = x.shape[3:]
    nd = len(S)
    flat = x.reshape(N, G, Cg, -1).transpose(0, 1, 3, 2)  # (N, G, S, Cg)
    Kn, P = coords.shape[2], coords.shape[3]
    lo = np.floor(coords)
    frac = coords - lo
    lo = lo.astype(np.int64)
    n_idx = np.arange(N).reshape(N, 1, 1, 1)
    g_idx = np.arange(G).reshape(1, G, 1, 1)
    acc = np.zeros((N, G, Kn, P, Cg), dtype=x.dtype)
    strides = [prod(S[i + 1:]) for i in range(nd)]
    for corner in range(1 << nd):
        weight = np.ones(coords.shape[:4], dtype=x.dtype)
        valid = np.ones(coords.shape[:4], dtype=bool)
        flat_idx = np.zeros(coords.shape[:4], dtype=np.int64)
        for dim in range(nd):
            bit = (corner >> (nd - 1 - dim)) & 1
            idx = lo[..., dim] + bit
            wgt = frac[..., dim] if bit else 1.0 - frac[..., dim]
            weight = weight * wgt
            valid &= (idx >= 0) & (idx < S[dim])
            flat_idx += np.clip(idx, 0, S[dim] - 1) * strides[dim]
        weight = weight.astype(x.dtype)
        # a corner outside the image contributes nothing: not even the NaN or inf that the
        # clipped index would read from the edge (0 * NaN is NaN)
        acc += np.where(valid[..., None], flat[n_idx, g_idx, flat_idx] * weight[..., None], 0)
    return acc.transpose(0, 1, 4, 2, 3)


@register("DeformConv", since=19)
def deform_conv(node):
    attrs = node.attrs
    group = int(attrs.get("group", 1))
    offset_group = int(attrs.get("offset_group", 1))

    def run(x, w, offset, b=None, mask=None):
        nsp = x.ndim - 2
        N, C = x.shape[:2]
        M = w.shape[0]
        kernel, strides, dilations = _conv_params(attrs, nsp, w.shape)
        out, begin, _ = spatial_geometry(x.shape[2:], kernel, strides, dilations, attrs.get("pads"))
        K = prod(kernel)
        P = prod(out)
        xc = as_compute(x)
        dt = xc.dtype
        off = as_compute(offset).astype(dt).reshape(N, offset_group, K, nsp, P).transpose(0, 1, 2, 4, 3)
        # base sampling positions: o * stride - pad_begin + k * dilation
        grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
        kgrid = np.meshgrid(*[np.arange(k) for k in kernel], indexing="ij")
        base = np.stack(
            [
                (kgrid[i].reshape(K, 1) * dilations[i]) + (grids[i].reshape(1, P) * strides[i] - begin[i])
                for i in range(nsp)
            ],
            axis=-1,
        ).astype(dt)  # (K, P, nsp)
        coords = off + base  # (N, og, K, P, nsp)
        xg = xc.reshape((N, offset_group, C // offset_group) + x.shape[2:])
        cols = _multilinear_gather(xg, coords)  # (N, og, Cog, K, P)
        if mask is not None:
            m = as_compute(mask).astype(dt).reshape(N, offset_group, 1, K, P)
            cols = cols * m
        cols = cols.reshape(N, C, K, P)
        wc = as_compute(w).astype(dt)
        Cg, Mg = C // group, M // group
        if group == 1:
            y = np.matmul(wc.reshape(M, C * K), cols.reshape(N, C * K, P))
        else:
            y = np.matmul(wc.reshape(group, Mg, Cg * K), cols.reshape(N, group, Cg * K, P))
        y = y.reshape((N, M) + tuple(out))
        if b is not None:
            y = y + b.astype(dt).reshape((1, -1) + (1,) * nsp)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- Col2Im


@register("Col2Im", since=18)
def col2im(node):
    attrs = node.attrs

    def run(x, image_shape, block_shape):
        if x.dtype == object:
            raise Unsupported("Col2Im on string tensors: the engine folds numbers only")
        image = [int(v) for v in np.asarray(image_shape).reshape(-1)]
        kernel = [int(v) for v in np.asarray(block_shape).reshape(-1)]
        nsp = len(image)
        strides = ints(attrs.get("strides"), nsp, 1)
        dilations = ints(attrs.get("dilations"), nsp, 1)
        pads = ints(attrs.get("pads"), 2 * nsp, 0)
        N = x.shape[0]
        K = prod(kernel)
        C = x.shape[1] // K
        padded = [image[i] + pads[i] + pads[i + nsp] for i in range(nsp)]
        blocks = [(padded[i] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(nsp)]
        cols = x.reshape((N, C, K) + tuple(blocks))
        if x.dtype.kind in "fc" or x.dtype.kind in "iu":
            y = scatter_windows(cols, kernel, blocks, strides, dilations, (N, C) + tuple(padded))
        else:  # bool/other: accumulate in a wider type
            y = scatter_windows(cols.astype(np.float64), kernel, blocks, strides, dilations, (N, C) + tuple(padded))
        y = y[(slice(None), slice(None)) + tuple(slice(pads[i], pads[i] + image[i]) for i in range(nsp))]
        return (np.ascontiguousarray(y).astype(x.dtype, copy=False),)

    return run
