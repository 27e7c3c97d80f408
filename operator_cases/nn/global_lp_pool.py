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

from .._accumulate_util import EXPECTED, NARROW, add_examples, finite_is_ours_or, in_type, narrow_spec, top
from .._common import back
from ._pool_util import draw_p, global_lp_pool_template, lp_norm, p_values
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


def _norm_in_type(x, attrs):
    """(sum |x|^p over the spatial axes, each partial sum rounded to x's type) ^ (1 / p)."""
    p = float(attrs.get("p", 2))
    with np.errstate(all="ignore"):
        return in_type(x, tuple(range(2, x.ndim)), lambda a, v: a + np.abs(v) ** p, lambda a, n: a ** (1.0 / p))


def _narrow(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if S.label_of(x.dtype) not in NARROW or x.size == 0 or x.ndim < 3:
        return [None]
    finite = np.all(np.isfinite(x.astype(np.float64)), axis=tuple(range(2, x.ndim)), keepdims=True)  # inf or NaN in: IEEE's
    return [finite & ~np.isfinite(_norm_in_type(x, attrs).astype(np.float64))]


op.spec_silent(
    "narrow_accumulation", VERSIONS, spec=narrow_spec(op, VERSIONS), expected=EXPECTED, where=_narrow,
    invariants={"a finite value there is ours": lambda c: finite_is_ours_or(c, np.inf)},
    readings={"the sum of |x|^p accumulated in the input type, left to right (+inf)": lambda c: [_norm_in_type(np.asarray(c.inputs[0]), c.attrs)]})


def _narrow_examples(dtype, since):
    """(3t/8)^2 + (t/2)^2 overflows the type; its square root, 5t/8, does not."""
    if dtype not in NARROW:
        return []
    t = top(dtype)
    return [Example([np.array([[[3 * t / 8, t / 2, 0.0]]]).astype(S.np_dtype(dtype))], {"p": 2.0 if since == 1 else 2},
                    name="narrow_accumulation")]


add_examples(op, VERSIONS, _narrow_examples)


# how it enters a generated graph (harness.suites.generated)
global_lp_pool_template(op)
