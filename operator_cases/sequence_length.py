"""SequenceLength: "Produces a scalar(tensor of empty shape) containing the number of tensors in
'input_sequence'." (ONNX spec: SequenceLength-11). The output is int64 (type constraint I).
"""

import numpy as np

from harness.registry import Example, Operator

from ._sequence_util import SHARE, edge_items, items, seq

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
