"""Mod: C = A mod B, elementwise with multidirectional broadcasting (ONNX spec: Mod-10, 13, 28).

``fmod=0`` (default) floors the quotient, so the result has the sign of the divisor (Python's
``%``); ``fmod=1`` truncates it, so the result has the sign of the dividend (C ``fmod``).
Which types each mode may take changed between versions:

* Mod-10: "If the input type is floating point, then fmod attribute must be set to 1"; integers
  take either mode.
* Mod-13: "If the fmod attribute is set to 0, T is constrained to integer data types ... If fmod
  is set to 1 ... T is constrained to floating point data types."
* Mod-28: both modes for every type, with IEEE special cases spelled out for floats (fmod=0:
  x = +-inf or y = +-0 gives NaN; y = +-inf with a finite nonzero x gives x when the signs agree,
  else y; fmod=1: the C fmod cases).

Integer division by zero is undefined ("the results will be platform dependent", Mod-10), so
integer divisors are nonzero; a float divisor of zero is only tested from Mod-13, which says NaN
"should be returned". INT_MIN mod -1 is 0 in both modes (exact integer math); it has its own edge
example because a C ``%`` traps on it. Remainders are exact; the float fmod=0 adjustment
``r + y`` is rounded once from float64.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from .._binary_util import arith, divisor_ok, outer_pairs, pair_example, shape_edges

op = Operator("Mod")
st = S.st


def _int_mod(a, b, fmod):
    r = abs(a) % abs(b)
    r = r if a >= 0 else -r  # truncated remainder: sign of the dividend
    if not fmod and r and (r < 0) != (b < 0):
        r += b  # floored remainder: sign of the divisor
    return r


def _float_mod(x, y, fmod):
    with np.errstate(all="ignore"):
        r = np.fmod(x, y)  # C fmod: exact, NaN for x = +-inf or y = 0, x for y = +-inf
        if fmod:
            return r
        adjust = (r != 0) & ((r < 0) != (y < 0))
        r = np.where(adjust, r + y, r)
        return np.where(r == 0, np.copysign(0.0, y), r)  # "+-0 with the sign of y"


def modulo(a, b, fmod):
    if S.is_int(S.label_of(a.dtype)):
        return arith(np.vectorize(lambda x, y: _int_mod(x, y, fmod), otypes=[object]), a, b)
    return arith(lambda x, y: _float_mod(x, y, fmod), a, b)


@op.reference(10, 13, 28)
def mod(a, b, *, fmod=0):
    return modulo(a, b, fmod)


def fmod_modes(dtype, opset):
    if opset >= 28:
        return [0, 1]
    if S.is_float(dtype):
        return [1]
    return [0, 1] if opset < 13 else [0]


@op.strategy(10, 13, 28)
def draw(d, dtype, opset):
    fmod = d(st.sampled_from(fmod_modes(dtype, opset)))
    attrs = {"fmod": fmod} if fmod or d(st.booleans()) else {}
    if S.is_int(dtype):  # the full range, nonzero divisors
        return pair_example(d, dtype, rhs={"nonzero": True}, attrs=attrs)
    return pair_example(d, dtype, lhs={"lo": -100, "hi": 100}, rhs={"nonzero": True, "lo": -20, "hi": 20}, attrs=attrs)


@op.edges(10, 13, 28)
def edges(dtype, opset):
    values = S.edge_values(dtype)
    low = S.finite_range(dtype)[0]
    if S.is_int(dtype):  # INT_MIN mod -1 has an example of its own (below)
        keep = lambda x, y: int(y) != 0 and not (low < 0 and int(x) == low and int(y) == -1)  # noqa: E731
    elif opset < 13:
        keep = lambda x, y: float(y) != 0  # noqa: E731  (platform dependent in Mod-10)
    else:
        keep = None
    a, b = outer_pairs(values, keep)
    signed = dtype not in S.UNSIGNED
    signs_x = np.array([7, -7, 7, -7, 6, -6] if signed else [7, 7, 6, 5, 0, 1]).astype(a.dtype)
    signs_y = np.array([3, 3, -3, -3, 3, -3] if signed else [3, 2, 3, 7, 3, 1]).astype(a.dtype)
    out = []
    for fmod in fmod_modes(dtype, opset):
        out.append(Example([a, b], {"fmod": fmod}, name=f"edge_values_fmod{fmod}"))
        out.append(Example([signs_x, signs_y], {"fmod": fmod}, name=f"signs_fmod{fmod}"))
        out += [Example(e.inputs, {"fmod": fmod}, name=f"{e.name}_fmod{fmod}") for e in shape_edges(dtype, legacy=False)]
        if S.is_int(dtype) and low < 0:
            out.append(Example([np.array([low], dtype=a.dtype), np.array([-1], dtype=a.dtype)], {"fmod": fmod},
                               name=f"int_min_by_minus_one_fmod{fmod}"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(jumps=True, ulps=1.0, guard=divisor_ok)
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0)
    if a is None:
        return None
    b = c.operand(a, 1)
    if a.const and b.const:
        return None
    if c.exact:  # integers take both modes: fmod=0 (the default: the divisor's sign) and fmod=1
        return Plan([a, b], c.choice([{}, {"fmod": 1}, {"fmod": 0}]))
    # Mod-10: "If the input type is floating point, then fmod attribute must be set to 1"
    return Plan([a, b], {"fmod": 1})
