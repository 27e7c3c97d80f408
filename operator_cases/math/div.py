"""Div: C = A / B, elementwise (ONNX spec: Div-1, 6, 7, 13, 14).

Div-1/6 broadcast only with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Div-7 on broadcast multidirectionally. Div-6 adds int32/int64/uint32/uint64, Div-13 bfloat16,
Div-14 the 8- and 16-bit integers.

Floats are divided in float64 and rounded to the input type, with IEEE 754 results for x/0
(+-inf, NaN for 0/0). Integers: Div-7 on say "For integer inputs, the result is computed using
truncating division (rounding toward zero)"; Div-1/6 do not say, and truncation is applied
there too. Integer division by zero is undefined (no text), so divisors are never 0; the
quotient INT_MIN / -1 overflows and the spec does not say what happens, so that pair is never
drawn either.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._binary_util import (
    arith,
    binary_template,
    divisor_ok,
    legacy_rhs,
    pair_edges,
    pair_example,
)

op = Operator("Div")


def _trunc_div(a: int, b: int) -> int:
    """The exact integer quotient, rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def div(a, b):
    if S.is_int(S.label_of(a.dtype)):
        return arith(np.vectorize(_trunc_div, otypes=[object]), a, b)
    return arith(np.divide, a, b)


@op.reference(1, 6)
def div_1(a, b, *, broadcast=0, axis=None, consumed_inputs=None):
    return div(a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7, 13, 14)
def div_7(a, b):
    return div(a, b)


NONZERO = {"nonzero": True}  # drawn divisors; float x/0 is in the edge examples


def _keep(dtype):
    """Integer edge pairs whose quotient is defined: no division by 0, no INT_MIN / -1."""
    if not S.is_int(dtype):
        return None
    low = S.finite_range(dtype)[0]
    return lambda x, y: int(y) != 0 and not (int(x) == low and int(y) == -1 and low < 0)


@op.strategy(1, 6)
def draw_1(d, dtype, opset):
    return _no_overflow(pair_example(d, dtype, legacy=True, rhs=NONZERO), dtype)


@op.strategy(7, 13, 14)
def draw_7(d, dtype, opset):
    return _no_overflow(pair_example(d, dtype, rhs=NONZERO), dtype)


def _no_overflow(example, dtype):
    """Replace INT_MIN in the dividend by INT_MIN + 1 where the divisor is -1 somewhere."""
    a, b = example.inputs
    if S.is_int(dtype) and S.finite_range(dtype)[0] < 0 and (np.asarray(b) == -1).any():
        low = S.finite_range(dtype)[0]
        example.inputs[0] = np.where(a == low, np.array(low + 1, dtype=a.dtype), a).astype(a.dtype)
    return example


@op.edges(1, 6)
def edges_1(dtype, opset):
    return pair_edges(dtype, legacy=True, keep=_keep(dtype))


@op.edges(7, 13, 14)
def edges_7(dtype, opset):
    return pair_edges(dtype, legacy=False, keep=_keep(dtype))


# how it enters a generated graph: divisors away from 0
binary_template(op, nan=NAN_IEEE, ulps=1.0, guard=divisor_ok)
