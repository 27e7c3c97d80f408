"""Optional: "Constructs an optional-type value containing either an empty optional of a
certain type specified by the attribute, or a non-empty value containing the input element."
(ONNX spec: Optional-15, -28; -28 widens V to bfloat16, float8, 4-bit types, same text).

Input ``input`` (optional) of a tensor or sequence type V; attribute ``type`` (a TypeProto):
"Type of the element in the optional output". With the input, the output holds it (its type is
the input's); without it, the output is the empty optional of ``type``. The dtype sweep goes
over V's element types (tensor and sequence of each); float8e8m0, 2-bit, float6 and complex
element types have no label in harness.strategies and are not swept.
"""

from harness.registry import Example, Operator
from harness.values import Typed, optional_type

from .._sequence_util import SHARE, edge_items, item, items, seq, seq_of, st, tensor_of, type_of

op = Operator("Optional", type_param="V")
VERSIONS = (15, 28)
op.draws(*VERSIONS, share=SHARE)


@op.reference(*VERSIONS)
def optional(input=None, *, type=None):  # noqa: A002 - spec names
    if input is None:
        if type is None:
            raise ValueError("Optional without an input needs the 'type' attribute")
        return Typed(None, optional_type(type))
    inner = type if type is not None else type_of(input)
    return Typed(list(input) if isinstance(input, list) else input, optional_type(inner))


def _sequence_allowed(dtype, opset):
    """Optional-28's V allows seq(tensor(x)) for the classic types only (not float8, 4-bit)."""
    from harness import schema

    sch = schema.schema_at("Optional", opset)
    return f"seq(tensor({'float' if dtype == 'float32' else 'double' if dtype == 'float64' else dtype}))" in \
        {t for tc in sch.type_constraints if tc.type_param_str == "V" for t in tc.allowed_type_strs}


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    mode = d(st.sampled_from(["tensor", "sequence", "empty_tensor", "empty_sequence"]))
    if "sequence" in mode and not _sequence_allowed(dtype, opset):
        mode = mode.replace("sequence", "tensor")
    if mode == "tensor":
        return Example([item(d, dtype)])
    if mode == "sequence":
        return Example([seq(items(d, dtype), dtype)], {"type": seq_of(dtype)} if d(st.booleans()) else {})
    return Example([], {"type": tensor_of(dtype) if mode == "empty_tensor" else seq_of(dtype)})


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_items(dtype)
    out = [Example([e[0]], name="tensor"),
           Example([e[2]], name="empty_tensor_value"),
           Example([e[0]], {"type": tensor_of(dtype)}, name="tensor_with_type"),
           Example([], {"type": tensor_of(dtype)}, name="empty_optional_tensor")]
    if _sequence_allowed(dtype, opset):
        out += [Example([seq(e, dtype)], name="sequence"),
                Example([seq([], dtype)], {"type": seq_of(dtype)}, name="empty_sequence_value"),
                Example([], {"type": seq_of(dtype)}, name="empty_optional_sequence")]
    return out
