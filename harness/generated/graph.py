"""A realized graph (its values, nodes and outputs), and which ops' templates apply at an opset and dtype."""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import schema
from .. import strategies as S
from ..case import Tolerance
from ..fuzz_api import (
    QUANT,
    ROUNDOFF,
    Template,
    Value,
)
from ..fuzz_api import TEMPLATES as _TEMPLATES
from ..registry import load_all
from ..tolerances import default_for
from .spec import FLOAT_FORMULA_OPS, SAFETY, GenConfig, GraphSpec


# =============================================================================================
# values and the realized graph
# =============================================================================================
@dataclass
class Node:
    op: str
    since: int
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any]
    spec_index: int
    n_acc: int = 0
    n_outputs: int | None = None
    #: pool values its subgraph attributes read from the enclosing scope (Plan.captures)
    captures: list[str] = field(default_factory=list)
    #: helper nodes placed before it (Plan.steps): (op, since, input names, output names, attrs)
    steps: list[tuple[str, int, list[str], list[str], dict[str, Any]]] = field(default_factory=list)
    #: helper nodes placed after it (Plan.then), the last one giving ``outputs``
    then: list[tuple[str, int, list[str], list[str], dict[str, Any]]] = field(default_factory=list)
    #: the node's own output names when ``then`` follows it (values of the plan only)
    own: list[str] = field(default_factory=list)
    #: absolute error its float outputs are allowed beyond their estimate (Builder.evaluate)
    slack: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.op}-{self.since}"

    @property
    def node_outputs(self) -> list[str]:
        """The outputs of the ONNX node itself (``outputs`` unless helper steps follow it)."""
        return self.own if self.then else self.outputs

    @property
    def locals(self) -> set[str]:
        """Names its helper steps and, when steps follow it, the node produce (seen inside the plan only)."""
        inner = {o for _, _, _, outs, _ in [*self.steps, *self.then] for o in outs} | set(self.own if self.then else ())
        return inner - set(self.outputs)

    @property
    def reads(self) -> list[str]:
        """Every graph value it reads: its inputs, its steps' inputs and its captures."""
        local = self.locals
        return [i for i in [*self.inputs, *(i for s in [*self.steps, *self.then] for i in s[2]), *self.captures]
                if i and i not in local]


@dataclass
class SilentSite:
    """A node whose inputs reached spec-silent points of its op-version (NaN and edge-value
    graphs): its outputs are graph outputs nothing reads, and a backend that differs from our
    value there is judged by the points' readings and invariants (``Comparator.spec_silent``)
    on what is kept here: the node's inputs, attributes and every output, in the graph's dtype."""

    op: str
    since: int
    points: list[str]
    inputs: list[np.ndarray | None]
    attrs: dict[str, Any]
    outputs: list[str]
    expected: list[np.ndarray]


@dataclass
class Graph:
    spec: GraphSpec
    opset: int
    dtype: str
    nan_mode: bool
    inputs: list[Value]
    nodes: list[Node]
    initializers: dict[str, np.ndarray]
    outputs: list[Value]
    #: (spec index, reason) of skipped specs
    skipped: list[tuple[int, str]] = field(default_factory=list)
    #: ops placed whose NaN handling we assume (spec silent) and that saw a NaN input
    nan_assumed_ops: list[str] = field(default_factory=list)
    config: GenConfig = field(default_factory=lambda: GenConfig())
    #: True once graph surgery (fewer outputs, a node cut into an input) changed it: the spec
    #: no longer describes it, the model and data do
    reduced: bool = False
    #: the edge class of its inputs ("" for none: see GenConfig.edge_of)
    edge: str = ""
    #: graph output name -> the spec-silent node that gives it
    silent: dict[str, SilentSite] = field(default_factory=dict)
    #: optimizer patterns placed whole ("MatMulAdd:inside"; harness.generated.patterns)
    patterns: list[str] = field(default_factory=list)

    # -- what a backend sees --------------------------------------------------------------
    def model(self) -> onnx.ModelProto:
        return build_model(self)

    def feeds(self) -> dict[str, np.ndarray]:
        return {v.name: _narrow(v, self.dtype) for v in self.inputs}

    def expected(self) -> list[np.ndarray]:
        return [_narrow(v, self.dtype) for v in self.outputs]

    def tolerances(self) -> list[Tolerance]:
        return [output_tolerance(v, self.dtype, elementwise=bool(self.edge)) for v in self.outputs]

    # -- descriptions ---------------------------------------------------------------------
    @property
    def op_versions(self) -> list[str]:
        return sorted({n.key for n in self.nodes})

    @property
    def pattern(self) -> str:
        """The sorted multiset of op types ("Add+Relu+Relu"): the deduplication key of a finding."""
        return "+".join(sorted(n.op for n in self.nodes))

    def digest(self) -> str:
        data = self.describe() + repr(self.spec)  # a frozen dataclass of ints: repr is stable and cheap
        return f"{zlib.crc32(data.encode()):08x}"

    def describe(self) -> str:
        lines = [f"opset {self.opset}, {self.dtype}{', NaN inputs' if self.nan_mode else ''}"
                 f"{f', {self.edge} edge values' if self.edge else ''}"]
        for v in self.inputs:
            kind = "" if v.kind == "float" else f" ({_narrow(v, self.dtype).dtype})"
            lines.append(f"  input {v.name}: {list(v.shape)}{kind}")
        for name, arr in self.initializers.items():
            lines.append(f"  initializer {name}: {arr.dtype}{list(arr.shape)}" + (f" = {arr.tolist()}" if arr.size <= 8 else ""))
        for n in self.nodes:
            for op, since, ins, outs, sattrs in n.steps:
                text = ", ".join(f"{k}={_attr_text(v)}" for k, v in sattrs.items())
                lines.append(f"  {', '.join(outs)} = {op}-{since}({', '.join(ins)}{'; ' + text if text else ''})")
            attrs = ", ".join(f"{k}={_attr_text(v)}" for k, v in n.attrs.items())
            caps = f"; captures {', '.join(n.captures)}" if n.captures else ""
            lines.append(f"  {', '.join(n.node_outputs)} = {n.key}({', '.join(n.inputs)}{'; ' + attrs if attrs else ''}{caps})")
            for op, since, ins, outs, sattrs in n.then:
                text = ", ".join(f"{k}={_attr_text(v)}" for k, v in sattrs.items())
                lines.append(f"  {', '.join(outs)} = {op}-{since}({', '.join(ins)}{'; ' + text if text else ''})")
        lines.append(f"  outputs: {', '.join(v.name for v in self.outputs)}")
        for name, site in self.silent.items():
            if any(v.name == name for v in self.outputs):
                lines.append(f"  {name}: reaches spec-silent {', '.join(site.points)}")
        return "\n".join(lines)


def _attr_text(v: Any) -> str:
    """An attribute as describe() shows it: a subgraph as its nodes on one line."""
    if isinstance(v, onnx.GraphProto):
        inits = "".join(f"{t.name}={numpy_helper.to_array(t).tolist()}; " for t in v.initializer)
        body = "; ".join(f"{', '.join(n.output)} = {n.op_type}({', '.join(n.input)})" for n in v.node)
        return f"graph({', '.join(i.name for i in v.input)}) {{ {inits}{body} }} -> {', '.join(o.name for o in v.output)}"
    return repr(v)


def is_exact(dtype: str) -> bool:
    """An integer or bool graph dtype: values are held in the dtype itself, exactly."""
    return dtype not in ROUNDOFF


def _narrow(v: Value, dtype: str) -> np.ndarray:
    if v.kind == "float" and is_exact(dtype):
        return np.asarray(v.wide).astype(S.np_dtype(dtype))
    if v.kind == "float":
        with np.errstate(all="ignore"):
            return v.wide.astype(S.np_dtype(dtype))
    if v.kind == "int":
        return v.wide.astype(np.int64)
    if v.kind == QUANT:
        return v.wide
    return v.wide.astype(bool)


def output_tolerance(v: Value, dtype: str, elementwise: bool = False) -> Tolerance:
    """The tolerance of one output; ``elementwise`` (edge-value graphs, whose magnitudes span
    the dtype's range): the propagated error is an allowance per element (``Tolerance.bound``)
    rather than its maximum for every element."""
    if is_exact(dtype) or v.kind != "float":
        return Tolerance(rtol=0.0, atol=0.0, ulp=None)  # integers and bools: exactly equal
    base = default_for(dtype)
    depth = max(1, v.depth)
    ulp = base.ulp * depth if base.ulp is not None else None
    if elementwise:
        return Tolerance(rtol=base.rtol * depth, atol=base.atol * depth, ulp=ulp, bound=(SAFETY * v.err,))
    err = float(np.max(v.err)) if v.kind == "float" and v.err.size else 0.0
    return Tolerance(rtol=base.rtol * depth, atol=base.atol * depth + SAFETY * err, ulp=ulp)


def combined_tolerance(tols: list[Tolerance]) -> Tolerance:
    """One tolerance for every output of a case: the loosest rtol, atol and ulp, and each
    output's elementwise allowance where it has one."""
    if not tols:
        return Tolerance()
    bound = tuple(t.bound[0] if t.bound is not None else None for t in tols) if any(t.bound is not None for t in tols) else None
    return Tolerance(max(t.rtol for t in tols), max(t.atol for t in tols), max((t.ulp or 0) for t in tols) or None, bound=bound)

# =============================================================================================
# templates (each in its operator's module) and which apply at an opset and dtype
# =============================================================================================
def templates() -> dict[str, Template]:
    """Every op's fuzz template by op name. Operator modules register theirs beside their
    reference (``Operator.fuzz``, :mod:`harness.fuzz_api`), so the registry is loaded first."""
    load_all()
    return _TEMPLATES




@functools.lru_cache(maxsize=None)
def available_ops(opset: int, dtype: str, ops: tuple[str, ...] | None = None,
                  exclude: frozenset[tuple[str, str]] = frozenset()) -> tuple[tuple[str, int], ...]:
    """(op, since_version) for every template whose op-version in force at ``opset`` has a
    registered reference and takes ``dtype`` (sorted by op name, so a spec's op index is stable).
    A type parameter of sequences (SequenceLength's S) takes ``dtype`` when it allows
    ``seq(tensor(dtype))``: the plan builds the sequence from tensors of the graph's dtype."""
    registry = load_all()
    out = []
    for op in sorted(templates()):
        if ops is not None and op not in ops:
            continue
        sch = schema.schema_at(op, opset)
        if sch is None:
            continue
        opv = registry.get(("", op, sch.since_version))
        if opv is None or opv.reference is None or (f"{op}-{sch.since_version}", dtype) in exclude:
            continue
        if is_exact(dtype) and op in FLOAT_FORMULA_OPS:
            continue
        param = templates()[op].type_param
        allowed = schema.allowed_types(sch).get(param) if param else None
        tensor = f"tensor({_onnx_type_name(dtype)})"
        if allowed is not None and tensor not in allowed and f"seq({tensor})" not in allowed:
            continue
        out.append((op, sch.since_version))
    return tuple(out)


def _onnx_type_name(dtype: str) -> str:
    return {"float32": "float", "float64": "double"}.get(dtype, dtype)


def templated_ops() -> list[str]:
    return sorted(templates())


# =============================================================================================
# the ONNX model
# =============================================================================================
def _value_info(v: Value, dtype: str) -> onnx.ValueInfoProto:
    code = S.onnx_code(dtype) if v.kind == "float" else helper.np_dtype_to_tensor_dtype(_narrow(v, dtype).dtype)
    return helper.make_tensor_value_info(v.name, code, list(v.shape))


def _make_node(op: str, opset: int, ins: list[str], outs: list[str], attrs: dict[str, Any], name: str) -> onnx.NodeProto:
    sch = schema.schema_at(op, opset)
    node = helper.make_node(op, ins, outs, name=name)
    node.attribute.extend(helper.make_attribute(a, schema.coerce_attribute(sch, a, v), attr_type=int(sch.attributes[a].type))
                          for a, v in attrs.items())
    return node


def build_model(g: Graph) -> onnx.ModelProto:
    nodes = []
    for i, n in enumerate(g.nodes):
        nodes += [_make_node(op, g.opset, ins, outs, attrs, f"n{i}_{k}_{op}") for k, (op, _, ins, outs, attrs) in enumerate(n.steps)]
        nodes.append(_make_node(n.op, g.opset, n.inputs, n.node_outputs, n.attrs, f"n{i}_{n.op}"))
        nodes += [_make_node(op, g.opset, ins, outs, attrs, f"n{i}_then{k}_{op}") for k, (op, _, ins, outs, attrs) in enumerate(n.then)]
    inits = [numpy_helper.from_array(arr, name) for name, arr in g.initializers.items()]
    graph = helper.make_graph(nodes, f"generated_{g.digest()}", [_value_info(v, g.dtype) for v in g.inputs],
                              [_value_info(v, g.dtype) for v in g.outputs], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", g.opset)], producer_name="onnx-harness-fuzz")
    model.ir_version = schema.ir_for_opset(g.opset)
    return model


class InvalidGraph(ValueError):
    """A drawn graph the checker or strict shape inference refuses (a template bug of ours)."""


def check_graph(g: Graph, model: onnx.ModelProto | None = None) -> onnx.ModelProto:
    """Validate with ``onnx.checker`` (full check) and strict shape inference, and check that
    the inferred output types and shapes are the ones our composed reference produced."""
    model = model or g.model()
    try:
        onnx.checker.check_model(model, full_check=True)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:
        raise InvalidGraph(f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}") from exc
    for out, v in zip(inferred.graph.output, g.outputs):
        t = out.type.tensor_type
        want = _value_info(v, g.dtype).type.tensor_type
        if t.elem_type != want.elem_type:
            raise InvalidGraph(f"output {v.name}: inferred type {t.elem_type}, reference gives {want.elem_type}")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim] if t.HasField("shape") else None
        if dims is not None and (len(dims) != v.rank or any(d is not None and d != s for d, s in zip(dims, v.shape))):
            raise InvalidGraph(f"output {v.name}: inferred shape {dims}, reference gives {list(v.shape)}")
    return model
