"""LSTM: one layer of the long short-term memory recurrence, with optional peepholes and
coupled input/forget gates (ONNX spec: LSTM-1, 7, 14, 22).

``it = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Pi (.) Ct-1 + Wbi + Rbi)``, ``ft`` likewise with Pf (or
``1 - it`` when input_forget = 1), ``ct = g(Xt*(Wc^T) + Ht-1*(Rc^T) + Wbc + Rbc)``, ``Ct = ft (.)
Ct-1 + it (.) ct``, ``ot = f(Xt*(Wo^T) + Ht-1*(Ro^T) + Po (.) Ct + Wbo + Rbo)``, ``Ht = ot (.) h(Ct)``.

LSTM-1 has ``output_sequence``; LSTM-7 drops it; LSTM-14 adds ``layout``; LSTM-22 bfloat16.
The equations do not change, so one reference serves every version (see _rnn_util).
"""

from harness.registry import Operator

from ._rnn_util import declare

op = Operator("LSTM", type_param="T")
VERSIONS = (1, 7, 14, 22)

lstm = declare(op, "LSTM", VERSIONS)
