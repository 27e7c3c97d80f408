"""Pieces shared by the convolution family (ONNX spec: Conv, ConvInteger, ConvTranspose,
DeformConv, Col2Im): the grouped correlation of gathered windows, the *fold* that sums blocks
back into an image (ConvTranspose and Col2Im are both folds), and small value helpers for the
edge examples.

Fold geometry, per spatial axis: block (or input position) ``o`` and kernel tap ``j`` land on
image cell ``o * stride - pad_begin + j * dilation``; cells outside ``[0, image)`` are dropped
(they are the padding, or ConvTranspose's cropped border).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S

from ._window_util import draw_input_shape, draw_window

LETTERS_O, LETTERS_K = "pqr", "uvw"


def ramp(t: Any, shape: tuple[int, ...], start: int = 1, mod: int = 7, offset: int = 3) -> np.ndarray:
    """Small integers ``(step i + start) % mod - offset`` in dtype ``t`` (step 5, or 3 when mod is a
    multiple of 5, so the values vary): exact in every type."""
    n = int(np.prod(shape))
    step = 3 if mod % 5 == 0 else 5
    return ((np.arange(n) * step + start) % mod - offset).astype(np.float64).astype(t).reshape(shape)


def grouped_correlation(win: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """Windows (N, C, o.., k..) against weights (M, C/G, k..) -> (N, M, o..): output channel m of
    group g = m // (M / G) sums over input channels [g C/G, (g + 1) C/G) and every tap."""
    n, c = win.shape[:2]
    r = (win.ndim - 2) // 2
    out, ks = win.shape[2:2 + r], win.shape[2 + r:]
    m = w.shape[0]
    win = win.reshape(n, groups, c // groups, *out, *ks)
    ww = w.reshape(groups, m // groups, c // groups, *ks)
    o, k = LETTERS_O[:r], LETTERS_K[:r]
    return np.einsum(f"ngc{o}{k},gmc{k}->ngm{o}", win, ww).reshape(n, m, *out)


def fold(cols: np.ndarray, image: tuple[int, ...], strides: list[int], dilations: list[int], begin: list[int],
         fill: Any = 0) -> np.ndarray:
    """Sum blocks (N, C, o1..or, k1..kr) into an image (N, C, *image): block o, tap j goes to
    ``o * stride - begin + j * dilation`` on each axis; cells outside the image are dropped, image
    cells no block reaches hold ``fill``."""
    n, c = cols.shape[:2]
    r = len(image)
    blocks, ks = cols.shape[2:2 + r], cols.shape[2 + r:]
    full = tuple(blocks) + tuple(ks)
    flat = np.zeros(full, dtype=np.int64)
    valid = np.ones(full, dtype=bool)
    for i in range(r):
        shape = [1] * (2 * r)
        shape[i], shape[r + i] = blocks[i], ks[i]
        idx = (np.arange(blocks[i])[:, None] * strides[i] - begin[i] + np.arange(ks[i])[None, :] * dilations[i]).reshape(shape)
        valid = valid & (idx >= 0) & (idx < image[i])
        flat = flat * image[i] + np.clip(idx, 0, max(image[i] - 1, 0))
    size = int(np.prod(image))
    out = np.full((n, c, size), fill, dtype=cols.dtype)
    take = np.broadcast_to(valid, full)
    targets = np.broadcast_to(flat, full)[take]
    src = cols.reshape(n, c, *full)[..., take] if take.size else cols.reshape(n, c, 0)
    for a in range(n):
        for b in range(c):
            np.add.at(out[a, b], targets, src[a, b])
    return out.reshape(n, c, *image)


def sub_normal(x: np.ndarray) -> np.ndarray:
    """``x`` scaled to the type's subnormals, its zeros made -0.0 (both edge classes at once)."""
    import ml_dtypes

    info = ml_dtypes.finfo(x.dtype)
    w = x.astype(np.float64)
    return np.where(w == 0, -0.0, w * float(info.smallest_subnormal)).astype(x.dtype)


def specials(t: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A ramp with a NaN, +inf and -inf in it (first, middle and last cells)."""
    x = ramp(np.float64, shape)
    flat = x.reshape(-1)
    flat[0], flat[flat.size // 2], flat[-1] = np.nan, np.inf, -np.inf
    return flat.reshape(shape).astype(t)


def is_float_dtype(x: Any) -> bool:
    return S.is_float(S.label_of(np.asarray(x).dtype))


def integer_conv_extremes(dtype: str):
    """ConvInteger's and QLinearConv's extreme operands, per weight type (uint8, int8): a 3x3
    image of x's type ``dtype`` at its limits and a 2x2 filter at the weight type's limits, as
    (weight type, x, w)."""
    lo, hi = S.finite_range(dtype)
    for wname in ("uint8", "int8"):
        wlo, whi = S.finite_range(wname)
        yield (wname, np.array([lo, hi, hi, lo, 0, hi, lo, lo, hi], dtype=object).astype(S.np_dtype(dtype)).reshape(1, 1, 3, 3),
               np.array([whi, wlo, whi, whi], dtype=object).astype(S.np_dtype(wname)).reshape(1, 1, 2, 2))


def stated_window_attrs(d: Callable, strides: list[int], dilations: list[int], pads: list[int]) -> dict:
    """The drawn window's ``strides``, ``dilations`` and ``pads`` as attributes: each one that is
    not its default, and now and then (one draw in four) a default one written out."""
    attrs = {}
    if any(v != 1 for v in strides) or d(S.st.integers(0, 3)) == 0:
        attrs["strides"] = strides
    if any(v != 1 for v in dilations) or d(S.st.integers(0, 3)) == 0:
        attrs["dilations"] = dilations
    if any(pads) or d(S.st.integers(0, 3)) == 0:
        attrs["pads"] = pads
    return attrs


def draw_conv_geometry(d: Callable, budget: int | None = None, same_strides: bool = True
                       ) -> tuple[tuple[int, ...], int, int, tuple[int, ...], dict[str, Any]]:
    """A convolution's geometry (Conv, ConvInteger, QLinearConv): the input shape (N, C, spatial..)
    within ``budget`` elements, the groups dividing C, M output channels (1 or 2 per group), the
    window attributes with at most 256 output elements, ``kernel_shape`` left to be inferred from
    the weights half of the time, and ``group`` written when it is not 1 and now and then when it
    is. Returns (shape, groups, M, kernel, attrs)."""
    st = S.st
    shape = draw_input_shape(d) if budget is None else draw_input_shape(d, budget=budget)
    n, c, spatial = shape[0], shape[1], shape[2:]
    groups = d(st.sampled_from([g for g in (1, 2, 3) if c % g == 0]))
    m = groups * d(st.integers(1, 2))
    attrs, _ = draw_window(d, spatial, dilations=True, ceil_mode=False, pool=False, same_strides=same_strides,
                           out_budget=lambda out: n * m * int(np.prod(out)) <= 256)
    kernel = attrs["kernel_shape"]
    if d(st.booleans()):
        del attrs["kernel_shape"]
    if groups != 1 or d(st.integers(0, 3)) == 0:
        attrs["group"] = groups
    return shape, groups, m, kernel, attrs


def fuzz_conv_input(c: Any) -> tuple[Any, int, tuple[int, ...], int] | None:
    """The start of a convolution's fuzz template (Conv, ConvTranspose): a float value of rank 3
    or 4, its channels and spatial shape, and the group (1, or depthwise when channels > 1)."""
    x = c.take("float", 0, lambda v: 3 <= v.rank <= 4 and v.size > 0)
    if x is None:
        return None
    channels, spatial = x.shape[1], x.shape[2:]
    return x, channels, spatial, c.choice([1, channels]) if channels > 1 else 1
