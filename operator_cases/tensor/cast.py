"""Cast: convert every element to the type named by ``to`` (ONNX spec: Cast-1, 6, 9, 13, 19, 21,
23, 24, 25, 28). The conversion engine here is shared with CastLike (cast_like.py).

What each version says, and what this oracle does with it:

* Cast-1 names ``to`` by string ("FLOAT", "INT32", ...); Cast-6 on by the DataType number.
  "Casting to and from strings is not supported yet" (1, 6); from Cast-9 strings are allowed.
* Cast-13 spells out numeric conversions: float -> float gives +-inf when out of range, and
  rounds to nearest even (the type's usual rounding; the spec's float 8 tables write it RNE);
  float -> integer is "undefined if OOR", so out-of-range values, NaN and +-inf are never drawn
  for an integer target; in range the fraction is truncated toward zero, the C conversion the
  spec's own example hints at ("converting string "100.5" to an integer may yield result 100");
  integer -> float rounds to nearest even and gives +-inf when out of range; integer -> integer
  keeps the low bits ("200 (int16) -> -56 (int8)"); anything -> bool is "zero to False, nonzero
  to True" (NaN is nonzero); bool -> number is 1 or 0. The same rules apply to Cast-1..9.
* Cast-19 adds the float 8 types and ``saturate`` (default 1), with two tables: saturating,
  out-of-range values and +-inf become +-FLT_MAX (but +-inf becomes NaN for the FNUZ types in
  Cast-19/21/23 -- Cast-24 changed that row to +-FLT_MAX); without saturation they become NaN
  (E4M3FN, both FNUZ) or +-inf (E5M2). "[x] > FLT_MAX" is read as: x rounded to the target's
  mantissa with an unbounded exponent lies beyond FLT_MAX (so 464 -> float8e4m3fn is 448: the
  tie rounds to the even 448, not to 480). -0 becomes +0 in the FNUZ types (they have no -0).
  The tables are applied to integer sources, and to a float 8 source cast to its own type.
* Cast-21 adds int4/uint4. The operator text says nothing new; the ONNX technical note on 4-bit
  integers (docs/docs/technical/int4.md) says "Cast to a 4 bit type is done by rounding to the
  nearest-integer (with ties to even) nearest-even integer and truncating" -- so float ->
  int4/uint4 rounds half to even (not toward zero), out-of-range floats stay undefined (not
  drawn), and integer -> int4/uint4 keeps the low 4 bits like every integer narrowing.
* Cast-23 adds float4e2m1 (no inf, no NaN); the operator text has no table for it. We round to
  nearest even within [-6, 6] (the type's usual rounding), larger magnitudes and +-inf saturate to
  +-6; ``saturate`` is not involved. NaN is the spec-silent point ``Cast.nan_to_float4e2m1``: the
  standard contradicts itself. onnx's float4 note (docs/docsgen/source/technical/float4.md, "Cast"
  table) says "NaN | 6", and we expect 6; onnx's own node cases (test_cast_FLOAT_to_FLOAT4E2M1,
  generated with ml_dtypes) expect -0; the operator text decides neither. A backend giving -0 or 6
  keeps the invariant and reads ``unspecified``.
* Cast-24 adds float8e8m0 (powers of two 2^-127 .. 2^127 and NaN) and ``round_mode``, which only
  applies to it: "`up`: round to nearest value away from zero, `down`: round to nearest value
  towards zero, `nearest`: round to nearest value and ties round up" (the distance between values,
  so 3 = 1.5 * 2 goes to 4 and 0.7 to 0.5). The table gives the specials for saturate + up and
  non-saturate + nearest: "0 | 0 | NaN" (0 is the encoding of E8M0_MIN = 2^-127), "Inf |
  E8M0_MAX | NaN", "x > E8M0_MAX | E8M0_MAX | NaN", "x < E8M0_MIN | E8M0_MIN | NaN"; we apply
  its two columns by ``saturate`` whatever the mode (after rounding: a value that rounds up to
  E8M0_MIN is in range). "Casting negative values to FLOAT8E8M0 gives undefined behavior" and -0
  is "Unspecified": not drawn. From float8e8m0 every value is exact (a power of two or NaN).
* Cast-25 adds int2/uint2: integers keep their low bits; a float rounds half to even, as into the
  4-bit types (the int4 note): the text has no rule for 2-bit types, so that is the spec-silent
  point ``Cast.float_to_2bit`` (truncation toward zero, onnx.reference's and C's rule for the wider
  integers, and rounding half away from zero, ONNX Runtime's, are accepted).
* float8e8m0 outside the table's two columns (saturate with ``down``/``nearest``, non-saturate
  with ``up``/``down``): 0, +inf and values rounding beyond either end are the spec-silent point
  ``Cast.float8e8m0_untabulated``; ours applies the column of ``saturate``, the other column
  (E8M0_MIN/E8M0_MAX against NaN) is accepted. Cast-28 adds float6e2m3/float6e3m2, which, like
  float4e2m1, hold no infinity and no NaN: values round to nearest even, larger magnitudes and
  +-inf saturate to the type's largest value, and NaN is the spec-silent point
  ``Cast.nan_to_float6`` (ours: the largest value, as for float4e2m1; ml_dtypes' -0 accepted).
  ``round_mode`` is drawn for every target to check that the others ignore it.

Strings (Cast-9 on): "3.14", "1000", "1e-5", "1E8", and the case-insensitive literals "+INF",
"INF", "NaN" (and "-INF") convert to floats -- exactly, then rounded once to the target;
integer strings convert to integers; numbers -> string is drawn for integer sources only (the
decimal digits). Left out because the spec does not determine the result: float -> string
("plain floating-point representation (such as "314.15926")" fixes no number of digits nor
the spelling of 1.0, inf or NaN), bool -> string, string -> bool, non-numeric strings,
fractional or out-of-range strings for an integer target ("undefined behavior"), and
out-of-range numeric strings for any target.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, Value, finite, margin
from harness.registry import Example, Operator

op = Operator("Cast")


def _out_of_range(inputs, attrs, expected, since):
    """Open: float source elements whose cast to an integer target the spec leaves undefined."""
    x = np.asarray(inputs[0])
    src, to = S.label_of(x.dtype), _target(inputs, attrs)
    if not (S.is_float(src) and S.is_int(to)) or x.size == 0:
        return [None]
    return [np.array([not defined(v, src, to) for v in exact(x)], dtype=bool).reshape(x.shape)]


OUT_OF_RANGE = dict(
    expected="saturation to the target's range, NaN to 0 (the closest representable value, as Cast-19's saturate rule "
             "does for float 8 targets; numpy's own result is the platform's and varies)",
    where=_out_of_range,
    invariants={},  # "undefined": any value of the target type, but it must be one of the readings below
    readings={
        "the C conversion on x86-64: truncation toward zero through a 32-bit integer (64-bit for uint32 and the 64-bit "
        "types); a value outside that integer's range, +-inf or NaN gives its minimum (the 'integer indefinite'); the "
        "target keeps the low bits": lambda c: [_out_of_range_reading(c, "x86")],
        "modular: truncation toward zero, then the low bits of the exact integer (two's complement wrap); NaN and +-inf "
        "give 0": lambda c: [_out_of_range_reading(c, "modular")],
    })
op.spec_silent(
    "float_to_int_out_of_range", (1, 6, 9, 13, 19, 21, 23, 24, 25, 28),
    spec={1: "The operator casts the elements of a given input tensor to a data type specified by the 'to' argument",
          13: "Casting from floating point to:[...]fixed point: undefined if OOR."},
    **OUT_OF_RANGE)


def _out_of_range_reading(c, how: str) -> np.ndarray:
    """Cast.float_to_int_out_of_range under one reading: every element cast as ``how`` says."""
    x, out = np.asarray(c.inputs[0]), np.asarray(c.expected[0])
    info = ml_dtypes.iinfo(out.dtype)
    bits, signed = int(info.bits), int(info.min) < 0
    width = 32 if bits < 32 or (bits == 32 and signed) else 64
    got = []
    for v in exact(x):
        if how == "x86":
            n = math.trunc(v) if math.isfinite(v) else None
            n = -(2 ** (width - 1)) if n is None or not -(2 ** (width - 1)) <= n < 2 ** (width - 1) else n
        else:
            n = math.trunc(v) if math.isfinite(v) else 0
        n %= 2 ** bits
        got.append(n - 2 ** bits if signed and n >= 2 ** (bits - 1) else n)
    return np.array(got, dtype=object).astype(out.dtype).reshape(out.shape)  # uint64 values beyond int64
st = S.st

FLOAT8 = S.FLOAT8
#: float types without infinity or NaN (saturating, NaN a spec-silent point)
NO_NAN = S.NARROW_FLOATS
E8M0 = "float8e8m0"


def _nan_to(labels):
    def where(inputs, attrs, expected, since):
        return _nan_to_narrow(inputs, attrs, labels)
    return where


def _nan_to_narrow(inputs, attrs, labels):
    """Open: NaN source elements cast to a target in ``labels``, types with no NaN."""
    x = np.asarray(inputs[0])
    to = target_label(attrs["to"]) if "to" in attrs else S.label_of(np.asarray(inputs[1]).dtype)
    if to not in labels or x.size == 0:
        return [None]
    src = S.label_of(x.dtype)
    if src == "string":
        vals = [parse(v) for v in exact(x)]
    elif S.is_float(src):
        vals = exact(x)
    else:
        return [None]
    return [np.array([isinstance(v, float) and math.isnan(v) for v in vals], dtype=bool).reshape(x.shape)]


_nan_to_float4 = _nan_to(("float4e2m1",))


def _zero_or_six(c) -> bool:
    """Each open element is +-0 or the type's largest magnitude (6 in float4e2m1)."""
    got = np.asarray(c.actual[0])
    top = float(finfo(S.label_of(got.dtype)).max)
    return bool(np.all(np.isin(np.abs(got.astype(np.float32)[np.asarray(c.masks[0], dtype=bool)]), [0.0, top])))


def _nan_to_float4_by_ml_dtypes(c) -> list:
    """Cast.nan_to_float4e2m1 as ml_dtypes converts (onnx's own node test data): each source value through float32."""
    x, e = np.asarray(c.inputs[0]), np.asarray(c.expected[0])
    vals = [parse(v) for v in exact(x)] if S.label_of(x.dtype) == "string" else exact(x)
    return [np.array(vals, dtype=np.float64).astype(np.float32).astype(e.dtype).reshape(e.shape)]


NAN_TO_FLOAT4 = dict(
    expected="6 (the type's largest value, as +-inf and out-of-range values saturate to +-6): the float4e2m1 note "
             "(docs/docs/technical/float4.md) as this reference's author read it (the note is no part of the operator text, and "
             "its cast table could not be re-read when this point was declared). The operator text names "
             "no result, and onnx's own node cases (test_cast_FLOAT_to_FLOAT4E2M1, input 'NaN') expect -0 (0x8), what "
             "ml_dtypes gives, so neither value is the spec's",
    where=_nan_to_float4,
    invariants={"a NaN becomes +-0 or +-6 (the type's zero or its largest magnitude)": _zero_or_six},
    readings={"ml_dtypes' conversion through float32 (onnx's node cases test_cast_FLOAT_to_FLOAT4E2M1: NaN to -0)":
              _nan_to_float4_by_ml_dtypes})
NAN_TO_FLOAT6 = dict(
    expected="the type's largest value (7.5 in float6e2m3, 28 in float6e3m2), as +-inf and out-of-range values saturate: "
             "the choice this reference makes for float4e2m1 (Cast.nan_to_float4e2m1); the operator text names no result",
    where=_nan_to(("float6e2m3", "float6e3m2")),
    invariants={"a NaN becomes +-0 or +-the type's largest magnitude": _zero_or_six},
    readings={"ml_dtypes' conversion through float32 (NaN to -0, as onnx's float4 node cases)": _nan_to_float4_by_ml_dtypes})
NIBBLE_INTS = ("int4", "uint4", "int2", "uint2")


# -- formats ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def finfo(label: str):
    dtype = S.np_dtype(label)
    return np.finfo(dtype) if dtype in (np.float16, np.float32, np.float64) else ml_dtypes.finfo(dtype)


def _pow2(k: int) -> Fraction:
    return Fraction(2**k) if k >= 0 else Fraction(1, 2**-k)


def round_to_format(q: Fraction, label: str) -> Fraction:
    """``q`` rounded to nearest even at the precision of float type ``label``: the mantissa
    width and the subnormal range are the format's, the exponent is unbounded above."""
    if q == 0:
        return q
    info = finfo(label)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if _pow2(e) > a:
        e -= 1
    quantum = _pow2(max(e, info.minexp) - info.nmant)
    r = round(a / quantum) * quantum  # Fraction.__round__ rounds half to even
    return r if q > 0 else -r


# -- one element ------------------------------------------------------------------------------
def parse(s: str) -> float | Fraction:
    """A numeric string as an exact value (float for the special literals)."""
    low = s.lower()
    if low in ("inf", "+inf"):
        return math.inf
    if low == "-inf":
        return -math.inf
    if low == "nan":
        return math.nan
    return Fraction(s)


def _is_special(v) -> bool:
    return isinstance(v, float) and not math.isfinite(v)


def to_e8m0(v, saturate: bool, round_mode: str) -> float:
    """float8e8m0 (Cast-24's table and round_mode, see the module docstring); ``v`` >= 0."""
    if isinstance(v, float) and math.isnan(v):
        return math.nan
    if _is_special(v):
        return 2.0 ** 127 if saturate else math.nan
    q = Fraction(v)
    if q > 0:
        e = q.numerator.bit_length() - q.denominator.bit_length()
        if _pow2(e) > q:
            e -= 1
        if q != _pow2(e) and (round_mode == "up" or (round_mode == "nearest" and q >= 3 * _pow2(e - 1))):
            e += 1
    if q > 0 and -127 <= e <= 127:
        return float(_pow2(e))
    if not saturate:
        return math.nan
    return 2.0 ** 127 if q > 0 and e > 127 else 2.0 ** -127


def to_float(v, to: str, saturate: bool, fnuz_inf_nan: bool, round_mode: str = "up") -> float:
    """The value of float type ``to`` that exact number ``v`` (int, Fraction or float) becomes."""
    if to == E8M0:
        return to_e8m0(v, saturate, round_mode)
    info = finfo(to)
    fmax = float(info.max)
    fnuz = to.endswith("fnuz")
    if isinstance(v, float) and math.isnan(v):
        return fmax if to in NO_NAN else math.nan
    if _is_special(v):  # +-inf
        if to in NO_NAN:
            return math.copysign(fmax, v)
        if to not in FLOAT8:
            return v
        if saturate:
            return math.nan if (fnuz and fnuz_inf_nan) else math.copysign(fmax, v)
        return v if to == "float8e5m2" else math.nan
    q = Fraction(v)
    r = round_to_format(q, to)
    if abs(r) > fmax:  # out of range
        if to in NO_NAN or (to in FLOAT8 and saturate):
            return math.copysign(fmax, q)
        if to in FLOAT8 and to != "float8e5m2":
            return math.nan
        return math.copysign(math.inf, q)
    if r == 0:  # keeps the sign of -0.0 and of negative values that round to zero
        return 0.0 if fnuz else math.copysign(0.0, v if isinstance(v, float) else float(q))
    return float(r)


def to_int(v, to: str) -> int:
    """Integer type ``to``: floats truncate toward zero (round half to even for 4-bit targets,
    per int4.md); integers keep their low bits (two's complement). A float out of range (NaN,
    +-inf) is "undefined" (the spec-silent point ``Cast.float_to_int_out_of_range``): we saturate
    and take NaN to 0."""
    low, high = S.finite_range(to)
    if not isinstance(v, int):
        if math.isnan(v):
            return 0
        if math.isinf(v):
            return high if v > 0 else low
        q = Fraction(v)
        n = round(q) if to in NIBBLE_INTS else math.trunc(q)
        return min(max(n, low), high)
    span = high - low + 1
    return (v - low) % span + low


def exact(x: np.ndarray) -> list:
    """The source elements as exact Python values: int, float (finite floats are exact),
    str; bools as ints."""
    label = S.label_of(x.dtype)
    flat = x.reshape(-1)
    if label == "string":
        return [str(v) for v in flat]
    if S.is_float(label):
        return [float(v) for v in flat.astype(np.float64)]
    return [int(v) for v in flat]


def convert(x: np.ndarray, to: str, saturate: int = 1, fnuz_inf_nan: bool = False, round_mode: str = "up") -> np.ndarray:
    """Cast ``x`` to the type labelled ``to`` following the rules in the module docstring."""
    x = np.asarray(x)
    src = S.label_of(x.dtype)
    vals = exact(x)
    if src == "string" and to != "string":
        vals = [parse(v) for v in vals]
    if to == "string":
        if src != "string" and not S.is_int(src):
            raise ValueError(f"{src} -> string is not defined precisely enough to test")
        out = [str(v) for v in vals]
        return np.array(out, dtype=object).reshape(x.shape)
    if to == "bool":
        return np.array([v != 0 for v in vals], dtype=bool).reshape(x.shape)  # NaN != 0
    if S.is_int(to):
        return np.array([to_int(v, to) for v in vals], dtype=object).astype(S.np_dtype(to)).reshape(x.shape)
    out = [to_float(v, to, bool(saturate), fnuz_inf_nan, round_mode) for v in vals]
    with np.errstate(all="ignore"):
        return np.array(out, dtype=np.float64).astype(S.np_dtype(to)).reshape(x.shape)


# -- references -------------------------------------------------------------------------------
def target_label(to) -> str:
    """``to`` as a label: a DataType number, or its name (Cast-1)."""
    if isinstance(to, (bytes, str)):
        to = onnx.TensorProto.DataType.Value(to.decode() if isinstance(to, bytes) else to)
    return S.label_of(int(to))


@op.reference(1, 6, 9, 13)
def cast_1(x, *, to):
    return convert(x, target_label(to))


@op.reference(19, 21, 23)
def cast_19(x, *, to, saturate=1):
    return convert(x, target_label(to), saturate, fnuz_inf_nan=True)


@op.reference(24, 25, 28)
def cast_24(x, *, to, saturate=1, round_mode="up"):
    return convert(x, target_label(to), saturate, round_mode=round_mode)


# -- what may be drawn ------------------------------------------------------------------------
def targets(src: str, opset: int, op_name: str = "Cast") -> list[str]:
    """Target labels allowed by the schema (and known to the harness) for which the spec
    defines a result for ``src`` (see the module docstring)."""
    sch = schema.schema_at(op_name, opset)
    labels = [S.label_from_type_str(t) for t in schema.allowed_types(sch)["T2"]]
    return [t for t in labels if t and not excluded(src, t)]


#: the types Cast-24/25/28 added: random draws from the older source types keep the targets they had
#: (their frozen case ids), every source reaches these through its edge examples, and these sources'
#: own draws take every target
NEWER = ("float8e8m0", "int2", "uint2", "float6e2m3", "float6e3m2")


def drawn_targets(src: str, opset: int, op_name: str = "Cast") -> list[str]:
    return [t for t in targets(src, opset, op_name) if src in NEWER or t not in NEWER]


def excluded(src: str, to: str) -> bool:
    if to == "string":
        return src != "string" and not S.is_int(src)
    return src == "string" and to == "bool"


def defined(v, src: str, to: str) -> bool:
    """Whether the spec defines the result of casting element ``v`` (exact value) to ``to``."""
    if to == E8M0:  # "Casting negative values to FLOAT8E8M0 gives undefined behavior", -0 "Unspecified"
        return isinstance(v, str) or not (v < 0 or (isinstance(v, float) and math.copysign(1.0, v) < 0))
    if not (S.is_int(to) and S.is_float(src)):
        return True
    if _is_special(v):
        return False
    low, high = S.finite_range(to)
    n = round(Fraction(v)) if to in NIBBLE_INTS else math.trunc(v)
    return low <= n <= high


def _keep_defined(x: np.ndarray, to: str) -> np.ndarray:
    """``x`` with elements whose cast to ``to`` is undefined replaced by 0 (by their magnitude
    for float8e8m0, which takes no negative value)."""
    src = S.label_of(x.dtype)
    if to == E8M0:
        if src == "string":
            return np.array([v.lstrip("-") for v in exact(x)], dtype=object).reshape(x.shape)
        if src == "bool" or src.startswith("u"):
            return x
        if S.is_int(src):
            return np.where(x < 0, -(x + 1), x).astype(x.dtype)  # no overflow at the minimum
        return np.abs(x).astype(x.dtype)
    if not (S.is_int(to) and S.is_float(src)):
        return x
    mask = np.array([defined(v, src, to) for v in exact(x)], dtype=bool).reshape(x.shape)
    return np.where(mask, x, np.zeros((), dtype=x.dtype)).astype(x.dtype)


def _floats(d, label: str, shape, lo: float, hi: float, specials: bool) -> np.ndarray:
    """Float values of ``label`` in [lo, hi] (and NaN, +-inf, -0.0 with ``specials``, saturated
    or zeroed where ``label`` has no infinity or NaN), drawn in float64 and rounded to ``label``."""
    n = int(np.prod(shape)) if shape else 1
    elems = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if specials:
        elems = st.one_of(elems, st.sampled_from([math.nan, math.inf, -math.inf, -0.0]))
    vals = np.array(d(st.lists(elems, min_size=n, max_size=n)), dtype=np.float64)
    if label == "float4e2m1":
        vals = np.where(np.isnan(vals), 0.0, vals)  # no NaN in float4e2m1
    if label not in S.FLOATS and label != "float8e5m2":  # no infinities either: saturate them
        vals = np.clip(vals, -float(finfo(label).max), float(finfo(label).max))
    if label == E8M0:  # powers of two only: magnitudes, at least the smallest
        vals = np.where(np.isnan(vals), vals, np.maximum(np.abs(vals), float(finfo(label).smallest_normal)))
    return vals.astype(S.np_dtype(label)).reshape(shape)  # any rounding will do for an input


def numeric_strings(d, to: str, n: int) -> list[str]:
    """Strings that convert to ``to``: integers in range for integer targets; decimal or
    scientific numbers within the target's finite range, or the special literals, for floats."""
    if S.is_int(to):
        low, high = S.finite_range(to)
        return [str(v) for v in d(st.lists(st.integers(low, high), min_size=n, max_size=n))]
    bound = min(1e5, float(finfo(to).max))
    number = st.tuples(st.floats(-bound, bound), st.sampled_from(["{!r}", "{:.3f}", "{:e}", "{:E}", "{:g}", "{:.0f}"]))
    special = st.sampled_from(["INF", "+INF", "inf", "+Inf", "-INF", "NaN", "nan"])
    items = d(st.lists(st.one_of(number, special), min_size=n, max_size=n))
    return [v if isinstance(v, str) else v[1].format(v[0]) for v in items]


def draw_source(d, src: str, to: str) -> np.ndarray:
    shape = S.shapes(d)
    n = int(np.prod(shape)) if shape else 1
    if src == "string":
        if to == "string":
            return S.arrays(d, "string", shape=shape)
        return _keep_defined(np.array(numeric_strings(d, to, n), dtype=object).reshape(shape), to)
    if not S.is_float(src):
        return _keep_defined(S.arrays(d, src, shape=shape), to)  # every integer and bool converts
    fmax = float(finfo(src).max)
    if S.is_int(to):  # about the target's range; the few out-of-range values are zeroed
        low, high = S.finite_range(to)
        return _keep_defined(_floats(d, src, shape, max(low - 1.0, -fmax), min(high + 1.0, fmax), specials=False), to)
    bound = fmax if d(st.booleans()) else min(1e4, fmax)
    return _keep_defined(_floats(d, src, shape, -bound, bound, specials=d(st.booleans())), to)


def draw_attrs(d, to: str, opset: int) -> dict:
    """``saturate`` (Cast-19 on), mostly for float 8 targets, and now and then ``round_mode``
    (Cast-24 on; it only applies to float8e8m0): both must be ignored by other targets."""
    attrs = {}
    if opset >= 19 and (to in FLOAT8 or to == E8M0 or d(st.integers(0, 5)) == 0):
        saturate = d(st.sampled_from([None, 0, 1]))
        if saturate is not None:
            attrs["saturate"] = saturate
    if opset >= 24 and (to == E8M0 or d(st.integers(0, 5)) == 0):
        attrs["round_mode"] = d(st.sampled_from(["up", "down", "nearest"]))
    return attrs


def to_attr(to: str, opset: int):
    code = S.onnx_code(to)
    return onnx.TensorProto.DataType.Name(code) if opset < 6 else code


@op.strategy(1, 6, 9, 13, 19, 21, 23, 24, 25, 28)
def draw(d, dtype, opset):
    to = d(st.sampled_from(drawn_targets(dtype, opset)))
    return Example([draw_source(d, dtype, to)], {"to": to_attr(to, opset), **draw_attrs(d, to, opset)})


# -- edge examples ----------------------------------------------------------------------------
def float_edges(label: str) -> list[float]:
    """NaN, +-inf, +-0, +-1, 0.5, the extremes, the smallest normal and subnormal (float8e8m0:
    its powers of two at both ends and around 1, and NaN)."""
    info = finfo(label)
    if label == E8M0:
        return [1.0, 2.0, 0.5, 2.0 ** 127, 2.0 ** -127, 2.0 ** 100, 2.0 ** -100, 2.0 ** 16, 2.0 ** -24, math.nan]
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, float(info.max), -float(info.max), float(info.smallest_subnormal),
            -float(info.smallest_subnormal), float(info.smallest_normal)]
    if label in S.FLOATS or label == "float8e5m2":
        vals += [math.inf, -math.inf]
    return vals + ([] if label == "float4e2m1" else [math.nan])  # float4e2m1 has no NaN


def rounding_probes(to: str) -> list[Fraction]:
    """Exact values around the rounding decisions of float type ``to``: ties to even at 1, at
    the top of the range (overflow or not) and at the bottom (underflow to 0)."""
    if to == E8M0:  # between powers of two (3 = 1.5 * 2 is a tie), beyond both ends, 0 and inf
        return [Fraction(v) for v in (1, 3, 5, 6, 7)] + [Fraction(3, 4), Fraction(7, 10), Fraction(5, 4), _pow2(127),
                                                         3 * _pow2(126), _pow2(128), _pow2(-127), _pow2(-128),
                                                         3 * _pow2(-129), _pow2(-130), Fraction(0)] + [math.inf]
    info = finfo(to)
    m, fmax = info.nmant, Fraction(float(info.max))
    half = _pow2(-m - 1)  # half an ulp at 1
    top = _pow2(math.floor(math.log2(float(info.max))) - m - 1)  # half an ulp at FLT_MAX
    tiny = Fraction(float(info.smallest_subnormal))
    probes = [1 + half, 1 + 3 * half, 1 + half + half / 8, 1 + half - half / 8,
              fmax, fmax + top / 2, fmax + top, fmax + 3 * top / 2, 2 * fmax,
              tiny / 2, 3 * tiny / 4, 3 * tiny / 2, tiny / 4]
    return probes + [-p for p in probes]


def integer_probes(to: str, src: str) -> list[Fraction]:
    """Fractions, and the ``src`` values nearest the limits, for a float -> integer ``to``."""
    low, high = S.finite_range(to)
    probes = [Fraction(k, 2) for k in (-5, -3, -1, 1, 3, 5, 7, 13)] + [Fraction(27, 10), Fraction(-27, 10)]
    for limit in (Fraction(low), Fraction(high)):
        probes += [limit, limit - Fraction(1, 2), limit + Fraction(1, 2), limit + 1, limit - 1]
        probes += [round_to_format(limit * (1 - _pow2(-k)), src) for k in (3, 8, 11, 24, 53)]  # just inside
    return probes


def _representable(q, label: str) -> bool:
    if isinstance(q, float):
        return True
    return round_to_format(q, label) == q and abs(q) <= Fraction(float(finfo(label).max))


def edge_source(src: str, to: str) -> np.ndarray:
    """Hand-picked source values for casting ``src`` to ``to`` (only those with a defined
    result): a fresh array of the values worked out once per pair (every op-version of Cast and
    CastLike at every opset asks for them)."""
    return _edge_source(src, to).copy()


@functools.lru_cache(maxsize=None)
def _edge_source(src: str, to: str) -> np.ndarray:
    if src == "bool":
        return np.array([False, True])
    if src == "string":
        return np.array([v for v in edge_strings(to) if defined(v if to == "string" else parse(v), src, to)], dtype=object)
    if S.is_int(src):
        low, high = S.finite_range(src)
        vals = {int(v) for v in S.edge_values(src)} | {200, -56, 256, 300, 65535, 65536 + 7, 2**24 + 1, 2**24 + 3,
                                                       2**53 + 1, 2**53 + 3, 2**63 - 512, 1 << 31}
        vals |= {-v for v in vals}
        return np.array(sorted(v for v in vals if low <= v <= high and defined(v, src, to)), dtype=object).astype(S.np_dtype(src))
    probes = float_edges(src) + (integer_probes(to, src) if S.is_int(to) else rounding_probes(to) if S.is_float(to) else [])
    vals = [p for p in probes if _representable(p, src) and defined(p, src, to)]
    with np.errstate(all="ignore"):
        return np.array([float(v) for v in vals], dtype=np.float64).astype(S.np_dtype(src))


def edge_strings(to: str) -> list[str]:
    if to == "string":
        return ["", "a", "3.14", "INF", "Hello World!"]
    if S.is_int(to):
        low, high = S.finite_range(to)
        return [s for s in ["0", "1", "-1", "7", "-7", "100", "-100", str(low), str(high)] if low <= int(s) <= high]
    fmax = float(finfo(to).max)
    numbers = ["3.14", "1000", "1e-5", "1E8", "-2.5", "0", "-0", "0.1", "100.5", "1.5e2", "65504", "448", "6", "0.25"]
    return [s for s in numbers if abs(float(s)) <= fmax] + ["+INF", "INF", "inf", "-INF", "NaN", "nan"]


def edge_cases(src: str, opset: int, op_name: str = "Cast") -> list[tuple[str, np.ndarray, str, dict]]:
    """(name, source values, target, attrs) for every target, both saturate modes for float 8
    targets, an empty tensor and a rank-0 one."""
    out = []
    for to in targets(src, opset, op_name):
        x = edge_source(src, to)
        if to == E8M0:  # both columns of the table, each rounding mode
            for mode in ("up", "down", "nearest"):
                out.append((f"to_{to}_saturate_{mode}", x, to, {"round_mode": mode} if mode != "up" else {}))
                out.append((f"to_{to}_nosaturate_{mode}", x, to, {"saturate": 0, **({"round_mode": mode} if mode != "up" else {})}))
        elif to in FLOAT8 and opset >= 19:
            out.append((f"to_{to}_saturate", x, to, {}))
            out.append((f"to_{to}_nosaturate", x, to, {"saturate": 0}))
        else:
            out.append((f"to_{to}", x, to, {}))
    if op_name == "Cast" and S.is_float(src):  # the spec-silent point: NaN, +-inf and finite values beyond the target
        for to in [t for t in targets(src, opset, op_name) if t in ("int8", "uint8", "int32")]:
            with np.errstate(all="ignore"):
                x = np.array([math.nan, math.inf, -math.inf, 3e9, -3e9, 1e20, -1e20, 300.0, -300.0, 2.5, -7.0]).astype(S.np_dtype(src))
            out.append((f"to_{to}_out_of_range", x, to, {}))
    if opset >= 24:  # round_mode only applies to float8e8m0 (no dtype label here): every other target ignores it
        to = next((t for t in targets(src, opset, op_name) if S.is_float(t) and t != src), targets(src, opset, op_name)[0])
        for mode in ("down", "nearest"):
            out.append((f"to_{to}_round_mode_{mode}", edge_source(src, to), to, {"round_mode": mode}))
    to = targets(src, opset, op_name)[0]
    out.append(("empty", edge_source(src, to)[:0].reshape(0, 2, 0), to, {}))
    out.append(("rank0", edge_source(src, to)[-1:].reshape(()), to, {}))
    return out


@op.edges(1, 6, 9, 13, 19, 21, 23, 24, 25, 28)
def edges(dtype, opset):
    return [Example([x], {"to": to_attr(to, opset), **attrs}, name=name) for name, x, to, attrs in edge_cases(dtype, opset)]


# -- how it enters a generated graph -------------------------------------------------------
def cast_stable(ins: list[Value], attrs: dict, u: float) -> bool:
    """Cast to bool is x != 0: a jump at a single point, which no perturbation lands on; the
    value must be exactly 0 (and exact) or clearly away from it."""
    x = ins[0]
    if attrs.get("to") != onnx.TensorProto.BOOL or x.kind != "float":
        return True
    mag = np.abs(x.wide)
    return bool(np.all(((mag == 0) & (x.err == 0)) | (mag > margin(x, u)) | np.isnan(mag)))


@op.fuzz(nan=NAN_IEEE, jumps=True, ulps=0.0, type_param="T2", stable=cast_stable)
def fuzz(c: Ctx) -> Plan | None:
    source = c.choice(["int", "bool", "float", "float"])
    if source != "float":
        x = c.take(source, 0)
        return Plan([x], {"to": S.onnx_code(c.dtype)}) if x is not None else None
    x = c.take("float", 0, lambda v: bool(np.all(np.abs(finite(v.wide)) < 1e6)))
    if x is None:
        return None
    to = c.choice([c.dtype, "int64", "bool"])
    if to != c.dtype and x.has_nan:
        return None  # NaN to an integer or bool: the spec does not say
    return Plan([x], {"to": S.onnx_code(to)})


# Cast-23 adds tensor(float4e2m1) to T1 and T2 (a type with no NaN); the text gives conversion tables for the
# float 8 types ('| NaN | NaN | NaN | NaN | NaN |') and FLOAT8E8M0, and none for FLOAT4E2M1
FLOAT4_WORDS = ("Conversion from a numerical type to any numerical type is always allowed. User must be aware of precision "
                "loss and value change caused by range difference between two types.[...]| NaN | NaN | NaN | NaN | NaN |[...]"
                "It only applies for float 8 conversion (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz")
op.spec_silent("nan_to_float4e2m1", (23, 24, 25, 28), spec=FLOAT4_WORDS, **NAN_TO_FLOAT4)
op.spec_silent("nan_to_float6", (28,), spec=FLOAT4_WORDS, **NAN_TO_FLOAT6)


def _target(inputs, attrs) -> str:
    return target_label(attrs["to"]) if "to" in attrs else S.label_of(np.asarray(inputs[1]).dtype)


def _source_values(x: np.ndarray) -> list:
    return [parse(v) for v in exact(x)] if S.label_of(x.dtype) == "string" else exact(x)


def _fraction_to_2bit(inputs, attrs, expected, since):
    """Open: non-integral float (or numeric string) elements cast to int2/uint2."""
    x = np.asarray(inputs[0])
    if _target(inputs, attrs) not in ("int2", "uint2") or x.size == 0 or not (S.is_float(S.label_of(x.dtype)) or x.dtype == object):
        return [None]
    return [np.array([isinstance(v, (float, Fraction)) and math.isfinite(v) and v != math.trunc(v) for v in _source_values(x)],
                     dtype=bool).reshape(x.shape)]


def _rounded(how):
    def reading(c) -> list:
        x, e = np.asarray(c.inputs[0]), np.asarray(c.expected[0])
        low, high = S.finite_range(S.label_of(e.dtype))
        span = high - low + 1  # the integer's low bits, as ONNX Runtime keeps them (-0.5 rounds to -1: uint2 3)
        out = [(how(Fraction(v)) - low) % span + low if isinstance(v, (float, Fraction)) and math.isfinite(v) else 0
               for v in _source_values(x)]
        return [np.array(out, dtype=np.int64).astype(e.dtype).reshape(e.shape)]
    return reading


def _half_away(q: Fraction) -> int:
    n = math.floor(abs(q) + Fraction(1, 2))
    return n if q >= 0 else -n


def _next_integer(c) -> bool:
    """Invariant: an open element is one of the two integers around the source value (modulo
    the type's span: its low bits)."""
    x, mask = np.asarray(c.inputs[0]), np.asarray(c.masks[0], dtype=bool)
    got = np.asarray(c.actual[0]).astype(np.int64)[mask]
    span = 2 ** int(ml_dtypes.iinfo(np.asarray(c.actual[0]).dtype).bits)
    vals = [v for v, m in zip(_source_values(x), mask.reshape(-1)) if m]
    return all(int(g) % span in (math.floor(v) % span, math.ceil(v) % span) for g, v in zip(got.reshape(-1), vals))


TWO_BIT = dict(
    expected="round half to even, as into int4/uint4 (onnx's int4 note); the Cast text names no rule for 2-bit targets",
    where=_fraction_to_2bit,
    invariants={"a fractional value becomes one of the two integers around it (its low bits)": _next_integer},
    readings={"truncation toward zero (C's conversion, the rule this reference applies to the wider integer types; onnx.reference)":
              _rounded(math.trunc),
              "round half away from zero (C's round()), then the low bits (ONNX Runtime)": _rounded(_half_away)})
CAST_25_WORDS = ("Casting from floating point to:[...]fixed point: undefined if OOR.[...]Conversion from a numerical type to any "
                 "numerical type is always allowed. User must be aware of precision loss and value change caused by range "
                 "difference between two types.")
op.spec_silent("float_to_2bit", (25, 28), spec=CAST_25_WORDS, **TWO_BIT)

TABULATED = {(1, "up"), (0, "nearest")}


def _untabulated(inputs, attrs, expected, since):
    """Open: float8e8m0 targets under a (saturate, round_mode) pair the table leaves out, at the
    elements whose result the table's rows decide (0, +inf, beyond either end after rounding)."""
    x = np.asarray(inputs[0])
    if _target(inputs, attrs) != E8M0 or x.size == 0 or (int(attrs.get("saturate", 1)), attrs.get("round_mode", "up")) in TABULATED:
        return [None]
    mode = attrs.get("round_mode", "up")
    sat, unsat = (np.array([to_e8m0(v, s, mode) for v in _source_values(x)]) for s in (True, False))
    return [(np.isnan(unsat) & ~np.isnan(sat)).reshape(x.shape)]


def _other_column(c) -> list:
    x, e = np.asarray(c.inputs[0]), np.asarray(c.expected[0])
    flip = not bool(int(c.attrs.get("saturate", 1)))
    out = [to_e8m0(v, flip, c.attrs.get("round_mode", "up")) for v in _source_values(x)]
    return [np.array(out, dtype=np.float64).astype(e.dtype).reshape(e.shape)]


def _an_end_or_nan(c) -> bool:
    got = np.asarray(c.actual[0]).astype(np.float64)[np.asarray(c.masks[0], dtype=bool)]
    return bool(np.all(np.isnan(got) | np.isin(got, [2.0 ** -127, 2.0 ** 127])))


E8M0_WORDS = ("When casting to FLOAT8E8M0, the rounding behavior can be specified using the `round_mode` and `saturate` "
              "attributes. The current CUDA behavior is to round up and saturate.[...]The following table describes the casting "
              "behavior of special values to FLOAT8E8M0 in the two most common cases.")
UNTABULATED = dict(
    expected="the table's column for the node's saturate, whatever round_mode: saturate gives E8M0_MIN (0 and values below) or "
             "E8M0_MAX (+inf and values above), non-saturate NaN",
    where=_untabulated,
    invariants={"the result is E8M0_MIN, E8M0_MAX or NaN": _an_end_or_nan},
    readings={"the table's other column (E8M0_MIN / E8M0_MAX against NaN)": _other_column})
op.spec_silent("float8e8m0_untabulated", (24, 25, 28), spec=E8M0_WORDS, **UNTABULATED)
