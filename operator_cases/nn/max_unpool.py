"""MaxUnpool: scatter X into zeros at the positions I gives (ONNX spec: MaxUnpool-9, 11, 22).

"all the non-maximal values from the original input to MaxPool are set to zero in the output":
output element ``I[k]`` (a flat index) takes ``X[k]``, every other element is 0. Without
``output_shape`` the output is (N, C, D1'..Dn') with ``Di' = (Di - 1) * strides[i] +
kernel_shape[i] - pad_begin[i] - pad_end[i]`` (the inverse of MaxPool's floor formula), and "The
indices are linear, i.e. computed considering the tensor as flattened 1-D tensor, assuming
row-major storage. Also, the linear indices should not consider padding".

With ``output_shape`` ("will cause pads values to be auto generated. If 'output_shape' is
specified, 'pads' values are ignored") we read the indices as addressing the unpadded output of
the shape above (pads 0) and the extra cells as padding at the end of each axis: the official
case test_maxunpool_export_with_output_shape (indices 5, 7, 13, 15 of a 4 x 4 result placed in a
5 x 5 output at rows/columns 1 and 3) fixes exactly this reading, which onnx.reference and our
kernel engine share. How a total of two or more padding cells per axis would be split the text
does not say: the cases add at most one cell per axis.

Versions: MaxUnpool-11 states the strides default (1); MaxUnpool-22 adds bfloat16.

The drawn cases give an ``output_shape`` equal to the unpadded shape; the named edges
``*output_shape*`` add padding cells, so the backends that read the indices otherwise (ONNX Runtime
takes them as flat indices into the padded output) can be classified by name.

The cases keep to what the text defines: every index is a cell of its MaxPool window (what
MaxPool's Indices hold) and indices are distinct (which of two values written to one cell wins is
not said); a copy, so exact.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("MaxUnpool", type_param="T1")
st = S.st
VERSIONS = (9, 11, 22)


def unpooled_shape(x_shape, kernel_shape, strides, pads):
    r = len(x_shape) - 2
    strides = list(strides) if strides is not None else [1] * r
    pads = list(pads) if pads is not None else [0] * (2 * r)
    return tuple(x_shape[:2]) + tuple((x_shape[2 + i] - 1) * strides[i] + kernel_shape[i] - pads[i] - pads[i + r] for i in range(r))


@op.reference(*VERSIONS)
def max_unpool(x, i, output_shape=None, *, kernel_shape, pads=None, strides=None):
    x = np.asarray(x)
    shape = unpooled_shape(x.shape, kernel_shape, strides, None if output_shape is not None else pads)
    y = np.zeros(int(np.prod(shape)), dtype=x.dtype)
    y[np.asarray(i, dtype=np.int64).reshape(-1)] = x.reshape(-1)
    y = y.reshape(shape)
    if output_shape is None:
        return y
    out = np.zeros(tuple(int(v) for v in np.asarray(output_shape).reshape(-1)), dtype=x.dtype)
    out[tuple(slice(0, s) for s in shape)] = y
    return out


def window_indices(d, x_shape, kernel, strides, pads):
    """For every element of X, the flat index of a distinct cell of its window in the unpooled
    tensor (None when the windows leave no distinct choice)."""
    full = unpooled_shape(x_shape, kernel, strides, pads)
    r = len(x_shape) - 2
    strides = strides or [1] * r
    pads = pads or [0] * (2 * r)
    idx = np.zeros(x_shape, dtype=np.int64)
    for n in range(x_shape[0]):
        for c in range(x_shape[1]):
            used = set()
            for pos in np.ndindex(*x_shape[2:]):
                cells = [p for p in np.ndindex(*kernel)
                         if all(0 <= pos[a] * strides[a] - pads[a] + p[a] < full[2 + a] for a in range(r))]
                cells = [tuple(pos[a] * strides[a] - pads[a] + p[a] for a in range(r)) for p in cells]
                cells = [q for q in cells if q not in used]
                if not cells:
                    return None
                q = cells[d(st.integers(0, len(cells) - 1))]
                used.add(q)
                idx[(n, c) + pos] = np.ravel_multi_index((n, c) + q, full)
    return idx


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    r = d(st.sampled_from([2, 1, 3]))
    x_shape = (d(st.integers(1, 2)), d(st.integers(1, 2))) + tuple(d(st.integers(1, 3)) for _ in range(r))
    for _ in range(8):
        kernel = [d(st.integers(1, 3)) for _ in range(r)]
        strides = [d(st.integers(1, 3)) for _ in range(r)]
        with_shape = d(st.integers(0, 2)) == 0
        pads = None if with_shape or d(st.booleans()) else [d(st.integers(0, k - 1)) for k in kernel] * 2
        full = unpooled_shape(x_shape, kernel, strides, pads)
        if min(full[2:]) < 1:
            continue
        idx = window_indices(d, x_shape, kernel, strides, pads)
        if idx is None:
            continue
        attrs = {"kernel_shape": kernel}
        if any(s != 1 for s in strides) or d(st.booleans()):
            attrs["strides"] = strides
        if pads is not None:
            attrs["pads"] = pads
        x = S.arrays(d, dtype, shape=x_shape, lo=-100, hi=100)
        if with_shape:
            # the shape without padding: larger ones only in the named edges (see the docstring)
            out = np.array(full, dtype=np.int64)
            return Example([x, idx, out], attrs)
        return Example([x, idx], attrs)
    x = S.arrays(d, dtype, shape=x_shape, lo=-100, hi=100)
    return Example([x, np.arange(x.size, dtype=np.int64).reshape(x_shape)], {"kernel_shape": [1] * r})


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    tiny = S.smallest_subnormal(dtype)
    vals = np.array([[[[np.nan, np.inf], [-np.inf, -0.0]]], [[[tiny, -tiny], [1.5, -2.0]]]]).astype(t)  # (2, 1, 2, 2)
    idx = np.array([[[[5, 7], [13, 15]]], [[[16, 19], [28, 30]]]], dtype=np.int64)  # in (2, 1, 4, 4)
    ones = np.array([[[[1, 2], [3, 4]]]], dtype=t)
    i_official = np.array([[[[5, 7], [13, 15]]]], dtype=np.int64)
    shape5 = np.array([1, 1, 5, 5], dtype=np.int64)
    k2s2 = {"kernel_shape": [2, 2], "strides": [2, 2]}
    return [
        Example([vals, idx], k2s2, name="nan_inf_signed_zero_subnormal"),
        Example([ones, i_official], k2s2, name="without_output_shape"),
        Example([ones, i_official, shape5], k2s2, name="with_output_shape"),
        Example([ones, i_official, shape5], {**k2s2, "pads": [1, 1, 1, 1]}, name="output_shape_ignores_pads"),
        Example([ones, np.array([[[[0, 2], [6, 8]]]], dtype=np.int64)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
                name="padded"),
        Example([ones, np.array([[[[0, 4], [6, 8]]]], dtype=np.int64)], {"kernel_shape": [3, 3], "pads": [0, 0, 1, 1]},
                name="overlapping_windows_asymmetric_pads"),
        Example([ones.reshape(1, 2, 2), np.array([[[1, 3], [4, 7]]], dtype=np.int64)], {"kernel_shape": [2], "strides": [2]},
                name="unpool1d"),
        Example([ones.reshape(1, 1, 1, 2, 2), np.array([[[[[0, 3], [9, 14]]]]], dtype=np.int64)], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]},
                name="unpool3d"),
        Example([np.zeros((0, 1, 2, 2), dtype=t), np.zeros((0, 1, 2, 2), dtype=np.int64)], k2s2, name="empty_batch"),
    ]
