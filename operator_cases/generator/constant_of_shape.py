"""ConstantOfShape: a tensor of the shape given by the input, every element ``value``
(ONNX spec: ConstantOfShape-9, 20, 21, 23, 24, 25).

``input`` is a 1-D int64 shape: "If empty tensor is given, the output would be a scalar. All
values must be >= 0" (a 0 gives an empty output). ``value`` "Should be a one-element tensor.
If not specified, it defaults to a tensor of value 0 and datatype float32"; the output has
its type. Later versions widen the types (bfloat16 and float8 at 20, 4-bit at 21, ...). The
sweep is over the output type (T2).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import STRUCTURAL, ints, specials

op = Operator("ConstantOfShape", type_param="T2")
st = S.st
VERSIONS = (9, 20, 21, 23, 24, 25)
op.draws(*VERSIONS, share=0.1)  # one value repeated: the edge examples hold each special value


@op.reference(*VERSIONS)
def constant_of_shape(input, *, value=None):
    shape = [int(v) for v in np.asarray(input).reshape(-1)]
    if any(v < 0 for v in shape):
        raise ValueError(f"ConstantOfShape: negative dimension in {shape}")
    v = np.zeros((1,), np.float32) if value is None else np.asarray(value)
    if v.size != 1:
        raise ValueError(f"ConstantOfShape: value must hold one element, got {v.size}")
    return np.full(shape, v.reshape(-1)[0], dtype=v.dtype)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, 0, 4, 0 if d(st.integers(0, 5)) == 0 else 1, 4)
    attrs = {"value": S.arrays(d, dtype, shape=(1,))}
    if dtype == "float32" and d(st.integers(0, 4)) == 0:
        attrs = {}
    return Example([ints(shape)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    ev = specials(dtype)
    out = [Example([ints([2, 3])], {"value": ev[k:k + 1]}, name=f"value_{k}") for k in range(len(ev))]
    v = ev[-1:]
    if dtype not in STRUCTURAL:
        return out + [Example([ints([2, 0, 3])], {"value": v}, name="zero_dim")]
    out += [
        Example([np.zeros((0,), np.int64)], {"value": v}, name="scalar_output"),
        Example([ints([2, 0, 3])], {"value": v}, name="zero_dim"),
        Example([ints([1, 1, 1, 1, 5])], {"value": v}, name="rank5"),
    ]
    if dtype == "float32":
        out.append(Example([ints([3, 2])], name="default_value"))
    return out
