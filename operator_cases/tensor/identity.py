"""Identity: y = x (ONNX spec: Identity-1, 13, 14, 16, 19, 21, 23, 24, 25).

Later versions only widen the allowed types (sequences at 14, optionals at 16, float8 at 19,
4-bit at 21, ...); this module sweeps the tensor types."""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Example, Operator

from .._unary_util import unary_template

op = Operator("Identity")
VERSIONS = (1, 13, 14, 16, 19, 21, 23, 24, 25)


@op.reference(*VERSIONS)
def identity(x):
    return x.copy()


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    return [Example([S.edge_values(dtype)], name="edge_values"), Example([np.zeros((2, 0, 3), dtype=t)], name="empty"),
            Example([S.edge_values(dtype)[:1].reshape(())], name="scalar")]


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=0.0)
