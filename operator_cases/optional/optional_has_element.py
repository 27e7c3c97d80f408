"""OptionalHasElement (ONNX spec: OptionalHasElement-15, -18, -28).

-15: "Returns true if the optional-type input contains an element. If it is an empty
optional-type, this op returns false." -18: "Returns true if (1) the input is an optional-type
and contains an element, or, (2) the input is a tensor or sequence type. If the input is not
provided or is an empty optional-type, this op returns false." (the input became optional);
-28 widens the element types. The output is a bool scalar.

An optional holding an empty tensor or an empty sequence contains an element: true.
"""

import numpy as np

from harness.registry import Example, Operator

from .._sequence_util import SHARE, edge_items, item, items, opt, seq, seq_of, st, tensor_of
from .optional import _sequence_allowed
from .optional_get_element import _plain_allowed

op = Operator("OptionalHasElement", type_param="O")
VERSIONS = (15, 18, 28)
op.draws(*VERSIONS, share=SHARE)


@op.reference(*VERSIONS)
def optional_has_element(input=None):  # noqa: A002 - spec name
    return np.array(input is not None)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    sequence = _sequence_allowed(dtype, opset) and d(st.booleans())
    inner = seq_of(dtype) if sequence else tensor_of(dtype)
    if d(st.booleans()):
        return Example([opt(None, inner)])
    value = seq(items(d, dtype), dtype) if sequence else item(d, dtype)
    if _plain_allowed(dtype, opset, sequence) and d(st.booleans()):
        return Example([value])
    return Example([opt(value, inner)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_items(dtype)
    out = [Example([opt(e[0], tensor_of(dtype))], name="optional_tensor"),
           Example([opt(e[2], tensor_of(dtype))], name="optional_empty_tensor_value"),
           Example([opt(None, tensor_of(dtype))], name="empty_optional_tensor")]
    if _sequence_allowed(dtype, opset):
        out += [Example([opt(seq(e, dtype), seq_of(dtype))], name="optional_sequence"),
                Example([opt(seq([], dtype), seq_of(dtype))], name="optional_empty_sequence_value"),
                Example([opt(None, seq_of(dtype))], name="empty_optional_sequence")]
    if opset >= 18:
        out.append(Example([], name="no_input"))
    if _plain_allowed(dtype, opset, False):
        out.append(Example([e[0]], name="plain_tensor"))
    if _plain_allowed(dtype, opset, True):
        out.append(Example([seq(e, dtype)], name="plain_sequence"))
    return out
