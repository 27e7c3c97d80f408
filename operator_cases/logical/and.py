"""And: C = A and B on booleans, elementwise (ONNX spec: And-1, 7).

And-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
And-7 broadcasts multidirectionally.
"""

import numpy as np

from harness.registry import Operator

from .._families import logical

op = Operator("And")
logical(op, np.logical_and)
