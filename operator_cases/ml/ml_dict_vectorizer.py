"""DictVectorizer (ai.onnx.ml): a map to a 1-D tensor through a vocabulary (ONNX spec:
DictVectorizer-1).

"each key is looked up in the vocabulary attribute [...] The index into the vocabulary array at
which the key is found is then used to index the output 1-D tensor 'Y' and insert into it the
value found in the dictionary 'X' [...] the output array will be equal in length to the index
mapping vector parameter [...] Any keys not present in the input dictionary, will be zero in the
output array", with the example ["a", "c", "b", "z"] and {"a": 4, "c": 8} -> [4, 8, 0, 0]: Y is
1-D, [len(vocabulary)] (ONNX Runtime returns [1, len(vocabulary)]: see its expectations). Keys
not in the vocabulary are not drawn ("All keys in the input dictionary must be present").
The cases sweep the output type (T2); the key type is drawn among those the input type allows.
Spec-silent ``string_zero``: the "zero" of a string output; we write "" (the empty string).
"""

import numpy as np
from onnx import TensorProto

from harness import strategies as S
from harness.registry import Example, Operator
from harness.values import TypedMap

from ._ml_util import ML, as_str, text_array

op = Operator("DictVectorizer", domain=ML, type_param="T2")
_CODE = {"int64": TensorProto.INT64, "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "string": TensorProto.STRING}


@op.reference(1)
def dict_vectorizer(x, *, string_vocabulary=None, int64_vocabulary=None):
    vocab = [as_str(v) for v in string_vocabulary] if string_vocabulary is not None else [int(v) for v in int64_vocabulary]
    kind = getattr(x, "value_type", None)
    strings = kind == TensorProto.STRING if kind is not None else isinstance(next(iter(x.values())), str)
    out = text_array([""] * len(vocab)) if strings else np.zeros(len(vocab), dtype=_dtype_of(x))
    for k, v in x.items():
        out[vocab.index(k)] = as_str(v) if strings else v
    return out


def _dtype_of(x):
    code = getattr(x, "value_type", None)
    if code is not None:
        return {TensorProto.INT64: np.int64, TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64}[code]
    return np.asarray(next(iter(x.values()))).dtype


op.spec_silent(
    "string_zero", (1,),
    spec="Any keys not present in the input dictionary, will be zero in the output array.",
    expected="the empty string: the zero of a string tensor (what ONNX initializes a string tensor with)",
    where=lambda inputs, attrs, expected, since: [np.array([k not in inputs[0] for k in (
        [as_str(v) for v in attrs["string_vocabulary"]] if attrs.get("string_vocabulary") is not None else [int(v) for v in attrs["int64_vocabulary"]])])
        if np.asarray(expected[0]).dtype == object else None],
    invariants={"the output has one element per vocabulary entry": lambda c: np.size(c.actual[0]) == np.size(c.expected[0])},
    readings={"the string '0' (the text's 'zero' written out)": lambda c: [np.full(np.shape(c.expected[0]), "0", dtype=object)]})


def _map(keys, values, key_code, value_code):
    return TypedMap(dict(zip(keys, values)), key=key_code, value=value_code)


def _example(dtype, string_keys, vocab, keys, values, name=""):
    key_code = TensorProto.STRING if string_keys else TensorProto.INT64
    if dtype == "string":
        values = [as_str(v) for v in values]
    else:
        values = [S.np_dtype(dtype).type(v) for v in values]
    attrs = {"string_vocabulary": vocab} if string_keys else {"int64_vocabulary": vocab}
    return Example([_map(keys, values, key_code, _CODE[dtype])], attrs, name=name)


def _string_keys_allowed(dtype, choice):
    # map(string, int64 | float | double) and map(int64, string | float | double)
    return {"int64": True, "string": False}.get(dtype, choice)


@op.strategy(1)
def draw(d, dtype, opset):
    string_keys = _string_keys_allowed(dtype, d(S.st.booleans()))
    if string_keys:
        vocab = d(S.st.lists(S.st.text(alphabet="abcXYZ", max_size=3), min_size=1, max_size=6, unique=True))
    else:
        vocab = d(S.st.lists(S.st.integers(-2**63, 2**63 - 1), min_size=1, max_size=6, unique=True))
    keys = d(S.st.lists(S.st.sampled_from(vocab), max_size=len(vocab), unique=True))
    if dtype == "string":
        values = d(S.st.lists(S.st.text(alphabet="xyz0", max_size=3), min_size=len(keys), max_size=len(keys)))
    elif dtype == "int64":
        values = d(S.st.lists(S.st.integers(-2**63, 2**63 - 1), min_size=len(keys), max_size=len(keys)))
    else:
        values = d(S.st.lists(S.st.floats(allow_nan=True, allow_infinity=True, width=32 if dtype == "float32" else 64),
                              min_size=len(keys), max_size=len(keys)))
    return _example(dtype, string_keys, vocab, keys, values)


@op.edges(1)
def edges(dtype, opset):
    out = []
    for string_keys in (True, False):
        if _string_keys_allowed(dtype, string_keys) != string_keys:
            continue
        vocab = ["a", "c", "b", "z"] if string_keys else [10, -3, 0, 2**62]
        e = S.edge_values(dtype)
        out += [_example(dtype, string_keys, vocab, vocab[:2], [4, 8] if dtype != "string" else ["4", "8"], name=f"spec_example_{'s' if string_keys else 'i'}"),
                _example(dtype, string_keys, vocab, vocab, [e[0], e[1], e[-2], e[-1]], name=f"edge_values_{'s' if string_keys else 'i'}"),
                _example(dtype, string_keys, vocab, [], [], name=f"empty_map_{'s' if string_keys else 'i'}")]
        if S.is_float(dtype):  # the smallest subnormal and normal, both signs
            out.append(_example(dtype, string_keys, vocab, vocab, [e[7], e[8], e[9], -e[9]], name=f"subnormal_{'s' if string_keys else 'i'}"))
    return out
