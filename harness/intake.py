"""Model intake: what a model must satisfy before any backend sees it.

A conformance harness is pointed at model files from anywhere. Everything here refuses with
one clear line (:class:`~harness.case.ModelIntakeError`): files over a size limit, opsets newer
than the installed onnx knows, subgraphs nested deeper than a limit, graphs with cycles or
undefined inputs, and graphs whose declared or inferred tensors would exceed the memory limit
(ConstantOfShape or Expand to 10^12 elements, say). Loading itself (not ONNX, truncated,
external data escaping the folder) is refused by :func:`harness.case.load_model_file`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

from . import schema
from .case import ModelIntakeError

GIB = 1 << 30
# ops whose output size is set by a value, not by an input's size
_SIZE_FROM_VALUE = {"ConstantOfShape", "Expand", "Tile", "Range", "Resize", "Upsample", "Pad", "OneHot", "EyeLike",
                    "RandomNormal", "RandomUniform", "Reshape", "CenterCropPad", "Col2Im"}


@dataclass(frozen=True)
class Limits:
    max_model_bytes: int = 4 * GIB
    max_tensor_bytes: int = 4 * GIB
    max_nesting: int = 16
    max_nodes: int = 1_000_000


def check_model(model: onnx.ModelProto, limits: Limits = Limits(), size: int | None = None) -> None:
    """Raise ModelIntakeError when ``model`` must not be run; return None otherwise."""
    if size is not None and size > limits.max_model_bytes:
        raise ModelIntakeError(f"model is {size / GIB:.2f} GiB, over the {limits.max_model_bytes / GIB:.2f} GiB limit")
    newest = schema.newest_opset("")
    for imp in model.opset_import:
        if schema.canonical_domain(imp.domain) == "" and imp.version > newest:
            raise ModelIntakeError(f"model imports ai.onnx opset {imp.version}, newer than the installed onnx knows ({newest})")
    functions = {(f.domain, f.name) for f in model.functions}
    outer = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer} | {t.name for t in model.graph.sparse_initializer}
    count = _check_graph(model.graph, outer, 0, limits, functions)
    if count > limits.max_nodes:
        raise ModelIntakeError(f"model has {count} nodes, over the {limits.max_nodes} limit")
    _check_sizes(model, limits)


def _check_graph(graph: onnx.GraphProto, scope: set[str], depth: int, limits: Limits, functions: set) -> int:
    if depth > limits.max_nesting:
        raise ModelIntakeError(f"subgraphs nested deeper than {limits.max_nesting} levels")
    defined = set(scope) | {i.name for i in graph.input} | {t.name for t in graph.initializer} | {t.name for t in graph.sparse_initializer}
    produced_later = {o for n in graph.node for o in n.output if o}
    count = 0
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                if name in produced_later:
                    raise ModelIntakeError(f"graph {graph.name!r} has a cycle or is not topologically sorted: node {node.name or node.op_type!r} reads {name!r} before it is produced")
                raise ModelIntakeError(f"graph {graph.name!r}: node {node.name or node.op_type!r} reads {name!r}, which nothing defines")
        count += 1
        for attr in node.attribute:
            subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs) if attr.type == onnx.AttributeProto.GRAPHS else []
            for g in subgraphs:
                count += _check_graph(g, defined, depth + 1, limits, functions)
        defined.update(o for o in node.output if o)
    return count


def _nbytes(type_proto: onnx.TypeProto) -> int | None:
    if type_proto.WhichOneof("value") != "tensor_type" or not type_proto.tensor_type.HasField("shape"):
        return None
    n = 1
    for dim in type_proto.tensor_type.shape.dim:
        if not dim.HasField("dim_value"):
            return None
        n *= max(dim.dim_value, 0)
    return n * _itemsize(type_proto.tensor_type.elem_type)


@functools.lru_cache(maxsize=None)
def _itemsize(elem_type: int) -> int:
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).itemsize
    except KeyError:  # an element type onnx maps to no numpy dtype (UNDEFINED, an unknown number): 8 bytes an element
        return 8


def _check_sizes(model: onnx.ModelProto, limits: Limits) -> None:
    graph = model.graph
    infos = [*graph.input, *graph.output, *graph.value_info]
    if any(n.op_type in _SIZE_FROM_VALUE for n in schema.iter_nodes(graph)):
        _check_shape_values(graph, limits)
        try:
            inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
            infos = [*inferred.graph.input, *inferred.graph.output, *inferred.graph.value_info]
        except Exception:
            pass  # an invalid graph is the backend's to reject; sizes are what we guard here
    for info in infos:
        nbytes = _nbytes(info.type)
        if nbytes is not None and nbytes > limits.max_tensor_bytes:
            raise ModelIntakeError(f"tensor {info.name!r} would take {nbytes / GIB:.1f} GiB, over the {limits.max_tensor_bytes / GIB:.1f} GiB memory limit")


def _check_shape_values(graph: onnx.GraphProto, limits: Limits) -> None:
    """Shapes given as constants to ConstantOfShape / Expand / Reshape, checked before any
    inference: a 10^12-element request is refused even when inference cannot follow it."""
    consts = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    consts[node.output[0]] = attr.t
    for node in graph.node:
        if node.op_type in ("ConstantOfShape", "Expand", "Reshape") and len(node.input) >= 1:
            shape_input = node.input[0] if node.op_type == "ConstantOfShape" else (node.input[1] if len(node.input) > 1 else "")
            tensor = consts.get(shape_input)
            if tensor is None or tensor.data_type != onnx.TensorProto.INT64:
                continue
            dims = numpy_helper.to_array(tensor).astype(object)
            if dims.ndim == 1 and dims.size and all(d > 0 for d in dims):
                elements = int(np.prod(dims))
                if elements * 4 > limits.max_tensor_bytes:
                    raise ModelIntakeError(f"{node.op_type} node {node.name or node.output[0]!r} asks for {elements:.3g} elements, over the {limits.max_tensor_bytes / GIB:.1f} GiB memory limit")
