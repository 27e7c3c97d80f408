"""CastLike: cast the first input to the element type of the second (ONNX spec: CastLike-15,
19, 21, 23, 24, 25).

"The operator casts the elements of a given input tensor (the first input) to the same data
type as the elements of the second input tensor. See documentation of the Cast operator for
further details." The conversion is Cast's (cast.py), at the Cast version of the same opset:
CastLike-19/21/23 follow the Cast-19/21/23 float 8 tables (+-inf -> NaN for the FNUZ types even
when saturating), CastLike-24/25 the Cast-24 ones (+-inf -> +-FLT_MAX). ``saturate`` arrives in
CastLike-19, ``round_mode`` in CastLike-24. ``target_type`` only lends its type: its values and
shape (drawn at random, empty and rank 0 included) do not matter. The same pairs of types are
left out as for Cast (float/bool -> string, string -> bool), and for the same reasons; float8e8m0
(CastLike-24) and int2/uint2 (CastLike-25) follow Cast-24's rules (negative values to float8e8m0
are undefined: not drawn).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .cast import NAN_TO_FLOAT4, OUT_OF_RANGE, TWO_BIT, UNTABULATED, convert, draw_attrs, draw_source, drawn_targets, edge_cases

op = Operator("CastLike")
st = S.st
op.spec_silent("nan_to_float4e2m1", (23, 24, 25), **NAN_TO_FLOAT4,
               spec="The operator casts the elements of a given input tensor (the first input) to the same data type as the "
                    "elements of the second input tensor. See documentation of the Cast operator for further details.[...]"
                    "It only applies for float 8 conversion (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz")

CAST_LIKE_WORDS = ("The operator casts the elements of a given input tensor (the first input) to the same data type as the "
                   "elements of the second input tensor. See documentation of the Cast operator for further details.")
op.spec_silent("float_to_2bit", (25,), spec=CAST_LIKE_WORDS, **TWO_BIT)
op.spec_silent("float8e8m0_untabulated", (24, 25), spec=CAST_LIKE_WORDS, **UNTABULATED)
op.spec_silent("float_to_int_out_of_range", (15, 19, 21, 23, 24, 25), spec=CAST_LIKE_WORDS, **OUT_OF_RANGE)


@op.reference(15)
def cast_like_15(x, target_type):
    return convert(x, S.label_of(target_type.dtype))


@op.reference(19, 21, 23)
def cast_like_19(x, target_type, *, saturate=1):
    return convert(x, S.label_of(target_type.dtype), saturate, fnuz_inf_nan=True)


@op.reference(24, 25)
def cast_like_24(x, target_type, *, saturate=1, round_mode="up"):
    return convert(x, S.label_of(target_type.dtype), saturate, round_mode=round_mode)


def target_tensor(to, shape=(1,)):
    """A tensor of type ``to``; only its type is used."""
    n = int(np.prod(shape)) if shape else 1
    if to == "string":
        return np.array(["t"] * n, dtype=object).reshape(shape)
    return np.ones(shape, dtype=S.np_dtype(to))


@op.strategy(15, 19, 21, 23, 24, 25)
def draw(d, dtype, opset):
    to = d(st.sampled_from(drawn_targets(dtype, opset, "CastLike")))
    shape = d(st.sampled_from([(), (1,), (0,), (2, 3)]))
    return Example([draw_source(d, dtype, to), target_tensor(to, shape)], draw_attrs(d, to, opset))


@op.edges(15, 19, 21, 23, 24, 25)
def edges(dtype, opset):
    return [Example([x, target_tensor(to)], attrs, name=name) for name, x, to, attrs in edge_cases(dtype, opset, "CastLike")]
