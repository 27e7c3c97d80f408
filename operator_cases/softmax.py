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

from ._silent_util import softmax_limit
from ._reduce_util import register_softmax_like, row_mask, rows_hold, softmax_rows, softmax_template

op = Operator("Softmax")
register_softmax_like(op, softmax_rows)


def open_rows(rows):
    return np.isnan(rows).any(-1) | np.isposinf(rows).any(-1) | (rows.shape[-1] > 0) & np.isneginf(rows).all(-1)


op.spec_silent(
    "nan_inf_row", (1, 11, 13),
    spec={1: "The operator computes the softmax (normalized exponential) values for each layer in the batch",
          13: "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis=axis, keepdims=1)"},
    expected="NaN throughout a row holding NaN, +inf or only -inf: the formula in IEEE 754 arithmetic "
             "(NaN propagates, inf/inf and 0/0 are NaN), as Softmax-13's function body computes it",
    where=lambda inputs, attrs, expected, since: [row_mask(inputs[0], attrs, since, open_rows)],
    invariants={
        "every value is NaN or in [0, 1]": lambda c: bool(np.all(
            np.isnan(c.actual[0][c.masks[0]].astype(np.float64)) | ((c.actual[0][c.masks[0]] >= 0) & (c.actual[0][c.masks[0]] <= 1)))),
        "a row without NaN sums to 1": lambda c: rows_hold(c, lambda x, y: np.isnan(y).any(-1) | (np.abs(y.sum(-1) - 1) <= 1e-2)),
    },
    readings={"the mathematical limit (+inf entries share the mass, a row of -inf is uniform)": softmax_limit})


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0)
