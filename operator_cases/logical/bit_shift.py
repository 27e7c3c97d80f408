"""BitShift: X shifted by Y bits, elementwise with multidirectional broadcasting
(ONNX spec: BitShift-11, 28).

``direction`` is "LEFT" or "RIGHT" (required). BitShift-11 takes unsigned integers and says
nothing about shift amounts of the type's width or more, so those are never drawn there; bits
shifted out on the left are discarded (the value wraps modulo 2**bits).

BitShift-28 adds the signed integers: "For a signed T the right shift is an arithmetic shift
(sign-extending) ... bits shifted past the sign bit are discarded", and "If Y is negative, or is
greater than or equal to the number of bits of T, then the result is whatever the sign bit
extension alone produces: -1 for a right shift on a negative X ... and 0 in every other case."
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._binary_util import broadcast_shapes, ints, small, wrap

op = Operator("BitShift")
st = S.st


def bits(label):
    return S.np_dtype(label).itemsize * 8


def _shift(x, y, direction, width):
    if y < 0 or y >= width:
        return -1 if direction == "RIGHT" and x < 0 else 0
    return x >> y if direction == "RIGHT" else x << y  # Python's >> is arithmetic


@op.reference(11, 28)
def bit_shift(x, y, *, direction):
    direction = direction.decode() if isinstance(direction, bytes) else direction
    label = S.label_of(x.dtype)
    shift = np.vectorize(lambda a, b: _shift(a, b, direction, bits(label)), otypes=[object])
    return wrap(shift(ints(x), ints(y)), label)


@op.strategy(11, 28)
def draw(d, dtype, opset):
    sx, sy = broadcast_shapes(d, 2)
    width = bits(dtype)
    low, high = S.finite_range(dtype)
    if opset >= 28 and d(st.integers(0, 3)) == 0:  # out-of-range amounts are defined from 28
        y = S.arrays(d, dtype, shape=sy, lo=max(low, -2 * width), hi=min(high, 2 * width))
    else:
        y = S.arrays(d, dtype, shape=sy, lo=0, hi=width - 1)
    direction = d(st.sampled_from(["LEFT", "RIGHT"]))
    return Example([S.arrays(d, dtype, shape=sx), y], {"direction": direction})


@op.edges(11, 28)
def edges(dtype, opset):
    width = bits(dtype)
    low, high = S.finite_range(dtype)
    x = S.edge_values(dtype)
    amounts = [0, 1, width // 2, width - 1]
    if opset >= 28:  # defined from BitShift-28: sign-extension result
        amounts += [width, width + 1, high] + ([-1, low] if low < 0 else [])
    y = np.array(amounts, dtype=object).astype(x.dtype)
    out = []
    for direction in ("LEFT", "RIGHT"):
        attrs, end = {"direction": direction}, direction.lower()
        out += [
            Example([x[:, None], y[None, :]], attrs, name=f"edge_values_{end}"),
            Example([small(dtype, (2, 3)), np.array(1, dtype=x.dtype)], attrs, name=f"bcast_{end}"),
            Example([small(dtype, (0, 3)), small(dtype, (3,))], attrs, name=f"empty_{end}"),
        ]
    return out
