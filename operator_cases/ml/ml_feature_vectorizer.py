"""FeatureVectorizer (ai.onnx.ml): the inputs concatenated along their second axis, in float
(ONNX spec: FeatureVectorizer-1).

"All input shapes are 2-D and are concatenated along the second dimension. 1-D tensors are treated
as [1,C]." inputdimensions gives "the size of each input": an input of C columns with a declared
size D contributes D columns (its first D when C > D, padded with zeros when C < D). The spec says
nothing of a size mismatch: spec-silent point ``dims`` (we draw it, truncating and zero-padding as
ONNX Runtime and onnx.reference do).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, float_out

op = Operator("FeatureVectorizer", domain=ML)


@op.reference(1)
def feature_vectorizer(*xs, inputdimensions=None):
    dims = list(inputdimensions or [])
    rows = [np.asarray(x).astype(np.float64) for x in xs]
    rows = [r.reshape(1, -1) if r.ndim == 1 else r.reshape(r.shape[0], int(np.prod(r.shape[1:]))) for r in rows]
    n = rows[0].shape[0]
    cols = []
    for r, d in zip(rows, dims):
        block = np.zeros((n, d))
        k = min(d, r.shape[1])
        block[:, :k] = r[:, :k]
        cols.append(block)
    return float_out(np.concatenate(cols, axis=1) if cols else np.zeros((n, 0)))


def _mismatched(inputs, attrs, expected, since):
    dims = attrs.get("inputdimensions") or []
    widths = [int(np.prod(np.shape(x)[1:])) if np.ndim(x) > 1 else np.size(x) for x in inputs]
    if all(w == d for w, d in zip(widths, dims)):
        return [None]
    return [np.ones(np.shape(expected[0]), dtype=bool)]


op.spec_silent(
    "dims", (1,),
    spec="The size of each input in the input list",
    expected="an input wider than its declared size gives its first columns, a narrower one is padded with zeros",
    where=_mismatched,
    invariants={"the output has sum(inputdimensions) columns": lambda c: np.shape(c.actual[0]) == np.shape(c.expected[0])})


@op.strategy(1)
def draw(d, dtype, opset):
    n = d(S.st.integers(1, 3))
    k = d(S.st.integers(1, 3))
    xs, dims = [], []
    for _ in range(k):
        c = d(S.st.integers(1, 4))
        xs.append(S.arrays(d, dtype, shape=(n, c), lo=-100, hi=100))
        dims.append(c)
    return Example(xs, {"inputdimensions": dims})


@op.edges(1)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    e = S.edge_values(dtype).reshape(1, -1)
    a = np.array([[1, 2], [3, 4]], dtype=dt)
    b = np.array([[5], [6]], dtype=dt)
    return [
        Example([e, np.array([[9]], dtype=dt)], {"inputdimensions": [e.shape[1], 1]}, name="edge_values"),
        Example([a, b, a], {"inputdimensions": [2, 1, 2]}, name="three_inputs"),
        Example([np.array([1, 2, 3], dtype=dt)], {"inputdimensions": [3]}, name="one_dim"),
        Example([a, b], {"inputdimensions": [1, 3]}, name="truncate_and_pad"),
        Example([np.zeros((0, 2), dtype=dt), np.zeros((0, 1), dtype=dt)], {"inputdimensions": [2, 1]}, name="empty"),
    ]
