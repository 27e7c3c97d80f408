"""CastMap (ai.onnx.ml): a map(int64, string | float) to a tensor of its values ordered by key,
cast to float, string or int64 (ONNX spec: CastMap-1).

"The map key must be an int64 and the values will be ordered in ascending order based on this
key. [...] If using sparse packing, the key cannot exceed the max_map-1 value": DENSE gives the
values in key order, SPARSE a tensor of max_map values with each value at its key's position (the
others 0, "" for strings: spec-silent ``sparse_gap``). The output is [1, count], one row, as ONNX
Runtime and onnx.reference give (the spec names no shape; a shape cannot be a spec-silent point).
Casts: a string value to float or int64 is read as a number ("2.5", "-3"; strings are drawn as
numbers); float to int64 truncates toward zero (as Cast); float to string writes the shortest
decimal that reads back as the float32 (spec-silent ``to_string``: ONNX Runtime writes "%f").
"""

import numpy as np
from onnx import TensorProto

from harness import strategies as S
from harness.registry import Example, Operator
from harness.values import TypedMap

from ._ml_util import ML, as_str, text_array

op = Operator("CastMap", domain=ML, type_param="T2")
_TO = {"float32": "TO_FLOAT", "string": "TO_STRING", "int64": "TO_INT64"}


def shortest_float32(v) -> str:
    """The shortest decimal that reads back as the float32 value (numpy's float32 repr: '660874.6' for
    660874.625, '1e-07'), an integral value without its '.0' ('3', '-0', '1e+09'); 'nan', 'inf'."""
    return str(np.float32(v)).removesuffix(".0")


def _cast(v, to):
    if to == "TO_STRING":
        return as_str(v) if isinstance(v, str) else shortest_float32(v)
    f = float(v) if isinstance(v, str) else float(np.float32(v))
    if to == "TO_FLOAT":
        return np.float32(f)
    return int(f)  # truncation toward zero


@op.reference(1)
def cast_map(x, *, cast_to="TO_FLOAT", map_form="DENSE", max_map=1):
    to, form = as_str(cast_to), as_str(map_form)
    keys = sorted(x)
    if form == "SPARSE":
        if any(k < 0 or k >= max_map for k in keys):
            raise ValueError(f"a key outside [0, max_map - 1 = {max_map - 1}]: {keys}")
        values = [_cast(x[k], to) if k in x else ("" if to == "TO_STRING" else 0) for k in range(max_map)]
    else:
        values = [_cast(x[k], to) for k in keys]
    if to == "TO_STRING":
        return text_array(values).reshape(1, -1)
    return np.array(values, dtype=np.float32 if to == "TO_FLOAT" else np.int64).reshape(1, -1)


def _to_string_open(inputs, attrs, expected, since):
    x = inputs[0]
    if as_str(attrs.get("cast_to", "TO_FLOAT")) != "TO_STRING" or getattr(x, "value_type", None) != TensorProto.FLOAT:
        return [None]
    return [np.ones(np.shape(expected[0]), dtype=bool)]


def _reads_back(c):
    e = np.asarray(c.expected[0]).reshape(-1)
    a = np.asarray(c.actual[0]).reshape(-1)
    if a.size != e.size:
        return False
    try:
        return bool(np.allclose([float(as_str(v) or 0) for v in a], [float(v or 0) for v in e], rtol=1e-5, atol=1e-6, equal_nan=True))
    except ValueError:
        return False


op.spec_silent(
    "to_string", (1,),
    spec="A string indicating the desired element type of the output tensor, one of 'TO_FLOAT', 'TO_STRING', 'TO_INT64'.",
    expected="the shortest decimal that reads back as the float32 value (numpy's float32 repr, an integral value without '.0'; "
             "'nan', 'inf'); the spec names no format",
    where=_to_string_open,
    invariants={"each string reads back as the value (within float32 precision)": _reads_back},
    readings={"printf's %f (six decimals: C++ std::to_string)": lambda c: [_printf_f(c)]})


def _printf_f(c) -> np.ndarray:
    e = np.asarray(c.expected[0])
    return np.array([f"{float(np.float32(as_str(v))):f}" if as_str(v) else "" for v in e.reshape(-1)], dtype=object).reshape(e.shape)
op.spec_silent(
    "sparse_gap", (1,),
    spec="Indicates whether to only output as many values as are in the input (dense), or position the input based on "
         "using the key of the map as the index of the output (sparse).",
    expected="a position no key names holds 0 (\"\" for strings): the zero of the type",
    where=lambda inputs, attrs, expected, since: [np.array([[k not in inputs[0] for k in range(int(attrs.get("max_map", 1)))]])
                                                 if as_str(attrs.get("map_form", "DENSE")) == "SPARSE" else None],
    invariants={"the output holds max_map values": lambda c: np.size(c.actual[0]) == np.size(c.expected[0])})


def _map(keys, values, strings):
    if strings:
        return TypedMap({int(k): as_str(v) for k, v in zip(keys, values)}, key=TensorProto.INT64, value=TensorProto.STRING)
    return TypedMap({int(k): np.float32(v) for k, v in zip(keys, values)}, key=TensorProto.INT64, value=TensorProto.FLOAT)


@op.strategy(1)
def draw(d, dtype, opset):
    strings = d(S.st.booleans())
    sparse = d(S.st.booleans())
    max_map = d(S.st.integers(1, 6))
    keys = d(S.st.lists(S.st.integers(0, max_map - 1) if sparse else S.st.integers(-2**63, 2**63 - 1), max_size=5, unique=True))
    if strings:
        values = [str(d(S.st.integers(-100, 100))) if dtype == "int64" else str(d(S.st.integers(-400, 400)) / 4) for _ in keys]
    else:
        values = [d(S.st.floats(-1e6, 1e6, width=32)) if dtype != "int64" else d(S.st.integers(-1000, 1000)) / 4 for _ in keys]
    attrs = {"cast_to": _TO[dtype]}
    if sparse:
        attrs.update(map_form="SPARSE", max_map=max_map)
    return Example([_map(keys, values, strings)], attrs)


@op.edges(1)
def edges(dtype, opset):
    to = {"cast_to": _TO[dtype]}
    out = [Example([_map([3, -1, 2**62], ["1", "-2", "0"], True)], to, name="strings_dense"),
           Example([_map([3, 0], ["1", "7"], True)], {**to, "map_form": "SPARSE", "max_map": 5}, name="strings_sparse"),
           Example([_map([], [], False)], to, name="empty_map"),
           Example([_map([], [], False)], {**to, "map_form": "SPARSE", "max_map": 2}, name="empty_map_sparse")]
    if dtype == "int64":
        out.append(Example([_map([0, 1, 2, 3, 4], [2.5, -2.5, 0.75, -0.0, 1e9], False)], to, name="truncation"))
    else:
        e = S.edge_values("float32")
        out.append(Example([_map(range(e.size), e, False)], to, name="edge_values"))
    return out
