"""Add: C = A + B, elementwise (ONNX spec: Add-1, 6, 7, 13, 14).

Add-1/6 broadcast only with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Add-7 on broadcast multidirectionally. Add-6 adds int32/int64/uint32/uint64, Add-13 bfloat16,
Add-14 the 8- and 16-bit integers. Floats are added in float64 and rounded to the input type.
The spec says nothing about integer overflow: the sum is computed exactly and wrapped around
(two's complement), the behaviour of every integer ALU. Float overflow gives +-inf and
inf + -inf gives NaN (IEEE 754).
"""

import operator

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from ._binary_util import arith, binary_template, legacy_rhs, pair_edges, pair_example
from ._silent_util import overflow_where, wrapped_and_saturated, wrapped_or_saturated

op = Operator("Add")
op.spec_silent(
    "int_overflow", (6, 7, 13, 14),
    spec={6: "Performs element-wise binary addition (with limited broadcast support).",
          7: "Performs element-wise binary addition (with Numpy-style broadcasting support)."},
    expected="the exact sum wrapped modulo 2**bits (two's complement), as every integer ALU and numpy compute it",
    where=overflow_where(operator.add),
    invariants={"an overflowing sum is the exact sum wrapped or saturated, nothing else": wrapped_or_saturated(operator.add)},
    readings=wrapped_and_saturated(operator.add))


@op.reference(1, 6)
def add_1(a, b, *, broadcast=0, axis=None, consumed_inputs=None):
    return arith(np.add, a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7, 13, 14)
def add_7(a, b):
    return arith(np.add, a, b)


@op.strategy(1, 6)
def draw_1(d, dtype, opset):
    return pair_example(d, dtype, legacy=True)


@op.strategy(7, 13, 14)
def draw_7(d, dtype, opset):
    return pair_example(d, dtype)


@op.edges(1, 6)
def edges_1(dtype, opset):
    return pair_edges(dtype, legacy=True)


@op.edges(7, 13, 14)
def edges_7(dtype, opset):
    return pair_edges(dtype, legacy=False)


# how it enters a generated graph (harness.suites.generated)
binary_template(op, nan=NAN_IEEE, ulps=1.0)
