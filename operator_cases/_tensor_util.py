"""Helpers shared by the tensor and shape operators of this family (Shape, Size, NonZero,
Compress, CenterCropPad, DepthToSpace/SpaceToDepth, EyeLike, OneHot, Range, Constant,
ConstantOfShape): filled test tensors, index tensors and axis draws."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example

st = S.st


def fill(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A tensor of ``shape`` cycling through every special value of ``dtype`` (NaN, +-inf, -0.0,
    subnormals, the extremes ...), so that data-movement ops show where each one lands."""
    return np.resize(S.edge_values(dtype), shape)


def ints(values, label: str = "int64") -> np.ndarray:
    """Integer tensor of ``values`` in ``label`` (int32/int64 index tensors)."""
    return np.array(values, dtype=np.int64).astype(S.np_dtype(label))


def side(d, hi: int = 4, empty_one_in: int = 8) -> int:
    """A dimension in [1, hi], or (one time in ``empty_one_in``) 0."""
    return 0 if d(st.integers(0, empty_one_in - 1)) == 0 else d(st.integers(1, hi))


def axis_for(d, rank: int, negative: bool = True) -> int:
    """An axis of a rank-``rank`` tensor, written negatively half of the time when allowed."""
    axis = d(st.integers(0, rank - 1))
    return axis - rank if negative and d(st.booleans()) else axis


def edge_data(dtype: str) -> list[tuple[str, np.ndarray]]:
    """Named data tensors every shape-reading op (Shape, Size, NonZero) sees: the special values,
    a scalar, an empty tensor and a rank-4 one."""
    out = [("edge_values", S.edge_values(dtype)), ("empty", fill(dtype, (2, 0, 3)))]
    if dtype in STRUCTURAL:
        out += [("scalar", fill(dtype, ())), ("rank4", fill(dtype, (2, 1, 3, 2)))]
    return out


# -- DepthToSpace / SpaceToDepth ----------------------------------------------------------------
def draw_block(d, dtype: str, depth: bool, modes: bool) -> Example:
    """A drawn blocksize move: DepthToSpace's (``depth``: C a multiple of blocksize**2) or
    SpaceToDepth's (H and W multiples of blocksize) [N, C, H, W] input, N or a spatial dim
    sometimes 0, and sometimes a ``mode`` where the version has the attribute (``modes``)."""
    bs = d(st.sampled_from([2, 1, 3, 2]))
    attrs = {"blocksize": bs}
    if modes and d(st.booleans()):
        attrs["mode"] = d(st.sampled_from(["CRD", "DCR"]))
    n = side(d, 2)
    if depth:
        c, h, w = bs * bs * d(st.integers(1, 2)), side(d, 3), side(d, 3)
    else:
        c, h, w = d(st.integers(1, 2)), bs * side(d, 2), bs * side(d, 2)
    return Example([S.arrays(d, dtype, shape=(n, c, h, w))], attrs)


def block_plan(c: Ctx, depth: bool, modes: bool) -> Plan | None:
    """A blocksize move in a generated graph: a rank-4 value that fits blocksize 2 or 1 (as in
    :func:`draw_block`), CRD sometimes where the version has ``mode``."""
    bs = c.choice([2, 1])
    if depth:
        x = c.take("float", 0, lambda v: v.rank == 4 and v.shape[1] % (bs * bs) == 0)
    else:
        x = c.take("float", 0, lambda v: v.rank == 4 and v.shape[2] % bs == 0 and v.shape[3] % bs == 0)
    if x is None:
        return None
    attrs = {"blocksize": bs}
    if modes and c.pick(2):
        attrs["mode"] = "CRD"
    return Plan([x], attrs)


#: the dtypes that see the structural edge examples (attribute values, shapes) of an op that only
#: moves or never reads the values; every dtype of the sweep still sees its special values
STRUCTURAL = ("float32", "int64", "bool", "string")


def block_edges(dtype: str, modes: bool, two: tuple[int, ...], three: tuple[int, ...], empty_batch: tuple[int, ...]) -> list[Example]:
    """DepthToSpace's and SpaceToDepth's edges in each ``mode`` (DCR and CRD where the version has
    the attribute): edge values of shape ``two`` at blocksize 2, ``three`` at blocksize 3, and an
    ``empty_batch`` at blocksize 2."""
    out = []
    for mode in ["DCR", "CRD"] if modes else [None]:
        m = {"mode": mode} if mode else {}
        tag = f"_{mode}" if mode else ""
        out += [
            Example([fill(dtype, two)], {"blocksize": 2, **m}, name=f"edge_values{tag}"),
            Example([fill(dtype, three)], {"blocksize": 3, **m}, name=f"blocksize3{tag}"),
            Example([fill(dtype, empty_batch)], {"blocksize": 2, **m}, name=f"empty_batch{tag}"),
        ]
    return out


def specials(dtype: str) -> np.ndarray:
    """The special values of ``dtype`` alone (NaN, +-inf, -0.0, a subnormal, the extremes; for
    integers the extremes and -1, or 0 when unsigned): one case each where an op stores a single value."""
    ev = S.edge_values(dtype)
    if dtype in ("string", "bool"):
        return ev
    low, high = S.finite_range(dtype)
    if S.is_int(dtype):
        return np.array(sorted({low, high, -1 if low < 0 else 0}), dtype=object).astype(ev.dtype)
    f = ev.astype(np.float64)
    keep = np.isnan(f) | np.isinf(f) | ((f == 0) & np.signbit(f)) | (f == low) | (f == high)
    keep |= (f != 0) & (np.abs(f) < float(ml_dtypes.finfo(ev.dtype).smallest_normal)) & (f > 0)
    keep &= [str(v) not in {str(u) for u in f[:k][keep[:k]]} for k, v in enumerate(f)]  # once each (float8 turns inf into NaN)
    return ev[keep]
