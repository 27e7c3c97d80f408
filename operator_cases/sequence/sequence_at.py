"""SequenceAt: "Outputs a tensor copy from the tensor at 'position' in 'input_sequence'. Accepted
range for 'position' is in `[-n, n - 1]`, where `n` is the number of tensors in
'input_sequence'. Negative value means counting positions from the back." (ONNX spec:
SequenceAt-11). ``position`` is a scalar of int32 or int64 (type constraint I).

A position outside the accepted range (any position of an empty sequence) is not accepted and
has no result: the reference raises (``_sequence_util.PositionError``); no case holds one, the
hand tests check it.
"""

import numpy as np

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, index_dtype, items, position, seq, st

op = Operator("SequenceAt", type_param="T")
op.draws(11, share=SHARE)


@op.reference(11)
def sequence_at(input_sequence, position_):
    return np.array(input_sequence[position(position_, len(input_sequence))], copy=True)


@op.strategy(11)
def draw(d, dtype, opset):
    xs = items(d, dtype, lo=1)
    n = len(xs)
    pos = np.array(d(st.integers(-n, n - 1)), dtype=index_dtype(d))
    return Example([seq(xs, dtype), pos])


@op.edges(11)
def edges(dtype, opset):
    e = edge_items(dtype)
    n = len(e)
    i32, i64 = np.int32, np.int64
    return [Example([seq(e, dtype), np.array(0, i64)], name="first"),
            Example([seq(e, dtype), np.array(n - 1, i32)], name="last"),
            Example([seq(e, dtype), np.array(-1, i64)], name="minus_one"),
            Example([seq(e, dtype), np.array(-n, i32)], name="minus_n"),
            Example([seq(e, dtype), np.array(2, i64)], name="empty_tensor_element"),
            Example([seq(e[:1], dtype), np.array(-1, i32)], name="single")]


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=0.0)
def fuzz(c):
    """SequenceAt of a sequence the plan builds from pool tensors (_sequence_util.fuzz_sequence)
    at a drawn position in [-n, n - 1]: one of the items, exactly."""
    from harness.fuzz_api import Plan

    from .._sequence_util import fuzz_sequence

    built = fuzz_sequence(c, "SequenceAt")
    if built is None:
        return None
    steps, s, shapes = built
    n = len(shapes)
    pos = c.pick(2 * n) - n
    return Plan([s, c.ints(np.array(pos, dtype=np.int64))], steps=steps)
