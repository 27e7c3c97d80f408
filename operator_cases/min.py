"""Min: elementwise minimum of 1..N inputs (ONNX spec: Min-1, 6, 8, 12, 13).

Min-1/6 need every input to have the same shape; Min-8 on broadcast multidirectionally;
Min-12 adds the integer types, Min-13 bfloat16. +-inf and -0.0 are in the examples.

Spec-silent: the text does not say what a NaN input gives. We propagate it (IEEE 754-2019
minimum, numpy.minimum); a backend may instead ignore it (minimumNumber), so a NaN input is
``unspecified`` when the result is NaN or the min of the other inputs, and a ``mismatch``
otherwise (e.g. a result that depends on where the NaN stood among three inputs).
"""

import numpy as np

from harness.registry import Operator

from ._families import extreme

op = Operator("Min")
extreme(op, np.minimum, word="min", identity=np.inf)
