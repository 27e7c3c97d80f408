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

from .._families import nan_inf_row
from .._reduce_util import grows, log_softmax_rows, register_softmax_like, softmax_template

op = Operator("LogSoftmax")
register_softmax_like(op, log_softmax_rows)


def logsumexp_zero(x, y):
    with np.errstate(all="ignore"):
        return np.isnan(y).any(-1) | (np.abs(np.log(np.exp(y).sum(-1))) <= 1e-2)


nan_inf_row(op, {1: "The operator computes the logsoftmax (log of softmax) values for each layer in the batch",
                 13: "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))"},
            ("every value is NaN or <= 0", lambda v: v <= 0), ("a row without NaN has logsumexp 0", logsumexp_zero))


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0, bound=grows)
