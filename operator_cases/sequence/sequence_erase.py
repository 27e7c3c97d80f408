"""SequenceErase: "Outputs a tensor sequence that removes the tensor at 'position' from
'input_sequence'. Accepted range for 'position' is in `[-n, n - 1]` [...] Negative value means
counting positions from the back. 'position' is optional, by default it erases the last tensor
from 'input_sequence'." (ONNX spec: SequenceErase-11).

Erasing from an empty sequence (no last tensor, no accepted position) has no result: the
reference raises; no case holds one, the hand tests check it.
"""

import numpy as np

from harness.registry import Example, Operator

from .._sequence_util import SHARE, PositionError, edge_items, index_dtype, items, position, seq, seq_out, st
from .._sequence_util import elem_code

op = Operator("SequenceErase", type_param="S")
op.draws(11, share=SHARE)


@op.reference(11)
def sequence_erase(input_sequence, position_=None):
    n = len(input_sequence)
    if position_ is None:
        if n == 0:
            raise PositionError("SequenceErase: an empty sequence has no last tensor to erase")
        p = n - 1
    else:
        p = position(position_, n)
    out = list(input_sequence)
    del out[p]
    return seq_out(out, elem_code(input_sequence))


@op.strategy(11)
def draw(d, dtype, opset):
    xs = items(d, dtype, lo=1)
    n = len(xs)
    if d(st.booleans()):
        return Example([seq(xs, dtype)])
    return Example([seq(xs, dtype), np.array(d(st.integers(-n, n - 1)), dtype=index_dtype(d))])


@op.edges(11)
def edges(dtype, opset):
    e = edge_items(dtype)
    n = len(e)
    return [Example([seq(e, dtype)], name="default_last"),
            Example([seq(e, dtype), np.array(0, np.int64)], name="first"),
            Example([seq(e, dtype), np.array(-n, np.int32)], name="minus_n"),
            Example([seq(e, dtype), np.array(-1, np.int64)], name="minus_one"),
            Example([seq(e[:1], dtype)], name="to_empty"),
            Example([seq(e[:1], dtype), np.array(0, np.int32)], name="to_empty_at_0")]


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=0.0, type_param="S")
def fuzz(c):
    """SequenceErase of the last item (no position) or of a drawn position in [-n, n - 1]
    (int64 or int32) of a sequence the plan builds from pool tensors
    (_sequence_util.fuzz_sequence); the plan then turns what is left back into a tensor
    (_sequence_util.fuzz_consume: SequenceLength alone when nothing is left). A copy: exact."""
    from harness.fuzz_api import Plan

    from .._sequence_util import fuzz_consume, fuzz_sequence

    built = fuzz_sequence(c, "SequenceErase")
    if built is None:
        return None
    steps, s, shapes = built
    n = len(shapes)
    inputs = [s]
    at = n - 1
    if c.pick(3):
        p = c.pick(2 * n) - n
        inputs.append(c.const(np.array(p, dtype=c.choice([np.int64, np.int32])), "int"))
        at = p + n if p < 0 else p
    own = c.fresh("seq") + "o"
    then = fuzz_consume(c, c.local(own), shapes[:at] + shapes[at + 1:])
    if then is None:
        return None
    return Plan(inputs, steps=steps, then=then, outputs=[own])
