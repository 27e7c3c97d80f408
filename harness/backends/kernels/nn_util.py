"""Shared helpers for the neural-network kernels (geometry, padding, dtype handling).

Nothing here registers a kernel; the ``nn_*`` modules import what they need.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

try:  # ml_dtypes is a declared dependency; keep the import soft all the same
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except Exception:  # pragma: no cover
    BFLOAT16 = None


class IdentityCache:
    """Keeps the last value computed from some arrays (a weight converted to the compute type,
    BatchNormalization's per-channel factors), keyed by the identity of those arrays (a graph's
    initializers are the same objects on every run) and by ``key`` (compared by equality).

    The (sources, key, value) entry is swapped in one assignment, so concurrent runs never see
    a value paired with the wrong sources.
    """

    __slots__ = ("entry",)

    def __init__(self):
        self.entry = ((), None, None)

    def get(self, compute, *sources, key=None):
        srcs, k, value = self.entry
        if k != key or len(srcs) != len(sources) or any(a is not b for a, b in zip(srcs, sources)):
            value = compute(*sources)
            self.entry = (sources, key, value)
        return value


def ints(value, n: int, default: int) -> list[int]:
    """A list attribute of length ``n``, or ``[default] * n`` when absent/empty."""
    if value is None or len(value) == 0:
        return [default] * n
    return [int(v) for v in value]


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype to compute in: float16/bfloat16 go through float32 (BLAS has no kernels for them)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return dtype
    if dtype.kind == "f" or dtype == BFLOAT16:
        return np.dtype(np.float32)
    return np.dtype(np.float64) if dtype.kind in "iub" else dtype


def as_compute(x: np.ndarray) -> np.ndarray:
    cd = compute_dtype(x.dtype)
    return x if x.dtype == cd else x.astype(cd)


def spatial_geometry(
    in_shape,
    kernel,
    strides,
    dilations,
    pads,
    auto_pad: str = "NOTSET",
    ceil_mode: bool = False,
):
    """Output sizes and (begin, end) pads for Conv- and Pool-style windows.

    Follows the formulas in the Conv/MaxPool/AveragePool specs. With ``ceil_mode`` a window
    that would start in the right padding is dropped.
    """
    n = len(in_shape)
    pads = ints(pads, 2 * n, 0)
    begin, end, out = [], [], []
    auto_pad = auto_pad or "NOTSET"
    for i in range(n):
        L, k, s, d = int(in_shape[i]), int(kernel[i]), int(strides[i]), int(dilations[i])
        dk = (k - 1) * d + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-L // s)
            total = max(0, (o - 1) * s + dk - L)
            if auto_pad == "SAME_UPPER":
                pb = total // 2
            else:
                pb = total - total // 2
            pe = total - pb
        elif auto_pad == "VALID":
            pb = pe = 0
            if ceil_mode:
                o = -(-(L - dk + 1) // s)
            else:
                o = (L - dk) // s + 1
        else:
            pb, pe = pads[i], pads[i + n]
            span = L + pb + pe - dk
            if ceil_mode:
                o = -(-span // s) + 1
                if (o - 1) * s >= L + pb:  # last window starts in the right padding
                    o -= 1
            else:
                o = span // s + 1
        begin.append(pb)
        end.append(pe)
        out.append(max(int(o), 0))
    return out, begin, end


def pad_to_windows(x, out, begin, strides, dilations, kernel, value):
    """Pad (or crop) the spatial axes of ``x`` (N, C, *spatial) so every window fits exactly.

    Returns the padded array; window ``o`` along axis i starts at ``o * stride``.
    """
    n = len(out)
    widths = [(0, 0), (0, 0)]
    crop = [slice(None), slice(None)]
    need_pad = False
    need_crop = False
    for i in range(n):
        L = x.shape[2 + i]
        need = (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 if out[i] > 0 else 0
        pb = begin[i]
        pe = need - L - pb
        if pe < 0:
            crop.append(slice(0, L + pe))
            need_crop = True
            pe = 0
        else:
            crop.append(slice(None))
        widths.append((pb, pe))
        if pb or pe:
            need_pad = True
    if need_crop:
        x = x[tuple(crop)]
    if need_pad:
        shape = x.shape[:2] + tuple(x.shape[2 + i] + widths[2 + i][0] + widths[2 + i][1] for i in range(n))
        xp = np.zeros(shape, dtype=x.dtype) if value == 0 else np.full(shape, value, dtype=x.dtype)
        xp[(slice(None), slice(None)) + tuple(slice(widths[2 + i][0], widths[2 + i][0] + x.shape[2 + i]) for i in range(n))] = x
        return xp
    return x


def window_slices(offset, out, strides, dilations):
    """Index tuple selecting, for kernel position ``offset``, the element of every window."""
    return (slice(None), slice(None)) + tuple(
        slice(offset[i] * dilations[i], offset[i] * dilations[i] + (out[i] - 1) * strides[i] + 1, strides[i])
        for i in range(len(out))
    )


def kernel_offsets(kernel):
    return itertools.product(*[range(int(k)) for k in kernel])


def tap_sources(xp, kernel, strides, dilations):
    """Where each kernel position's windows are read from: per position, (array, first index,
    step) along each spatial axis of ``xp`` (..., *padded). With strides and at least four
    positions a phase (7x7/2: 49 positions on 4 phases), the padded input is first split into
    its phases (the elements at p, p + s, p + 2s, ... along each axis; one strided copy each),
    and every window is then a run of consecutive elements of one phase: a strided read copied
    once per phase instead of once per kernel position."""
    phases, taps = _tap_layout(tuple(kernel), tuple(strides), tuple(dilations))
    arrays = [np.ascontiguousarray(xp[(Ellipsis,) + phase]) for phase in phases] or [xp]
    return [(arrays[j], first, step) for j, first, step in taps]


@functools.lru_cache(maxsize=512)
def _tap_layout(kernel, strides, dilations):
    """``tap_sources``' plan for a geometry: the phases' slices (none: read the input itself)
    and, per kernel position, (phase, first index, step)."""
    nsp = len(kernel)
    offsets = [[off[i] * dilations[i] for i in range(nsp)] for off in kernel_offsets(kernel)]
    if all(s == 1 for s in strides) or len(offsets) < 4 * math.prod(strides):
        return (), [(0, at, strides) for at in offsets]
    phases: dict[tuple, int] = {}
    taps = []
    for at in offsets:
        j = phases.setdefault(tuple(a % s for a, s in zip(at, strides)), len(phases))
        taps.append((j, [a // s for a, s in zip(at, strides)], (1,) * nsp))
    return tuple(tuple(slice(q, None, s) for q, s in zip(p, strides)) for p in phases), taps


def window(first, step, n):
    """The slice of ``n`` elements from ``first`` every ``step``."""
    return slice(first, first + (n - 1) * step + 1, step)


def im2col(xp, kernel, out, strides, dilations):
    """(N, C, *padded) -> (N, C, prod(kernel), prod(out)) with one copy per kernel position."""
    N, C = xp.shape[:2]
    K, P = prod(kernel), prod(out)
    cols = np.empty((N, C, K) + tuple(out), dtype=xp.dtype)
    for k, (src, first, step) in enumerate(tap_sources(xp, kernel, strides, dilations)):
        cols[:, :, k] = src[(slice(None), slice(None)) + tuple(map(window, first, step, out))]
    return cols.reshape(N, C, K, P)


def round_half_even_saturate(y: np.ndarray, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(np.rint(y), info.min, info.max).astype(dtype)


def prod(seq) -> int:
    return int(math.prod(int(s) for s in seq))
