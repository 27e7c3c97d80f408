"""RNN: one layer of the simple recurrence ``Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi)``
(ONNX spec: RNN-1, 7, 14, 22).

RNN-1 has ``output_sequence`` (whether Y may be left out; no effect on values), RNN-7 drops it,
RNN-14 adds ``layout`` (batch-major X, Y, initial_h, Y_h), RNN-22 adds bfloat16. The equations
do not change, so one reference serves every version. The recurrence, its activations, the
examples and the spec-silent point ``padding`` (Y past a sequence's length) are shared with GRU
and LSTM in _rnn_util.
"""

from harness.registry import Operator

from ._rnn_util import declare

op = Operator("RNN", type_param="T")
VERSIONS = (1, 7, 14, 22)

rnn = declare(op, "RNN", VERSIONS)
