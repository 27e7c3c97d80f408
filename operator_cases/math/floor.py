"""Floor: the largest integer not above x, elementwise (ONNX spec: Floor-1, 6, 13).

The mirror of Ceil (ceil.py): exact in every float type, the same edges near integers.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._unary_util import elementwise, near_integers, unary_template

op = Operator("Floor")
elementwise(op, (1, 6, 13), np.floor, extra_edges=near_integers)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0)
