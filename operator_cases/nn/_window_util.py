"""Window geometry shared by Conv, MaxPool and AveragePool (ONNX spec: Conv-1/11/22,
MaxPool-1/8/10/11/12/22, AveragePool-1/7/10/11/19/22), and the strategies that draw it.

Geometry, per spatial axis i (as the operator texts give it):

- the effective kernel extent is ``(kernel_shape[i] - 1) * dilations[i] + 1``;
- explicit padding (``auto_pad`` NOTSET): ``pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]``
  and ``output = floor((input + pad_begin + pad_end - extent) / stride + 1)``, or ``ceil(...)``
  with ``ceil_mode`` (MaxPool-10+, AveragePool-10+);
- ``VALID``: no padding, ``output = ceil((input - extent + 1) / stride)``
  (= ``floor((input - extent) / stride) + 1``);
- ``SAME_UPPER`` / ``SAME_LOWER``: ``output = ceil(input / stride)`` and the total padding is
  ``(output - 1) * stride + extent - input`` (taken as 0 when that is negative: the windows do not
  reach the end), split equally, the odd one "at the end for SAME_UPPER and at the beginning for
  SAME_LOWER". ``ceil_mode`` changes nothing here (the ceil and floor formulas of MaxPool-12+
  and AveragePool-19+ agree). A negative total (stride > extent, e.g. input 4, kernel 1,
  stride 2: -1) is ambiguous: "pad the input" suggests no padding (TensorFlow's SAME, which the
  texts cite, clamps it to 0, and so do we), while the formula taken literally crops, and the
  text does not say how to split a negative odd total. Implementations differ (ONNX Runtime's
  MaxPool rejects it, its AveragePool crops a total of -2; onnx.reference's MaxPool crops, its
  AveragePool fails). The strategies never draw a negative total.
- MaxPool-22 and AveragePool-22 add, in the ceil_mode sentence: "Sliding windows that would start
  in the right padded region are ignored": with ceil_mode the last window is dropped while it
  starts at or after ``pad_begin + input`` (in padded coordinates). This is what onnx's own shape
  inference does for version 22 (and only with ceil_mode); for earlier versions it keeps such a
  window, whose cells are all padding, and the texts do not say what its value is (the maximum or
  average of no element): the strategies never draw that case for those versions.
- ceil_mode with auto_pad SAME_*/VALID: the texts give the auto_pad output sizes above
  (``ceil(input / stride)``, ``ceil((input - extent + 1) / stride)``) with ceil_mode enabled,
  but onnx's shape inference (1.23) applies the ceil formula to the padded size instead
  (``ceil((input + pad - extent) / stride) + 1``: VALID, input 4, kernel 2, stride 3 gives 2,
  the text 1), so a model stating the text's shape is rejected by the checker. The reference
  follows the text; the strategies draw ceil_mode = 1 only with explicit padding.

Window ``o`` covers input cells ``o * stride - pad_begin + j * dilation`` for ``j < kernel``;
cells outside ``[0, input)`` are padding. A window cell beyond the explicit padding (the overhang
a ceil_mode window may have) is padding too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, NAN_IEEE, Ctx, Plan, abs_bound, size_of
from harness.registry import Example, Operator

st = S.st

#: at most this many elements in a drawn input and output
BUDGET = 256


# -- edge examples -------------------------------------------------------------------------------
def pool_grids(t: type, corner: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AveragePool's and LpPool's edge inputs in type ``t``: [1, 1, 4, 4] and [1, 1, 5, 5] grids of
    distinct values around 0, and a [1, 1, 4, 4] grid with NaN, +-inf and -0.0 in its 2 x 2 windows,
    ``corner`` (an infinity) at the start of its third row."""
    x = ((np.arange(16).reshape(1, 1, 4, 4) * 7) % 16 - 8).astype(t)
    five = ((np.arange(25).reshape(1, 1, 5, 5) * 11) % 25 - 12).astype(t)
    inf, nan = np.inf, np.nan
    special = np.array([[[[nan, 1, inf, -inf], [2, 3, 0, 1], [corner, 1, -0.0, -0.0], [2, 0, -0.0, -0.0]]]]).astype(t)
    return x, five, special


def batch_edges(dtype: str, example: Example, *, overflow: bool = False) -> list[Example]:
    """Variants of a plain edge example of a windowed op (its first input is N x C x spatial):
    the batch empty (N = 0); for float types the data scaled to subnormals with its zeros made
    -0.0; with ``overflow`` (sums: Conv) the data at the type's largest value and every other
    input all ones, so each output of 2 or more cells is past the type's range (+inf however the
    sum is ordered or widened)."""
    x, rest = np.asarray(example.inputs[0]), list(example.inputs[1:])
    kw = {"outputs": example.outputs}
    out = [Example([np.zeros((0, *x.shape[1:]), dtype=x.dtype), *rest], dict(example.attrs), name="empty_batch", **kw)]
    if S.is_float(dtype):
        import ml_dtypes

        info = ml_dtypes.finfo(x.dtype)
        w = x.astype(np.float64)
        small = np.where(w == 0, -0.0, w * float(info.smallest_subnormal)).astype(x.dtype)
        out.append(Example([small, *rest], dict(example.attrs), name="subnormal_signed_zero", **kw))
        if overflow:
            big = np.full(x.shape, float(info.max)).astype(x.dtype)
            ones = [None if r is None else np.ones_like(r) for r in rest]
            out.append(Example([big, *ones], dict(example.attrs), name="overflow", **kw))
    return out


# -- attributes ------------------------------------------------------------------------------------
def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def ints(value: Any, rank: int, default: int) -> list[int]:
    return [default] * rank if value is None else [int(v) for v in value]


def axis_plan(size: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool, drop_right: bool) -> int:
    """Output size of one axis with explicit padding."""
    extent = (k - 1) * d + 1
    num = size + pb + pe - extent
    if num < 0:
        raise ValueError(f"window of extent {extent} does not fit {size} + pads {pb}+{pe}")
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and drop_right:
        while out > 1 and (out - 1) * s >= pb + size:
            out -= 1
    return out


def resolve(spatial: tuple[int, ...], kernel: list[int], strides: Any = None, dilations: Any = None, pads: Any = None,
            auto_pad: Any = "NOTSET", ceil_mode: int = 0, drop_right: bool = False) -> dict[str, list[int]]:
    """The geometry of every spatial axis: kernel, strides, dilations, pads (begin, end) and the
    output size, from the attributes (defaults as in the spec)."""
    r = len(spatial)
    strides = ints(strides, r, 1)
    dilations = ints(dilations, r, 1)
    mode = text(auto_pad)
    begin, end, out, raw_total = [], [], [], []
    for i, size in enumerate(spatial):
        k, s, d = int(kernel[i]), strides[i], dilations[i]
        extent = (k - 1) * d + 1
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-size // s)
            raw_total.append((o - 1) * s + extent - size)
            total = max(0, raw_total[-1])
            small, big = total // 2, total - total // 2
            pb, pe = (small, big) if mode == "SAME_UPPER" else (big, small)
            out.append(o)
        elif mode == "VALID":
            pb = pe = 0
            out.append(axis_plan(size, k, s, d, 0, 0, False, False))
        elif mode == "NOTSET":
            p = ints(pads, 2 * r, 0)
            pb, pe = p[i], p[i + r]
            out.append(axis_plan(size, k, s, d, pb, pe, bool(ceil_mode), drop_right))
        else:
            raise ValueError(f"auto_pad {mode!r}")
        begin.append(pb)
        end.append(pe)
    return {"kernel": [int(k) for k in kernel], "strides": strides, "dilations": dilations, "begin": begin, "end": end,
            "out": out, "spatial": list(spatial), "same_total": raw_total}


def axis_cells(g: dict[str, list[int]], i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, valid, in_padded) arrays of shape (out, kernel) for axis i: the input index of
    every window cell, whether it is an input cell, and whether it lies inside the explicitly
    padded extent [-pad_begin, input + pad_end)."""
    o = np.arange(g["out"][i])[:, None]
    j = np.arange(g["kernel"][i])[None, :]
    idx = o * g["strides"][i] - g["begin"][i] + j * g["dilations"][i]
    size = g["spatial"][i]
    valid = (idx >= 0) & (idx < size)
    padded = (idx >= -g["begin"][i]) & (idx < size + g["end"][i])
    return idx, valid, padded


def gather(x: np.ndarray, g: dict[str, list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """The windows of x (N, C, D1..Dr) as an array (N, C, o1..or, k1..kr), with the masks of
    input cells and of cells inside the padded extent (o1..or, k1..kr), and the per-axis index
    arrays (broadcastable to (o1..or, k1..kr)). Padding cells hold 0."""
    r = x.ndim - 2
    full = tuple(g["out"]) + tuple(g["kernel"])
    clipped, raw = [], []
    valid = np.ones(full, dtype=bool)
    padded = np.ones(full, dtype=bool)
    for i in range(r):
        idx, v, p = axis_cells(g, i)
        shape = [1] * (2 * r)
        shape[i], shape[r + i] = idx.shape
        raw.append(idx.reshape(shape))
        clipped.append(np.clip(idx, 0, max(g["spatial"][i] - 1, 0)).reshape(shape))
        valid &= v.reshape(shape)
        padded &= p.reshape(shape)
    windows = x[(slice(None), slice(None), *clipped)]
    windows = np.where(valid, windows, np.zeros((), dtype=windows.dtype))
    return windows, valid, padded, raw


# -- drawing -----------------------------------------------------------------------------------------
def draw_input_shape(d: Callable, ranks: tuple[int, ...] = (2, 1, 3), max_n: int = 2, max_c: int = 3,
                     channels: Callable[[int], bool] | None = None, budget: int = BUDGET) -> tuple[int, ...]:
    """(N, C, D1..Dr): N in 1..max_n, C in 1..max_c, r in ``ranks``, each Di in 1..6, at most
    ``budget`` elements."""
    n = d(st.integers(1, max_n))
    c = d(st.integers(1, max_c))
    r = d(st.sampled_from(ranks))
    dims = [n, c]
    for _ in range(r):
        room = budget // int(np.prod(dims))
        dims.append(d(st.integers(1, max(1, min(6, room)))))
    return tuple(dims)


def window_ok(g: dict[str, list[int]], *, pool: bool, keep_right: bool, ceil_mode: int, include_pad: bool) -> bool:
    """Whether the drawn geometry is one whose result the spec defines unambiguously."""
    if any(o < 1 for o in g["out"]) or any(t < 0 for t in g["same_total"]):
        return False
    for i in range(len(g["out"])):
        idx, valid, _ = axis_cells(g, i)
        if pool and not valid.any(axis=1).all():
            return False  # a window of padding only: max/average of no element
        size, pe = g["spatial"][i], g["end"][i]
        starts = idx[:, 0]
        if ceil_mode and keep_right and (starts >= size).any():
            return False  # a window starting in the right padding, kept by versions before 22
        if include_pad and ceil_mode and (idx[:, -1] >= size + pe).any():
            return False  # count_include_pad with a ceil_mode overhang beyond the explicit pads
    return True


def draw_window(d: Callable, spatial: tuple[int, ...], *, dilations: bool, ceil_mode: bool, pool: bool,
                keep_right: bool = False, include_pad: Callable[[dict], bool] = lambda attrs: False,
                same_strides: bool = True, max_kernel: int = 3, out_budget: Callable[[list[int]], bool] = lambda out: True,
                drop_right: bool = False) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Attributes kernel_shape, strides, dilations, pads / auto_pad (and ceil_mode) for a window
    over ``spatial`` that give an output of at least one element per axis and a well-defined
    value (see ``window_ok``), and the resolved geometry. ``keep_right``: the op-version keeps
    ceil_mode windows that start in the right padding (before version 22); ``include_pad(attrs)``:
    padding is counted (AveragePool count_include_pad); ``same_strides``: SAME_* may have strides
    > 1 (Conv-1's text only says "the output spatial size match the input")."""
    r = len(spatial)
    for _ in range(12):
        kernel = [d(st.integers(1, max_kernel)) for _ in range(r)]
        strides = [d(st.sampled_from([1, 2, 1, 3])) for _ in range(r)]
        dil = [d(st.sampled_from([1, 2])) for _ in range(r)] if dilations else [1] * r
        attrs: dict[str, Any] = {"kernel_shape": kernel}
        if any(s != 1 for s in strides) or d(st.integers(0, 3)) == 0:
            attrs["strides"] = strides
        if any(v != 1 for v in dil) or (dilations and d(st.integers(0, 3)) == 0):
            attrs["dilations"] = dil
        mode = d(st.sampled_from(["pads", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "pads"]))
        if mode == "pads":
            attrs["pads"] = [d(st.integers(0, k - 1)) for k in kernel] + [d(st.integers(0, k - 1)) for k in kernel]
        elif mode == "NOTSET":
            if d(st.booleans()):
                attrs["auto_pad"] = "NOTSET"
        else:
            attrs["auto_pad"] = mode
            if mode != "VALID" and not same_strides and any(s != 1 for s in strides):
                continue
        cm = 0
        if ceil_mode:
            # ceil_mode with auto_pad SAME_*/VALID: see the module docstring (never drawn)
            cm = d(st.integers(0, 1)) if attrs.get("auto_pad", "NOTSET") == "NOTSET" else 0
            if cm or d(st.integers(0, 3)) == 0:
                attrs["ceil_mode"] = cm
        try:
            g = resolve(spatial, kernel, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                        attrs.get("auto_pad", "NOTSET"), cm, drop_right)
        except ValueError:
            continue
        if window_ok(g, pool=pool, keep_right=keep_right, ceil_mode=cm, include_pad=include_pad(attrs)) and out_budget(g["out"]):
            return attrs, g
    attrs = {"kernel_shape": [1] * r}
    return attrs, resolve(spatial, attrs["kernel_shape"])


# -- fuzz templates --------------------------------------------------------------------------
def window_attrs(c: Ctx, spatial: tuple[int, ...], dilate: bool = True) -> dict[str, Any] | None:
    """kernel_shape, strides, dilations and pads (or auto_pad) for a window over ``spatial``
    whose output keeps every spatial dimension at least 1."""
    kernel = [1 + c.pick(min(3, s)) for s in spatial]
    strides = [1 + c.pick(2) for _ in spatial]
    dilations = [1 + c.pick(2) if dilate and (k - 1) * 2 + 1 <= s else 1 for k, s in zip(kernel, spatial)]
    attrs: dict[str, Any] = {"kernel_shape": kernel}
    if any(v != 1 for v in strides):
        attrs["strides"] = strides
    if any(v != 1 for v in dilations):
        attrs["dilations"] = dilations
    mode = c.pick(4)
    if mode == 3 and all(k == 1 for k in kernel):
        # asymmetric pads need a kernel of 2 or more on some axis (a pad stays below its kernel)
        room = [i for i, s in enumerate(spatial) if s >= 2]
        if room:
            i = room[c.pick(len(room))]
            kernel[i] = 2
            attrs["kernel_shape"] = kernel
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    if mode == 1:
        attrs["auto_pad"] = c.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
        if attrs["auto_pad"] == "VALID" and any(e > s for e, s in zip(extent, spatial)):
            return None
        if attrs["auto_pad"] != "VALID" and any((-(-s // t) - 1) * t + e - s < 0 for s, t, e in zip(spatial, strides, extent)):
            return None  # a negative SAME_* total pad (stride > extent): the spec does not say how to apply it
        return attrs
    # mode 2: the same pads both sides; mode 3: begin and end pads drawn apart (asymmetric)
    begin = [c.pick(k) for k in kernel] if mode >= 2 else [0] * len(spatial)
    end = list(begin)
    if mode == 3:
        end = [c.pick(k) for k in kernel]
        wide = [i for i, k in enumerate(kernel) if k >= 2]
        if end == begin and wide:  # make them differ on one axis (a pad stays below its kernel)
            i = wide[c.pick(len(wide))]
            end[i] = (begin[i] + 1) % kernel[i]
    pads = begin + end
    if any(pads):
        attrs["pads"] = pads
    n = len(spatial)
    if any(s + pads[i] + pads[i + n] - e < 0 for i, (s, e) in enumerate(zip(spatial, extent))):
        return None
    return attrs


def pool_template(op: Operator, average: bool) -> None:
    """MaxPool (first output), AveragePool: a window over the spatial axes of a rank 3 or 4 value."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: 3 <= v.rank <= 4 and v.size > 0)
        if x is None:
            return None
        attrs = window_attrs(c, x.shape[2:], dilate=not average or c.since >= 19)
        if attrs is None:
            return None
        if average and attrs.get("pads") and c.pick(2):
            attrs["count_include_pad"] = 1
        n = size_of(tuple(attrs["kernel_shape"]))
        return Plan([x], attrs, n_acc=n if average else 0, n_outputs=1)

    op.fuzz(nan=NAN_IEEE if average else NAN_ASSUMED, ulps=2.0 if average else 0.0)(plan)


def global_pool_template(op: Operator, average: bool) -> None:
    """GlobalAveragePool, GlobalMaxPool: any value of rank 3 or more."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.rank >= 3 and v.size > 0)
        return Plan([x], n_acc=size_of(x.shape[2:]) if average else 0) if x is not None else None

    op.fuzz(nan=NAN_IEEE if average else NAN_ASSUMED, ulps=2.0 if average else 0.0, bound=abs_bound if average else None)(plan)
