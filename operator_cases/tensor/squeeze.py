"""Squeeze (ONNX spec: Squeeze-1, 11, 13, 21, 23, 24, 25).

"Remove single-dimensional entries from the shape of a tensor. ... If `axes` is not provided,
all the single dimensions will be removed from the shape. If an axis is selected with shape
entry not equal to one, an error is raised."

- Squeeze-1: ``axes`` is an optional attribute, "List of non-negative integers".
- Squeeze-11: negative axes count from the back; "Accepted range is [-r, r-1] where r =
  rank(data)."
- Squeeze-13: ``axes`` becomes an optional int64 input; bfloat16 is added.
- Squeeze-21, 23, 24, 25 only widen the types.

Invalid axes (out of range, negative before 11, repeated, selecting a dim that is not 1) raise
ValueError. An empty ``axes`` list is not drawn: the spec does not say whether it means "no
axes given" (squeeze every 1) or "squeeze nothing".
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Squeeze")
st = S.st
ATTR_VERSIONS = (1, 11)
INPUT_VERSIONS = (13, 21, 23, 24, 25)


def _squeeze(data, axes, negative: bool):
    data = np.asarray(data)
    r = data.ndim
    if axes is None:
        drop = [i for i, v in enumerate(data.shape) if v == 1]
    else:
        axes = np.asarray(axes)
        if axes.ndim > 1:
            raise ValueError(f"Squeeze: axes must be 1-D, got rank {axes.ndim}")
        drop = []
        for a in (int(v) for v in axes.reshape(-1)):
            lo = -r if negative else 0
            if not lo <= a <= r - 1:
                raise ValueError(f"Squeeze: axis {a} outside [{lo}, {r - 1}]")
            a = a + r if a < 0 else a
            if a in drop:
                raise ValueError(f"Squeeze: axis {a} given twice")
            if data.shape[a] != 1:
                raise ValueError(f"Squeeze: axis {a} has size {data.shape[a]}, not 1")
            drop.append(a)
    return data.reshape(tuple(v for i, v in enumerate(data.shape) if i not in drop)).copy()


@op.reference(1)
def squeeze_1(data, *, axes=None):
    return _squeeze(data, axes, negative=False)


@op.reference(11)
def squeeze_11(data, *, axes=None):
    return _squeeze(data, axes, negative=True)


@op.reference(*INPUT_VERSIONS)
def squeeze_13(data, axes=None):
    return _squeeze(data, axes, negative=True)


def _draw_axes(d, dtype, negative: bool):
    """(x, axes or None): axes pick some of the size-1 dims, in any order."""
    shape = list(S.shapes(d, min_dims=0, max_dims=5, min_side=0 if d(st.integers(0, 5)) == 0 else 1, max_side=4))
    for i in range(len(shape)):
        if d(st.booleans()):
            shape[i] = 1
    x = S.arrays(d, dtype, shape=tuple(shape))
    ones = [i for i, v in enumerate(shape) if v == 1]
    if not ones or d(st.integers(0, 3)) == 0:
        return x, None
    axes = d(st.lists(st.sampled_from(ones), min_size=1, max_size=len(ones), unique=True))
    if negative:
        axes = [a - x.ndim if d(st.booleans()) else a for a in axes]
    return x, axes


@op.strategy(*ATTR_VERSIONS)
def draw_1(d, dtype, opset):
    x, axes = _draw_axes(d, dtype, negative=opset >= 11)
    if axes is not None and opset < 11:
        axes = sorted(axes)  # onnx's Squeeze-1 shape inference assumes sorted axes (see edges_1)
    return Example([x], {} if axes is None else {"axes": axes})


@op.strategy(*INPUT_VERSIONS)
def draw_13(d, dtype, opset):
    x, axes = _draw_axes(d, dtype, negative=True)
    return Example([x] if axes is None else [x, np.array(axes, dtype=np.int64)])


def _fill(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


def _edge_cases(dtype, negative: bool):
    """(name, x, axes or None)."""
    out = [
        ("no_axes", _fill(dtype, (1, 3, 1, 2)), None),            # (3, 2)
        ("no_axes_no_ones", _fill(dtype, (2, 3)), None),          # unchanged
        ("no_axes_all_ones", _fill(dtype, (1, 1, 1)), None),      # scalar
        ("to_scalar", _fill(dtype, (1,)), [0]),
        ("edge_values_row", S.edge_values(dtype).reshape(1, -1), [0]),
        ("unsorted_axes", _fill(dtype, (1, 2, 1, 1)), [3, 0]),    # (2, 1)
        ("empty", _fill(dtype, (0, 1, 3)), [1]),                  # (0, 3)
        ("empty_no_axes", _fill(dtype, (1, 0, 1)), None),         # (0,)
    ]
    if negative:
        out += [("negative_axes", _fill(dtype, (1, 3, 1)), [-1, -3]),   # (3,)
                ("mixed_axes", _fill(dtype, (2, 1, 1, 2)), [1, -2])]    # (2, 2)
    return out


@op.edges(*ATTR_VERSIONS)
def edges_1(dtype, opset):
    # Squeeze-1 does not ask for sorted axes, but onnx's Squeeze-1 shape inference walks them
    # as if sorted (axes [3, 0] of (1, 2, 1, 1) infer rank 3), so the checker rejects the model
    cases = [c for c in _edge_cases(dtype, opset >= 11) if opset >= 11 or c[0] != "unsorted_axes"]
    return [Example([x], {} if a is None else {"axes": a}, name=n) for n, x, a in cases]


@op.edges(*INPUT_VERSIONS)
def edges_13(dtype, opset):
    return [Example([x] if a is None else [x, np.array(a, dtype=np.int64)], name=n) for n, x, a in _edge_cases(dtype, True)]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: 1 in v.shape)
    if x is None:
        return None
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    axes = [a for a in ones if c.pick(2) == 0] or ones[:1]
    if c.pick(4) == 0:
        return Plan([x])  # every size-1 axis
    return Plan([x, c.ints(axes)]) if c.since >= 13 else Plan([x], {"axes": axes})
