"""Where: elements from X where the condition holds, else from Y (ONNX spec: Where-9, 16).

"Where behaves like numpy.where with three parameters": the three inputs broadcast
multidirectionally. Where-16 adds bfloat16. Values are copied, never computed, so NaN payloads,
-0.0 and strings come through as they are. The schema also allows complex64/complex128, which the
harness has no dtype label for (strategies.py), so they are not swept.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import (
    MAX_ELEMENTS,
    NAN_IEEE,
    Ctx,
    Plan,
    broadcast_shape,
    broadcast_variant,
    size_of,
)
from harness.registry import Example, Operator

from .._binary_util import broadcast_shapes, small

op = Operator("Where", type_param="T")
st = S.st


@op.reference(9, 16)
def where(condition, x, y):
    return np.asarray(np.where(condition, x, y)).astype(x.dtype)


@op.strategy(9, 16)
def draw(d, dtype, opset):
    sc, sx, sy = broadcast_shapes(d, 3)
    return Example([S.arrays(d, "bool", shape=sc), S.arrays(d, dtype, shape=sx), S.arrays(d, dtype, shape=sy)])


@op.edges(9, 16)
def edges(dtype, opset):
    x = S.edge_values(dtype)
    y = x[::-1].copy()
    alternate = np.arange(len(x)) % 2 == 0
    return [
        Example([alternate, x, y], name="edge_values"),
        Example([np.array([[True], [False]]), x[None, :], y], name="bcast_condition"),
        Example([np.array(True), small(dtype, (2, 3)), small(dtype, (3,), 2)], name="rank0_condition"),
        Example([np.array([True, False, True]), small(dtype, ()), small(dtype, (2, 1), 2)], name="bcast_values"),
        Example([np.zeros((0, 3), dtype=bool), small(dtype, (1, 3)), small(dtype, (0, 1), 2)], name="empty"),
        Example([np.array(False), small(dtype, ()), small(dtype, (), 2)], name="rank0"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    y = c.operand(x, 1)
    shape = broadcast_shape(x.shape, y.shape)
    cond = c.take("bool", 2, lambda v: (s := broadcast_shape(shape, v.shape)) is not None and size_of(s) <= MAX_ELEMENTS)
    if cond is None or c.pick(4) == 3:
        cond = c.const(c.rng.uniform(size=broadcast_variant(c, shape)) < 0.5, "bool")
    return Plan([cond, x, y])
