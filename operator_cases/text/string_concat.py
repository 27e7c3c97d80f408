"""StringConcat: elementwise concatenation X + Y of two string tensors, with NumPy-style
broadcasting (ONNX spec: StringConcat-20)."""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("StringConcat")
st = S.st


def _strings(values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape is not None else a


@op.reference(20)
def string_concat(x, y):
    x, y = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
    shape = np.broadcast_shapes(x.shape, y.shape)
    xb, yb = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        out[idx] = str(xb[idx]) + str(yb[idx])
    return out


@op.strategy(20)
def draw(d, dtype, opset):
    a, b = S.broadcast_shapes(d, 2, max_dims=3, max_side=3)
    return Example([S.arrays(d, "string", shape=a), S.arrays(d, "string", shape=b)])


@op.edges(20)
def edges(dtype, opset):
    return [
        Example([_strings(["abc", "", "é中"]), _strings(["", "x", "文字 "])], name="empty_and_utf8"),
        Example([_strings([["a"], ["b"]]), _strings(["1", "2", "3"])], name="broadcast_2x1_3"),
        Example([_strings("pre"), _strings([["x", ""], ["y z", "\n"]])], name="scalar_prefix"),
        Example([_strings([], (0, 2)), _strings(["a", "b"])], name="empty"),
        Example([_strings(["a\tb"]), _strings(["\r\n"])], name="control_characters"),
    ]
