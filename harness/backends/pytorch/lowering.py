"""The lowering of the PyTorch backend: an ONNX graph lowered node by node to torch, then run.

``lower_model`` decides everything it can once, at prepare time:

- model-local functions are inlined (``onnx.inliner``) and element types inferred
  (``onnx.shape_inference``), so each node knows the ONNX types of its inputs and outputs;
- every node, subgraphs included, is bound to the lowering registered for its op-version
  (the schema in force at the model's opset); a node without one makes the whole model
  ``Unsupported("no lowering for Op-<since_version>")`` before anything runs;
- attributes are converted once (tensors to torch, graphs to lowered :class:`Graph` objects,
  missing attributes filled with the spec's defaults).

``Graph.run`` then walks the steps eagerly. Nodes with graph attributes (If, Loop, Scan,
SequenceMap) also get the keyword ``outer``: the values in scope, which their bodies may read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import onnx.defs
import onnx.inliner
import onnx.shape_inference
import torch
from onnx import numpy_helper

from ..base import Unsupported
from . import dtypes
from ..lowering import (LoweredGraph, NodeNaming, Step, attribute_value, check_lowered, domain_of, node_attributes, since_version,
                        sparse_to_dense)
from .registry import LOWERINGS, lookup

_ATTR = onnx.AttributeProto




@dataclass
class NodeContext(NodeNaming):
    """What a lowering may know about its node besides inputs and attributes."""

    op: str
    domain: str
    since: int
    opset: int
    name: str
    device: torch.device
    #: output names; "" for an output the model does not ask for
    outputs: list[str]
    #: ONNX element types of inputs / outputs where known (tensors; the element type of
    #: sequences and optionals), else None
    in_types: list[int | None] = field(default_factory=list)
    out_types: list[int | None] = field(default_factory=list)
    #: static input shapes where inference found them (None entries for unknown dims)
    in_shapes: list[tuple[int | None, ...] | None] = field(default_factory=list)

    def out_type(self, k: int = 0) -> int | None:
        return self.out_types[k] if k < len(self.out_types) else None

    def in_type(self, k: int = 0) -> int | None:
        return self.in_types[k] if k < len(self.in_types) else None


class Graph(LoweredGraph):
    """A lowered (sub)graph."""

    def __init__(self, proto: onnx.GraphProto, model: LoweringContext) -> None:
        self.name = proto.name
        self.inputs = [i.name for i in proto.input]
        self.input_types = [i.type for i in proto.input]
        self.outputs = [o.name for o in proto.output]
        self.output_types = [o.type for o in proto.output]
        self.initializers: dict[str, Any] = {}
        for init in proto.initializer:
            self.initializers[init.name] = model.tensor(numpy_helper.to_array(init), init.data_type)
        for sparse in proto.sparse_initializer:
            self.initializers[sparse.values.name] = model.tensor(sparse_to_dense(sparse), sparse.values.data_type)
        self.steps = [model.step(node) for node in proto.node]

    def settle(self, step: Step, result: tuple) -> tuple:
        """Outputs carried in a wider integer type wrap to their ONNX type."""
        for k, code in step.wrap:
            if k < len(result) and isinstance(result[k], torch.Tensor):
                result = result[:k] + (dtypes.wrap(result[k], code),) + result[k + 1:]
        return result


class LoweringContext:
    """Model-wide facts used while lowering: opsets, inferred types, the device."""

    def __init__(self, model: onnx.ModelProto, device: torch.device) -> None:
        self.device = device
        self.opsets = {domain_of(i.domain): i.version for i in model.opset_import}
        self.types: dict[str, onnx.TypeProto] = {}
        self.shapes: dict[str, tuple[int | None, ...]] = {}
        self._collect_types(model.graph)

    def _collect_types(self, graph: onnx.GraphProto) -> None:
        for info in (*graph.input, *graph.output, *graph.value_info):
            if info.type.WhichOneof("value"):
                self.types.setdefault(info.name, info.type)
                if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
                    self.shapes.setdefault(info.name, tuple(d.dim_value if d.HasField("dim_value") else None
                                                            for d in info.type.tensor_type.shape.dim))
        for init in graph.initializer:
            self.types.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
            self.shapes.setdefault(init.name, tuple(init.dims))
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == _ATTR.GRAPH:
                    self._collect_types(attr.g)
                elif attr.type == _ATTR.GRAPHS:
                    for g in attr.graphs:
                        self._collect_types(g)

    def elem_type(self, name: str) -> int | None:
        tp = self.types.get(name)
        return _elem_type(tp) if tp is not None else None

    def tensor(self, array: np.ndarray, code: int | None = None) -> torch.Tensor:
        if code == onnx.TensorProto.STRING or array.dtype == object:
            raise Unsupported("torch has no string tensors")
        return dtypes.to_torch(array, self.device)

    def step(self, node: onnx.NodeProto) -> Step:
        domain = domain_of(node.domain)
        since = since_version(self.opsets, node)
        fn = lookup(domain, node.op_type, since)
        if fn is None:  # check_lowered() ran first; kept for direct callers
            raise Unsupported(f"no lowering for {node.op_type}-{since}")
        attrs, needs_scope = node_attributes(node, self.opsets, self.attribute)
        out_types = [self.elem_type(n) if n else None for n in node.output]
        ctx = NodeContext(
            op=node.op_type, domain=domain, since=since, opset=self.opsets[domain], name=node.name, device=self.device,
            outputs=list(node.output), in_types=[self.elem_type(n) if n else None for n in node.input], out_types=out_types,
            in_shapes=[self.shapes.get(n) if n else None for n in node.input],
        )
        wrap = [(k, code) for k, code in enumerate(out_types) if code in dtypes.WRAPPED]
        return Step(fn, ctx, list(node.input), list(node.output), attrs, needs_scope, wrap)

    def attribute(self, attr: onnx.AttributeProto) -> Any:
        return attribute_value(attr, tensor=lambda t: self.tensor(numpy_helper.to_array(t), t.data_type),
                               sparse=lambda sp: self.tensor(sparse_to_dense(sp), sp.values.data_type),
                               graph=lambda g: Graph(g, self), text=_utf8_or_bytes, texts=_utf8_replace)


def _utf8_or_bytes(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _utf8_replace(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _elem_type(tp: onnx.TypeProto) -> int | None:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return tp.tensor_type.elem_type or None
    if kind == "sequence_type":
        return _elem_type(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return _elem_type(tp.optional_type.elem_type)
    if kind == "sparse_tensor_type":
        return tp.sparse_tensor_type.elem_type or None
    return None


def _uses_strings(model: onnx.ModelProto) -> bool:
    def of(tp: onnx.TypeProto) -> bool:
        return _elem_type(tp) == onnx.TensorProto.STRING

    graph = model.graph
    return any(of(i.type) for i in (*graph.input, *graph.output))


def lower_model(model: onnx.ModelProto, device: torch.device) -> tuple[Graph, LoweringContext]:
    """Check coverage, then lower ``model``; raises Unsupported before any conversion."""
    if model.functions:
        model = onnx.inliner.inline_local_functions(model)
    check_lowered(model.graph, LoweringContext(model, device).opsets, LOWERINGS)
    if _uses_strings(model):
        raise Unsupported("torch has no string tensors")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # types then come from the graph's own declarations only
        inferred = model
    ctx = LoweringContext(inferred, device)
    return Graph(inferred.graph, ctx), ctx


# -- values at the interface ----------------------------------------------------------------
def feed_value(value: Any, tp: onnx.TypeProto | None, device: torch.device) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [feed_value(v, None, device) for v in value]
    if isinstance(value, dict):
        raise Unsupported("torch backend: map values are not supported")
    return dtypes.to_torch(np.asarray(value), device)


def result_value(value: Any, tp: onnx.TypeProto | None) -> Any:
    if value is None:
        return None
    code = _elem_type(tp) if tp is not None else None
    if isinstance(value, (list, tuple)):
        inner = None
        if tp is not None and tp.WhichOneof("value") == "sequence_type":
            inner = tp.sequence_type.elem_type
        elif tp is not None and tp.WhichOneof("value") == "optional_type":
            inner = tp.optional_type.elem_type
            if inner.WhichOneof("value") == "sequence_type":
                inner = inner.sequence_type.elem_type
        return [result_value(v, inner) for v in value]
    if isinstance(value, torch.Tensor):
        return dtypes.to_numpy(value, code)
    return np.asarray(value)
