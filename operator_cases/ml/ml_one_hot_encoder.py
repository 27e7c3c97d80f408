"""OneHotEncoder (ai.onnx.ml): each element replaced by a one-hot float vector over the
categories, output shape x.shape + [len(cats)] (ONNX spec: OneHotEncoder-1).

"If the input is a tensor of float, int32, or double, the data will be cast to integers and the
cats_int64s category list will be used": cast as ONNX Cast does (truncation toward zero), so 2.7
is category 2. A value not among the categories gives all zeros with zeros=1 (the default); with
zeros=0 "the operator will fail" (not drawn: a case has one outcome to check, values).
Spec-silent: ``nan`` (a NaN or infinite float has no integer: we give all zeros, no category).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, as_str, float_out

op = Operator("OneHotEncoder", domain=ML)


@op.reference(1)
def one_hot_encoder(x, *, cats_int64s=None, cats_strings=None, zeros=1):
    x = np.asarray(x)
    if x.dtype == object:
        cats = [as_str(c) for c in cats_strings]
        keys = [as_str(v) for v in x.reshape(-1)]
    else:
        cats = [int(c) for c in cats_int64s]
        f = x.reshape(-1).astype(np.float64) if x.dtype.kind == "f" else x.reshape(-1)
        keys = [None if (isinstance(v, float) and not np.isfinite(v)) else int(v) for v in f.tolist()]
    out = np.zeros((len(keys), len(cats)))
    for i, k in enumerate(keys):
        hits = [j for j, c in enumerate(cats) if c == k]
        if not hits and not zeros:
            raise ValueError(f"OneHotEncoder: {k!r} is not a category and zeros=0")
        out[i, hits] = 1.0
    return float_out(out.reshape(x.shape + (len(cats),)))


op.spec_silent(
    "nan", (1,),
    spec="If the input is a tensor of float, int32, or double, the data will be cast to integers and the cats_int64s category list will be used for the lookups.",
    expected="all zeros: a NaN or an infinity has no integer value, so it matches no category (Cast to an integer leaves it undefined)",
    where=lambda inputs, attrs, expected, since: [np.broadcast_to(~np.isfinite(np.asarray(inputs[0]).astype(np.float64))[..., None], np.shape(expected[0]))
                                                 if np.asarray(inputs[0]).dtype.kind == "f" else None],
    invariants={"an open row holds at most one 1": lambda c: bool(np.all(np.sum(np.asarray(c.actual[0]) == 1, axis=-1)[c.masks[0][..., 0]] <= 1))})


def _cats(dtype, values):
    return {"cats_strings": [str(v) for v in values]} if dtype == "string" else {"cats_int64s": [int(v) for v in values]}


@op.strategy(1)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=2, max_side=4)
    if dtype == "string":
        x = S.arrays(d, dtype, shape=shape)
        cats = d(S.st.lists(S.st.text(alphabet="abcXYZ019 _", max_size=3), min_size=1, max_size=5, unique=True))
    else:
        x = S.arrays(d, dtype, shape=shape, lo=-4, hi=6)
        cats = d(S.st.lists(S.st.integers(-4, 6), min_size=1, max_size=5, unique=True))
    attrs = _cats(dtype, cats)
    known = all((as_str(v) if dtype == "string" else int(v)) in cats for v in x.reshape(-1).tolist())
    if known and d(S.st.booleans()):
        attrs["zeros"] = 0
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    e = S.edge_values(dtype)
    if dtype == "string":
        return [Example([e], _cats(dtype, ["a", "", "b"]), name="edge_values"),
                Example([np.array([["a", "b"], ["b", "a"]], dtype=object)], {**_cats(dtype, ["b", "a"]), "zeros": 0}, name="matrix_zeros_0"),
                Example([np.zeros((0, 2), dtype=object)], _cats(dtype, ["a"]), name="empty")]
    out = [Example([e], _cats(dtype, [0, 1, -1]), name="edge_values"),
           Example([np.array([[1, 2], [3, 1]], dtype=dt)], {**_cats(dtype, [3, 2, 1]), "zeros": 0}, name="matrix_zeros_0"),
           Example([np.zeros((0, 2), dtype=dt)], _cats(dtype, [1, 2]), name="empty")]
    if dt.kind == "f":
        out.append(Example([np.array([2.7, -2.7, 0.5, -0.5, 3.0], dtype=dt)], _cats(dtype, [2, -2, 0, 3]), name="truncation"))
    return out
