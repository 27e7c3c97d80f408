"""Or: C = A or B on booleans, elementwise (ONNX spec: Or-1, 7).

Or-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Or-7 broadcasts multidirectionally.
"""

import numpy as np

from harness.registry import Operator

from ._families import logical

op = Operator("Or")
logical(op, np.logical_or)
