"""MaxPool: the maximum over each sliding window, and optionally where it was found
(ONNX spec: MaxPool-1, 8, 10, 11, 12, 22).

"The output of each pooling window is maximum number of elements exclude pad": padding cells
never win (as if they held -inf), also in int8/uint8. The window geometry (pads, auto_pad,
strides, dilations, ceil_mode) is in ``_window_util``.

Versions: MaxPool-1 has kernel_shape, strides, pads, auto_pad; MaxPool-8 adds the optional second
output Indices and ``storage_order``; MaxPool-10 adds ``dilations`` and ``ceil_mode``; MaxPool-11
only states the strides/dilations defaults (1); MaxPool-12 adds int8/uint8, states the SAME_*
output ``ceil(input / strides)`` in the auto_pad text and gives floor-mode auto_pad formulas
(which agree with the ceil ones); MaxPool-22 adds bfloat16 and "Sliding windows that would start
in the right padded region are ignored" (for ceil_mode; see ``_window_util``: before 22 such a
window would hold padding only and its value is undefined, so no case of those versions has one).

Indices: "The indices are computed as flatten 1-D tensor, and the indices do not consider
padding. So the values in indices are in [0, N x C x D1 x ... x Dn)": the flat index into the
input X (N, C, D1..Dn); ``storage_order`` "0 is row major, and 1 is column major". We read column
major literally, as the column-major flattening of the whole tensor (N varies fastest). That is
ambiguous for N * C > 1 (implementations commonly keep N and C row-major and order only the
spatial dims column-major), so the cases use storage_order = 1 with Indices only when N = C = 1,
where both readings agree. Which of several equal maxima is "the selected value" is not said
either: we return the first in window order, and cases requesting Indices have no ties.

Spec-silent: NaN (the text says nothing). The reference propagates it (as numpy's max and IEEE
754-2019 maximum do) and its index is that of the first NaN; a backend may skip NaN
(maximumNumber), so a window holding a NaN is ``unspecified`` when its value is NaN or the max
of the window's other cells. The NaN examples request Y only.
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back
from .._families import max_pooling_nan
from ._window_util import batch_edges, draw_input_shape, draw_window, gather, pool_template, resolve

op = Operator("MaxPool")
st = S.st
VERSIONS = (1, 8, 10, 11, 12, 22)
max_pooling_nan(op, VERSIONS, "max pooling consisting of computing the max on all values of a subset of the input tensor "
                "according to the kernel size", "window")


def max_pool(x, g, storage_order=0):
    x = np.asarray(x)
    n, c = x.shape[:2]
    out, ks = tuple(g["out"]), tuple(g["kernel"])
    win, valid, _, raw = gather(x.astype(np.float64), g)
    win = np.where(valid, win, -np.inf)
    kk = int(np.prod(ks))
    flat = win.reshape(n, c, *out, kk)
    vflat = valid.reshape(*out, kk)
    y = np.max(flat, axis=-1) if kk else np.full((n, c, *out), -np.inf)
    # the first input cell (not a padding cell) holding the maximum (or the first NaN)
    hit = np.where(np.isnan(y)[..., None], np.isnan(flat), flat == y[..., None]) & vflat
    arg = np.argmax(hit, axis=-1)
    full = (n, c, *out, kk)
    coords = [np.take_along_axis(np.broadcast_to(np.broadcast_to(r, out + ks).reshape(*out, kk), full), arg[..., None], -1)[..., 0]
              for r in raw]
    nn = np.broadcast_to(np.arange(n).reshape((n,) + (1,) * (1 + len(out))), arg.shape)
    cc = np.broadcast_to(np.arange(c).reshape((1, c) + (1,) * len(out)), arg.shape)
    order = "F" if int(storage_order) == 1 else "C"
    indices = np.ravel_multi_index((nn, cc, *coords), x.shape, order=order, mode="clip").astype(np.int64)
    if S.is_int(S.label_of(x.dtype)):  # a window of padding only (never drawn): the lowest value
        y = np.where(np.isneginf(y), S.finite_range(S.label_of(x.dtype))[0], y)
    return back(y, x), indices


def geometry(x, kernel_shape, strides, pads, auto_pad, dilations=None, ceil_mode=0, drop_right=False):
    return resolve(np.shape(x)[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, drop_right)


@op.reference(1)
def max_pool_1(x, *, kernel_shape, auto_pad="NOTSET", pads=None, strides=None):
    return max_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad))[0]


@op.reference(8)
def max_pool_8(x, *, kernel_shape, auto_pad="NOTSET", pads=None, storage_order=0, strides=None):
    return list(max_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad), storage_order))


@op.reference(10, 11, 12)
def max_pool_10(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, pads=None, storage_order=0, strides=None):
    return list(max_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad, dilations, ceil_mode), storage_order))


@op.reference(22)
def max_pool_22(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, pads=None, storage_order=0, strides=None):
    return list(max_pool(x, geometry(x, kernel_shape, strides, pads, auto_pad, dilations, ceil_mode, True), storage_order))


def distinct(d, dtype, shape):
    """Values without ties (Indices requested): a permutation, exact in every allowed type."""
    size = int(np.prod(shape))
    perm = np.array(d(st.permutations(range(size))), dtype=np.int64)
    if dtype == "int8":
        vals = perm - 128
    elif dtype == "uint8":
        vals = perm
    else:
        vals = (perm - size // 2) * 0.25
    return vals.astype(S.np_dtype(dtype)).reshape(shape)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("MaxPool", opset).since_version
    want_indices = since >= 8 and d(st.integers(0, 2)) == 0
    storage_order = d(st.integers(0, 1)) if since >= 8 else 0
    single = want_indices and storage_order == 1  # see the docstring: N = C = 1
    shape = draw_input_shape(d, max_n=1 if single else 2, max_c=1 if single else 3)
    n, c = shape[:2]
    attrs, _ = draw_window(d, shape[2:], dilations=since >= 10, ceil_mode=since >= 10, pool=True, keep_right=since < 22,
                           drop_right=since >= 22, out_budget=lambda out: n * c * int(np.prod(out)) <= 256)
    if since >= 8 and (storage_order or d(st.integers(0, 3)) == 0):
        attrs["storage_order"] = storage_order
    if want_indices:
        x = distinct(d, dtype, shape)
    elif S.is_float(dtype):
        x = S.arrays(d, dtype, shape=shape, lo=-100, hi=100)
    else:
        x = S.arrays(d, dtype, shape=shape)
    return Example([x], attrs, outputs=(2 if want_indices else 1) if since >= 8 else None)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("MaxPool", opset).since_version
    t = S.np_dtype(dtype)
    one = 1 if since >= 8 else None
    signed = dtype != "uint8"
    ramp = np.arange(16).reshape(1, 1, 4, 4)
    x = ((ramp * 7) % 16 - (8 if signed else 0)).astype(t)  # distinct values
    neg = (-1 - ramp).astype(t) if signed else ramp.astype(t)
    five = ((np.arange(25).reshape(1, 1, 5, 5) * 11) % 25 - (12 if signed else 0)).astype(t)
    out = [
        Example([neg], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, name="negative_values_padded", outputs=one),
        Example([x], {"kernel_shape": [1, 1], "strides": [2, 2]}, name="kernel_1x1_strided", outputs=one),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}, name="same_lower_odd", outputs=one),
        Example([x], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}, name="same_upper_odd", outputs=one),
        Example([x], {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided", outputs=one),
        Example([x], {"kernel_shape": [4, 4]}, name="window_is_whole_input", outputs=one),
        Example([x.reshape(1, 2, 8)], {"kernel_shape": [3], "strides": [2], "pads": [2, 1]}, name="pool1d", outputs=one),
        Example([x.reshape(1, 2, 2, 2, 2)], {"kernel_shape": [2, 1, 2], "pads": [1, 0, 0, 0, 0, 1]}, name="pool3d", outputs=one),
    ]
    if S.is_float(dtype):
        inf = np.inf
        special = np.array([[[[-inf, -inf, 1, 2], [-inf, -inf, 3, inf], [0, -0.0, 5, 4], [-1, -2, -inf, 6]]]]).astype(t)
        out.append(Example([special], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2]}, name="inf_window", outputs=one))
        nan = np.nan  # spec-silent: NaN first, last, alone and twice in overlapping windows
        with_nan = np.array([[[[nan, 1, 2, 3], [4, 5, nan, 7], [8, 9, 10, 11], [nan, nan, 14, 15]]]]).astype(t)
        out.append(Example([with_nan], {"kernel_shape": [2, 2]}, name="nan_windows", outputs=one))
    else:
        lo, hi = S.finite_range(dtype)
        ext = np.array([[[[lo, lo, hi], [lo, lo, 0], [1, lo, hi]]]], dtype=object).astype(t)
        out.append(Example([ext], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, name="int_extremes_padded", outputs=one))
    if since >= 8:
        x2 = ((np.arange(64).reshape(2, 2, 4, 4) * 37) % 64 - (32 if signed else 0)).astype(t)
        out.append(Example([x2], {"kernel_shape": [2, 2], "strides": [2, 2]}, name="indices", outputs=2))
        out.append(Example([x2], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 1]}, name="indices_padded", outputs=2))
        out.append(Example([x], {"kernel_shape": [2, 2], "pads": [0, 1, 1, 0], "storage_order": 1}, name="indices_storage_order1", outputs=2))
        out.append(Example([x2.reshape(1, 2, 2, 4, 4)[:, :, :, :3]], {"kernel_shape": [2, 2, 2], "pads": [0, 1, 0, 1, 1, 1]},
                           name="indices_3d", outputs=2))
        if S.is_float(dtype):
            neg_inf = np.array([[[[-np.inf, 1], [2, 3]]]]).astype(t)
            out.append(Example([neg_inf], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, name="indices_neg_inf_padded", outputs=2))
    if since >= 10:
        out.append(Example([five], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, name="ceil_mode", outputs=one))
        out.append(Example([five], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, name="ceil_mode_indices", outputs=2))
        out.append(Example([five], {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]}, name="dilated_padded", outputs=2))
        out.append(Example([five], {"kernel_shape": [2, 3], "dilations": [2, 1], "auto_pad": "SAME_LOWER", "strides": [2, 2]},
                           name="dilated_same_lower", outputs=one))
        out.append(Example([x], {"kernel_shape": [2, 1], "dilations": [2, 1], "auto_pad": "SAME_UPPER"}, name="dilated_same_upper_stride1", outputs=one))
        out.append(Example([five], {"kernel_shape": [2, 2], "dilations": [2, 1], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
                           name="dilated_ceil_mode_indices", outputs=2))
        out.append(Example([x.reshape(1, 2, 8)], {"kernel_shape": [3], "dilations": [2], "pads": [2, 1]}, name="indices_pool1d_dilated",
                           outputs=2))
    if since >= 22:
        out.append(Example([five], {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [0, 0, 1, 1], "ceil_mode": 1},
                           name="ceil_mode_window_in_right_pad", outputs=2))
        out.append(Example([five[:, :, 0].copy()], {"kernel_shape": [1], "strides": [3], "ceil_mode": 1}, name="ceil_mode_window_past_end",
                           outputs=one))
    return out + batch_edges(dtype, out[4])


# how it enters a generated graph (harness.suites.generated)
pool_template(op, average=False)
