"""GlobalLpPool: the Lp norm over all spatial cells of each (batch, channel)
(ONNX spec: GlobalLpPool-1, 2, 22).

"applies lp pool pooling across the values in the same channel. This is equivalent to LpPool with
kernel size equal to the spatial dimension of input tensor": ``(sum |x|^p) ^ (1 / p)`` over
D1..Dn, output (N x C x 1 x ... x 1). GlobalLpPool-1 has a FLOAT ``p`` (default 2.0),
GlobalLpPool-2 an INT ``p`` (default 2), GlobalLpPool-22 adds bfloat16. Evaluated in float64 and
rounded once (see ``_pool_util``).

Accumulation width (spec-silent point ``GlobalLpPool.narrow_accumulation``): the text names no
type for the sum of |x|^p. A kernel-engine fuzz campaign drew one cell of 2.1e21 in float32: our
value is 2.1e21, ONNX Runtime and the kernel engine give inf (the square overflows float32). The
sum accumulated in the input type is accepted where the wide one is finite and it is not.
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back
from ._pool_util import draw_p, global_lp_pool_template, lp_norm, narrow_accumulation, p_values
from ._window_util import batch_edges, draw_input_shape

op = Operator("GlobalLpPool")
st = S.st
VERSIONS = (1, 2, 22)


@op.reference(1)
def global_lp_pool_1(x, *, p=2.0):
    x = np.asarray(x)
    return back(np.expand_dims(lp_norm(x, p, tuple(range(2, x.ndim))), tuple(range(2, x.ndim))), x)


@op.reference(2, 22)
def global_lp_pool(x, *, p=2):
    return global_lp_pool_1(x, p=p)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("GlobalLpPool", opset).since_version
    attrs = {"p": draw_p(d, since)} if d(st.booleans()) else {}
    return Example([S.arrays(d, dtype, shape=draw_input_shape(d), lo=-8, hi=8)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("GlobalLpPool", opset).since_version
    t = S.np_dtype(dtype)
    inf, nan = np.inf, np.nan
    special = np.array([[[1.0, nan], [2.0, 3.0]], [[inf, 1.0], [0.0, 2.0]], [[-inf, -3.0], [-2.0, 1.0]], [[-0.0, -0.0], [-0.0, -0.0]]])
    ramp = (np.arange(24) % 7 - 3).astype(np.float64)
    one = p_values(since)[0]
    out = batch_edges(dtype, Example([ramp.reshape(1, 2, 3, 4).astype(t)], {"p": one}))
    for p in p_values(since):
        out.append(Example([ramp.reshape(1, 2, 3, 4).astype(t)], {"p": p}, name=f"p{str(p).replace('.', '_')}"))
    out += [
        Example([special.astype(t)[None]], name="nan_inf"),
        Example([np.array([[[[-2.5]]]], dtype=t)], name="single_cell"),
        Example([ramp.reshape(2, 3, 4).astype(t)], name="pool1d"),
        Example([ramp.reshape(1, 2, 3, 2, 2).astype(t)], name="pool3d"),
    ]
    return out


narrow_accumulation(op, VERSIONS, lambda x, attrs: x.reshape(x.shape[:2] + (1,) * (x.ndim - 2) + (-1,)), {})


# how it enters a generated graph (harness.suites.generated)
global_lp_pool_template(op)
