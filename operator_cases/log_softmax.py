"""LogSoftmax: log(softmax(x)) (ONNX spec: LogSoftmax-1, 11, 13).

LogSoftmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1) and work on each row of that
view (all the dimensions from ``axis`` on); LogSoftmax-13 works along the single dimension
``axis`` (default -1) and adds bfloat16. Evaluated in float64 as (x - m) - log(sum(exp(x - m)))
with m the row's maximum (as LogSoftmax-13's function body does; a row holding +inf, or only
-inf, is NaN throughout), then rounded once; -inf entries stay -inf, NaN fills its row.

Spec-silent: a row holding NaN, +inf or only -inf (as for Softmax): we expect NaN throughout;
whatever a backend gives, every value is NaN or <= 0, and a row without NaN has logsumexp 0.
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from ._silent_util import softmax_limit
from ._reduce_util import (
    grows,
    log_softmax_rows,
    register_softmax_like,
    row_mask,
    rows_hold,
    softmax_template,
)
from .softmax import open_rows

op = Operator("LogSoftmax")
register_softmax_like(op, log_softmax_rows)


def logsumexp_zero(x, y):
    with np.errstate(all="ignore"):
        return np.isnan(y).any(-1) | (np.abs(np.log(np.exp(y).sum(-1))) <= 1e-2)


op.spec_silent(
    "nan_inf_row", (1, 11, 13),
    spec={1: "The operator computes the logsoftmax (log of softmax) values for each layer in the batch",
          13: "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))"},
    expected="NaN throughout a row holding NaN, +inf or only -inf: the formula in IEEE 754 arithmetic "
             "(NaN propagates, inf/inf and 0/0 are NaN), as LogSoftmax-13's function body computes it",
    where=lambda inputs, attrs, expected, since: [row_mask(inputs[0], attrs, since, open_rows)],
    invariants={
        "every value is NaN or <= 0": lambda c: bool(np.all(
            np.isnan(c.actual[0][c.masks[0]].astype(np.float64)) | (c.actual[0][c.masks[0]] <= 0))),
        "a row without NaN has logsumexp 0": lambda c: rows_hold(c, logsumexp_zero),
    },
    readings={"the mathematical limit (+inf entries share the mass, a row of -inf is uniform)": softmax_limit})


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0, bound=grows)
