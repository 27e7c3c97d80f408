"""Min: elementwise minimum of 1..N inputs (ONNX spec: Min-1, 6, 8, 12, 13).

The mirror of Max (max.py): the same versions, broadcasting and types. Spec-silent: a NaN input
is propagated (IEEE 754-2019 minimum); a result that ignores it (minimumNumber) is the other
reading.
"""

import numpy as np

from harness.registry import Operator

from .._families import extreme

op = Operator("Min")
extreme(op, np.minimum, word="min", identity=np.inf)
