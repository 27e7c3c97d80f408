"""Pow: Z = X ** Y, elementwise (ONNX spec: Pow-1, 7, 12, 13, 15).

Pow-1 broadcasts Y with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Pow-7 on broadcast multidirectionally. Up to Pow-7 base and exponent share the float type T;
Pow-12 splits them: the base type T (int32, int64, floats; bfloat16 from Pow-13) is swept and the
exponent type T1 is drawn from the schema's T1 list (bfloat16 joins T1 in Pow-15).

Float results are computed in float64 (C pow semantics, IEEE 754 specials) and rounded to T.
Integer bases get integral exponents (also when T1 is a float type), computed exactly on Python
integers. The spec does not say how an integer base with a negative exponent gives an integer,
nor what happens on integer overflow; both are drawn as spec-silent points (below):

* a negative exponent, base not 0: the real result truncated toward zero (0 for |base| >= 2,
  1 for base 1, +-1 by parity for base -1), what C gives converting pow's double; the reading
  "rounded toward -inf" is also accepted;
* 0 to a negative exponent: pow's +inf converted to T as x86 does (cvttsd2si: the type's
  minimum, the "integer indefinite" value), what ONNX Runtime and onnx.reference give; the
  saturating conversion (ARM, the type's maximum) is also accepted;
* a result outside T: the exact power wrapped modulo 2**bits (two's complement); saturation and
  the double result converted as x86 does (the type's minimum) are also accepted.

A fractional exponent of an integer base is not drawn (the text does not say whether the base
is raised to it and the result converted, or the exponent converted first).
A negative float base is only raised to integral exponents (a fractional power of a negative
number is NaN in C and in numpy, but the ONNX text never says so).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, finite
from harness.registry import Example, Operator, SilentCheck

from .._binary_util import (
    broadcast_shapes,
    ints,
    legacy_rhs,
    legacy_shapes,
    shape_edges,
    wrap,
)
from .._common import back

op = Operator("Pow")
st = S.st


def _int_power(b: int, e: int, label: str) -> int:
    """b ** e as an integer of type ``label`` (our choices, see the module's text)."""
    if e >= 0:
        return b ** e  # wrapped by the caller
    if b == 0:
        return S.finite_range(label)[0]
    return b ** e if abs(b) == 1 else 0  # truncated toward zero


def _elementwise(fn, x, y, label: str) -> np.ndarray:
    x, y = np.broadcast_arrays(ints(x), np.asarray(y))
    out = np.frompyfunc(lambda b, e: int(fn(int(b), int(e), label)), 2, 1)(x, y) if x.size else x
    return wrap(np.asarray(out, dtype=object), label)


def power(x, y):
    label = S.label_of(x.dtype)
    if S.is_int(label):
        return _elementwise(_int_power, x, y, label)
    with np.errstate(all="ignore"):
        return back(np.power(x.astype(np.float64), y.astype(np.float64)), x)


# -- spec-silent points: integer bases (Pow-12 on) ---------------------------------------------
def _int_where(test):
    """Open: the output elements of an integer base where ``test(base, exponent, label)`` holds."""

    def where(inputs, attrs, expected, since):
        x, y = (np.asarray(v) for v in inputs[:2])
        label = S.label_of(x.dtype)
        if not S.is_int(label) or x.size == 0 or y.size == 0:
            return [None]
        x, y = np.broadcast_arrays(ints(x), y)
        return [np.asarray(np.frompyfunc(lambda b, e: bool(test(int(b), int(e), label)), 2, 1)(x, y), dtype=bool)]

    return where


def _through_double(b: int, e: int, label: str, saturate: bool = False) -> int:
    """pow in double converted to ``label``: truncated toward zero when in range, else the type's
    minimum as x86's cvttsd2si gives it ("integer indefinite"), or saturated (ARM)."""
    lo, hi = S.finite_range(label)
    with np.errstate(all="ignore"):
        r = float(np.power(np.float64(b), np.float64(e)))
    if lo <= r < hi + 1:
        return int(r)
    return (hi if r > 0 else lo) if saturate else lo


def _reading(fn):
    def compute(c: SilentCheck) -> list:
        x, y = (np.asarray(v) for v in c.inputs[:2])
        return [_elementwise(fn, x, y, S.label_of(x.dtype)).reshape(np.shape(c.expected[0]))]

    return compute


def _floor_power(b, e, label):
    return _int_power(b, e, label) if e >= 0 or b == 0 else (b ** e if abs(b) == 1 else -1 if b < 0 and e % 2 else 0)


def _saturated(b, e, label):
    lo, hi = S.finite_range(label)
    return min(max(b ** e, lo), hi)


def _sign_kept(c: SilentCheck) -> bool:
    """Invariant of a negative exponent: 1 for base 1, +-1 by parity for base -1, and 0 or -1
    (the real result, in (-1, 1), rounded either way) for |base| >= 2."""
    x, y = np.broadcast_arrays(ints(np.asarray(c.inputs[0])), np.asarray(c.inputs[1]))
    got = np.asarray(c.actual[0])
    for b, e, g in zip(x[c.masks[0]], y[c.masks[0]], got[c.masks[0]]):
        b, e, g = int(b), int(e), int(g)
        if g not in ((b ** e,) if abs(b) == 1 else (0, -1) if b < 0 and e % 2 else (0,)):
            return False
    return True


def _one_of(*fns):
    """Invariant: every open element is one of these functions' values (base, exponent, label)."""

    def holds(c: SilentCheck) -> bool:
        x, y = np.broadcast_arrays(ints(np.asarray(c.inputs[0])), np.asarray(c.inputs[1]))
        label = S.label_of(np.asarray(c.inputs[0]).dtype)
        wrapped = lambda v: int(wrap([v], label)[0])  # noqa: E731
        got = np.asarray(c.actual[0])[c.masks[0]]
        return all(int(g) in {wrapped(f(int(b), int(e), label)) for f in fns}
                   for b, e, g in zip(x[c.masks[0]], y[c.masks[0]], got))

    return holds


_SPEC = " ".join(schema.schema_at("Pow", 15).doc.split())
op.spec_silent(
    "int_negative_exponent", (12, 13, 15), spec=_SPEC,
    expected="the real result truncated toward zero (C's conversion of pow's double): 0 for |base| >= 2, 1 for base 1, "
             "+-1 by parity for base -1",
    where=_int_where(lambda b, e, label: e < 0 and b != 0),
    invariants={"1 for base 1, +-1 by parity for base -1, 0 (or -1 rounding toward -inf) for |base| >= 2": _sign_kept},
    readings={"the real result rounded toward -inf ((-2)^-1 = -1)": _reading(_floor_power)})
op.spec_silent(
    "int_zero_negative_exponent", (12, 13, 15), spec=_SPEC,
    expected="pow(0, -n) = +inf in double converted to T as x86's cvttsd2si does: the type's minimum (ONNX Runtime, "
             "onnx.reference with a float exponent)",
    where=_int_where(lambda b, e, label: e < 0 and b == 0),
    invariants={"0^-n is an end of the type's range (+inf converted)": _one_of(lambda b, e, label: S.finite_range(label)[0],
                                                                                lambda b, e, label: S.finite_range(label)[1])},
    readings={"+inf converted saturating (ARM, Rust's as): the type's maximum":
              _reading(lambda b, e, label: _through_double(b, e, label, saturate=True))})
op.spec_silent(
    "int_overflow", (12, 13, 15), spec=_SPEC,
    expected="the exact power wrapped modulo 2**bits (two's complement), as integer multiplication and numpy give it",
    where=_int_where(lambda b, e, label: e >= 0 and not S.finite_range(label)[0] <= b ** e <= S.finite_range(label)[1]),
    invariants={"an overflowing power is the exact power wrapped or saturated, or the type's minimum":
                _one_of(_int_power, _saturated, _through_double)},
    readings={"saturates to the type's range": _reading(_saturated),
              "pow in double converted to T as x86 does (out of range: the type's minimum)": _reading(_through_double)})


@op.reference(1)
def pow_1(x, y, *, broadcast=0, axis=None):
    return power(x, legacy_rhs(x, y, broadcast, axis))


@op.reference(7, 12, 13, 15)
def pow_7(x, y):
    return power(x, y)


def exponent_types(dtype, opset):
    """The exponent types: the schema's T1 from Pow-12, the base type before."""
    allowed = schema.allowed_types(schema.schema_at("Pow", opset))
    if "T1" not in allowed:
        return [dtype]
    return [S.label_from_type_str(t) for t in allowed["T1"]]


def _draw(d, dtype, t1, shapes):
    sa, sb = shapes
    if S.is_int(dtype):
        base = S.arrays(d, dtype, shape=sa, lo=-6, hi=6)
        exp = _integral(S.arrays(d, t1, shape=sb, lo=0, hi=7))  # 6**7 fits in int32
        # drawn last, so that the draws above keep their values: exponents 40 higher (|base| >= 3
        # overflows int64, 2**40..2**62 are exact in double) and negated ones (spec-silent points)
        if d(st.booleans()):
            exp = np.where(S.arrays(d, "bool", shape=sb), exp + 40, exp).astype(exp.dtype)
        if (S.is_float(t1) or t1.startswith("int")) and d(st.booleans()):
            exp = np.where(S.arrays(d, "bool", shape=sb), -exp, exp).astype(exp.dtype)
        return base, exp
    base = S.arrays(d, dtype, shape=sa, lo=-4, hi=4)
    if S.is_int(t1):
        return base, S.arrays(d, t1, shape=sb, lo=-3, hi=5)
    exp = S.arrays(d, t1, shape=sb, lo=-3, hi=3)
    if d(st.booleans()):
        return base, _integral(exp)
    return np.asarray(np.abs(base)), exp


def _integral(a):
    return np.asarray(np.trunc(a.astype(np.float64))).astype(a.dtype) if S.is_float(S.label_of(a.dtype)) else a


@op.strategy(1)
def draw_1(d, dtype, opset):
    sa, sb, attrs = legacy_shapes(d)
    return Example(list(_draw(d, dtype, dtype, (sa, sb))), attrs)


@op.strategy(7, 12, 13, 15)
def draw_7(d, dtype, opset):
    t1 = d(st.sampled_from(exponent_types(dtype, opset)))
    return Example(list(_draw(d, dtype, t1, broadcast_shapes(d, 2))))


def _edges(dtype, opset, legacy):
    """Edge bases raised to scalar exponents (broadcast=1 in the legacy version), edge
    exponents of base 2, and the broadcasting/empty/rank-0 shapes."""
    t1s = exponent_types(dtype, opset)
    t1 = dtype if dtype in t1s else "float32"
    scalar = lambda v: np.array(v, dtype=S.np_dtype(t1))  # noqa: E731
    x = S.edge_values(dtype)
    if S.is_int(dtype):
        bits = np.iinfo(x.dtype).bits
        out = [Example([x, scalar(0)], name="pow0"), Example([x, scalar(1)], name="pow1"),
               Example([np.arange(-6, 7).astype(x.dtype), scalar(3)], name="cube")]
        if not legacy:  # integer bases from Pow-12: the spec-silent points
            out += [Example([np.arange(-6, 7).astype(x.dtype), np.array([[-1], [-2], [-3]], dtype=S.np_dtype(t1))],
                            name="negative_exponents"),
                    Example([np.array([2, -2, 3, -3, 7, 10, 2], dtype=x.dtype),
                             np.array([bits - 1, bits - 1, bits - 1, bits, bits // 2 + 7, bits // 3 + 9, bits], dtype=S.np_dtype(t1))],
                            name="overflow")]
    else:
        no_neg_inf = x[~np.isneginf(x.astype(np.float64))]  # C gives pow(-inf, 0.5) = +inf; ONNX says nothing
        exps = S.edge_values(t1)
        out = [
            Example([x, scalar(2)], name="square"),
            Example([x, scalar(3)], name="cube"),
            Example([no_neg_inf, scalar(0.5)], name="sqrt"),
            Example([np.full(exps.shape, 2, dtype=x.dtype), exps], name="edge_exponents"),
        ]
    if legacy:
        out = [Example(e.inputs, {"broadcast": 1} if e.inputs[1].ndim == 0 else {}, name=e.name) for e in out]
    for e in shape_edges(dtype, legacy):
        out.append(Example([e.inputs[0], e.inputs[1].astype(S.np_dtype(t1))], e.attrs, name=e.name))
    return out


@op.edges(1)
def edges_1(dtype, opset):
    return _edges(dtype, opset, legacy=True)


@op.edges(7, 12, 13, 15)
def edges_7(dtype, opset):
    return _edges(dtype, opset, legacy=False)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=8.0, type_param="T",
          # a negative base only with the constant exponent 2 (the LayerNorm pattern's square)
          guard=lambda ins: bool(np.all(finite(ins[0]) > 0) or (np.size(ins[1]) == 1 and float(np.ravel(ins[1])[0]) == 2.0)))
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: not v.has_nan and v.size and bool(np.all(v.wide > 0)))
    if a is None:
        return None
    if c.pick(2):
        b = c.const(np.array(c.choice([2.0, 0.5, 3.0, -1.0, 1.5, -0.5])))
    else:
        b = c.operand(a, 1, lo=-2.0, hi=2.0)
    return Plan([a, b])
