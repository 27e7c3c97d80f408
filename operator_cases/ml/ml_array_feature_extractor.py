"""ArrayFeatureExtractor (ai.onnx.ml): x[..., indices] (ONNX spec: ArrayFeatureExtractor-1).

"Select elements of the input tensor based on the indices passed. The indices are applied to the
last axes of the tensor." The indices (any shape, read flat, "based on 0 as the first index")
select along the last axis: the output's shape is x.shape[:-1] + [len(indices)], which is also
what onnx's shape inference gives for inputs of rank >= 2. For a 1-D input the text and shape
inference say nothing; we give [1, len(indices)], a row, as ONNX Runtime and onnx.reference do
(a shape cannot be a spec-silent point: the choice is stated here). Negative
or out-of-range indices are not drawn (the spec counts from 0 and names no other).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML

op = Operator("ArrayFeatureExtractor", domain=ML)


@op.reference(1)
def array_feature_extractor(x, indices):
    x = np.asarray(x)
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    if np.any((idx < 0) | (idx >= x.shape[-1])):
        raise ValueError(f"index out of range for a last axis of {x.shape[-1]}: {idx.tolist()}")
    out = np.take(x, idx, axis=-1)
    return out.reshape(1, -1) if x.ndim == 1 else out


@op.strategy(1)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=2, max_dims=3, min_side=1, max_side=4)
    if d(S.st.booleans()):
        shape = (0,) + shape[1:]
    x = S.arrays(d, dtype, shape=shape, lo=-100, hi=100)
    k = d(S.st.integers(1, 5))
    idx = np.array([d(S.st.integers(0, shape[-1] - 1)) for _ in range(k)], dtype=np.int64)
    return Example([x, idx.reshape(1, -1) if d(S.st.booleans()) else idx])


@op.edges(1)
def edges(dtype, opset):
    x = S.edge_values(dtype)
    m = np.stack([x, x[::-1]])
    return [
        Example([m, np.array([0, 2, 2, x.size - 1], dtype=np.int64)], name="edge_values_repeated_index"),
        Example([m.reshape(2, 1, -1), np.array([[1], [0]], dtype=np.int64)], name="rank3_index_matrix"),
        Example([np.zeros((0, 3), dtype=x.dtype), np.array([2, 0], dtype=np.int64)], name="empty_rows"),
        Example([m, np.zeros((0,), dtype=np.int64)], name="empty_indices"),
        Example([x, np.array([1, 0], dtype=np.int64)], name="one_dim"),
    ]
