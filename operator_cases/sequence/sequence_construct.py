"""SequenceConstruct: "Construct a tensor sequence containing 'inputs' tensors. All tensors in
'inputs' must have the same data type." (ONNX spec: SequenceConstruct-11).

The output holds copies of the inputs in order; their shapes and ranks may differ (the spec asks
only for one data type). Swept over every element type the schema allows that numpy holds
(complex64/complex128 have no label in harness.strategies: not swept).
"""

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, elem_code, item, seq_out, st

op = Operator("SequenceConstruct", type_param="T")
op.draws(11, share=SHARE)


@op.reference(11)
def sequence_construct(*inputs):
    if not inputs:
        raise ValueError("SequenceConstruct takes at least one input (variadic, min arity 1)")
    return seq_out(list(inputs), elem_code(inputs[0]))


@op.strategy(11)
def draw(d, dtype, opset):
    n = d(st.integers(1, 4))
    return Example([item(d, dtype) for _ in range(n)])


@op.edges(11)
def edges(dtype, opset):
    e = edge_items(dtype)
    return [Example([e[0]], name="one_input"),
            Example(e, name="shapes_differ"),
            Example([e[2], e[2]], name="empty_tensors"),
            Example([e[1]], name="scalar")]
