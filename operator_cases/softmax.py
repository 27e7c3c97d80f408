"""Softmax: exp(x) / sum(exp(x)) (ONNX spec: Softmax-1, 11, 13).

Softmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1) and normalise each row of
that view, i.e. over all of the dimensions from ``axis`` on; Softmax-13 normalises along the
single dimension ``axis`` (default -1) and adds bfloat16. Evaluated in float64 after subtracting
the maximum (the mathematical value; Softmax-13's function body does the same subtraction, so a
row holding +inf, or only -inf, is NaN throughout), then rounded once. NaN propagates to its
whole row.
"""

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from ._reduce_util import register_softmax_like, softmax_rows, softmax_template

op = Operator("Softmax")
register_softmax_like(op, softmax_rows, nan_defined=True)


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0)
