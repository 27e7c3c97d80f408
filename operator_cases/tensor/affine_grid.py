"""AffineGrid: the sampling grid of a batch of affine matrices (ONNX spec: AffineGrid-20).

"An affine matrix theta is applied to a position tensor represented in its homogeneous
expression": output position ``theta[n] @ (x, y, 1)`` (2-D, theta N x 2 x 3, grid N x H x W x 2)
or ``theta[n] @ (x, y, z, 1)`` (3-D, theta N x 3 x 4, grid N x D x H x W x 3). The positions are
"evenly spaced in the original 2D or 3D space, with dimensions ranging from -1 to 1"; following
the PyTorch function the text links, x runs along W, y along H, z along D. ``align_corners=1``:
-1 and 1 are the centres of the corner pixels, so the positions of an axis of size S are
``-1 + 2 i / (S - 1)``; ``align_corners=0`` (default): -1 and 1 are the outer edges, positions
``-1 + (2 i + 1) / S``. An axis of size 1 with align_corners=1 has one pixel whose centre is both
-1 and 1: spec-silent (we take 0, the centre of the range, as PyTorch does; align_corners=0
gives 0 by its formula). Computed in float64 and rounded once to the type of theta.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("AffineGrid")
st = S.st


def _positions(s: int, align: int) -> np.ndarray:
    i = np.arange(s, dtype=np.float64)
    if align:
        return np.zeros(1) if s == 1 else -1 + 2 * i / (s - 1)
    return -1 + (2 * i + 1) / s


@op.reference(20)
def affine_grid(theta, size, *, align_corners=0):
    theta = np.asarray(theta)
    size = [int(v) for v in np.asarray(size)]
    spatial = size[2:]
    r = len(spatial)
    if r not in (2, 3) or theta.shape[1:] != (r, r + 1) or theta.shape[0] != size[0]:
        raise ValueError(f"AffineGrid: theta {theta.shape} with size {size}")
    axes = [_positions(s, int(align_corners)) for s in spatial]  # D, H, W (or H, W)
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*reversed(mesh), np.ones(tuple(spatial))], axis=-1)  # (x, y[, z], 1)
    with np.errstate(all="ignore"):
        grid = np.einsum("...k,njk->n...j", base, theta.astype(np.float64))
    return grid.astype(theta.dtype)


def _size_one_align(inputs, attrs, expected, since):
    spatial = [int(v) for v in np.asarray(inputs[1])[2:]]
    if not attrs.get("align_corners", 0) or 1 not in spatial:
        return [None]
    return [np.ones(np.shape(expected[0]), dtype=bool)]  # every output mixes every coordinate through theta


op.spec_silent(
    "size_1_align_corners", (20,),
    spec="When `align_corners=1`, consider `-1` and `1` to refer to the centers of the corner pixels",
    expected="position 0 on an axis of size 1 (the centre of [-1, 1], PyTorch's choice)",
    where=_size_one_align, invariants={"the grid's shape": lambda c: np.shape(c.actual[0]) == np.shape(c.expected[0])},
    readings={"position -1 (linspace(-1, 1, 1) of the formula, its start)": lambda c: [_grid_at(c, -1.0)],
              "position +1 (the other corner)": lambda c: [_grid_at(c, 1.0)]})


def _grid_at(c, position: float) -> np.ndarray:
    """The grid with an axis of size 1 at ``position`` (theta applied to the base coordinates)."""
    theta, spatial = np.asarray(c.inputs[0]), [int(v) for v in np.asarray(c.inputs[1])[2:]]
    axes = [np.array([position]) if s == 1 else _positions(s, 1) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = np.stack([*reversed(mesh), np.ones(tuple(spatial))], axis=-1)
    with np.errstate(all="ignore"):
        return np.einsum("...k,njk->n...j", coords, theta.astype(np.float64)).astype(np.asarray(c.expected[0]).dtype)


def _i(v):
    return np.array(v, dtype=np.int64)


@op.strategy(20)
def draw(d, dtype, opset):
    r = d(st.sampled_from([2, 2, 3]))
    n = d(st.integers(1, 2))
    spatial = [d(st.integers(2, 5)) for _ in range(r)]
    theta = S.arrays(d, dtype, shape=(n, r, r + 1), lo=-2, hi=2)
    attrs = {"align_corners": d(st.integers(0, 1))} if d(st.integers(0, 3)) else {}
    return Example([theta, _i([n, d(st.integers(1, 3)), *spatial])], attrs)


@op.edges(20)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    ident2 = np.array([[[1.0, 0, 0], [0, 1, 0]]])
    ident3 = np.array([[[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]])
    rot = np.array([[[0.0, -1, 0.5], [1, 0, -0.25]], [[2, 0, 0], [0, 0.5, 1]]])
    tiny = S.smallest_subnormal(dtype)
    special = np.array([[[np.nan, 0, -0.0], [np.inf, 1, -np.inf]]])
    return [
        Example([ident2.astype(t), _i([1, 1, 3, 4])], name="identity_2d"),
        Example([ident2.astype(t), _i([1, 1, 3, 4])], {"align_corners": 1}, name="identity_2d_align"),
        Example([rot.astype(t), _i([2, 3, 2, 5])], name="rotate_translate"),
        Example([rot.astype(t), _i([2, 3, 2, 5])], {"align_corners": 1}, name="rotate_translate_align"),
        Example([ident3.astype(t), _i([1, 1, 2, 3, 4])], name="identity_3d"),
        Example([ident3.astype(t), _i([1, 1, 2, 3, 4])], {"align_corners": 1}, name="identity_3d_align"),
        Example([ident2.astype(t), _i([1, 1, 1, 3])], name="size_1"),
        Example([ident2.astype(t), _i([1, 1, 1, 3])], {"align_corners": 1}, name="size_1_align"),
        Example([np.zeros((0, 2, 3), dtype=t), _i([0, 1, 2, 2])], name="empty_batch"),
        Example([special.astype(t), _i([1, 1, 2, 3])], name="nan_inf_neg_zero"),
        Example([(ident2 * tiny).astype(t), _i([1, 1, 2, 2])], name="subnormal"),
    ]
