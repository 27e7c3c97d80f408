"""The table of lowerings our own backends share (PyTorch, TensorFlow): one function per operator
and behaviour, registered for every op-version (``since_version``) it implements; an op-version
missing from the table is ``unsupported`` until someone checks its behaviour and adds it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import onnx
import onnx.defs
from onnx import numpy_helper

from .base import Unsupported

Lowering = Callable[..., Any]


class Lowerings(dict):
    """(domain, op_type, since_version) -> lowering."""

    def lowers(self, op_type: str, *since_versions: int, domain: str = "") -> Callable[[Lowering], Lowering]:
        if not since_versions:
            raise ValueError(f"lowers({op_type!r}) names no op-version")

        def deco(fn: Lowering) -> Lowering:
            for since in since_versions:
                key = (domain, op_type, since)
                if key in self:
                    raise ValueError(f"{op_type}-{since} is lowered twice ({self[key].__name__}, {fn.__name__})")
                self[key] = fn
            return fn

        return deco


# -- binding a graph's nodes to a table (what every lowering backend decides at prepare time) ------
class NodeNaming:
    """What every lowering's node context answers the same way (its fields ``op``, ``since``
    and ``outputs`` are each backend's)."""

    op: str
    since: int
    outputs: list[str]

    def wants(self, k: int) -> bool:
        """Whether the model asks for output ``k`` (an output named "" is not asked for)."""
        return k < len(self.outputs) and self.outputs[k] != ""

    def __str__(self) -> str:
        return f"{self.op}-{self.since}"


@dataclass
class Step:
    """One bound node of a lowered graph."""

    fn: Any
    ctx: Any
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any]
    #: whether it holds subgraphs (its lowering also gets the values in scope, ``outer``)
    needs_scope: bool
    #: (output index, ONNX type) of outputs carried in a wider integer type (PyTorch)
    wrap: list[tuple[int, int]] = field(default_factory=list)


class LoweredGraph:
    """A lowered (sub)graph, its steps run eagerly in order. Each backend's Graph sets
    ``inputs``, ``outputs``, ``initializers`` and ``steps``, and may adapt a step's results
    (``settle``)."""

    inputs: list[str]
    outputs: list[str]
    initializers: dict[str, Any]
    steps: list[Step]
    #: absent trailing inputs are dropped, so that the lowering's Python defaults apply
    trims_absent: bool = False

    def settle(self, step: Step, result: tuple) -> tuple:
        """A step's results as the rest of the graph sees them."""
        return result

    def run(self, feeds: dict[str, Any], outer: dict[str, Any] | None = None) -> list[Any]:
        env: dict[str, Any] = dict(outer) if outer else {}
        env.update(self.initializers)
        env.update(feeds)
        for step in self.steps:
            args = [env[name] if name else None for name in step.inputs]
            while self.trims_absent and args and args[-1] is None:
                args.pop()
            extra = {"outer": env} if step.needs_scope else {}
            result = step.fn(step.ctx, *args, **step.attrs, **extra)
            result = self.settle(step, result if isinstance(result, tuple) else (result,))
            missing = [n for n in step.outputs[len(result):] if n]
            if missing:
                raise RuntimeError(f"{step.ctx} lowering returned {len(result)} outputs; the model asks for {', '.join(missing)}")
            for name, value in zip(step.outputs, result):
                if name:
                    env[name] = value
        return [env[name] for name in self.outputs]


_ATTR = onnx.AttributeProto


def domain_of(name: str) -> str:
    return "" if name in ("", "ai.onnx") else name


def since_version(opsets: dict[str, int], node: onnx.NodeProto) -> int:
    """The since_version of ``node``'s schema at the model's opset; Unsupported when none."""
    domain = domain_of(node.domain)
    where = "" if domain == "" else f"{domain}."
    if domain not in opsets:
        raise Unsupported(f"no lowering for {where}{node.op_type}: the model imports no {domain or 'ai.onnx'} opset")
    try:
        return onnx.defs.get_schema(node.op_type, opsets[domain], domain).since_version
    except onnx.defs.SchemaError:
        raise Unsupported(f"no lowering for {where}{node.op_type}: no schema at opset {opsets[domain]}") from None


def check_lowered(graph: onnx.GraphProto, opsets: dict[str, int], table: Lowerings) -> None:
    """Raise Unsupported for the first node (subgraphs included) without a lowering in ``table``."""
    for node in graph.node:
        domain = domain_of(node.domain)
        since = since_version(opsets, node)
        if (domain, node.op_type, since) not in table:
            raise Unsupported(f"no lowering for {'' if domain == '' else domain + '.'}{node.op_type}-{since}")
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == _ATTR.GRAPH else list(attr.graphs)):
                check_lowered(g, opsets, table)


def node_attributes(node: onnx.NodeProto, opsets: dict[str, int], convert: Callable[[onnx.AttributeProto], Any]) -> tuple[dict[str, Any], bool]:
    """The node's attributes as keywords, the schema's defaults filled in (each through
    ``convert``), and whether it holds subgraphs (they read the values in scope)."""
    domain = domain_of(node.domain)
    schema = onnx.defs.get_schema(node.op_type, opsets[domain], domain)
    attrs = {name: convert(spec.default_value) for name, spec in schema.attributes.items()
             if spec.default_value is not None and spec.default_value.type != _ATTR.UNDEFINED}
    needs_scope = False
    for attr in node.attribute:
        if attr.ref_attr_name:
            raise Unsupported(f"{node.op_type}: attribute {attr.name} refers to a function attribute")
        attrs[attr.name] = convert(attr)
        needs_scope |= attr.type in (_ATTR.GRAPH, _ATTR.GRAPHS)
    return attrs, needs_scope


# -- attributes (decoded alike by the kernel compiler and the lowerings) ----------------------


def sparse_to_dense(sp: onnx.SparseTensorProto) -> np.ndarray:
    values = numpy_helper.to_array(sp.values)
    indices = numpy_helper.to_array(sp.indices).astype(np.int64)
    dims = tuple(sp.dims)
    dense = np.zeros(int(np.prod(dims)), dtype=values.dtype)
    if indices.ndim == 1:  # linearized indices (SparseTensorProto doc)
        dense[indices] = values
        return dense.reshape(dims)
    dense = dense.reshape(dims)
    dense[tuple(indices.T)] = values
    return dense


def _utf8(raw: bytes) -> str:
    return raw.decode("utf-8")


def attribute_value(attr: onnx.AttributeProto, *,
                    tensor: Callable[[onnx.TensorProto], Any] = numpy_helper.to_array,
                    sparse: Callable[[onnx.SparseTensorProto], Any] | None = sparse_to_dense,
                    graph: Callable[[onnx.GraphProto], Any] = lambda g: g,
                    text: Callable[[bytes], Any] = _utf8,
                    texts: Callable[[bytes], Any] | None = None) -> Any:
    """An attribute as a Python value; by default tensors as numpy arrays (sparse ones dense),
    graphs as they are, strings decoded as strict UTF-8. A backend passes its own readers:
    ``tensor`` / ``sparse`` convert a (sparse) tensor (``sparse=None``: refused), ``graph`` a
    subgraph, ``text`` a STRING's bytes and ``texts`` each of a STRINGS' (default ``text``)."""
    t = attr.type
    if t == _ATTR.FLOAT:
        return attr.f
    if t == _ATTR.INT:
        return attr.i
    if t == _ATTR.STRING:
        return text(attr.s)
    if t == _ATTR.TENSOR:
        return tensor(attr.t)
    if t == _ATTR.GRAPH:
        return graph(attr.g)
    if t == _ATTR.SPARSE_TENSOR and sparse is not None:
        return sparse(attr.sparse_tensor)
    if t == _ATTR.FLOATS:
        return list(attr.floats)
    if t == _ATTR.INTS:
        return list(attr.ints)
    if t == _ATTR.STRINGS:
        return [(texts or text)(s) for s in attr.strings]
    if t == _ATTR.TENSORS:
        return [tensor(x) for x in attr.tensors]
    if t == _ATTR.GRAPHS:
        return [graph(g) for g in attr.graphs]
    if t == _ATTR.SPARSE_TENSORS and sparse is not None:
        return [sparse(x) for x in attr.sparse_tensors]
    if t == _ATTR.TYPE_PROTO:
        return attr.tp
    if t == _ATTR.TYPE_PROTOS:
        return list(attr.type_protos)
    raise Unsupported(f"attribute {attr.name!r} has unsupported type {_ATTR.AttributeType.Name(t)}")


def sequence_empty(node, *, dtype=None):
    """SequenceEmpty-11: a sequence is a Python list."""
    return []


def sequence_construct(node, *xs):
    """SequenceConstruct-11."""
    return list(xs)


def sequence_map(node, seq, *extra, body, outer):
    """SequenceMap-17 on Python lists, for any lowering whose subgraph ``body`` runs on a dict of
    values: the body once per position, a sequence input taken at that position, a tensor whole."""
    results: list[list] = [[] for _ in body.outputs]
    for i, item in enumerate(seq):
        args = [item] + [e[i] if isinstance(e, list) else e for e in extra]
        for bucket, value in zip(results, body.run(dict(zip(body.inputs, args)), outer)):
            bucket.append(value)
    return tuple(results) if len(results) > 1 else results[0]


def optional(node, x=None, *, type=None):  # noqa: A002 - spec name
    """Optional-15/28: an optional is its value or None."""
    return x


def softmax_like(fn: Callable[[Any, int], Any], coerced: Callable[[Callable, Any, int], Any]) -> Lowering:
    """Softmax, LogSoftmax and Hardmax: ``fn(x, axis)`` along ``axis`` (default -1) from version
    13; before it, ``coerced(fn, x, axis)``: the input coerced to 2-D at ``axis`` (default 1)."""
    def run(node, x, *, axis=None):
        if node.since < 13:
            return coerced(fn, x, 1 if axis is None else axis)
        return fn(x, -1 if axis is None else axis)

    return run


def optimizer_groups(tensors, k: int) -> list:
    """The variadic inputs of Adagrad / Adam / Momentum as ``k`` equal groups (the parameters,
    their gradients, then each accumulated state)."""
    n = len(tensors) // k
    return [tensors[i * n:(i + 1) * n] for i in range(k)]


def membership_sets(values) -> list[list[float]]:
    """TreeEnsemble's ``membership_values`` as the sets of its BRANCH_MEMBER nodes, in order:
    the values split at each NaN."""
    sets: list[list[float]] = []
    current: list[float] = []
    for v in values:
        if v != v:
            sets.append(current)
            current = []
        else:
            current.append(v)
    sets.append(current)
    return sets


#: RNN/GRU/LSTM activations: how many of activation_alpha / activation_beta each consumes, and
#: the schema's defaults for those it does not get
RNN_TAKES = {"affine": 2, "leakyrelu": 1, "thresholdedrelu": 1, "scaledtanh": 2, "hardsigmoid": 2, "elu": 1}
RNN_DEFAULTS = {"leakyrelu": (0.01,), "thresholdedrelu": (1.0,), "hardsigmoid": (0.2, 0.5), "elu": (1.0,), "affine": (1.0, 0.0),
                "scaledtanh": (1.0, 1.0)}


def rnn_activations(names, alphas, betas, per_direction: int, defaults: list[str], num_directions: int,
                    make: Callable[[str, tuple], Any]) -> list[list[Any]]:
    """The activation functions of each direction, ``make(name, params)`` for each: alphas and
    betas are consumed in order by the activations that take them (RNN_DEFAULTS otherwise); the
    names of one direction serve both when only those are given."""
    names = list(names) if names else defaults * num_directions
    if len(names) == per_direction and num_directions == 2:
        names = names * 2
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for name in names:
        key = name.lower()
        need = RNN_TAKES.get(key, 0)
        params = list(RNN_DEFAULTS.get(key, ()))
        if need >= 1 and alphas:
            params[0] = alphas.pop(0)
        if need >= 2 and betas:
            params[1] = betas.pop(0)
        fns.append(make(name, tuple(params)))
    return [fns[d * per_direction:(d + 1) * per_direction] for d in range(num_directions)]


def conv_transpose_pads(since: int, sizes: list[int], kernel: list[int], strides: list[int], dilations: list[int],
                        out_pad: list[int], auto_pad: str, output_shape: Any, pads: list[int] | None) -> list[tuple[int, int]]:
    """ConvTranspose's (begin, end) pads per spatial axis, to cut from the full transposed
    convolution ((i - 1) * s + (k - 1) * d + 1 per axis, ``output_padding`` added at the end).
    From ``output_shape`` or SAME_*, the total splits as the spec says; ConvTranspose-1 splits an
    odd total of output_shape's pads the other way round: "If (auto_pads != SAME_UPPER):
    pads[start_i] = total_padding[i]/2" (version 11: "==")."""
    n = len(sizes)
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        full = [(i - 1) * s + (k - 1) * d + 1 for i, s, k, d in zip(sizes, strides, kernel, dilations)]
        target = list(output_shape)[-n:] if output_shape is not None else [i * s for i, s in zip(sizes, strides)]
        small_first = (auto_pad == "SAME_UPPER") != (since == 1 and output_shape is not None)
        out = []
        for f, extra, t in zip(full, out_pad, target):
            total = f + extra - t
            half = total // 2
            out.append((half, total - half) if small_first else (total - half, half))
        return out
    if auto_pad == "VALID" or not pads:
        return [(0, 0)] * n
    return list(zip(pads[:n], pads[n:]))


#: the reductions a lowering implements as one family: (op, kind, since_versions with ``axes`` an
#: attribute, since_versions with ``axes`` an input)
REDUCTIONS = (
    ("ReduceMax", "max", (1, 11, 12, 13), (18, 20)),
    ("ReduceMin", "min", (1, 11, 12, 13), (18, 20)),
    ("ReduceSum", "sum", (1, 11), (13,)),
    ("ReduceMean", "mean", (1, 11, 13), (18,)),
    ("ReduceProd", "prod", (1, 11, 13), (18,)),
    ("ReduceL1", "l1", (1, 11, 13), (18,)),
    ("ReduceL2", "l2", (1, 11, 13), (18,)),
    ("ReduceSumSquare", "sumsquare", (1, 11, 13), (18,)),
    ("ReduceLogSum", "logsum", (1, 11, 13), (18, 28)),
    ("ReduceLogSumExp", "logsumexp", (1, 11, 13), (18, 28)),
)
