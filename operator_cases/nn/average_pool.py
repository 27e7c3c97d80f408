"""AveragePool: the mean of each sliding window (ONNX spec: AveragePool-1, 7, 10, 11, 19, 22).

"The output of each pooling window is divided by the number of elements (exclude pad when
attribute count_include_pad is zero)": with count_include_pad = 0 (the default) the sum of the
window's input cells is divided by how many input cells it has; with count_include_pad = 1 by
the number of window cells including padding cells (prod(kernel_shape) for a window inside the
padded extent). The window geometry (pads, auto_pad, strides, dilations, ceil_mode) is in
``_window_util``; SAME_* pads count as padding.

Versions: AveragePool-1 always excludes padding ("divided by the number of elements exclude
pad"); AveragePool-7 adds ``count_include_pad``; AveragePool-10 adds ``ceil_mode``;
AveragePool-11 states the strides default and the SAME_* output ``ceil(input / strides)`` in the
auto_pad text; AveragePool-19 adds ``dilations``; AveragePool-22 adds bfloat16 and "Sliding windows
that would start in the right padded region are ignored" (for ceil_mode; before 22 such a window
has padding only, and its average is undefined: no case of those versions has one).

Ambiguities (the cases avoid them):
- AveragePool-11's text for ceil_mode disabled gives ``VALID: floor((input - extent + 1) /
  strides)`` and ``SAME: floor(input / strides)``, which contradict its own auto_pad attribute
  (``ceil(input / strides)``) and the ceil_mode formulas, and can even give 0 windows when one
  fits; AveragePool-19 corrects them to ``floor((input - extent) / strides) + 1`` and
  ``floor((input - 1) / strides) + 1``. We use the corrected formulas for every version (they
  are also what onnx's shape inference computes).
- With ceil_mode a window may extend beyond the explicit padding; whether count_include_pad = 1
  counts those cells is not said. We count only cells inside [-pad_begin, input + pad_end) (as
  PyTorch does), and no case combines count_include_pad = 1 with such a window.

Evaluated in float64 (sum, then one division) and rounded once; the strategies draw values on a
binary grid on which every partial sum is exact in the input type. NaN and infinities follow
IEEE arithmetic (a window holding +inf and -inf averages to NaN).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back, wide
from .._reduce_util import float_grid
from ._window_util import batch_edges, draw_input_shape, draw_window, gather, pool_grids, pool_template, resolve

op = Operator("AveragePool")
st = S.st
VERSIONS = (1, 7, 10, 11, 19, 22)


def average_pool(x, g, count_include_pad=0):
    x = np.asarray(x)
    n, c = x.shape[:2]
    out, ks = tuple(g["out"]), tuple(g["kernel"])
    win, valid, padded, _ = gather(wide(x), g)
    kk = int(np.prod(ks))
    total = win.reshape(n, c, *out, kk).sum(axis=-1)
    count = (padded if int(count_include_pad) else valid).reshape(*out, kk).sum(axis=-1)
    with np.errstate(all="ignore"):
        return back(total / count, x)


def geometry(x, kernel_shape, strides, pads, auto_pad, dilations=None, ceil_mode=0, drop_right=False):
    return resolve(np.shape(x)[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, drop_right)


@op.reference(1)
def average_pool_1(x, *, kernel_shape, auto_pad="NOTSET", pads=None, strides=None):
    return average_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad))


@op.reference(7)
def average_pool_7(x, *, kernel_shape, auto_pad="NOTSET", count_include_pad=0, pads=None, strides=None):
    return average_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad), count_include_pad)


@op.reference(10, 11)
def average_pool_10(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, pads=None, strides=None):
    return average_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad, None, ceil_mode), count_include_pad)


@op.reference(19)
def average_pool_19(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, pads=None,
                    strides=None):
    return average_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad, dilations, ceil_mode), count_include_pad)


@op.reference(22)
def average_pool_22(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, pads=None,
                    strides=None):
    return average_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad, dilations, ceil_mode, True), count_include_pad)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("AveragePool", opset).since_version
    shape = draw_input_shape(d)
    n, c = shape[:2]
    include = d(st.integers(0, 1)) if since >= 7 else 0
    attrs, _ = draw_window(d, shape[2:], dilations=since >= 19, ceil_mode=since >= 10, pool=True, keep_right=since < 22,
                           drop_right=since >= 22, include_pad=lambda a: bool(include),
                           out_budget=lambda out: n * c * int(np.prod(out)) <= 256)
    if since >= 7 and (include or d(st.integers(0, 3)) == 0):
        attrs["count_include_pad"] = include
    x = float_grid(d, dtype, shape, int(np.prod(attrs["kernel_shape"])), 8.0, 1)
    return Example([x], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("AveragePool", opset).since_version
    x, five, special = pool_grids(S.np_dtype(dtype), corner=np.inf)
    out = [
        Example([special], {"kernel_shape": [2, 2], "strides": [2, 2]}, name="nan_inf"),
        Example([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, name="exclude_pad"),
        Example([x], {"kernel_shape": [1, 1], "strides": [2, 2]}, name="kernel_1x1_strided"),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}, name="same_lower_odd"),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}, name="same_upper_odd"),
        Example([five], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided"),
        Example([five], {"kernel_shape": [3, 2], "auto_pad": "VALID", "strides": [2, 1]}, name="valid_strided"),
        Example([x.reshape(1, 2, 8)], {"kernel_shape": [3], "strides": [2], "pads": [2, 1]}, name="pool1d"),
        Example([x.reshape(1, 2, 2, 2, 2)], {"kernel_shape": [2, 1, 2], "pads": [1, 0, 0, 0, 0, 1]}, name="pool3d"),
        Example([x], {"kernel_shape": [4, 4]}, name="window_is_whole_input"),
    ]
    if since >= 7:
        out += [
            Example([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, name="count_include_pad"),
            Example([x], {"kernel_shape": [3, 2], "pads": [2, 0, 0, 1], "count_include_pad": 1}, name="count_include_pad_asymmetric"),
            Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER", "count_include_pad": 1}, name="same_lower_odd_include_pad"),
            Example([x.reshape(1, 2, 8)], {"kernel_shape": [3], "strides": [2], "pads": [2, 1], "count_include_pad": 1},
                    name="pool1d_include_pad"),
        ]
    if since >= 10:
        out.append(Example([five], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, name="ceil_mode"))
        out.append(Example([five], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0], "ceil_mode": 1},
                           name="ceil_mode_padded"))
        if since >= 10:  # the last ceil_mode window ends inside the explicit padding: its count is defined
            out.append(Example([five], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1,
                                        "count_include_pad": 1}, name="ceil_mode_include_pad"))
    if since >= 19:
        out.append(Example([five], {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]}, name="dilated_padded"))
        out.append(Example([five], {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
                           name="dilated_padded_include_pad"))
        out.append(Example([five], {"kernel_shape": [2, 3], "dilations": [2, 1], "auto_pad": "SAME_LOWER", "strides": [2, 2]},
                           name="dilated_same_lower"))
        out.append(Example([x], {"kernel_shape": [2, 1], "dilations": [2, 1], "auto_pad": "SAME_UPPER"}, name="dilated_same_upper_stride1"))
        out.append(Example([five], {"kernel_shape": [2, 2], "dilations": [2, 1], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
                           name="dilated_ceil_mode"))
    if since >= 22:
        out.append(Example([five], {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [0, 0, 1, 1], "ceil_mode": 1},
                           name="ceil_mode_window_in_right_pad"))
        out.append(Example([five[:, :, 0].copy()], {"kernel_shape": [1], "strides": [3], "ceil_mode": 1}, name="ceil_mode_window_past_end"))
    return out + batch_edges(dtype, out[1])


# how it enters a generated graph (harness.suites.generated)
pool_template(op, average=True)
