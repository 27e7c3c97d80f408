"""OptionalGetElement (ONNX spec: OptionalGetElement-15, -18, -28).

-15: "Outputs the element in the optional-type input. It is an error if the input value does
not have an element and the behavior is undefined in this case." -18 adds: "If the input is a
tensor or sequence type, it returns the input." -28 widens the element types (bfloat16, float8,
4-bit), same text.

The element of a non-empty optional, or (from -18) the plain tensor or sequence itself. An empty
optional is an error whose behaviour is undefined: no case holds one (the reference raises; the
hand tests check it).
"""

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, item, items, opt, seq, seq_of, seq_out, st, tensor_of
from .._sequence_util import elem_code
from .optional import _sequence_allowed

op = Operator("OptionalGetElement", type_param="V")
VERSIONS = (15, 18, 28)
op.draws(*VERSIONS, share=SHARE)


@op.reference(*VERSIONS)
def optional_get_element(input):  # noqa: A002 - spec name
    if input is None:
        raise ValueError("OptionalGetElement of an empty optional: an error, behaviour undefined")
    if isinstance(input, list):
        return seq_out(list(input), elem_code(input))
    return input


def _plain_allowed(dtype, opset, sequence):
    """From -18 the input O may be a plain tensor or sequence, for the types O lists."""
    from harness import schema

    if opset < 18:
        return False
    name = {"float32": "float", "float64": "double"}.get(dtype, dtype)
    want = f"seq(tensor({name}))" if sequence else f"tensor({name})"
    sch = schema.schema_at("OptionalGetElement", opset)
    return want in {t for tc in sch.type_constraints if tc.type_param_str == "O" for t in tc.allowed_type_strs}


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    sequence = _sequence_allowed(dtype, opset) and d(st.booleans())
    value = seq(items(d, dtype), dtype) if sequence else item(d, dtype)
    if _plain_allowed(dtype, opset, sequence) and d(st.booleans()):
        return Example([value])
    return Example([opt(value, seq_of(dtype) if sequence else tensor_of(dtype))])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_items(dtype)
    out = [Example([opt(e[0], tensor_of(dtype))], name="optional_tensor"),
           Example([opt(e[2], tensor_of(dtype))], name="optional_empty_tensor_value")]
    if _sequence_allowed(dtype, opset):
        out += [Example([opt(seq(e, dtype), seq_of(dtype))], name="optional_sequence"),
                Example([opt(seq([], dtype), seq_of(dtype))], name="optional_empty_sequence_value")]
    if _plain_allowed(dtype, opset, False):
        out.append(Example([e[0]], name="plain_tensor"))
    if _plain_allowed(dtype, opset, True):
        out += [Example([seq(e, dtype)], name="plain_sequence"), Example([seq([], dtype)], name="plain_empty_sequence")]
    return out
