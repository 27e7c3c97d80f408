"""SplitToSequence: "Split a tensor into a sequence of tensors, along the specified 'axis'."
(ONNX spec: SplitToSequence-11, -24; -24 adds bfloat16, same text).

``split`` (optional, int32 or int64): "If the argument `split' is not specified, a default
scalar value of 1 is used [...] 'split' must contain only positive numbers. 'split' is either a
scalar (tensor of empty shape), or a 1-D tensor. If 'split' is a scalar, then 'input' will be
split into chunks all of size 'split' if possible. The last chunk alone may be smaller than
'split' if the 'input' size along the given axis 'axis' is not divisible by 'split'. If 'split'
is a 1-dimensional tensor, the input tensor is split into 'size(split)' chunks, with lengths of
the parts on 'axis' specified in 'split'. In this scenario, the sum of entries in 'split' must
be equal to the dimension size of input tensor on 'axis'."

``keepdims``: "Keep the split dimension or not. Default 1 [...] If input 'split' is specified,
this attribute is ignored." So keepdims=0 squeezes the axis only when split is absent (chunks of
size 1). ``axis``: default 0, "Accepted range is [-rank, rank-1]".

An axis of size 0 gives the empty sequence (no chunk), split absent or a scalar.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._sequence_util import SHARE, elem_code, index_dtype, seq_out, st, values

op = Operator("SplitToSequence", type_param="T")
VERSIONS = (11, 24)
op.draws(*VERSIONS, share=SHARE)


@op.reference(*VERSIONS)
def split_to_sequence(input, split=None, *, axis=0, keepdims=1):  # noqa: A002 - spec name
    x = np.asarray(input)
    r = x.ndim
    if not -r <= axis <= r - 1:
        raise ValueError(f"axis {axis} outside [-{r}, {r - 1}]")
    ax = axis % r
    dim = x.shape[ax]
    if split is None:
        sizes = [1] * dim
    else:
        s = np.asarray(split)
        if s.ndim == 0:
            size = int(s)
            if size <= 0:
                raise ValueError("'split' must contain only positive numbers")
            sizes = [min(size, dim - start) for start in range(0, dim, size)]
        elif s.ndim == 1:
            sizes = [int(v) for v in s]
            if any(v <= 0 for v in sizes) or sum(sizes) != dim:
                raise ValueError(f"split {sizes}: positive numbers summing to the axis size {dim}")
        else:
            raise ValueError("'split' is either a scalar or a 1-D tensor")
    bounds = np.cumsum([0] + sizes)
    parts = [np.take(x, np.arange(bounds[k], bounds[k + 1]), axis=ax) for k in range(len(sizes))]
    if split is None and not keepdims:
        parts = [np.squeeze(p, axis=ax) for p in parts]
    return seq_out(parts, elem_code(x))


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    x = values(d, dtype, S.shapes(d, 1, 3, 0, 4))
    r = x.ndim
    axis = d(st.integers(-r, r - 1))
    dim = x.shape[axis]
    attrs = {}
    if axis != 0 or d(st.booleans()):
        attrs["axis"] = axis
    if d(st.booleans()):
        attrs["keepdims"] = d(st.sampled_from([0, 1]))
    mode = d(st.sampled_from(["absent", "scalar", "list"]))
    if mode == "absent" or (mode == "list" and dim == 0):
        return Example([x], attrs)
    if mode == "scalar":
        return Example([x, np.array(d(st.integers(1, 5)), dtype=index_dtype(d))], attrs)
    cuts = sorted(d(st.sets(st.integers(1, dim - 1), max_size=3))) if dim > 1 else []
    sizes = np.diff([0, *cuts, dim])
    return Example([x, sizes.astype(index_dtype(d))], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = S.edge_values(dtype)
    m = np.resize(e, (5, 2))
    return [
        Example([e], name="default"),
        Example([m], {"keepdims": 0}, name="keepdims_0"),
        Example([m, np.array(2, np.int64)], name="scalar_uneven_last"),
        Example([m, np.array(2, np.int32)], {"keepdims": 0}, name="scalar_keepdims_ignored"),
        Example([m[:3], np.array(1, np.int64)], {"keepdims": 0}, name="scalar_one_keepdims_ignored"),
        Example([m, np.array(7, np.int64)], name="scalar_above_dim"),
        Example([m, np.array([1, 3, 1], np.int32)], {"axis": -2}, name="list_negative_axis"),
        Example([m, np.array([2], np.int64)], {"axis": 1, "keepdims": 0}, name="list_keepdims_ignored"),
        Example([m], {"axis": -1, "keepdims": 0}, name="last_axis_squeezed"),
        Example([np.zeros((0, 3), e.dtype)], name="empty_axis"),
        Example([np.zeros((0, 3), e.dtype), np.array(2, np.int64)], name="empty_axis_scalar"),
        Example([np.zeros((3, 0), e.dtype)], {"axis": 0, "keepdims": 0}, name="empty_chunks"),
    ]
