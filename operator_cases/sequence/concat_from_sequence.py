"""ConcatFromSequence: "Concatenate a sequence of tensors into a single tensor. All input tensors
must have the same shape, except for the dimension size of the axis to concatenate on. By
default 'new_axis' is 0, the behavior is similar to numpy.concatenate. When 'new_axis' is 1, the
behavior is similar to numpy.stack." (ONNX spec: ConcatFromSequence-11).

``axis`` (required): "Accepted range in `[-r, r - 1]`, where `r` is the rank of input tensors.
When `new_axis` is 1, accepted range is `[-r - 1, r]`." So with new_axis 1 scalars stack into a
vector, and with new_axis 0 a sequence of scalars has no axis to concatenate on. A negative
axis counts from the back of the input rank (r + 1 with new_axis).

An empty sequence: the spec names no result (no shape, and numpy.concatenate and numpy.stack
both refuse "need at least one array"): the reference raises and no case holds one.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._sequence_util import SHARE, seq, st, values

op = Operator("ConcatFromSequence", type_param="T")
op.draws(11, share=SHARE)


@op.reference(11)
def concat_from_sequence(input_sequence, *, axis, new_axis=0):
    if len(input_sequence) == 0:
        raise ValueError("ConcatFromSequence of an empty sequence: the spec names no result")
    xs = [np.asarray(x) for x in input_sequence]
    r = xs[0].ndim
    lo, hi = (-r - 1, r) if new_axis else (-r, r - 1)
    if not lo <= axis <= hi:
        raise ValueError(f"axis {axis} outside the accepted range [{lo}, {hi}] for rank {r}, new_axis={new_axis}")
    if new_axis:
        return np.stack(xs, axis=axis)
    return np.concatenate(xs, axis=axis)


@op.strategy(11)
def draw(d, dtype, opset):
    new_axis = d(st.sampled_from([0, 1]))
    r = d(st.integers(0 if new_axis else 1, 3))
    base = list(S.shapes(d, r, r, 0, 3))
    lo, hi = (-r - 1, r) if new_axis else (-r, r - 1)
    axis = d(st.integers(lo, hi))
    n = d(st.integers(1, 4))
    xs = []
    for _ in range(n):
        shape = list(base)
        if not new_axis:
            shape[axis] = d(st.integers(0, 3))  # only the concatenation axis may differ
        xs.append(values(d, dtype, tuple(shape)))
    attrs = {"axis": axis}
    if new_axis or d(st.booleans()):
        attrs["new_axis"] = new_axis
    return Example([seq(xs, dtype)], attrs)


@op.edges(11)
def edges(dtype, opset):
    e = S.edge_values(dtype)
    m = np.resize(e, (2, 3))
    scalars = [x.reshape(()) for x in np.array_split(e, len(e))]
    return [
        Example([seq([e, e[::-1]], dtype)], {"axis": 0}, name="edge_values"),
        Example([seq([m, m[:, :1], m[:, :0]], dtype)], {"axis": -1}, name="negative_axis_uneven"),
        Example([seq([m, m[:1]], dtype)], {"axis": -2, "new_axis": 0}, name="minus_r"),
        Example([seq(scalars, dtype)], {"axis": 0, "new_axis": 1}, name="stack_scalars"),
        Example([seq(scalars[:2], dtype)], {"axis": -1, "new_axis": 1}, name="stack_scalars_minus_one"),
        Example([seq([m, m], dtype)], {"axis": 2, "new_axis": 1}, name="stack_at_r"),
        Example([seq([m, m, m], dtype)], {"axis": -3, "new_axis": 1}, name="stack_at_minus_r_minus_1"),
        Example([seq([e], dtype)], {"axis": 0}, name="single"),
        Example([seq([np.zeros((0, 2), e.dtype), np.zeros((0, 2), e.dtype)], dtype)], {"axis": 0}, name="empty_tensors"),
        Example([seq([np.zeros((0, 2), e.dtype)] * 2, dtype)], {"axis": 1, "new_axis": 1}, name="stack_empty_tensors"),
    ]


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=0.0)
def fuzz(c):
    """ConcatFromSequence of a sequence the plan builds from pool tensors (SequenceConstruct or
    SplitToSequence: _sequence_util.fuzz_sequence), along a drawn axis, new_axis 0 or 1 (an
    axis along which the items' shapes differ is taken for new_axis 0 only). A copy: exact."""
    from harness.fuzz_api import Plan

    from .._sequence_util import fuzz_sequence

    built = fuzz_sequence(c, "ConcatFromSequence")
    if built is None:
        return None
    steps, s, shapes = built
    r = len(shapes[0])
    differ = [a for a in range(r) if len({sh[a] for sh in shapes}) > 1]
    new_axis = 0 if differ or r == 0 else c.pick(2)
    if differ:
        axis = differ[0]
    else:
        axis = c.pick(r + 1) if new_axis else c.pick(r)
    if c.pick(3) == 2:  # negative axes: [-r, -1] (or [-r - 1, -1] with new_axis)
        axis -= r + new_axis
    attrs = {"axis": axis}
    if new_axis or c.pick(2):
        attrs["new_axis"] = new_axis
    return Plan([s], attrs, steps=steps)
