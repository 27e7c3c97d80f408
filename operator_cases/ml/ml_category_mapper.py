"""CategoryMapper (ai.onnx.ml): strings to integers or integers to strings through two parallel
lists (ONNX spec: CategoryMapper-1).

A string input gives int64 (cats_strings[i] -> cats_int64s[i], default_int64 when not found, -1
by default); an int64 input gives strings (default_string, "_Unused" by default). The lists are
drawn without repeats on the looked-up side: a repeated key has no meaning the spec gives.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, as_str, text_array

op = Operator("CategoryMapper", domain=ML)


@op.reference(1)
def category_mapper(x, *, cats_int64s=(), cats_strings=(), default_int64=-1, default_string="_Unused"):
    x = np.asarray(x)
    strings = [as_str(s) for s in cats_strings]
    ints = [int(i) for i in cats_int64s]
    if x.dtype == object:
        table = dict(zip(strings, ints))
        return np.array([table.get(as_str(v), int(default_int64)) for v in x.reshape(-1)], dtype=np.int64).reshape(x.shape)
    table = dict(zip(ints, strings))
    return text_array([table.get(int(v), as_str(default_string)) for v in x.reshape(-1)]).reshape(x.shape)


@op.strategy(1)
def draw(d, dtype, opset):
    k = d(S.st.integers(1, 5))
    strings = d(S.st.lists(S.st.text(alphabet="abcXYZ", max_size=3), min_size=k, max_size=k, unique=True))
    ints = d(S.st.lists(S.st.integers(-5, 5), min_size=k, max_size=k, unique=True))
    shape = S.shapes(d, min_dims=1, max_dims=2, max_side=4)
    attrs = {"cats_strings": strings, "cats_int64s": ints}
    if dtype == "string":
        x = np.array([d(S.st.sampled_from(strings + ["zz"])) for _ in range(int(np.prod(shape)))], dtype=object).reshape(shape)
        if d(S.st.booleans()):
            attrs["default_int64"] = d(S.st.integers(-100, 100))
    else:
        x = S.arrays(d, "int64", shape=shape, lo=-6, hi=6)
        if d(S.st.booleans()):
            attrs["default_string"] = d(S.st.text(alphabet="xyz", max_size=3))
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    attrs = {"cats_strings": ["a", "", "Z z"], "cats_int64s": [0, -9223372036854775808, 9223372036854775807]}
    e = S.edge_values(dtype)
    if dtype == "string":
        return [Example([e], attrs, name="edge_values"), Example([e], {**attrs, "default_int64": 7}, name="default"),
                Example([np.zeros((0, 2), dtype=object)], attrs, name="empty")]
    return [Example([e], attrs, name="edge_values"), Example([e], {**attrs, "default_string": "none"}, name="default"),
            Example([np.zeros((2, 0), dtype=np.int64)], attrs, name="empty")]
