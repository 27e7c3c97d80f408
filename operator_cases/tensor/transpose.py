"""Transpose: permute axes (ONNX spec: Transpose-1, 13, 21, 23, 24, 25).

``perm`` defaults to reversing the axes; later versions only widen the allowed types."""

import itertools

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Transpose")
VERSIONS = (1, 13, 21, 23, 24, 25)


@op.reference(*VERSIONS)
def transpose(x, *, perm=None):
    return np.transpose(x, perm if perm is not None else tuple(reversed(range(x.ndim)))).copy()


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    x = S.arrays(d, dtype, min_dims=0, max_dims=4)
    if x.ndim and d(S.st.booleans()):
        return Example([x], {"perm": d(S.st.permutations(range(x.ndim)))})
    return Example([x])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    x = S.edge_values(dtype)
    return [Example([x.reshape(1, -1)], name="row_to_column"),
            Example([np.zeros((0, 3, 1), dtype=x.dtype)], {"perm": [2, 0, 1]}, name="empty")]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    perms = list(itertools.permutations(range(x.rank)))
    k = c.pick(len(perms) + 1)
    return Plan([x], {} if k == len(perms) else {"perm": list(perms[k])})
