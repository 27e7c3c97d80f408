"""LpPool: the Lp norm of each sliding window (ONNX spec: LpPool-1, 2, 11, 18, 22).

"Lp pooling consisting of computing the Lp norm on all values of a subset of the input tensor
according to the kernel size": ``(sum |x|^p) ^ (1 / p)`` over each window; a padding cell adds 0.
The window geometry (pads, auto_pad, strides, dilations, ceil_mode) is ``_window_util``'s.

Versions: LpPool-1 has a FLOAT ``p`` (default 2.0) and kernel_shape, strides, pads, auto_pad;
LpPool-2 an INT ``p`` (default 2); LpPool-11 states the strides default (1) and the SAME_* output
``ceil(input / strides)``; LpPool-18 adds ``ceil_mode`` and ``dilations`` and the output-size
formulas; LpPool-22 adds bfloat16. Unlike MaxPool-22/AveragePool-22, LpPool-22 does not say that
ceil_mode windows starting in the right padding are ignored: such a window holds padding only,
and the strategies never draw one.

Evaluated in float64 and rounded once (see ``_pool_util``).

Accumulation width (spec-silent point ``LpPool.narrow_accumulation``): the text names no type for
the sum of |x|^p. A kernel-engine fuzz campaign drew a float32 window whose squares overflow while
its norm does not: ours is finite, the kernel engine gives inf, as ONNX Runtime does for
GlobalLpPool. The sum accumulated in the input type is accepted where the wide one is finite and
it is not.
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back
from ._pool_util import draw_p, lp_norm, lp_pool_template, narrow_accumulation, p_values
from ._window_util import batch_edges, draw_input_shape, draw_window, gather, pool_grids, resolve, window_attrs

op = Operator("LpPool")
st = S.st
VERSIONS = (1, 2, 11, 18, 22)


def lp_pool(x, p, kernel_shape, strides, pads, auto_pad, dilations=None, ceil_mode=0):
    x = np.asarray(x)
    g = resolve(x.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    n, c = x.shape[:2]
    win, _, _, _ = gather(x.astype(np.float64), g)
    return back(lp_norm(win.reshape(n, c, *g["out"], int(np.prod(g["kernel"]))), p, -1), x)


@op.reference(1)
def lp_pool_1(x, *, kernel_shape, auto_pad="NOTSET", p=2.0, pads=None, strides=None):
    return lp_pool(x, p, kernel_shape, strides, pads, auto_pad)


@op.reference(2, 11)
def lp_pool_2(x, *, kernel_shape, auto_pad="NOTSET", p=2, pads=None, strides=None):
    return lp_pool(x, p, kernel_shape, strides, pads, auto_pad)


@op.reference(18, 22)
def lp_pool_18(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, p=2, pads=None, strides=None):
    return lp_pool(x, p, kernel_shape, strides, pads, auto_pad, dilations, ceil_mode)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("LpPool", opset).since_version
    shape = draw_input_shape(d)
    n, c = shape[:2]
    attrs, _ = draw_window(d, shape[2:], dilations=since >= 18, ceil_mode=since >= 18, pool=True, keep_right=True,
                           out_budget=lambda out: n * c * int(np.prod(out)) <= 256)
    if d(st.integers(0, 2)):
        attrs["p"] = draw_p(d, since)
    return Example([S.arrays(d, dtype, shape=shape, lo=-8, hi=8)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("LpPool", opset).since_version
    x, five, special = pool_grids(S.np_dtype(dtype), corner=-np.inf)
    ps = p_values(since)
    out = [
        Example([special], {"kernel_shape": [2, 2], "strides": [2, 2]}, name="nan_inf"),
        Example([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "p": ps[0]}, name="padded_p1"),
        Example([x], {"kernel_shape": [3, 2], "pads": [2, 0, 0, 1]}, name="padded_asymmetric"),
        Example([x], {"kernel_shape": [1, 1], "strides": [2, 2]}, name="kernel_1x1_strided"),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}, name="same_lower_odd"),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "p": ps[2]}, name="same_upper_odd_p3"),
        Example([five], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided"),
        Example([five], {"kernel_shape": [3, 2], "auto_pad": "VALID", "strides": [2, 1]}, name="valid_strided"),
        Example([x.reshape(1, 2, 8)], {"kernel_shape": [3], "strides": [2], "pads": [2, 1]}, name="pool1d"),
        Example([x.reshape(1, 2, 2, 2, 2)], {"kernel_shape": [2, 1, 2], "pads": [1, 0, 0, 0, 0, 1]}, name="pool3d"),
        Example([x], {"kernel_shape": [4, 4], "auto_pad": "NOTSET"}, name="window_is_whole_input"),
    ]
    out += [Example([five], {"kernel_shape": [2, 2], "p": p}, name=f"p{str(p).replace('.', '_')}") for p in ps]
    if since >= 18:
        out += [
            Example([five], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, name="ceil_mode"),
            Example([five], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0], "ceil_mode": 1}, name="ceil_mode_padded"),
            Example([five], {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]}, name="dilated_padded"),
            Example([five], {"kernel_shape": [2, 3], "dilations": [2, 1], "auto_pad": "SAME_LOWER", "strides": [2, 2]},
                    name="dilated_same_lower"),
            Example([five], {"kernel_shape": [2, 1], "dilations": [2, 1], "auto_pad": "SAME_UPPER"}, name="dilated_same_upper_stride1"),
        ]
    return out + batch_edges(dtype, out[1])


def _windows(x, attrs):
    """x's windows in its type, each window's cells on the last axis (padding holds 0)."""
    g = resolve(x.shape[2:], attrs["kernel_shape"], attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0))
    return gather(x.astype(np.float64), g)[0].reshape(*x.shape[:2], *g["out"], -1).astype(x.dtype)


narrow_accumulation(op, VERSIONS, _windows, {"kernel_shape": [3]})


# how it enters a generated graph (harness.suites.generated)
lp_pool_template(op, window_attrs)
