"""Unsqueeze (ONNX spec: Unsqueeze-1, 11, 13, 21, 23, 24, 25).

"Insert single-dimensional entries to the shape of a tensor." "Dimension indices in `axes` are
as seen in the output tensor": Unsqueeze(data of shape [3, 4, 5], axes=[0, 4]) has shape
[1, 3, 4, 5, 1]. The output rank is rank(data) + len(axes).

- Unsqueeze-1: ``axes`` is a required attribute, "List of non-negative integers".
- Unsqueeze-11: negative axes count from the back of the output; "Each value in `axes` should
  be within the (inclusive) range [-output_rank , output_rank - 1]"; "It is an error if it
  contains duplicates"; "The order of values in `axes` does not matter".
- Unsqueeze-13: ``axes`` becomes a required int64 input; bfloat16 is added.
- Unsqueeze-21, 23, 24, 25 only widen the types.

Out-of-range, negative (before 11) or repeated axes raise ValueError (repeated axes are not
stated as an error in Unsqueeze-1 but make the output rank ill-defined).
"""

import itertools

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Unsqueeze")
st = S.st
INPUT_VERSIONS = (13, 21, 23, 24, 25)


def _unsqueeze(data, axes, negative: bool):
    data = np.asarray(data)
    axes = np.asarray(axes)
    if axes.ndim > 1:
        raise ValueError(f"Unsqueeze: axes must be 1-D, got rank {axes.ndim}")
    axes = [int(a) for a in axes.reshape(-1)]
    out_rank = data.ndim + len(axes)
    lo = -out_rank if negative else 0
    norm = []
    for a in axes:
        if not lo <= a <= out_rank - 1:
            raise ValueError(f"Unsqueeze: axis {a} outside [{lo}, {out_rank - 1}]")
        norm.append(a + out_rank if a < 0 else a)
    if len(set(norm)) != len(norm):
        raise ValueError(f"Unsqueeze: repeated axes {axes}")
    dims = iter(data.shape)
    shape = tuple(1 if i in norm else next(dims) for i in range(out_rank))
    return data.reshape(shape).copy()


@op.reference(1)
def unsqueeze_1(data, *, axes):
    return _unsqueeze(data, axes, negative=False)


@op.reference(11)
def unsqueeze_11(data, *, axes):
    return _unsqueeze(data, axes, negative=True)


@op.reference(*INPUT_VERSIONS)
def unsqueeze_13(data, axes):
    return _unsqueeze(data, axes, negative=True)


def _draw_axes(d, dtype, negative: bool):
    x = S.arrays(d, dtype, min_dims=0, max_dims=4, min_side=0 if d(st.integers(0, 5)) == 0 else 1)
    k = d(st.integers(1, 3))
    out_rank = x.ndim + k
    axes = d(st.lists(st.integers(0, out_rank - 1), min_size=k, max_size=k, unique=True))
    if negative:
        axes = [a - out_rank if d(st.booleans()) else a for a in axes]
    return x, axes


@op.strategy(1, 11)
def draw_1(d, dtype, opset):
    x, axes = _draw_axes(d, dtype, negative=opset >= 11)
    return Example([x], {"axes": axes})


@op.strategy(*INPUT_VERSIONS)
def draw_13(d, dtype, opset):
    x, axes = _draw_axes(d, dtype, negative=True)
    return Example([x, np.array(axes, dtype=np.int64)])


def _fill(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


def _edge_cases(dtype, negative: bool):
    """(name, x, axes)."""
    out = [
        ("spec_example", _fill(dtype, (3, 4, 5)), [0, 4]),          # (1, 3, 4, 5, 1)
        ("unsorted_axes", _fill(dtype, (3, 4, 5)), [4, 0]),
        ("scalar", _fill(dtype, ()), [0]),                          # (1,)
        ("scalar_to_3d", _fill(dtype, ()), [1, 0, 2]),              # (1, 1, 1)
        ("edge_values_column", S.edge_values(dtype), [1]),
        ("empty", _fill(dtype, (0, 2)), [1]),                       # (0, 1, 2)
        ("adjacent_inner", _fill(dtype, (2, 3)), [1, 2]),           # (2, 1, 1, 3)
    ]
    if negative:
        out += [("negative_axes", _fill(dtype, (2, 3)), [-1, 0]),         # (1, 2, 3, 1)
                ("negative_min", _fill(dtype, (2, 3)), [-4, -3])]         # (1, 1, 2, 3)
    return out


@op.edges(1, 11)
def edges_1(dtype, opset):
    return [Example([x], {"axes": a}, name=n) for n, x, a in _edge_cases(dtype, opset >= 11)]


@op.edges(*INPUT_VERSIONS)
def edges_13(dtype, opset):
    return [Example([x, np.array(a, dtype=np.int64)], name=n) for n, x, a in _edge_cases(dtype, True)]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank < 4)
    if x is None:
        return None
    out_rank = x.rank + 1 + c.pick(2)
    combos = list(itertools.combinations(range(out_rank), out_rank - x.rank))
    axes = [a - out_rank if c.pick(3) == 2 else a for a in combos[c.pick(len(combos))]]
    return Plan([x, c.ints(axes)]) if c.since >= 13 else Plan([x], {"axes": axes})
