"""Split: a tensor cut into consecutive parts along ``axis`` (ONNX spec: Split-1, 2, 11, 13, 18).

The part lengths come from, by version: Split-1 the attribute ``split`` or a second input of
type T; Split-2 and -11 the attribute ``split`` (-11 adds negative axes); Split-13 and -18 an
int64 input ``split`` ("Values should be >= 0. Sum of the values must be equal to the dim value
at 'axis'"). Without them the tensor is "split to equal sized parts", as many as the node has
outputs (the reference gets that count as ``n_outputs``); a dim those do not divide is not
defined before -18 and not drawn. Split-18 adds ``num_outputs``: "If the tensor is not evenly
splittable into `num_outputs`, the last chunk will be smaller", i.e. ceil(dim / n) per chunk and
the rest last; where that leaves the last chunk empty or nothing (dim 5 into 4: 2, 2, 1, 0?) the
text is ambiguous and no case draws it. Split-1 gives ``axis`` no default: its cases set it.
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import ints, positive_axis

op = Operator("Split", type_param="T")
st = S.st


def split_parts(x, lengths, axis, n_outputs=None):
    x = np.asarray(x)
    axis = positive_axis(axis, x.ndim)
    dim = x.shape[axis]
    if lengths is None:
        if not n_outputs or dim % n_outputs:
            raise ValueError(f"Split: {dim} does not split into {n_outputs} equal parts")
        lengths = [dim // n_outputs] * n_outputs
    lengths = [int(v) for v in lengths]
    if any(v < 0 for v in lengths) or sum(lengths) != dim:
        raise ValueError(f"Split: lengths {lengths} do not sum to the dim {dim}")
    cuts = np.cumsum(lengths)[:-1]
    return [part.copy() for part in np.split(x, cuts, axis=axis)]


def _lengths(split_input):
    if split_input is None:
        return None
    v = np.asarray(split_input)
    if S.is_float(S.label_of(v.dtype)) and np.any(v != np.round(v)):
        raise ValueError(f"Split-1: lengths {v} are not whole")
    return [int(a) for a in v.reshape(-1)]


@op.reference(1)
def split_1(x, split_input=None, *, axis=0, split=None, n_outputs=None):
    lengths = _lengths(split_input) if split_input is not None else split
    return split_parts(x, lengths, axis, n_outputs)


@op.reference(2, 11)
def split_2(x, *, axis=0, split=None, n_outputs=None):
    return split_parts(x, split, axis, n_outputs)


@op.reference(13)
def split_13(x, split_input=None, *, axis=0, n_outputs=None):
    return split_parts(x, _lengths(split_input), axis, n_outputs)


def chunks(dim, n):
    """Split-18's num_outputs: ceil(dim / n) each, the last smaller (None where ambiguous)."""
    size = math.ceil(dim / n) if n else 0
    last = dim - size * (n - 1)
    if n < 1 or last <= 0 or last > size:
        return None
    return [size] * (n - 1) + [last]


@op.reference(18)
def split_18(x, split_input=None, *, axis=0, num_outputs=None, n_outputs=None):
    if (split_input is None) == (num_outputs is None):
        raise ValueError("Split-18: give the input 'split' or the attribute 'num_outputs', not both, not neither")
    x = np.asarray(x)
    if num_outputs is not None:
        lengths = chunks(x.shape[positive_axis(axis, x.ndim)], int(num_outputs))
        if lengths is None:
            raise ValueError(f"Split-18: num_outputs {num_outputs} on this dim is ambiguous in the spec: not drawn")
        return split_parts(x, lengths, axis)
    return split_parts(x, _lengths(split_input), axis)


# -- cases ---------------------------------------------------------------------------------------
def _as_version(x, lengths, axis, opset, name="", count=None, dtype=None):
    """The example of one split for a version: lengths as attribute or input (None: equal parts,
    ``count`` of them; Split-18 then uses num_outputs)."""
    attrs = {"axis": axis} if axis or opset == 1 or name.endswith("axis0") else {}
    if lengths is None:
        if opset >= 18:
            return Example([x], {**attrs, "num_outputs": count}, name=name)
        return Example([x], attrs, name=name, outputs=count)
    if opset == 1 and name.endswith("input"):
        return Example([x, np.array(lengths, dtype=np.float64).astype(x.dtype)], attrs, name=name)
    if opset < 13:
        return Example([x], {**attrs, "split": list(lengths)}, name=name)
    return Example([x, ints(lengths)], attrs, name=name)


@op.strategy(1, 2, 11, 13, 18)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=6)
    axis = d(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    x = S.arrays(d, dtype, shape=shape)
    shown = axis - len(shape) if opset >= 11 and d(st.booleans()) else axis
    mode = d(st.sampled_from(["lengths", "equal"]))
    if mode == "equal":
        if opset >= 18:
            n = d(st.sampled_from([k for k in range(1, dim + 1) if chunks(dim, k)]))
        else:
            n = d(st.sampled_from([k for k in range(1, dim + 1) if dim % k == 0]))
        return _as_version(x, None, shown, opset, count=n)
    n = d(st.integers(1, min(4, dim)))
    lo, hi = (0, dim) if opset >= 13 else (1, dim - 1)  # a zero length from -13 on ("Values should be >= 0")
    cuts = sorted(d(st.lists(st.integers(lo, hi), min_size=n - 1, max_size=n - 1))) if n > 1 else []
    lengths = [b - a for a, b in zip([0] + cuts, cuts + [dim])]
    if opset < 13 and any(v == 0 for v in lengths):
        lengths = [dim]
    return _as_version(x, lengths, shown, opset, name="input" if opset == 1 and d(st.booleans()) else "")


@op.edges(1, 2, 11, 13, 18)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    n = len(ev)
    grid = np.resize(ev, (2, 6))
    out = [
        _as_version(ev, [1, n - 1], 0, opset, "uneven_lengths"),
        _as_version(grid, [2, 1, 3], 1, opset, "three_parts_axis1"),
        _as_version(grid, None, 1, opset, "equal_parts", count=3),
        _as_version(grid, None, 0, opset, "equal_parts_axis0", count=2),
        _as_version(grid, [6], 1, opset, "one_part"),
        _as_version(np.resize(ev, (0, 4)), [1, 3], 1, opset, "empty_rows"),
    ]
    if opset == 1:
        out.append(_as_version(grid, [4, 2], 1, opset, "lengths_as_input"))
    if opset >= 11:
        out.append(_as_version(grid, [3, 3], -1, opset, "negative_axis"))
    if opset >= 13:
        out.append(_as_version(grid, [0, 6, 0], 1, opset, "zero_length_parts"))
    if opset >= 18:
        out += [
            Example([np.resize(ev, (7, 2))], {"num_outputs": 3}, name="num_outputs_last_smaller"),  # 3, 3, 1
            Example([np.resize(ev, (2, 5))], {"num_outputs": 2, "axis": -1}, name="num_outputs_uneven_negative_axis"),  # 3, 2
        ]
    return out


# -- how it enters a generated graph: two parts ---------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param="T")
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and max(v.shape) > 1)
    if x is None:
        return None
    axis = max(range(x.rank), key=lambda a: (x.shape[a], -a)) if c.pick(2) else c.pick(x.rank)
    dim = x.shape[axis]
    if dim < 2:
        return None
    first = 1 + c.pick(dim - 1)
    lengths = [first, dim - first]
    if c.since >= 13:
        return Plan([x, c.ints(lengths)], {"axis": axis})
    return Plan([x], {"axis": axis, "split": lengths})
