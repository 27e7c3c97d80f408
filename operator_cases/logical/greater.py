"""Greater: C = (A > B), elementwise, output bool (ONNX spec: Greater-1, 7, 9, 13).

Greater-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Greater-7 on broadcast multidirectionally. Greater-1/7 take floats, Greater-9 adds the integers,
Greater-13 bfloat16.
Floats compare as IEEE 754 values: any comparison with NaN is false and -0.0 equals +0.0.
"""

import numpy as np

from harness.registry import Operator

from .._families import comparison

op = Operator("Greater")
comparison(op, np.greater, legacy=(1,), modern=(7, 9, 13))
