"""IsInf: true where x is +inf (if detect_positive) or -inf (if detect_negative), elementwise;
the output is bool (ONNX spec: IsInf-10, 20).

Both attributes default to 1. IsInf-20 adds bfloat16, float16 and the float8 types;
float8e4m3fn, float8e4m3fnuz and float8e5m2fnuz have no infinity, so every element is false
there (+-inf in the edge values converts to NaN or the largest value in those types). Drawn
inputs include NaN and +-inf; the edges run every combination of the two attributes.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Example, Operator

from .._unary_util import edge_values, special_arrays, unary_template

op = Operator("IsInf")


@op.reference(10, 20)
def is_inf(x, detect_negative=1, detect_positive=1):
    w = np.asarray(x).astype(np.float64)
    return (np.isneginf(w) & bool(detect_negative)) | (np.isposinf(w) & bool(detect_positive))


@op.strategy(10, 20)
def draw(d, dtype, opset):
    attrs = {name: d(S.st.integers(0, 1)) for name in ("detect_negative", "detect_positive") if d(S.st.booleans())}
    return Example([special_arrays(d, dtype)], attrs)


@op.edges(10, 20)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    out = [Example([edge_values(dtype)], name="edge_values")]
    for neg in (0, 1):
        for pos in (0, 1):
            out.append(Example([edge_values(dtype)], {"detect_negative": neg, "detect_positive": pos},
                               name=f"edge_values_neg{neg}_pos{pos}"))
    with np.errstate(all="ignore"):
        out.append(Example([np.array(-np.inf).astype(dt)], name="scalar"))
    out.append(Example([np.zeros((2, 0, 3), dtype=dt)], name="empty"))
    return out


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, type_param="T1")
