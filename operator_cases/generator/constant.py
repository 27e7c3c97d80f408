"""Constant: a tensor given by an attribute (ONNX spec: Constant-1, 9, 11, 12, 13, 19, 21, 23, 24, 25).

Constant-1 and 9 take only ``value`` (a tensor; 1 allows float16/float/double, 9 every type).
Constant-11 adds ``sparse_value`` (a SparseTensorProto: ``values`` at ``indices``, either [NNZ]
linear indices or [NNZ, rank] coordinates, every other element zero, of the given ``dims``).
Constant-12 adds the scalar and list forms: ``value_float`` (a float32 scalar),
``value_floats`` (a 1-D float32 tensor), ``value_int``/``value_ints`` (int64),
``value_string``/``value_strings`` (string); "Exactly one of the provided attributes" is set.
13, 19, 21, 23, 24, 25 widen the types. The case's node has no input; the sweep is over the
output type, each special value of it stored in ``value``.
"""

import numpy as np
import onnx

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import STRUCTURAL

op = Operator("Constant")
st = S.st
SPARSE = (11, 12, 13, 19, 21, 23, 24, 25)
op.draws(1, 9, *SPARSE, share=0.05)  # a stored tensor: the edge examples hold the special values of each type


def _dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    values = onnx.numpy_helper.to_array(sparse.values)
    indices = onnx.numpy_helper.to_array(sparse.indices).astype(np.int64)
    dims = [int(v) for v in sparse.dims]
    zero = "" if values.dtype == object else np.zeros((), values.dtype)
    out = np.full(dims, zero, dtype=values.dtype)
    flat = indices if indices.ndim == 1 else np.ravel_multi_index(tuple(indices.T), dims) if indices.size else indices.reshape(0)
    out.reshape(-1)[flat] = values.reshape(-1)
    return out


@op.reference(1, 9, *SPARSE)
def constant(*, value=None, sparse_value=None, value_float=None, value_floats=None, value_int=None, value_ints=None,
             value_string=None, value_strings=None):
    given = {k: v for k, v in locals().items() if v is not None}
    if len(given) != 1:
        raise ValueError(f"Constant: exactly one value attribute, got {sorted(given)}")
    (name, v), = given.items()
    if name == "value":
        return np.array(onnx.numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v, copy=True)
    if name == "sparse_value":
        return _dense(v)
    if name in ("value_float", "value_floats"):
        return np.array(v, dtype=np.float32)
    if name in ("value_int", "value_ints"):
        return np.array(v, dtype=np.int64)
    text = [s.decode() if isinstance(s, bytes) else s for s in (v if name == "value_strings" else [v])]
    return np.array(text if name == "value_strings" else text[0], dtype=object)


def sparse(values: np.ndarray, indices: np.ndarray, dims: list[int]) -> onnx.SparseTensorProto:
    return onnx.helper.make_sparse_tensor(onnx.numpy_helper.from_array(values, "values"),
                                          onnx.numpy_helper.from_array(np.asarray(indices, np.int64), "indices"), dims)


@op.strategy(1, 9, *SPARSE)
def draw(d, dtype, opset):
    return Example([], {"value": S.arrays(d, dtype, max_dims=3, max_side=4, min_side=0 if d(st.integers(0, 7)) == 0 else 1)})


@op.edges(1, 9, *SPARSE)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    ev = S.edge_values(dtype)
    out = [Example([], {"value": ev}, name="edge_values"), Example([], {"value": np.resize(ev, (0, 3))}, name="empty")]
    if dtype in STRUCTURAL:
        out += [Example([], {"value": ev[:1].reshape(())}, name="scalar"),
                Example([], {"value": np.resize(ev, (2, 1, 3))}, name="rank3")]
    if opset >= 11 and dtype in ("float32", "int64", "float64", "int32", "bool", "float16"):
        vals = np.resize(ev, (3,))
        out += [Example([], {"sparse_value": sparse(vals, np.array([1, 4, 6]), [2, 4])}, name="sparse_linear_indices"),
                Example([], {"sparse_value": sparse(vals, np.array([[0, 1], [1, 0], [1, 3]]), [2, 4])}, name="sparse_coordinates"),
                Example([], {"sparse_value": sparse(np.zeros((0,), t), np.zeros((0,), np.int64), [3])}, name="sparse_all_zero")]
    if opset >= 12:
        if dtype == "float32":
            out += [Example([], {"value_float": float(v)}, name=f"value_float_{k}") for k, v in enumerate(ev)]
            out += [Example([], {"value_floats": [float(v) for v in ev]}, name="value_floats"),
                    Example([], {"value_floats": []}, name="value_floats_empty")]
        if dtype == "int64":
            low, high = S.finite_range("int64")
            out += [Example([], {"value_int": v}, name=f"value_int_{k}") for k, v in enumerate([0, -1, low, high])]
            out += [Example([], {"value_ints": [int(v) for v in ev]}, name="value_ints"),
                    Example([], {"value_ints": []}, name="value_ints_empty")]
        if dtype == "string":
            out += [Example([], {"value_string": "a b"}, name="value_string"),
                    Example([], {"value_string": ""}, name="value_string_empty"),
                    Example([], {"value_strings": ["", "x", "Yz 0"]}, name="value_strings")]
    return out
