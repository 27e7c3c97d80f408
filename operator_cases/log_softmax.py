"""LogSoftmax: log(softmax(x)) (ONNX spec: LogSoftmax-1, 11, 13).

LogSoftmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1) and work on each row of that
view (all the dimensions from ``axis`` on); LogSoftmax-13 works along the single dimension
``axis`` (default -1) and adds bfloat16. Evaluated in float64 as (x - m) - log(sum(exp(x - m)))
with m the row's maximum (as LogSoftmax-13's function body does; a row holding +inf, or only
-inf, is NaN throughout), then rounded once; -inf entries stay -inf, NaN fills its row.
"""

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from ._reduce_util import (
    grows,
    log_softmax_rows,
    register_softmax_like,
    softmax_template,
)

op = Operator("LogSoftmax")
register_softmax_like(op, log_softmax_rows, nan_defined=True)


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, nan=NAN_ASSUMED, ulps=8.0, bound=grows)
