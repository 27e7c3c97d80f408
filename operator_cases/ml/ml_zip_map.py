"""ZipMap (ai.onnx.ml): each row of an [N, C] float tensor becomes a map from the C class labels
to the row's values; the output is the sequence of the N maps (ONNX spec: ZipMap-1).

"The columns of the tensor correspond one-by-one to the keys specified by the attributes. There
must be as many columns as keys." Keys are classlabels_int64s (map(int64, float)) or
classlabels_strings (map(string, float)). Values are copied (NaN, infinities and -0.0 kept). Not
drawn: a 1-D input (the text speaks of columns only). An empty batch gives an empty sequence.
"""

import numpy as np
import onnx
from onnx import TensorProto

from harness import strategies as S
from harness.registry import Example, Operator
from harness.values import TypedSeq

from ._ml_util import ML, as_str

op = Operator("ZipMap", domain=ML)


@op.reference(1)
def zip_map(x, *, classlabels_int64s=None, classlabels_strings=None):
    x = np.asarray(x, dtype=np.float32)
    keys = [as_str(k) for k in classlabels_strings] if classlabels_strings is not None else [int(k) for k in classlabels_int64s]
    if x.shape[-1] != len(keys):
        raise ValueError(f"{x.shape[-1]} columns for {len(keys)} keys")
    key = TensorProto.STRING if classlabels_strings is not None else TensorProto.INT64
    elem = onnx.helper.make_map_type_proto(key, onnx.helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    return (TypedSeq([{k: np.float32(v) for k, v in zip(keys, row)} for row in x.reshape(-1, len(keys))], elem=elem),)


def _keys(d, k, strings):
    if strings:
        return {"classlabels_strings": d(S.st.lists(S.st.text(alphabet="abcXYZ019", max_size=3), min_size=k, max_size=k, unique=True))}
    return {"classlabels_int64s": d(S.st.lists(S.st.integers(-2**63, 2**63 - 1), min_size=k, max_size=k, unique=True))}


@op.strategy(1)
def draw(d, dtype, opset):
    n, k = d(S.st.integers(1, 4)), d(S.st.integers(1, 4))
    return Example([S.arrays(d, dtype, shape=(n, k), lo=-10, hi=10, allow_nan=True, allow_inf=True)], _keys(d, k, d(S.st.booleans())))


@op.edges(1)
def edges(dtype, opset):
    e = S.edge_values(dtype)
    m = np.stack([e, e[::-1]])
    return [Example([m], {"classlabels_int64s": list(range(-3, e.size - 3))}, name="edge_values_int_keys"),
            Example([m], {"classlabels_strings": [f"k{i}" for i in range(e.size)]}, name="edge_values_string_keys"),
            Example([np.array([[0.25]], dtype=np.float32)], {"classlabels_strings": [""]}, name="one_empty_string_key"),
            Example([np.zeros((0, 2), dtype=np.float32)], {"classlabels_int64s": [1, 2]}, name="empty")]
