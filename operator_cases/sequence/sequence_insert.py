"""SequenceInsert: "Outputs a tensor sequence that inserts 'tensor' into 'input_sequence' at
'position'. 'tensor' must have the same data type as 'input_sequence'. Accepted range for
'position' is in `[-n, n]` [...] Negative value means counting positions from the back.
'position' is optional, by default it inserts 'tensor' to the back of 'input_sequence'."
(ONNX spec: SequenceInsert-11).

A position p < 0 is p + n: the tensor lands before the element -p from the back (-1: before
the last one), -n at the front; n appends. Outside [-n, n] the reference raises; no case holds
such a position, the hand tests check it.
"""

import numpy as np

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, elem_code, index_dtype, item, items, position, seq, seq_out, st

op = Operator("SequenceInsert", type_param="T")
op.draws(11, share=SHARE)


@op.reference(11)
def sequence_insert(input_sequence, tensor, position_=None):
    n = len(input_sequence)
    p = n if position_ is None else position(position_, n, insert=True)
    out = list(input_sequence)
    out.insert(p, tensor)
    return seq_out(out, elem_code(input_sequence) or elem_code(tensor))


@op.strategy(11)
def draw(d, dtype, opset):
    xs = items(d, dtype)
    n = len(xs)
    x = item(d, dtype)
    if d(st.booleans()):
        return Example([seq(xs, dtype), x])
    return Example([seq(xs, dtype), x, np.array(d(st.integers(-n, n)), dtype=index_dtype(d))])


@op.edges(11)
def edges(dtype, opset):
    e = edge_items(dtype)
    n = len(e) - 1
    s = seq(e[1:], dtype)
    x = e[0]
    return [Example([s, x], name="default_back"),
            Example([s, x, np.array(0, np.int64)], name="front"),
            Example([s, x, np.array(n, np.int32)], name="at_n"),
            Example([s, x, np.array(-1, np.int64)], name="minus_one"),
            Example([s, x, np.array(-n, np.int32)], name="minus_n"),
            Example([seq([], dtype), x], name="into_empty"),
            Example([seq([], dtype), e[2], np.array(0, np.int64)], name="into_empty_at_0")]


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=0.0)
def fuzz(c):
    """SequenceInsert of a pool tensor (of the items' shape, or any: SequenceAt and
    SequenceLength take items of any shape) into a sequence the plan builds from pool tensors
    (_sequence_util.fuzz_sequence), at the back (no position) or at a drawn position in [-n, n]
    (int64 or int32); the plan then turns the sequence back into a tensor
    (_sequence_util.fuzz_consume), so only tensors enter the pool. A copy: exact."""
    from harness.fuzz_api import Plan

    from .._sequence_util import fuzz_consume, fuzz_sequence

    built = fuzz_sequence(c, "SequenceInsert")
    if built is None:
        return None
    steps, s, shapes = built
    n = len(shapes)
    same = c.pick(2) == 0
    t = c.take("float", 1, (lambda v: v.shape == shapes[0]) if same else None)
    if t is None:
        return None
    inputs = [s, t]
    at = n
    if c.pick(3):
        p = c.pick(2 * n + 1) - n
        inputs.append(c.const(np.array(p, dtype=c.choice([np.int64, np.int32])), "int"))
        at = p + n if p < 0 else p
    own = c.fresh("seq") + "o"
    then = fuzz_consume(c, c.local(own), shapes[:at] + [t.shape] + shapes[at:])
    if then is None:
        return None
    return Plan(inputs, steps=steps, then=then, outputs=[own])
