"""Max: elementwise maximum of 1..N inputs (ONNX spec: Max-1, 6, 8, 12, 13).

Max-1/6 need every input to have the same shape; Max-8 on broadcast multidirectionally;
Max-12 adds the integer types, Max-13 bfloat16. +-inf and -0.0 are in the examples.

Spec-silent: the text does not say what a NaN input gives. We propagate it (IEEE 754-2019
maximum, numpy.maximum); a backend may instead ignore it (maximumNumber), so a NaN input is
``unspecified`` when the result is NaN or the max of the other inputs, and a ``mismatch``
otherwise (e.g. a result that depends on where the NaN stood among three inputs).
"""

import numpy as np

from harness.registry import Operator

from .._families import extreme

op = Operator("Max")
extreme(op, np.maximum, word="max", identity=-np.inf)
