"""Col2Im: rearrange column blocks back into a batched N-D image, summing where blocks overlap
(ONNX spec: Col2Im-18).

"Col2Im behaves similarly to PyTorch's fold": ``input`` is ``[N, C * n-ary-product(block_shape),
L]``; its channel axis is C-major (channel c, block offset k at ``c * prod(block_shape) + k``,
the offsets in row-major order), and "The blocks are enumerated in increasing lexicographic-order
of their indices". Per spatial axis, block ``l`` and offset ``j`` land on image cell ``l * stride
- pad_begin + j * dilation`` (dilation applies to the block: block_shape "is the block-shape
before dilation is applied to it"); cells in the padding are dropped, overlapping cells are
summed, cells no block reaches are 0. The number of blocks per axis is the convolution formula
``floor((image + pad_begin + pad_end - ((block - 1) * dilation + 1)) / stride) + 1`` and their
product must equal L. image_shape and block_shape have "size of at least 2": 2-D and 3-D images.

Types: the constraint allows every type, also bool and string, for which a sum is not defined:
for those the cases cover every image cell exactly once (stride = block, dilation 1, the blocks
tiling the padded image), where folding is a pure rearrangement. Integer sums stay in range.
Floats are evaluated in float64 and rounded once, on a grid where every sum is exact.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._conv_util import fold, specials, stated_window_attrs, sub_normal
from .._reduce_util import exact, float_grid, to_dtype
from ._window_util import ints

op = Operator("Col2Im")
st = S.st


def blocks_per_axis(image, block, strides, dilations, pads) -> list[int]:
    r = len(image)
    return [(image[i] + pads[i] + pads[i + r] - ((block[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(r)]


@op.reference(18)
def col2im(data, image_shape, block_shape, *, dilations=None, pads=None, strides=None):
    x = np.asarray(data)
    image = [int(v) for v in np.asarray(image_shape).reshape(-1)]
    block = [int(v) for v in np.asarray(block_shape).reshape(-1)]
    r = len(image)
    if len(block) != r or r < 2:
        raise ValueError(f"Col2Im: image_shape {image} and block_shape {block} must have the same size, at least 2")
    s, d, p = ints(strides, r, 1), ints(dilations, r, 1), ints(pads, 2 * r, 0)
    n, ck, length = x.shape
    k = int(np.prod(block))
    counts = blocks_per_axis(image, block, s, d, p)
    if ck % k or int(np.prod(counts)) != length or min(counts) < 1:
        raise ValueError(f"Col2Im: input {x.shape} does not hold {counts} blocks of {block}")
    c = ck // k
    label = S.label_of(x.dtype)
    wide = exact(x) if label not in ("bool", "string") else x
    cols = wide.reshape(n, c, *block, *counts)
    cols = np.moveaxis(cols, list(range(2, 2 + r)), list(range(2 + r, 2 + 2 * r)))  # (N, C, L1..Lr, k1..kr)
    fill = "" if label == "string" else False if label == "bool" else 0
    y = fold(cols, tuple(image), s, d, p[:r], fill)
    if label in ("bool", "string"):
        return y.astype(x.dtype)
    return to_dtype(y, x.dtype)


def values(d, dtype, shape, terms):
    if S.is_float(dtype):
        return float_grid(d, dtype, shape, terms, 4.0, 1)
    if S.is_int(dtype):
        lo, hi = (0, 20) if dtype.startswith("u") else (-20, 20)
        return S.arrays(d, dtype, shape=shape, lo=lo, hi=hi)
    return S.arrays(d, dtype, shape=shape)


def tiling(d, r):
    """block, strides = block, dilation 1, pads and image such that the blocks tile the padded image."""
    block, counts, pads_b, pads_e, image = [], [], [], [], []
    for _ in range(r):
        b, cnt = d(st.integers(1, 3)), d(st.integers(1, 3))
        pb = d(st.integers(0, b - 1))
        pe = d(st.integers(0, max(0, min(b - 1, cnt * b - pb - 1))))
        block.append(b)
        counts.append(cnt)
        pads_b.append(pb)
        pads_e.append(pe)
        image.append(cnt * b - pb - pe)
    attrs = {"strides": list(block)}
    if any(pads_b + pads_e):
        attrs["pads"] = pads_b + pads_e
    return image, block, counts, attrs


@op.strategy(18)
def draw(d, dtype, opset):
    r = d(st.sampled_from([2, 2, 3]))
    n, c = d(st.integers(1, 2)), d(st.integers(1, 2))
    overlap = dtype not in ("bool", "string")
    for _ in range(16):
        if not overlap or d(st.integers(0, 4)) == 0:
            image, block, counts, attrs = tiling(d, r)
        else:
            block = [d(st.integers(1, 3)) for _ in range(r)]
            s = [d(st.sampled_from([1, 2, 1, 3])) for _ in range(r)]
            dil = [d(st.sampled_from([1, 1, 2])) for _ in range(r)]
            pads = [d(st.integers(0, 2)) for _ in range(2 * r)]
            image = [d(st.integers(1, 6)) for _ in range(r)]
            attrs = stated_window_attrs(d, s, dil, pads)
            counts = blocks_per_axis(image, block, s, dil, pads)
        k, length = int(np.prod(block)), int(np.prod(counts))
        if min(counts) >= 1 and n * c * k * length <= 256 and n * c * int(np.prod(image)) <= 256:
            break
    else:
        image, block, counts, attrs = [2] * r, [1] * r, [2] * r, {}
    k, length = int(np.prod(block)), int(np.prod(counts))
    x = values(d, dtype, (n, c * k, length), k)
    return Example([x, np.array(image, dtype=np.int64), np.array(block, dtype=np.int64)], attrs)


def shapes(image, block):
    return np.array(image, dtype=np.int64), np.array(block, dtype=np.int64)


@op.edges(18)
def edges(dtype, opset):
    t = S.np_dtype(dtype)

    def seq(shape, lo=1):
        n = int(np.prod(shape))
        if dtype == "string":
            return np.array([f"s{i}" for i in range(n)], dtype=object).reshape(shape)
        if dtype == "bool":
            return (np.arange(n) % 3 == 0).reshape(shape)
        return ((np.arange(n) % 9) + lo).astype(t).reshape(shape)

    # tilings (every image cell once): valid for every type
    out = [
        Example([seq((1, 4, 6)), *shapes([4, 6], [2, 2])], {"strides": [2, 2]}, name="tiling_2x2"),
        Example([seq((2, 6, 4)), *shapes([3, 4], [3, 1])], {"strides": [3, 1]}, name="tiling_batch_channels"),
        Example([seq((1, 4, 4)), *shapes([3, 3], [2, 2])], {"strides": [2, 2], "pads": [1, 0, 0, 1]}, name="tiling_pads_cropped"),
        Example([seq((1, 8, 2)), *shapes([2, 2, 4], [2, 2, 2])], {"strides": [2, 2, 2]}, name="tiling_3d"),
        Example([seq((0, 4, 6)), *shapes([4, 6], [2, 2])], {"strides": [2, 2]}, name="empty_batch"),
        Example([seq((1, 0, 6)), *shapes([4, 6], [2, 2])], {"strides": [2, 2]}, name="zero_channels"),
        Example([seq((1, 1, 12)), *shapes([3, 4], [1, 1])], {}, name="block_1x1"),
    ]
    if dtype in ("bool", "string"):
        return out
    lo = 0 if S.is_int(dtype) and dtype.startswith("u") else -4
    out += [
        # overlapping blocks are summed (the fold example of the spec's PyTorch reference: 5x5 image, 1x5 blocks)
        Example([seq((1, 5, 5), lo), *shapes([5, 5], [1, 5])], {}, name="overlap_columns"),
        Example([seq((1, 4, 9), lo), *shapes([4, 4], [2, 2])], {}, name="overlap_stride1"),
        Example([seq((1, 4, 4), lo), *shapes([4, 4], [2, 2])], {"dilations": [2, 2]}, name="dilated"),
        Example([seq((1, 4, 12), lo), *shapes([3, 3], [2, 2])], {"pads": [1, 1, 0, 1], "strides": [1, 1]}, name="asymmetric_pads"),
        Example([seq((1, 2, 4), lo), *shapes([5, 5], [1, 2])], {"strides": [3, 3]}, name="gaps_stay_zero"),
        Example([seq((2, 8, 8), lo), *shapes([3, 3, 3], [2, 2, 2])], {"strides": [1, 2, 1], "dilations": [1, 1, 2], "pads": [0, 1, 0, 0, 0, 1]},
                name="overlap_3d"),
    ]
    if S.is_float(dtype):
        out.append(Example([specials(t, (1, 4, 9)), *shapes([4, 4], [2, 2])], {}, name="nan_inf_overlap"))
        out.append(Example([sub_normal(seq((1, 4, 9), -4)), *shapes([4, 4], [2, 2])], {}, name="subnormal_signed_zero"))
    return out
