"""EyeLike: a 2-D tensor of the input's shape with ones on diagonal ``k`` and zeros elsewhere
(ONNX spec: EyeLike-9, 22; 22 adds bfloat16).

"this op sets T2[i, i+k] = 1": k > 0 an upper diagonal, k < 0 a lower one; a k past the
matrix (k >= columns or k <= -rows) sets nothing, all zeros. The output type is ``dtype`` (a
TensorProto data type) when given, else the input's. The input's values are never read, so its
special values change nothing.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import fill, side

op = Operator("EyeLike", type_param="T1")
op.draws(9, 22, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
st = S.st
VERSIONS = (9, 22)


@op.reference(*VERSIONS)
def eye_like(x, *, dtype=None, k=0):
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"EyeLike: input of rank {x.ndim}, only 2-D is supported")
    out = x.dtype if dtype is None else S.np_dtype(S.label_of(int(dtype)))
    return np.eye(x.shape[0], x.shape[1], int(k)).astype(out)


def _outputs(opset: int) -> list[str]:
    from harness import schema

    sch = schema.schema_at("EyeLike", opset)
    return [lbl for t in schema.allowed_types(sch)["T2"] if (lbl := S.label_from_type_str(t))]


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    x = S.arrays(d, dtype, shape=(side(d, 5), side(d, 5)))
    attrs = {}
    if d(st.booleans()):
        attrs["k"] = d(st.integers(-x.shape[0] - 1, x.shape[1] + 1))
    if d(st.booleans()):  # the input's own type; the other output types are the dtype_* edge examples
        attrs["dtype"] = S.onnx_code(dtype)
    return Example([x], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    x = fill(dtype, (3, 4))
    out = [
        Example([x], name="main_diagonal"),
        Example([fill(dtype, (2, 7))], {"k": -1}, name="edge_values"),
        Example([x], {"k": 1}, name="k_positive"),
        Example([x], {"k": -2}, name="k_negative"),
        Example([x], {"k": 4}, name="k_past_columns"),
        Example([x], {"k": -3}, name="k_past_rows"),
        Example([x], {"k": 3}, name="k_last_column"),
        Example([fill(dtype, (4, 2))], {"k": -1}, name="tall"),
        Example([fill(dtype, (0, 3))], name="empty"),
        Example([fill(dtype, (1, 1))], name="one"),
    ]
    # every output type from float32 input; one other from each input type
    targets = _outputs(opset) if dtype == "float32" else ["float32" if dtype != "float32" else "int64"]
    out += [Example([x], {"dtype": S.onnx_code(t), "k": 1}, name=f"dtype_{t}") for t in targets]
    return out
