"""SequenceLength: "Produces a scalar(tensor of empty shape) containing the number of tensors in
'input_sequence'." (ONNX spec: SequenceLength-11). The output is int64 (type constraint I).
"""

import numpy as np

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, items, seq

op = Operator("SequenceLength", type_param="S")
op.draws(11, share=SHARE)


@op.reference(11)
def sequence_length(input_sequence):
    return np.array(len(input_sequence), dtype=np.int64)


@op.strategy(11)
def draw(d, dtype, opset):
    return Example([seq(items(d, dtype), dtype)])


@op.edges(11)
def edges(dtype, opset):
    e = edge_items(dtype)
    return [Example([seq([], dtype)], name="empty_sequence"),
            Example([seq(e, dtype)], name="shapes_differ"),
            Example([seq([e[2]], dtype)], name="one_empty_tensor")]


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=0.0, type_param="S")
def fuzz(c):
    """SequenceLength of a sequence the plan builds from pool tensors (SequenceConstruct or
    SplitToSequence: _sequence_util.fuzz_sequence): the item count, an int64 scalar that enters
    the pool as an integer value (Cast turns it into the graph's dtype). Exact."""
    from harness.fuzz_api import Plan

    from .._sequence_util import fuzz_sequence

    built = fuzz_sequence(c, "SequenceLength")
    if built is None:
        return None
    steps, s, _ = built
    return Plan([s], steps=steps)
