"""Hardmax: 1 at the first maximum, 0 elsewhere (ONNX spec: Hardmax-1, 11, 13).

Hardmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1): the maximum is taken over
each row of that view, i.e. over all the dimensions from ``axis`` on together, so one element
per row is 1. Hardmax-13 takes it along the single dimension ``axis`` (default -1) and adds
bfloat16. Ties pick the first maximum in row-major order; -0.0 and 0.0 tie. No case has a NaN
(the spec does not say how it compares).
"""

from harness.registry import Operator

from ._reduce_util import gaps_ok, hardmax_rows, register_softmax_like, softmax_template

op = Operator("Hardmax")
register_softmax_like(op, hardmax_rows, nan_defined=False)


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, jumps=True, ulps=0.0, stable=lambda ins, attrs, u: gaps_ok(ins[0], attrs.get("axis", -1), u))
