"""The lowering of the TensorFlow backends: an ONNX graph lowered node by node to TensorFlow, then run.

``lower_model`` decides what it can once, at prepare time: model-local functions are inlined,
element types inferred (``onnx.shape_inference``), every node bound to the lowering registered
for its op-version (a node without one makes the model ``Unsupported("no lowering for
Op-<since>")`` before anything runs) and its attributes converted, with the spec's defaults.
``Graph.run`` walks the steps; the backends call it eagerly, inside a ``tf.function`` (graph
mode) or inside a ``tf.function(jit_compile=True)`` (XLA).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnx.checker
import onnx.defs
import onnx.inliner
import onnx.shape_inference
import tensorflow as tf
from onnx import TensorProto as TP
from onnx import numpy_helper

from ..base import Unsupported
from ..lowering import LoweredGraph, NodeNaming, Step, attribute_value, check_lowered, domain_of, node_attributes, since_version
from .registry import LOWERINGS

_ATTR = onnx.AttributeProto

#: ONNX element type -> the TensorFlow dtype that holds it exactly (the others are unsupported)
DTYPES: dict[int, tf.DType] = {
    TP.FLOAT: tf.float32, TP.DOUBLE: tf.float64, TP.FLOAT16: tf.float16, TP.BFLOAT16: tf.bfloat16,
    TP.INT8: tf.int8, TP.INT16: tf.int16, TP.INT32: tf.int32, TP.INT64: tf.int64,
    TP.UINT8: tf.uint8, TP.UINT16: tf.uint16, TP.UINT32: tf.uint32, TP.UINT64: tf.uint64,
    TP.BOOL: tf.bool, TP.STRING: tf.string, TP.COMPLEX64: tf.complex64, TP.COMPLEX128: tf.complex128,
    # TensorFlow's narrow types (ml_dtypes'); which kernels each has is TensorFlow's to say
    TP.FLOAT8E4M3FN: tf.dtypes.experimental.float8_e4m3fn, TP.FLOAT8E4M3FNUZ: tf.dtypes.experimental.float8_e4m3fnuz,
    TP.FLOAT8E5M2: tf.dtypes.experimental.float8_e5m2, TP.FLOAT8E5M2FNUZ: tf.dtypes.experimental.float8_e5m2fnuz,
    TP.FLOAT4E2M1: tf.dtypes.experimental.float4_e2m1fn, TP.INT4: tf.dtypes.experimental.int4,
    TP.UINT4: tf.dtypes.experimental.uint4, TP.INT2: tf.dtypes.experimental.int2, TP.UINT2: tf.dtypes.experimental.uint2,
}
#: numpy dtype -> ONNX element type, for values crossing the interface
_NUMPY_CODE = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.float64): TP.DOUBLE, np.dtype(np.float16): TP.FLOAT16,
               np.dtype(ml_dtypes.bfloat16): TP.BFLOAT16, np.dtype(np.int8): TP.INT8, np.dtype(np.int16): TP.INT16,
               np.dtype(np.int32): TP.INT32, np.dtype(np.int64): TP.INT64, np.dtype(np.uint8): TP.UINT8,
               np.dtype(np.uint16): TP.UINT16, np.dtype(np.uint32): TP.UINT32, np.dtype(np.uint64): TP.UINT64,
               np.dtype(np.bool_): TP.BOOL, np.dtype(np.complex64): TP.COMPLEX64, np.dtype(np.complex128): TP.COMPLEX128,
               **{np.dtype(DTYPES[code].as_numpy_dtype): code for code in (
                   TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ, TP.FLOAT4E2M1, TP.INT4, TP.UINT4, TP.INT2, TP.UINT2)}}


def tf_dtype(code: int) -> tf.DType:
    if code not in DTYPES:
        raise Unsupported(f"TensorFlow has no dtype for ONNX {TP.DataType.Name(code)}")
    return DTYPES[code]


_CODE_OF = {dtype: code for code, dtype in DTYPES.items()}


def onnx_code(dtype: tf.DType) -> int:
    """The ONNX element type a TensorFlow dtype holds."""
    return _CODE_OF[dtype]


def to_tensor(value: Any) -> Any:
    """A value crossing the interface: a tensor, a list of them (a sequence) or None (an empty optional)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [to_tensor(v) for v in value]
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind in "US":
        return tf.constant(np.vectorize(lambda s: s.encode("utf-8") if isinstance(s, str) else s, otypes=[object])(array)
                           if array.size else array.astype(object), dtype=tf.string)
    if array.dtype not in _NUMPY_CODE:
        raise Unsupported(f"TensorFlow has no dtype for numpy {array.dtype}")
    return tf.constant(array)


def to_numpy(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [to_numpy(v) for v in value]
    out = np.asarray(value.numpy() if hasattr(value, "numpy") else value)  # a 0-d string comes back as bytes
    if isinstance(value, tf.Tensor) and value.dtype == tf.string:
        return np.vectorize(lambda b: b.decode("utf-8") if isinstance(b, bytes) else b, otypes=[object])(out) if out.size \
            else out.astype(object)
    return out


@dataclass
class NodeContext(NodeNaming):
    """What a lowering may know about its node besides inputs and attributes."""

    op: str
    since: int
    opset: int
    #: output names; "" for an output the model does not ask for
    outputs: list[str]
    #: ONNX element types of inputs / outputs where inference found them, else None
    in_types: list[int | None] = field(default_factory=list)
    out_types: list[int | None] = field(default_factory=list)

    def out_dtype(self, k: int = 0) -> tf.DType | None:
        code = self.out_types[k] if k < len(self.out_types) else None
        return tf_dtype(code) if code else None


class Graph(LoweredGraph):
    """A lowered (sub)graph; trailing absent inputs take the lowerings' Python defaults."""

    trims_absent = True

    def __init__(self, proto: onnx.GraphProto, model: LoweringContext) -> None:
        self.inputs = [i.name for i in proto.input]
        self.outputs = [o.name for o in proto.output]
        self.output_types = [o.type for o in proto.output]
        self.initializers = {init.name: to_tensor(numpy_helper.to_array(init)) for init in proto.initializer}
        if proto.sparse_initializer:
            raise Unsupported("sparse initializers")
        self.steps = [model.step(node) for node in proto.node]



class LoweringContext:
    """Model-wide facts used while lowering: opsets and inferred element types."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.opsets = {domain_of(i.domain): i.version for i in model.opset_import}
        self.types: dict[str, int] = {}
        self._collect(model.graph)

    def _collect(self, graph: onnx.GraphProto) -> None:
        for info in (*graph.input, *graph.output, *graph.value_info):
            if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
                self.types.setdefault(info.name, info.type.tensor_type.elem_type)
        for init in graph.initializer:
            self.types.setdefault(init.name, init.data_type)
        for node in graph.node:
            for attr in node.attribute:
                for g in ([attr.g] if attr.type == _ATTR.GRAPH else list(attr.graphs)):
                    self._collect(g)

    def step(self, node: onnx.NodeProto) -> Step:
        domain = domain_of(node.domain)
        since = since_version(self.opsets, node)
        attrs, needs_scope = node_attributes(node, self.opsets, self.attribute)
        ctx = NodeContext(node.op_type, since, self.opsets[domain], list(node.output),
                          [self.types.get(n) if n else None for n in node.input], [self.types.get(n) if n else None for n in node.output])
        return Step(LOWERINGS[(domain, node.op_type, since)], ctx, list(node.input), list(node.output), attrs, needs_scope)

    def attribute(self, attr: onnx.AttributeProto) -> Any:
        return attribute_value(attr, tensor=lambda t: to_tensor(numpy_helper.to_array(t)), sparse=None,
                               graph=lambda g: Graph(g, self), text=_utf8_replace)


def _utf8_replace(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _element_type(tp: onnx.TypeProto, what: str) -> int:
    """The element type of a tensor, or of the tensors of a sequence or an optional (a list and
    ``None`` here); maps and sparse tensors are unsupported."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return tp.tensor_type.elem_type
    if kind == "sequence_type":
        return _element_type(tp.sequence_type.elem_type, what)
    if kind == "optional_type":
        return _element_type(tp.optional_type.elem_type, what)
    raise Unsupported(f"{what} is a {kind}")


def lower_model(model: onnx.ModelProto) -> Graph:
    """Check coverage, then lower ``model``; raises Unsupported before any conversion."""
    if model.functions:
        model = onnx.inliner.inline_local_functions(model)
    check_lowered(model.graph, LoweringContext(model).opsets, LOWERINGS)
    for info in (*model.graph.input, *model.graph.output):
        tf_dtype(_element_type(info.type, f"graph {'input' if info in model.graph.input else 'output'} {info.name}"))
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):  # types from the graph's declarations only
        inferred = model
    return Graph(inferred.graph, LoweringContext(inferred))
