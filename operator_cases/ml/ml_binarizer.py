"""Binarizer (ai.onnx.ml): y = 1 where x > threshold, else 0, in x's type (ONNX spec: Binarizer-1).

"Values greater than this are mapped to 1, others to 0": a value equal to the threshold (a tie)
gives 0, -0.0 equals 0.0. The threshold is a float attribute: for an integer input the comparison
is made in float64 (exact for int32; int64 beyond 2^53 compared after rounding to float64, the
attribute being a float).

Spec-silent: NaN. A NaN is not greater than the threshold, so the text gives 0 ("others"); a
backend could also propagate it. We take 0, the text's IEEE reading.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML

op = Operator("Binarizer", domain=ML)


@op.reference(1)
def binarizer(x, *, threshold=0.0):
    t = float(np.float32(threshold))  # the attribute is stored as a float32
    with np.errstate(invalid="ignore"):
        return (np.asarray(x).astype(np.float64) > t).astype(np.asarray(x).dtype)


def _nan_cells(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    return [np.isnan(x.astype(np.float64)) if S.is_float(S.label_of(x.dtype)) else None]


op.spec_silent(
    "nan", (1,),
    spec="Maps the values of the input tensor to either 0 or 1, element-wise, based on the outcome of a comparison "
         "against a threshold value. [...] Values greater than this are mapped to 1, others to 0.",
    expected="0: a NaN is not greater than the threshold (IEEE 754 comparison), so it is one of the 'others'",
    where=_nan_cells,
    invariants={"a NaN maps to 0, 1 or NaN": lambda c: bool(np.all(np.isin(np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]], [0.0, 1.0])
                                                              | np.isnan(np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]])))})


@op.strategy(1)
def draw(d, dtype, opset):
    x = S.arrays(d, dtype, lo=-4, hi=4)
    attrs = {}
    if d(S.st.booleans()):
        # half-integers: values of x equal to the threshold happen (ties)
        attrs["threshold"] = d(S.st.integers(-8, 8)) / 2
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    x = S.edge_values(dtype)
    dt = S.np_dtype(dtype)
    return [
        Example([x], name="edge_values"),
        Example([x], {"threshold": 1.0}, name="tie_at_threshold"),
        Example([x], {"threshold": -0.5}, name="negative_threshold"),
        Example([np.array([[-1, 0, 1], [2, 3, 4]], dtype=dt)], {"threshold": 1.0}, name="matrix_ties"),
        Example([np.zeros((0, 3), dtype=dt)], name="empty"),
    ]
