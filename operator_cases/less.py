"""Less: C = (A < B), elementwise, output bool (ONNX spec: Less-1, 7, 9, 13).

Less-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Less-7 on broadcast multidirectionally. Less-1/7 take floats, Less-9 adds the integers,
Less-13 bfloat16.
Floats compare as IEEE 754 values: any comparison with NaN is false and -0.0 equals +0.0.
"""

import numpy as np

from harness.registry import Operator

from ._families import comparison

op = Operator("Less")
comparison(op, np.less, legacy=(1,), modern=(7, 9, 13))
