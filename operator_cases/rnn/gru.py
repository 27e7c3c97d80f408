"""GRU: one layer of the gated recurrent unit (ONNX spec: GRU-1, 3, 7, 14, 22).

``zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz)``, ``rt`` likewise, ``ht = g(Xt*(Wh^T) + (rt (.)
Ht-1)*(Rh^T) + Rbh + Wbh)`` or, with linear_before_reset != 0, ``g(Xt*(Wh^T) + (rt (.)
(Ht-1*(Rh^T) + Rbh)) + Wbh)``, ``Ht = (1 - zt) (.) ht + zt (.) Ht-1``.

GRU-1 has no ``linear_before_reset`` (the first formula), ``output_sequence``, a required Y_h
and the schema default direction spelled "foward" (its doc: "forward (default)"); GRU-3 adds
linear_before_reset; GRU-7 drops output_sequence; GRU-14 adds ``layout``; GRU-22 bfloat16. The
equations do not change, so one reference serves every version (see _rnn_util).
"""

from harness.registry import Operator

from ._rnn_util import declare

op = Operator("GRU", type_param="T")
VERSIONS = (1, 3, 7, 14, 22)

gru = declare(op, "GRU", VERSIONS)
