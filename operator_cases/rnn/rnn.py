"""RNN: one layer of the simple recurrence ``Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi)``
(ONNX spec: RNN-1, 7, 14, 22).

RNN-1 has ``output_sequence`` (whether Y may be left out; no effect on values), RNN-7 drops it,
RNN-14 adds ``layout`` (batch-major X, Y, initial_h, Y_h), RNN-22 adds bfloat16. The equations
do not change, so one reference serves every version. The recurrence, its activations, the
examples and the spec-silent point ``padding`` (Y past a sequence's length) are shared with GRU
and LSTM in _rnn_util.
"""

import numpy as np

from harness.registry import Operator

from .._common import rounded_reach, unit
from ._rnn_util import declare, recurrence

op = Operator("RNN", type_param="T")
VERSIONS = (1, 7, 14, 22)

rnn = declare(op, "RNN", VERSIONS)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """Per output, how far an evaluation with every step but the dot products rounded in T (RNN names no precision:
    u = 2**-11 for float16, 2**-8 for bfloat16) lands from our value (float64, rounded once),
    element by element: the recurrence run again with each step's error bound carried along
    (``_rnn_util.rnn_step_error``: gamma_(I+H+2) times the sum of |terms| of the pre-activation,
    plus the previous state's error through |Ri|, times the activation's Lipschitz constant, plus
    u |Ht| for the activation; the state passed on adds its rounding; dot products in float32 or
    wider), then Y's and Y_h's last
    rounding against ours (``_common.rounded_reach``). A padded step (past sequence_lens) is 0,
    exact; initial_h is exact."""
    X, W, R, B, lens, h0 = (list(inputs) + [None] * 6)[:6]
    attrs = dict(attrs)
    layout = int(attrs.pop("layout", 0))
    attrs.pop("output_sequence", None)
    with np.errstate(all="ignore"):
        y, y_h, e, e_h = recurrence("RNN", X, W, R, B, lens, h0, attrs=attrs, layout=layout, bound_u=unit(X))
    return [rounded_reach(y, e, X), rounded_reach(y_h, e_h, X)]
