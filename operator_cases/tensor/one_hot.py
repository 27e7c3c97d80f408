"""OneHot: a one-hot tensor with ``values`` = [off_value, on_value] (ONNX spec: OneHot-9, 11, 28).

The output has rank r + 1, the new dimension of size ``depth`` inserted at ``axis`` (default -1,
the innermost; "Accepted range is [-r-1, r]"); "output[i, j, k, input[i, j, k]] = 1" for
axis = -1. ``indices`` and ``depth`` may be of any numeric type: "In case 'indices' is of
non-integer type, the values will be casted to int64 before use", and likewise ``depth`` (a
scalar or a 1-element 1-D tensor). OneHot-9: indices "must be non-negative integers", and those
outside [0, depth) give a row of off_value; OneHot-11 states the range as [-depth, depth-1], a
negative index counting from the back, and only those outside it give all off_value. 28 adds
bfloat16 values. The sweep is over the values' type (T3: the output's), with the indices' and
depth's types drawn from their own constraints.

Float indices and depths are drawn integral (3.0): a fraction would rely on the cast's rounding,
which the OneHot text does not state; a NaN index has no int64 value at all.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import STRUCTURAL, side

op = Operator("OneHot", type_param="T3")
op.draws(9, 11, 28, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
st = S.st
VERSIONS = (11, 28)


def _one_hot(indices, depth, values, axis, negative):
    idx = np.asarray(indices).astype(np.float64).astype(np.int64) if np.asarray(indices).dtype.kind == "f" else np.asarray(indices).astype(np.int64)
    depth = np.asarray(depth).reshape(-1)
    if depth.size != 1:
        raise ValueError(f"OneHot: depth must hold one element, got {depth.size}")
    n = int(depth.astype(np.float64)[0]) if depth.dtype.kind == "f" else int(depth[0])
    values = np.asarray(values).reshape(-1)
    if values.size != 2:
        raise ValueError(f"OneHot: values must hold [off_value, on_value], got {values.size} elements")
    r = idx.ndim
    axis = int(axis)
    if not -r - 1 <= axis <= r:
        raise ValueError(f"OneHot: axis {axis} outside [{-r - 1}, {r}]")
    axis = axis + r + 1 if axis < 0 else axis
    if negative:
        idx = np.where((idx < 0) & (idx >= -n), idx + n, idx)
    classes = np.arange(n).reshape([n] + [1] * r)
    hot = np.moveaxis(classes == idx[None], 0, axis)  # out of range matches no class: all off_value
    return np.where(hot, values[1], values[0]).astype(values.dtype)


@op.reference(9)
def one_hot_9(indices, depth, values, *, axis=-1):
    return _one_hot(indices, depth, values, axis, negative=False)


@op.reference(*VERSIONS)
def one_hot_11(indices, depth, values, *, axis=-1):
    return _one_hot(indices, depth, values, axis, negative=True)


def _typed(values, label):
    return np.array(values, dtype=np.int64).astype(S.np_dtype(label))


def _values(d, dtype):
    """A drawn [off_value, on_value]: integral values in [-100, 100] for the numeric types (the
    drawn cases test where the values go; the special values, each as off and as on, are the
    ``values_*`` edge examples)."""
    if dtype in ("bool", "string"):
        return S.arrays(d, dtype, shape=(2,))
    return S.arrays(d, "int64", shape=(2,), lo=-100, hi=100).astype(S.np_dtype(dtype))


@op.strategy(9, *VERSIONS)
def draw(d, dtype, opset):
    shape = tuple(side(d, 4) for _ in range(d(st.integers(1, 3))))  # rank >= 1 (onnx shape inference)
    n = d(st.integers(1, 5))
    lo = -n - 1 if opset >= 11 else 0
    count = int(np.prod(shape)) if shape else 1
    idx = d(st.lists(st.integers(lo, n + 1), min_size=count, max_size=count))
    # int64 indices and a scalar int64 depth; the other index and depth types (float included) and
    # a 1-D depth are the named edge examples
    indices = _typed(idx, "int64").reshape(shape)
    depth = _typed(n, "int64")
    attrs = {}
    if d(st.booleans()):
        attrs["axis"] = d(st.integers(-len(shape) - 1, len(shape)))
    return Example([indices, depth, _values(d, dtype)], attrs)


@op.edges(9, *VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    ev = S.edge_values(dtype)
    pairs = [np.array([ev[i], ev[(i + 1) % len(ev)]], dtype=t) for i in range(0, len(ev), 2)]  # every special value as off or on
    neg = opset >= 11
    idx = _typed([[0, 2], [-1, 1]] if neg else [[0, 2], [1, 3]], "int64")
    three = _typed(3, "int64")
    out = [Example([idx, three, p], name=f"values_{k}") for k, p in enumerate(pairs)]
    if dtype not in STRUCTURAL:  # the values are only placed: the index and axis edges in a few types
        return out
    v = pairs[0]
    out += [
        Example([idx, three, v], {"axis": 0}, name="axis_0"),
        Example([idx, three, v], {"axis": 1}, name="axis_middle"),
        Example([idx, three, v], {"axis": -3}, name="axis_most_negative"),
        Example([_typed([0, 3, 7, 2], "int64"), three, v], name="out_of_range_high"),
        Example([_typed([1, 0], "int64"), np.array([3.0], np.float32), v], name="depth_float_rank1"),
        Example([np.array([2.0, 0.0], np.float32), np.array(4.0, np.float64), v], name="indices_float"),
        Example([_typed([1, 2], "uint8"), _typed([2], "int32"), v], name="indices_uint8_depth_int32"),
        Example([_typed([[2, 0]], "int32"), _typed(3, "int32"), v], name="indices_int32_depth_int32"),
        Example([np.zeros((0,), np.int64), three, v], name="empty_indices"),
        Example([np.zeros((2, 0), np.int64), three, v], {"axis": 1}, name="empty_indices_axis1"),
        Example([_typed([0, 1], "int64"), _typed(1, "int64"), v], name="depth_one"),
    ]
    if neg:
        out += [Example([_typed([-3, -1, -4, 3], "int64"), three, v], name="negative_and_out_of_range"),
                Example([_typed([-1, -2], "int8"), _typed(2, "int64"), v], {"axis": 0}, name="negative_int8")]
    return out
