"""Conv: N-D convolution (cross-correlation) with groups, bias, strides, dilations and padding
(ONNX spec: Conv-1, 11, 22).

X is (N x C x D1 x ... x Dn), W is (M x C/group x k1 x ... x kn), the optional bias B is (M);
"X.shape[1] == (W.shape[1] * group) == C" and (Conv-11 on) "the number of feature maps M should
be a multiple of the number of groups G": output channel m of group g = m // (M / G) sees input
channels [g * C/G, (g + 1) * C/G). ``kernel_shape`` "If not present, should be inferred from
input W". The window geometry (pads, auto_pad, strides, dilations) is in ``_window_util``;
padding cells are zeros (so 0 * inf in a padded cell would be NaN: no case puts an infinity in W
with padding). The output size with explicit pads is the usual
``floor((D + pad_begin + pad_end - ((k - 1) * dilation + 1)) / stride) + 1``; the Conv text
itself only says "The output dimensions are functions of the kernel size, stride size, and pad
lengths".

Versions: Conv-1's auto_pad says only "SAME_UPPER or SAME_LOWER mean pad the input so that the
output spatial size match the input" (which cannot hold with strides > 1: ambiguous there, so
Conv-1's drawn cases use SAME_* with unit strides only); Conv-11 states
``output_shape[i] = ceil(input_shape[i] / strides[i])`` and gives the defaults of strides and
dilations (1) and the M mod G rule; Conv-22 adds bfloat16.

Evaluated in float64 (products summed in float64) and rounded once to the input type; the
strategies draw values on a binary grid on which every partial sum is exact in the input type
(``float_grid``), so no accumulation order or width can change the result.
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, abs_bound, size_of
from harness.registry import Example, Operator

from .._common import back, wide
from ._conv_util import draw_conv_geometry, fuzz_conv_input, grouped_correlation, ramp
from .._reduce_util import float_grid
from ._window_util import batch_edges, gather, resolve, window_attrs

op = Operator("Conv")
st = S.st
VERSIONS = (1, 11, 22)


@op.reference(*VERSIONS)
def conv(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    x, w = np.asarray(x), np.asarray(w)
    kernel = list(kernel_shape) if kernel_shape is not None else list(w.shape[2:])
    g = resolve(x.shape[2:], kernel, strides, dilations, pads, auto_pad)
    win, _, _, _ = gather(wide(x), g)  # (N, C, o.., k..), padding cells 0
    y = grouped_correlation(win, wide(w), int(group))
    m, r = w.shape[0], x.ndim - 2
    if b is not None:
        y = y + wide(b).reshape((m,) + (1,) * r)
    return back(y, x)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("Conv", opset).since_version
    shape, groups, m, kernel, attrs = draw_conv_geometry(d, same_strides=since >= 11)
    c = shape[1]
    terms = c // groups * int(np.prod(kernel)) + 1
    x = float_grid(d, dtype, shape, terms, 4.0, 2)
    w = float_grid(d, dtype, (m, c // groups, *kernel), terms, 4.0, 2)
    b = float_grid(d, dtype, (m,), terms, 4.0, 2) if d(st.booleans()) else None
    return Example([x, w, b], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("Conv", opset).since_version
    t = S.np_dtype(dtype)
    x = ramp(t, (1, 2, 4, 4))
    w = ramp(t, (3, 2, 2, 2), start=2, mod=5, offset=2)
    out = [
        Example([x, ramp(t, (3, 2, 1, 1), start=1, mod=5, offset=2)], {"kernel_shape": [1, 1]}, name="kernel_1x1"),
        Example([x, w, np.array([1, -1, 0.5], dtype=t)], {"pads": [1, 0, 0, 1]}, name="asymmetric_pads_bias"),
        Example([x, w], {}, name="kernel_shape_inferred"),
        Example([x[:, :1].copy(), ramp(t, (1, 1, 2, 2), start=3, mod=5, offset=1)], {"auto_pad": "SAME_LOWER"}, name="same_lower_odd"),
        Example([x[:, :1].copy(), ramp(t, (1, 1, 2, 2), start=3, mod=5, offset=1)], {"auto_pad": "SAME_UPPER"}, name="same_upper_odd"),
        Example([ramp(t, (1, 2, 6, 6)), w], {"auto_pad": "VALID", "dilations": [2, 2], "strides": [2, 2]}, name="valid_dilated_strided"),
        Example([ramp(t, (1, 3, 3, 3)), ramp(t, (3, 1, 2, 2), start=4, mod=5, offset=2), np.array([0.5, 0, -1], dtype=t)],
                {"group": 3, "pads": [1, 1, 1, 1]}, name="depthwise"),
        Example([ramp(t, (1, 4, 3, 3)), ramp(t, (4, 2, 2, 2), start=1, mod=5, offset=2)], {"group": 2}, name="group2"),
        Example([ramp(t, (2, 2, 5)), ramp(t, (2, 2, 3)), np.array([2, -2], dtype=t)], {"pads": [1, 2], "strides": [2]}, name="conv1d_bias"),
        Example([ramp(t, (1, 1, 3, 3, 3)), ramp(t, (2, 1, 2, 2, 2), start=2, mod=3, offset=1)], {"pads": [1, 0, 1, 0, 1, 0]}, name="conv3d"),
        Example([ramp(t, (1, 1, 2, 2)), ramp(t, (1, 1, 3, 3))], {"pads": [1, 1, 1, 1]}, name="kernel_larger_than_input"),
    ]
    if since >= 11:
        out.append(Example([ramp(t, (1, 1, 5, 5)), ramp(t, (1, 1, 2, 2), start=3, mod=5, offset=1)],
                           {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, name="same_lower_strided"))
        out.append(Example([ramp(t, (1, 1, 5, 5)), ramp(t, (1, 1, 2, 2), start=3, mod=5, offset=1)],
                           {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided"))
        out.append(Example([ramp(t, (1, 2, 5, 4)), ramp(t, (2, 1, 2, 3), start=3, mod=5, offset=1)],
                           {"auto_pad": "SAME_LOWER", "dilations": [2, 1], "strides": [1, 2], "group": 2}, name="same_lower_dilated_grouped"))
        out.append(Example([ramp(t, (1, 1, 5, 4)), ramp(t, (1, 1, 2, 3), start=3, mod=5, offset=1)],
                           {"auto_pad": "SAME_UPPER", "dilations": [2, 2], "strides": [2, 1]}, name="same_upper_dilated"))
    inf, nan = np.inf, np.nan
    special = np.array([[[1, 2, nan, 0], [0, 1, 1, 2], [inf, 1, 0, 1], [2, 0, 1, -inf]]], dtype=np.float64).astype(t)[None]
    out.append(Example([special, np.ones((1, 1, 2, 2), dtype=t)], {}, name="nan_inf"))
    out.append(Example([special, np.array([[[[0, 1], [1, 1]]]], dtype=t)], {"strides": [2, 2]}, name="inf_times_zero_weight"))
    return out + batch_edges(dtype, out[1], overflow=True)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    start = fuzz_conv_input(c)
    if start is None:
        return None
    x, channels, spatial, group = start
    attrs = window_attrs(c, spatial)
    if attrs is None:
        return None
    kernel = attrs["kernel_shape"]
    if c.pick(2):
        del attrs["kernel_shape"]  # optional: inferred from W
    if group > 1:
        attrs["group"] = group
    out_channels = group * (1 + c.pick(2))
    w = c.const(c.floats((out_channels, channels // group, *kernel)))
    ins = [x, w] + ([c.const(c.floats((out_channels,)))] if c.pick(2) else [])
    return Plan(ins, attrs, n_acc=channels // group * size_of(tuple(kernel)) + 1)
