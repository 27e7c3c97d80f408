"""Values as cases carry them, and their protobuf files.

A value is a numpy array (ml_dtypes arrays for bfloat16, float8 and int4, as
``onnx.numpy_helper`` gives them; object arrays of ``str`` for strings), a list of values for
a sequence, a dict for a map, or ``None`` for an empty optional. Files follow the
``onnx_test_runner`` layout: ``input_K.pb`` / ``output_K.pb`` holding a TensorProto,
SequenceProto, MapProto or OptionalProto as the graph's declared type says.

Where a value alone cannot tell its graph type (an empty sequence, an optional), an operator
module gives it as :class:`Typed` (value and TypeProto); a reference sees a sequence as a
:class:`SeqList`, a list that knows its element type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper


def _kind(type_proto: onnx.TypeProto | None) -> str:
    if type_proto is None:
        return "tensor_type"
    return type_proto.WhichOneof("value") or "tensor_type"


def from_proto_bytes(data: bytes, type_proto: onnx.TypeProto | None = None) -> Any:
    kind = _kind(type_proto)
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return _str_keys(numpy_helper.to_list(proto))
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return _str_keys(numpy_helper.to_dict(proto))
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        if not any(proto.HasField(f) for f in ("tensor_value", "sparse_tensor_value", "sequence_value", "map_value", "optional_value")):
            return None  # an empty optional
        return numpy_helper.to_optional(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def _str_keys(value: Any) -> Any:
    """String map keys as ``str`` (``numpy_helper.to_dict`` gives bytes), in maps and sequences of maps."""
    if isinstance(value, dict):
        return {k.decode() if isinstance(k, bytes) else k: v.item() if isinstance(v, np.ndarray) and v.dtype == object and v.ndim == 0 else v
                for k, v in value.items()}
    if isinstance(value, list):
        return [_str_keys(v) for v in value]
    return value


def to_proto(value: Any, name: str, type_proto: onnx.TypeProto | None = None) -> Any:
    kind = _kind(type_proto)
    if kind == "sequence_type":
        elem = type_proto.sequence_type.elem_type  # type: ignore[union-attr]
        if elem.HasField("map_type"):  # maps of the declared types (from_list would guess them)
            seq = onnx.SequenceProto(name=name, elem_type=onnx.SequenceProto.MAP)
            seq.map_values.extend(_map_proto(v, "", elem.map_type) for v in value)
            return seq
        return numpy_helper.from_list(list(value), name, _elem_code(elem))
    if kind == "map_type":
        return _map_proto(value, name, type_proto.map_type)  # type: ignore[union-attr]
    if kind == "optional_type":
        elem = type_proto.optional_type.elem_type  # type: ignore[union-attr]
        return numpy_helper.from_optional(value, name, _elem_code(elem))
    return numpy_helper.from_array(np.asarray(value) if not isinstance(value, np.ndarray) else value, name)


def _map_proto(value: dict, name: str, map_type: Any) -> onnx.MapProto:
    """A MapProto of the declared key and value types (numpy_helper.from_dict refuses an empty map
    and string keys): keys as int64s or string_keys, values a sequence of scalar tensors."""
    proto = onnx.MapProto(name=name, key_type=map_type.key_type)
    keys = list(value)
    if map_type.key_type == onnx.TensorProto.STRING:
        proto.string_keys.extend(k.encode() if isinstance(k, str) else bytes(k) for k in keys)
    else:
        proto.keys.extend(int(k) for k in keys)
    code = map_type.value_type.tensor_type.elem_type
    dtype = object if code == onnx.TensorProto.STRING else onnx.helper.tensor_dtype_to_np_dtype(code)
    proto.values.CopyFrom(numpy_helper.from_list([np.asarray(value[k], dtype=dtype) for k in keys], "", onnx.SequenceProto.TENSOR)
                          if keys else onnx.SequenceProto(elem_type=onnx.SequenceProto.TENSOR))
    return proto


def _elem_code(type_proto: onnx.TypeProto) -> int:
    kind = type_proto.WhichOneof("value")
    return {
        "tensor_type": onnx.SequenceProto.TENSOR,
        "sequence_type": onnx.SequenceProto.SEQUENCE,
        "map_type": onnx.SequenceProto.MAP,
        "optional_type": onnx.SequenceProto.OPTIONAL,
        "sparse_tensor_type": onnx.SequenceProto.SPARSE_TENSOR,
    }.get(kind or "", onnx.SequenceProto.TENSOR)


def read_value(path: Path, type_proto: onnx.TypeProto | None = None) -> Any:
    return from_proto_bytes(Path(path).read_bytes(), type_proto)


def write_value(path: Path, value: Any, name: str, type_proto: onnx.TypeProto | None = None) -> None:
    Path(path).write_bytes(to_proto(value, name, type_proto).SerializeToString())


class TypedMap(dict):
    """A map value that names its key and value element types (ONNX codes), so that an empty map
    (or one of Python scalars) still has a type: ``TypedMap({1: 0.5}, key=INT64, value=FLOAT)``."""

    def __init__(self, items: Any = (), key: int = onnx.TensorProto.INT64, value: int = onnx.TensorProto.FLOAT) -> None:
        super().__init__(items)
        self.key_type, self.value_type = key, value


class TypedSeq(list):
    """A sequence value that names its element type (a TypeProto), so that an empty one still has a
    type (ZipMap over an empty batch: ``TypedSeq([], elem=map(int64, tensor(float)))``)."""

    def __init__(self, items: Any = (), elem: onnx.TypeProto | None = None) -> None:
        super().__init__(items)
        self.elem_type = elem


def _map_type(value: dict) -> onnx.TypeProto:
    if isinstance(value, TypedMap):
        key, val = value.key_type, value.value_type
    else:
        if not value:
            raise ValueError("an empty plain dict has no key or value type: use values.TypedMap")
        k, v = next(iter(value.items()))
        key = onnx.TensorProto.STRING if isinstance(k, str) else onnx.TensorProto.INT64
        val = dtype_to_onnx(np.asarray(v).dtype)
    return onnx.helper.make_map_type_proto(key, onnx.helper.make_tensor_type_proto(val, None))


def infer_type(value: Any) -> onnx.TypeProto:
    """A TypeProto describing ``value``, for values whose graph type is unknown."""
    if isinstance(value, dict):
        return _map_type(value)
    if isinstance(value, TypedSeq) and value.elem_type is not None:
        return onnx.helper.make_sequence_type_proto(value.elem_type)
    if isinstance(value, list):
        inner = infer_type(value[0]) if value else onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None)
        return onnx.helper.make_sequence_type_proto(inner)
    if value is None:
        return onnx.helper.make_optional_type_proto(onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None))
    arr = np.asarray(value)
    return onnx.helper.make_tensor_type_proto(dtype_to_onnx(arr.dtype), arr.shape)


def dtype_to_onnx(dtype: np.dtype) -> int:
    if dtype == object or dtype.kind in "US":
        return onnx.TensorProto.STRING
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def dtype_name(dtype: Any) -> str:
    dtype = np.dtype(dtype)
    if dtype == object or dtype.kind in "US":
        return "string"
    return dtype.name


def plain_value(value: Any) -> Any:
    """A runtime's output as a value: numpy scalars become 0-d arrays, tuples become lists."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return value


def describe(value: Any) -> str:
    """A short human description: ``float32[2,3]``, ``seq(float32[2])x3``, ``optional(empty)``."""
    if value is None:
        return "optional(empty)"
    if isinstance(value, list):
        inner = describe(value[0]) if value else "?"
        return f"seq({inner})x{len(value)}"
    if isinstance(value, dict):
        return f"map x{len(value)}"
    arr = np.asarray(value)
    return f"{dtype_name(arr.dtype)}[{','.join(str(d) for d in arr.shape)}]"


class Typed:
    """A value with its ONNX type spelled out, for the values whose type the value alone cannot
    tell: an empty sequence (its element type), an optional (empty or not: ``None`` or the
    element), a sequence declared with unknown element shapes. An operator module gives one as
    an input or a reference output; the case carries ``value`` and declares ``type`` in the graph."""

    __slots__ = ("value", "type")

    def __init__(self, value: Any, type_proto: onnx.TypeProto) -> None:
        self.value = value
        self.type = type_proto

    def __repr__(self) -> str:
        return f"Typed({describe(self.value)}: {type_text(self.type)})"


def tensor_type(elem: int, shape: Any = None) -> onnx.TypeProto:
    return onnx.helper.make_tensor_type_proto(elem, shape)


def sequence_type(elem: int) -> onnx.TypeProto:
    """``seq(tensor(elem))`` with element shapes left unknown (the elements may differ)."""
    return onnx.helper.make_sequence_type_proto(tensor_type(elem))


def optional_type(inner: onnx.TypeProto) -> onnx.TypeProto:
    return onnx.helper.make_optional_type_proto(inner)


def type_text(tp: onnx.TypeProto | None) -> str:
    """``seq(tensor(float))``, ``optional(tensor(int64))``: a type's kind and element, no shapes."""
    if tp is None:
        return "?"
    kind = tp.WhichOneof("value")
    if kind == "sequence_type":
        return f"seq({type_text(tp.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_text(tp.optional_type.elem_type)})"
    if kind == "map_type":
        return f"map({tp.map_type.key_type},{type_text(tp.map_type.value_type)})"
    if kind == "tensor_type":
        elem = tp.tensor_type.elem_type
        return f"tensor({onnx.helper.tensor_dtype_to_string(elem).split('.')[-1].lower() if elem else '?'})"
    return kind or "?"


def leaves(value: Any) -> list[Any]:
    """The tensors inside a value (a sequence's elements, an optional's content; none for an
    empty optional or sequence), unwrapping :class:`Typed`."""
    if isinstance(value, Typed):
        value = value.value
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    return [value]


def innermost_elem(tp: onnx.TypeProto) -> int:
    """The tensor element type at the bottom of a sequence/optional type (0 when unknown)."""
    kind = tp.WhichOneof("value")
    if kind == "sequence_type":
        return innermost_elem(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return innermost_elem(tp.optional_type.elem_type)
    if kind == "tensor_type":
        return tp.tensor_type.elem_type
    return 0


class SeqList(list):
    """A sequence as a reference sees it: a list that knows its element type (``elem``, an ONNX
    element type), so that an empty sequence still has one."""

    elem: int = 0

    def __init__(self, items: Any = (), elem: int = 0) -> None:
        super().__init__(items)
        self.elem = elem


def reference_value(value: Any) -> Any:
    """What a reference is given for an input: :class:`Typed` unwrapped, a sequence (or an
    optional holding one) as a :class:`SeqList` carrying its element type."""
    if not isinstance(value, Typed):
        return value
    if isinstance(value.value, list):
        return SeqList(value.value, innermost_elem(value.type))
    return value.value


def attribute_value(attr: onnx.AttributeProto) -> Any:
    """An attribute as our references take it by keyword: strings decoded, tensors as arrays."""
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value
