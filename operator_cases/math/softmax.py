"""Softmax: exp(x) / sum(exp(x)) (ONNX spec: Softmax-1, 11, 13).

Softmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1) and normalise each row of
that view, i.e. over all of the dimensions from ``axis`` on; Softmax-13 normalises along the
single dimension ``axis`` (default -1) and adds bfloat16. Evaluated in float64 after subtracting
the maximum (the mathematical value; Softmax-13's function body does the same subtraction, so a
row holding +inf, or only -inf, is NaN throughout), then rounded once. NaN propagates to its
whole row.

Spec-silent: a row holding NaN, +inf or only -inf. The formula read in IEEE arithmetic gives NaN
(NaN propagates; inf/inf and 0/0 are NaN), which we expect; its limit (1 at the +inf, shared
between several) is what a backend that special-cases infinities gives. Either way every value
is NaN or in [0, 1], and a row without NaN sums to 1.
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from .._families import nan_inf_row
from .._reduce_util import register_softmax_like, softmax_rows, softmax_template

op = Operator("Softmax")
register_softmax_like(op, softmax_rows)


nan_inf_row(op, {1: "The operator computes the softmax (normalized exponential) values for each layer in the batch",
                 13: "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis=axis, keepdims=1)"},
            ("every value is NaN or in [0, 1]", lambda v: (v >= 0) & (v <= 1)),
            ("a row without NaN sums to 1", lambda x, y: np.isnan(y).any(-1) | (np.abs(y.sum(-1) - 1) <= 1e-2)))


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0)
