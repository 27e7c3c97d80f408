"""SequenceEmpty: "Construct an empty tensor sequence, with given data type." (ONNX spec:
SequenceEmpty-11). Attribute ``dtype``: "The data type of the tensors in the output sequence.
The default type is 'float'."

The output is the empty sequence ``seq(tensor(dtype))``; the sweep goes over every element type
the schema's S allows (complex ones excepted: no label in harness.strategies), each by its
``dtype`` attribute, and float without the attribute (the default).
"""

from harness import strategies as S
from harness.registry import Example, Operator

from .._sequence_util import seq_out, st

op = Operator("SequenceEmpty", type_param="S")
op.draws(11, share=0.05)  # no input: every draw of a dtype is the same node (float32 also draws the default)


@op.reference(11)
def sequence_empty(*, dtype=1):  # TensorProto.FLOAT: "The default type is 'float'"
    return seq_out([], int(dtype))


@op.strategy(11)
def draw(d, dtype, opset):
    if dtype == "float32" and d(st.booleans()):
        return Example([])
    return Example([], {"dtype": S.onnx_code(dtype)})


@op.edges(11)
def edges(dtype, opset):
    out = [Example([], {"dtype": S.onnx_code(dtype)}, name="dtype_attr")]
    if dtype == "float32":
        out.append(Example([], name="default_dtype"))
    return out
