"""BitCast: reinterpret the bits of each element as another type of the same width
(ONNX spec: BitCast-26).

"Unlike Cast, BitCast preserves the exact bit pattern without any value conversion. The target
data type must have the same bit-width as the input data type ... All types except string are
supported. Implementations must treat the underlying bytes as little endian." Widths: 2 bits
(int2, uint2), 4 (int4, uint4, float4e2m1), 8 (int8, uint8, bool, the float8 types with
float8e8m0), 16, 32 and 64. Inputs are
drawn as raw bit patterns, so NaN payloads, signalling NaNs, -0.0 and denormals all occur. A
bool holds 0 or 1; other bytes are not valid bools, so a bool target only sees those two.

The schema also allows complex64/complex128, which the harness has no dtype label for
(strategies.py): they are neither swept nor drawn as targets.
"""

import ml_dtypes
import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("BitCast")
st = S.st

NIBBLES = ("int4", "uint4", "float4e2m1")
CRUMBS = ("int2", "uint2")


def width(label):
    return 2 if label in CRUMBS else 4 if label in NIBBLES else S.np_dtype(label).itemsize * 8


def _uint(bits):
    return np.dtype(f"uint{max(bits, 8)}")


def to_bits(x):
    """The bit pattern of every element, as unsigned integers of the element's width."""
    label = S.label_of(x.dtype)
    if label in ("int4", "uint4", "int2", "uint2"):  # two's complement, cut to the element's width
        return x.astype(np.int8).astype(np.uint8) & ((1 << width(label)) - 1)
    if label == "float4e2m1":
        return x.view(np.uint8) & 0x0F
    return x.view(_uint(width(label)))


def from_bits(bits, label):
    """Elements of type ``label`` whose bit patterns are ``bits``."""
    bits = np.asarray(bits, dtype=_uint(width(label)))
    if label in ("uint4", "uint2"):
        return bits.astype(S.np_dtype(label))
    if label in ("int4", "int2"):
        top = 1 << (width(label) - 1)
        return np.where(bits >= top, bits.astype(np.int8) - 2 * top, bits.astype(np.int8)).astype(S.np_dtype(label))
    if label == "float4e2m1":
        return bits.view(ml_dtypes.float4_e2m1fn)
    return bits.view(S.np_dtype(label))


@op.reference(26)
def bit_cast(x, *, to):
    return from_bits(to_bits(np.asarray(x)), S.label_of(to))


def targets(dtype, opset):
    """The target labels the schema allows (and the harness knows) of the source's width."""
    allowed = schema.allowed_types(schema.schema_at("BitCast", opset))["T2"]
    labels = [S.label_from_type_str(t) for t in allowed]
    return [t for t in labels if t and width(t) == width(dtype)]


def _bit_patterns(d, n, bits, to_bool):
    return np.array(d(st.lists(st.integers(0, 1 if to_bool else (1 << bits) - 1), min_size=n, max_size=n)), dtype=object)


@op.strategy(26)
def draw(d, dtype, opset):
    to = d(st.sampled_from(targets(dtype, opset)))
    shape = S.shapes(d)
    n = int(np.prod(shape)) if shape else 1
    bits = _bit_patterns(d, n, width(dtype), to_bool="bool" in (dtype, to))
    return Example([from_bits(bits.astype(_uint(width(dtype))), dtype).reshape(shape)], {"to": S.onnx_code(to)})


def edge_patterns(bits):
    """Every pattern of a 4- or 8-bit type; for wider ones 0, 1, the sign bit, all ones, the
    largest positive pattern, and +-inf, a signalling and a quiet NaN of each float format of
    that width (float16 and bfloat16 for 16 bits)."""
    if bits <= 8:
        return list(range(1 << bits))
    top = 1 << (bits - 1)
    patterns = {0, 1, 2, top, top - 1, top + 1, (1 << bits) - 1, 0x5A5A5A5A5A5A5A5A & ((1 << bits) - 1)}
    for exp_bits in {16: (5, 8), 32: (8,), 64: (11,)}[bits]:
        inf = ((1 << exp_bits) - 1) << (bits - 1 - exp_bits)
        patterns |= {inf, top | inf, inf + 1, inf | (1 << (bits - 2 - exp_bits))}
    return sorted(patterns)


@op.edges(26)
def edges(dtype, opset):
    out = []
    for to in targets(dtype, opset):
        patterns = [0, 1] if "bool" in (dtype, to) else edge_patterns(width(dtype))
        x = from_bits(np.array(patterns, dtype=object).astype(_uint(width(dtype))), dtype)
        out.append(Example([x], {"to": S.onnx_code(to)}, name=f"to_{to}"))
    last = S.onnx_code(targets(dtype, opset)[-1])
    out.append(Example([from_bits(np.zeros((2, 0, 3), dtype=_uint(width(dtype))), dtype)], {"to": last}, name="empty"))
    out.append(Example([from_bits(np.array(1, dtype=_uint(width(dtype))), dtype)], {"to": last}, name="rank0"))
    return out
