"""Not: Y = not X on booleans, elementwise (ONNX spec: Not-1)."""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Not")


@op.reference(1)
def not_1(x):
    return np.logical_not(x)


@op.strategy(1)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype)])


@op.edges(1)
def edges(dtype, opset):
    return [
        Example([S.edge_values(dtype)], name="edge_values"),
        Example([np.zeros((0, 3), dtype=bool)], name="empty"),
        Example([np.array(True)], name="rank0"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(ulps=0.0, type_param=None)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("bool", 0)
    return Plan([x]) if x is not None else None
