"""Imputer (ai.onnx.ml): elements equal to the replaced value take the imputed value, per
feature (last axis) or one for all (ONNX spec: Imputer-1).

"Replaces inputs that equal one value with another, leaving all other elements alone"; floats use
imputed_value_floats / replaced_value_float, integers imputed_value_int64s / replaced_value_int64.
Equality with a NaN replaced value: the spec's motivating example ("a canonical representation,
such as -1, 0, NaN") only makes sense if a NaN input matches a NaN replaced value, so NaN is
matched by NaN (not IEEE ==); spec-silent point ``nan_match``.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML

op = Operator("Imputer", domain=ML)


@op.reference(1)
def imputer(x, *, imputed_value_floats=None, imputed_value_int64s=None, replaced_value_float=0.0, replaced_value_int64=0):
    x = np.asarray(x)
    if S.is_float(S.label_of(x.dtype)):
        imputed = np.asarray(imputed_value_floats, dtype=np.float32)
        r = np.float32(replaced_value_float)
        hit = np.isnan(x) if np.isnan(r) else (x.astype(np.float64) == float(r))
    else:
        imputed = np.asarray(imputed_value_int64s, dtype=np.int64)
        hit = x.astype(np.int64) == int(replaced_value_int64)
    fill = imputed.reshape(()) if imputed.size == 1 else imputed
    with np.errstate(all="ignore"):
        return np.where(hit, np.broadcast_to(fill, x.shape) if x.size else fill, x).astype(x.dtype)


op.spec_silent(
    "nan_match", (1,),
    spec="Replaces inputs that equal one value with another [...] This operator is typically used to replace missing values in "
         "situations where they have a canonical representation, such as -1, 0, NaN, or some extreme value.",
    expected="a NaN input equals a NaN replaced value (NaN named as a canonical missing value), so it is imputed",
    where=lambda inputs, attrs, expected, since: [np.isnan(np.asarray(inputs[0]).astype(np.float64))
                                                 if np.isnan(attrs.get("replaced_value_float", 0.0)) and S.is_float(S.label_of(np.asarray(inputs[0]).dtype)) else None],
    invariants={"an open element is the imputed value or NaN": lambda c: bool(np.all(
        np.isnan(np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]) | (np.asarray(c.actual[0])[c.masks[0]] == np.asarray(c.expected[0])[c.masks[0]])))},
    readings={"NaN equals nothing (IEEE comparison): not imputed": lambda c: [np.full_like(np.asarray(c.expected[0]), np.nan)]})


def _attrs(dtype, imputed, replaced):
    if S.is_float(dtype):
        return {"imputed_value_floats": [float(v) for v in imputed], "replaced_value_float": float(replaced)}
    return {"imputed_value_int64s": [int(v) for v in imputed], "replaced_value_int64": int(replaced)}


@op.strategy(1)
def draw(d, dtype, opset):
    n, f = d(S.st.integers(0, 4)), d(S.st.integers(1, 4))
    x = S.arrays(d, dtype, shape=(n, f), lo=-3, hi=3)
    nan = S.is_float(dtype) and d(S.st.booleans())
    if nan and x.size:
        x = x.copy()
        x.reshape(-1)[d(S.st.integers(0, x.size - 1))] = np.nan
    per = f if d(S.st.booleans()) else 1
    imputed = [d(S.st.integers(-100, 100)) for _ in range(per)]
    replaced = np.nan if nan and d(S.st.booleans()) else d(S.st.integers(-3, 3))
    return Example([x], _attrs(dtype, imputed, replaced))


@op.edges(1)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    x = S.edge_values(dtype).reshape(1, -1)
    out = [Example([np.array([[1, 0, -1], [0, 5, 0]], dtype=dt)], _attrs(dtype, [7, 8, 9], 0), name="per_feature"),
           Example([np.array([[1, 0, -1], [0, 5, 0]], dtype=dt)], _attrs(dtype, [7], -1), name="one_value"),
           Example([x], _attrs(dtype, [42], 0), name="edge_values_zero"),
           Example([np.zeros((0, 2), dtype=dt)], _attrs(dtype, [1, 2], 0), name="empty")]
    if S.is_float(dtype):
        out += [Example([x], _attrs(dtype, [42], np.nan), name="edge_values_nan"),
                Example([x], _attrs(dtype, [42], np.inf), name="edge_values_inf")]
    return out
