"""The graph compiler of the kernels backend.

``compile_model`` validates a model and turns its graph into a :class:`Plan`: a flat list of
steps ``(callable, input slots, output slots, slots to release, in-place slot, label)`` over a
list of value slots. Everything that can be decided once is decided at prepare time:

- validation (IR version, opset domains, ``onnx.checker``), model-local functions inlined
  (``onnx.inliner``), static shapes inferred (``onnx.shape_inference``);
- nodes sorted topologically, nodes that no graph output needs dropped;
- every node bound to a kernel once (``registry.lookup``), with the schema's default values
  filled in for the attributes it leaves out; an op without a kernel whose schema has a
  function body runs that body as a compiled sub-plan;
- nodes whose inputs are all constants folded (random ops excepted);
- per-channel affine chains (Conv -> BatchNormalization -> Mul -> Add, ...) folded into the
  Conv's weights or one step, and a Relu after them run inside their step (``_fusion``);
- each intermediate released after its last consumer; a kernel may offer an in-place
  variant (``run.inplace``, a callable that may overwrite and return its first argument),
  used when that argument is an intermediate dying at this node that nothing else aliases.

Nodes with graph attributes (If, Loop, Scan, SequenceMap) are called with a keyword argument
``outer``: a dict of the outer-scope values their subgraphs read. Their subgraphs are compiled
once, through ``NodeInfo.compile_subgraph``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx
import onnx.checker
import onnx.defs
import onnx.inliner
import onnx.shape_inference
from onnx import numpy_helper

from ..base import Rejected, Unsupported
from ..lowering import attribute_value, sparse_to_dense
from ._fusion import fuse_affine_chains
from ._util import np_dtype, onnx_elem_type
from .registry import NodeInfo, lookup

#: ops whose outputs differ from run to run: never folded
NONDETERMINISTIC = frozenset(
    {
        ("", "RandomNormal"),
        ("", "RandomNormalLike"),
        ("", "RandomUniform"),
        ("", "RandomUniformLike"),
        ("", "Bernoulli"),
        ("", "Multinomial"),
        ("", "Dropout"),
    }
)

_ATTR = onnx.AttributeProto
_NO_TYPE = (None, None)
_getrefcount = sys.getrefcount
_ndarray = np.ndarray


@functools.lru_cache(maxsize=4096)
def _schema(op_type: str, opset: int, domain: str):
    """The schema in force for an op at an opset (None when there is none); cached because
    onnx.defs.get_schema costs about 10 us a call."""
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


@functools.lru_cache(maxsize=4096)
def _default_attrs(op_type: str, opset: int, domain: str) -> dict[str, Any]:
    """The schema's default attribute values (float attributes are float32, as the spec
    stores them: LeakyRelu's alpha is float32(0.01), not 0.01). Kernels see these for every
    attribute the node leaves out, so no kernel hard-codes a default."""
    schema = _schema(op_type, opset, domain)
    if schema is None:
        return {}
    return {name: attribute_value(spec.default_value) for name, spec in schema.attributes.items() if spec.default_value.name}


def _domain(name: str) -> str:
    return "" if name in ("", "ai.onnx") else name


def _known_domains() -> dict[str, int]:
    """Domain -> highest opset version the installed onnx defines."""
    known: dict[str, int] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        dom = _domain(schema.domain)
        known[dom] = max(known.get(dom, 0), schema.since_version)
    known[""] = onnx.defs.onnx_opset_version()
    return known


_KNOWN_DOMAINS: dict[str, int] | None = None


def _known_domains_cached() -> dict[str, int]:
    global _KNOWN_DOMAINS
    if _KNOWN_DOMAINS is None:
        _KNOWN_DOMAINS = _known_domains()
    return _KNOWN_DOMAINS


# -- attributes -----------------------------------------------------------------------------


def _graph_attrs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    graphs: list[onnx.GraphProto] = []
    if not node.attribute:
        return graphs
    for attr in node.attribute:
        if attr.type == _ATTR.GRAPH:
            graphs.append(attr.g)
        elif attr.type == _ATTR.GRAPHS:
            graphs.extend(attr.graphs)
    return graphs


def _outer_reads(subgraphs: list[onnx.GraphProto]) -> list[str]:
    names: dict[str, None] = {}
    for g in subgraphs:
        names.update(dict.fromkeys(free_names(g)))
    return list(names)


def free_names(graph: onnx.GraphProto) -> list[str]:
    """Names a graph (and its nested subgraphs) reads from the enclosing scopes, in order of
    first use."""
    defined = {v.name for v in graph.input}
    defined.update(t.name for t in graph.initializer)
    defined.update(t.values.name for t in graph.sparse_initializer)
    for node in graph.node:
        defined.update(node.output)
    seen: dict[str, None] = {}
    for node in graph.node:
        used = list(node.input)
        for sub in _graph_attrs(node):
            used.extend(free_names(sub))
        for name in used:
            if name and name not in defined:
                seen.setdefault(name, None)
    for out in graph.output:
        if out.name not in defined:
            seen.setdefault(out.name, None)
    return list(seen)


# -- types ------------------------------------------------------------------------------------


def _type_info(tp: onnx.TypeProto) -> tuple[tuple[int | None, ...] | None, Any]:
    if tp.HasField("tensor_type"):
        tt = tp.tensor_type
        dtype = np_dtype(tt.elem_type) if tt.elem_type else None
        if not tt.HasField("shape"):
            return None, dtype
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        return shape, dtype
    return None, None


def _collect_types(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    types: dict[str, onnx.TypeProto] = {}
    for vi in (*graph.input, *graph.value_info, *graph.output):
        if vi.type.WhichOneof("value") is not None:
            types[vi.name] = vi.type
    for init in graph.initializer:
        types.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
    return types


def type_of_value(value: Any) -> onnx.TypeProto:
    """A TypeProto describing a runtime value."""
    if value is None:
        return onnx.TypeProto()
    if isinstance(value, list):
        elem = type_of_value(value[0]) if value else onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None)
        return onnx.helper.make_sequence_type_proto(elem)
    arr = np.asarray(value)
    return onnx.helper.make_tensor_type_proto(onnx_elem_type(arr.dtype), list(arr.shape))


# -- the plan ---------------------------------------------------------------------------------


class Plan:
    """A compiled graph. ``template`` holds the constants; a run copies it and fills inputs."""

    __slots__ = ("template", "inputs", "outputs", "steps", "const_outputs", "required")

    def __init__(self, template, inputs, outputs, steps, const_outputs, required):
        self.template: list[Any] = template
        #: (name, slot) of every value read from outside: graph inputs, then outer names
        self.inputs: list[tuple[str, int]] = inputs
        self.outputs: list[int] = outputs
        self.steps: list[tuple] = steps
        #: output positions whose value is a constant of the plan (copied when returned)
        self.const_outputs: frozenset[int] = const_outputs
        #: names that must be fed (graph inputs without an initializer)
        self.required: frozenset[str] = required

    def run(self, feeds: dict[str, Any], strict: bool = False) -> list[Any]:
        slots = self.template.copy()
        for name, slot in self.inputs:
            if name in feeds:
                slots[slot] = feeds[name]
            elif strict and name in self.required:
                raise ValueError(f"missing input {name!r}")
        return self._execute(slots)

    def run_args(self, args: Sequence[Any]) -> list[Any]:
        slots = self.template.copy()
        for (_, slot), value in zip(self.inputs, args):
            slots[slot] = value
        return self._execute(slots)

    def _execute(self, slots: list[Any]) -> list[Any]:
        step = None
        try:
            for step in self.steps:
                fn, ins, outs, free, ip, _ = step
                if ip and _exclusive(slots[ip]):
                    fn = fn.inplace
                res = fn(*[slots[i] for i in ins])
                for k, o in enumerate(outs):
                    slots[o] = res[k]
                res = None  # drop the result tuple: the refcount test above counts on it
                for f in free:
                    slots[f] = None
        except Exception as exc:
            if step is not None:
                exc.add_note(f"while running node {step[5]}")
            raise
        result = [slots[o] for o in self.outputs]
        for k in self.const_outputs:
            result[k] = _copy_value(result[k])
        return result


def _exclusive(v: Any) -> bool:
    """Whether array ``v`` (held by one slot) may be overwritten: nothing else references it,
    nor the memory it views. (The counts include getrefcount's own argument.)"""
    if type(v) is not _ndarray or _getrefcount(v) != 3 or not v.flags.writeable:  # slot, v, arg
        return False
    base = v.base
    while base is not None:  # a view (a kernel's reshape): its owner must be ours alone
        if type(base) is not _ndarray or _getrefcount(base) != 3:  # the view's .base, base, arg
            return False
        base = base.base
    return True


def _copy_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, list):
        return [_copy_value(x) for x in v]
    return v


def _as_output(v: Any) -> Any:
    """Graph outputs are arrays, lists of arrays or None (numpy scalars become 0-d arrays)."""
    if isinstance(v, np.generic):
        return np.asarray(v)
    if isinstance(v, list):
        return [_as_output(x) for x in v]
    return v


class SubgraphRunner:
    """What ``NodeInfo.compile_subgraph`` returns: call with a dict of values (subgraph
    inputs and the outer-scope names it reads), get the subgraph outputs as a list."""

    __slots__ = ("plan", "input_names", "outer_names", "output_names")

    def __init__(self, plan: Plan, graph: onnx.GraphProto, outer: list[str]):
        self.plan = plan
        self.input_names = [v.name for v in graph.input]
        self.outer_names = outer
        self.output_names = [v.name for v in graph.output]

    def __call__(self, values: dict[str, Any]) -> list[Any]:
        return self.plan.run(values)

    def run_args(self, args: Sequence[Any], outer: dict[str, Any]) -> list[Any]:
        """Positional inputs (in graph-input order) plus the outer values."""
        return self.plan.run_args([*args, *(outer.get(n) for n in self.outer_names)])


class _OuterCall:
    """Adapts a kernel of a node with graph attributes: the executor passes the outer-scope
    values as trailing positional slots; the kernel receives them as ``outer=``."""

    __slots__ = ("fn", "n", "names")

    def __init__(self, fn, n: int, names: list[str]):
        self.fn, self.n, self.names = fn, n, names

    def __call__(self, *args):
        n = self.n
        return self.fn(*args[:n], outer=dict(zip(self.names, args[n:])))


# -- compiling --------------------------------------------------------------------------------


class Compiler:
    """Compiles graphs that share one opset map (a model, or one function body)."""

    def __init__(self, opsets: dict[str, int], overridable: bool = True, fuse: bool = True):
        self.opsets = opsets
        #: whether per-channel affine chains are fused (see ``_fusion``); off only to compare
        self.fuse = fuse
        #: whether an initializer that is also a graph input is only a default value; below
        #: IR version 4 every initializer had to be listed as an input, and (as ONNX Runtime
        #: does) we then treat them as constants
        self.overridable = overridable

    # graph -> plan
    def compile_graph(
        self, graph: onnx.GraphProto, outer: Sequence[str] = (), input_names: Sequence[str] | None = None
    ) -> Plan:
        types = _collect_types(graph)
        slot_of: dict[str, int] = {"": 0}
        template: list[Any] = [None]

        def slot(name: str) -> int:
            s = slot_of.get(name)
            if s is None:
                s = slot_of[name] = len(template)
                template.append(None)
            return s

        consts: set[int] = set()
        initializers: dict[str, Any] = {}
        for init in graph.initializer:
            initializers[init.name] = numpy_helper.to_array(init)
        for sp in graph.sparse_initializer:
            initializers[sp.values.name] = sparse_to_dense(sp)

        names_in = list(input_names) if input_names is not None else [v.name for v in graph.input]
        inputs: list[tuple[str, int]] = []
        for name in names_in:
            if name in initializers and not self.overridable:
                continue
            inputs.append((name, slot(name)))
            if name in initializers:  # an input with a default value
                template[slot_of[name]] = initializers.pop(name)
        for name in outer:
            if name not in slot_of:
                inputs.append((name, slot(name)))
        for name, value in initializers.items():
            s = slot(name)
            template[s] = value
            consts.add(s)
        with_default = {t.name for t in graph.initializer}
        required = frozenset(n for n in names_in if n not in with_default)

        nodes = [(node, _graph_attrs(node)) for node in graph.node]
        nodes = [(node, subs, _outer_reads(subs)) for node, subs in nodes]
        nodes = self._toposort(nodes, set(slot_of))
        nodes = self._live_nodes(nodes, [o.name for o in graph.output])
        type_infos: dict[str, tuple] = {}

        steps: list[tuple] = []
        step_nodes: list[onnx.NodeProto | None] = []  # the node of each step (None: with subgraphs)
        for node, subgraphs, outer_names in nodes:
            in_names, out_names = list(node.input), list(node.output)
            fn = self.bind(node, types, type_infos, in_names, out_names)
            ins = [slot(n) for n in in_names]
            outs = [slot(n) for n in out_names if n]
            if len(outs) != len(out_names):
                out_pos = [k for k, n in enumerate(out_names) if n]
                if out_pos != list(range(len(out_pos))):
                    fn = _select_outputs(fn, out_pos)
            label = f"{node.op_type}({node.name or ', '.join(out_names)})"
            if subgraphs:
                fn = _OuterCall(fn, len(ins), outer_names)
                ins = ins + [slot(n) for n in outer_names]
            elif self._foldable(node, ins, consts):
                try:
                    res = list(fn(*[template[i] for i in ins]))
                except Exception:  # leave it to fail (or not) at run time
                    res = None
                if res is not None and len(res) >= len(outs):
                    for o, v in zip(outs, res):
                        template[o] = v
                        consts.add(o)
                    continue
            steps.append((fn, tuple(ins), tuple(outs), label))
            step_nodes.append(None if subgraphs else node)

        output_slots = [slot(o.name) for o in graph.output]
        if self.fuse and "" in self.opsets:
            name_of = {s: n for n, s in slot_of.items()}

            def type_of(s: int) -> tuple:
                t = types.get(name_of.get(s, ""))
                return _type_info(t) if t is not None else _NO_TYPE

            steps = fuse_affine_chains(steps, step_nodes, template, consts, output_slots, self.opsets[""], type_of)
        return self._finish(template, inputs, output_slots, steps, consts, required)

    @staticmethod
    def _finish(template, inputs, output_slots, steps, consts, required) -> Plan:
        keep = set(output_slots)
        last_use: dict[int, int] = {}
        for k, (_, ins, outs, _) in enumerate(steps):
            for i in ins:
                last_use[i] = k
        free_at: list[list[int]] = [[] for _ in steps]
        for s, k in last_use.items():
            if s and s not in consts and s not in keep:
                free_at[k].append(s)
        for k, (_, _, outs, _) in enumerate(steps):
            for o in outs:
                if o not in last_use and o not in keep:
                    free_at[k].append(o)  # produced but never read
        input_slots = {s for _, s in inputs}
        final = []
        for k, (fn, ins, outs, label) in enumerate(steps):
            ip = 0
            if ins and hasattr(fn, "inplace"):
                s = ins[0]
                if s and s in free_at[k] and s not in input_slots and ins.count(s) == 1 and s not in outs:
                    ip = s
            final.append((fn, ins, outs, tuple(free_at[k]), ip, label))
        # constants no step reads are not kept alive
        used = {i for _, ins, _, _ in steps for i in ins} | set(output_slots)
        for s in consts:
            if s not in used:
                template[s] = None
        const_outputs = frozenset(k for k, s in enumerate(output_slots) if s in consts)
        return Plan(template, inputs, output_slots, final, const_outputs, required)

    @staticmethod
    def _foldable(node: onnx.NodeProto, ins: list[int], consts: set[int]) -> bool:
        if (_domain(node.domain), node.op_type) in NONDETERMINISTIC:
            return False
        return all(i == 0 or i in consts for i in ins)

    @staticmethod
    def _toposort(nodes: list[tuple], available: set[str]) -> list[tuple]:
        """(node, subgraphs, outer reads) in an order where every value is produced before
        it is read (the graph's own order when it already is one)."""
        known = set(available)
        for node, _, outer in nodes:
            if not all(n in known for n in node.input if n) or not all(n in known for n in outer):
                break
            known.update(node.output)
        else:
            return nodes
        producer = {out: k for k, (node, _, _) in enumerate(nodes) for out in node.output if out}
        deps = [{producer[n] for n in (*node.input, *outer) if n in producer} for node, _, outer in nodes]
        order: list[int] = []
        done: set[int] = set()
        pending = list(range(len(nodes)))
        while pending:
            ready = [k for k in pending if deps[k] <= done]
            if not ready:
                raise Rejected("the graph has a cycle or reads a value no node produces")
            order.extend(ready)
            done.update(ready)
            pending = [k for k in pending if k not in done]
        return [nodes[k] for k in order]

    @staticmethod
    def _live_nodes(nodes: list[tuple], outputs: list[str]) -> list[tuple]:
        """The nodes some graph output depends on."""
        needed = set(outputs)
        keep = []
        for item in reversed(nodes):
            node, _, outer = item
            if any(o in needed for o in node.output):
                keep.append(item)
                needed.update(node.input)
                needed.update(outer)
        keep.reverse()
        return keep

    # node -> callable
    def bind(
        self,
        node: onnx.NodeProto,
        types: dict[str, onnx.TypeProto],
        type_infos: dict[str, tuple] | None = None,
        inputs: list[str] | None = None,
        outputs: list[str] | None = None,
    ) -> Callable[..., Any]:
        op_type = node.op_type
        domain = _domain(node.domain)
        opset = self.opsets.get(domain)
        if opset is None:
            raise Rejected(f"node {op_type} uses domain {domain!r}, which the model does not import")
        schema = _schema(op_type, opset, domain)
        if schema is None:
            raise Unsupported(f"no kernel for {op_type} (no such operator in {domain or 'ai.onnx'} opset {opset})")
        factory = lookup(domain, op_type, opset)
        inputs = list(node.input) if inputs is None else inputs
        in_types = [types.get(n) if n else None for n in inputs]
        reason = None
        if factory is not None:
            if type_infos is None:
                type_infos = {}
            infos = []
            for name, t in zip(inputs, in_types):
                ti = type_infos.get(name)
                if ti is None:
                    ti = type_infos[name] = _type_info(t) if t is not None else _NO_TYPE
                infos.append(ti)
            attrs = dict(_default_attrs(op_type, opset, domain))
            for a in node.attribute:
                attrs[a.name] = attribute_value(a)
            info = NodeInfo(
                node=node,
                attrs=attrs,
                opset=opset,
                inputs=inputs,
                outputs=list(node.output) if outputs is None else outputs,
                input_shapes=[ti[0] for ti in infos],
                input_dtypes=[ti[1] for ti in infos],
                compile_subgraph=self.compile_subgraph,
            )
            try:
                return factory(info)
            except Unsupported as exc:
                reason = str(exc)
        fn = function_kernel(node, schema, self.opsets, in_types)
        if fn is None:
            raise Unsupported(reason or f"no kernel for {op_type}-{schema.since_version}")
        return fn

    def compile_subgraph(self, graph: onnx.GraphProto) -> SubgraphRunner:
        outer = free_names(graph)
        return SubgraphRunner(self.compile_graph(graph, outer=outer), graph, outer)


def _select_outputs(fn, positions: list[int]):
    """Wraps a kernel of a node that skips some optional outputs (empty names)."""

    def run(*args):
        res = fn(*args)
        return [res[k] for k in positions]

    return run


# -- function bodies --------------------------------------------------------------------------


def _pick_version(versions: Iterable[int], opset: int) -> int | None:
    versions = sorted(versions)
    below = [v for v in versions if v <= opset]
    if below:
        return below[-1]
    return versions[0] if versions else None


def _instantiate(fproto: onnx.FunctionProto, attrs: dict[str, onnx.AttributeProto]) -> list[onnx.NodeProto]:
    """The body's nodes with attribute references resolved (caller's value, else dropped)."""

    def resolve(node: onnx.NodeProto) -> onnx.NodeProto:
        new = onnx.NodeProto()
        new.CopyFrom(node)
        del new.attribute[:]
        for attr in node.attribute:
            if attr.ref_attr_name:
                src = attrs.get(attr.ref_attr_name)
                if src is None:
                    continue
                a = onnx.AttributeProto()
                a.CopyFrom(src)
                a.name = attr.name
                new.attribute.append(a)
            elif attr.type == _ATTR.GRAPH:
                a = onnx.AttributeProto()
                a.CopyFrom(attr)
                sub = a.g
                nodes = [resolve(n) for n in sub.node]
                del sub.node[:]
                sub.node.extend(nodes)
                new.attribute.append(a)
            else:
                new.attribute.append(attr)
        return new

    return [resolve(n) for n in fproto.node]


class FunctionKernel:
    """Runs an op through its schema's function body, compiled once as a sub-plan (per input
    type signature for context-dependent bodies)."""

    def __init__(self, node: onnx.NodeProto, schema, opsets: dict[str, int], static: bool, version: int, in_types=()):
        self.node = node
        self.schema = schema
        self.version = version
        self.static = static
        self.caller_opsets = opsets
        # outer-scope names read by the node's graph attributes, which the body inherits
        self.outer = _outer_reads(_graph_attrs(node))
        attrs = {a.name: a for a in node.attribute}
        for name, spec in schema.attributes.items():
            if name not in attrs and spec.default_value.name:
                attrs[name] = spec.default_value
        self.attrs = attrs
        self.plans: dict[Any, Plan] = {}
        if static:
            fproto = onnx.FunctionProto()
            fproto.ParseFromString(schema.get_function_with_opset_version(version))
            self.plans[None] = self._compile(fproto)
        else:
            # with static input types from shape inference the body is built now, so that a
            # body that cannot be built is reported at prepare time
            keys = [_type_key_of_proto(t) if name else None for name, t in zip(node.input, in_types)]
            if in_types and all(k is not _UNKNOWN for k in keys):
                self.plans[tuple(keys)] = self.build(list(in_types))

    def build(self, in_types: list[onnx.TypeProto | None]) -> Plan:
        node = onnx.NodeProto()
        node.CopyFrom(self.node)
        types = [(t if t is not None else onnx.TypeProto()).SerializeToString() for t in in_types]
        body = self.schema.get_context_dependent_function_with_opset_version(self.version, node.SerializeToString(), types)
        fproto = onnx.FunctionProto()
        fproto.ParseFromString(body)
        if not fproto.node:
            raise Unsupported(f"no kernel for {self.node.op_type}-{self.schema.since_version} and its function body cannot be built for these inputs")
        return self._compile(fproto)

    def _compile(self, fproto: onnx.FunctionProto) -> Plan:
        # A domain the body uses without importing it (FlexAttention's body imports only
        # ai.onnx.preview) is taken at this onnx's newest version, which the body's builder
        # targets; the caller's import may be far older (a model of preview ops alone can
        # import ai.onnx at opset 1)
        known = _known_domains_cached()
        imported = {_domain(o.domain): o.version for o in fproto.opset_import}
        opsets = dict(self.caller_opsets)
        for dom in {_domain(n.domain) for n in fproto.node}:
            if dom not in imported and dom in known:
                opsets[dom] = known[dom]
        opsets.update(imported)
        graph = onnx.GraphProto()
        graph.node.extend(_instantiate(fproto, self.attrs))
        for name in fproto.input:
            graph.input.add().name = name
        for name in fproto.output:
            graph.output.add().name = name
        return Compiler(opsets).compile_graph(graph, outer=self.outer)

    def __call__(self, *args, outer=None):
        if self.static:
            plan = self.plans[None]
        else:
            key = tuple(_type_key(a) for a in args)
            plan = self.plans.get(key)
            if plan is None:
                plan = self.plans[key] = self.build([type_of_value(a) if a is not None else None for a in args])
        if self.outer:
            n = len(plan.inputs) - len(self.outer)
            args = [*args, *([None] * (n - len(args))), *(outer.get(name) for name in self.outer)]
        return plan.run_args(args)


_UNKNOWN = object()


def _type_key_of_proto(tp: onnx.TypeProto | None) -> Any:
    """What ``_type_key`` gives for a value of this static type (_UNKNOWN when not static)."""
    if tp is None:
        return _UNKNOWN
    shape, dtype = _type_info(tp)
    if dtype is None or shape is None or None in shape:
        return _UNKNOWN
    return (dtype, shape)


def _type_key(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return ("seq", np.asarray(value[0]).dtype if value else None)
    # some bodies depend on static dimensions (e.g. a group count): key on the full shape
    return (np.asarray(value).dtype, np.shape(value))


def function_kernel(node: onnx.NodeProto, schema, opsets: dict[str, int], in_types) -> FunctionKernel | None:
    """A kernel running ``node`` through its schema's function body, or None when it has none."""
    opset = opsets[_domain(node.domain)]
    static = _pick_version(schema.function_opset_versions, opset)
    if static is not None:
        return FunctionKernel(node, schema, opsets, True, static)
    dynamic = _pick_version(schema.context_dependent_function_opset_versions, opset)
    if dynamic is not None:
        return FunctionKernel(node, schema, opsets, False, dynamic, in_types)
    return None


# -- models -----------------------------------------------------------------------------------


def validate(model: onnx.ModelProto) -> dict[str, int]:
    """Raise Rejected for a model we refuse; return the opset map."""
    known = _known_domains_cached()
    if model.ir_version > onnx.IR_VERSION:
        raise Rejected(f"IR version {model.ir_version} is newer than this onnx ({onnx.IR_VERSION})")
    local_domains = {_domain(f.domain) for f in model.functions}
    opsets: dict[str, int] = {}
    for imp in model.opset_import:
        dom = _domain(imp.domain)
        if dom in known and imp.version > known[dom]:
            raise Rejected(f"opset {imp.version} of domain {imp.domain or 'ai.onnx'!r} is newer than this onnx supports")
        opsets[dom] = imp.version
    # importing a domain nobody defines is harmless; using it is not
    for dom in _used_domains(model.graph) | {_domain(n.domain) for f in model.functions for n in f.node}:
        if dom not in known and dom not in local_domains:
            if dom in opsets:  # imported and used, but no schema or kernel here: a missing op (the rule in base.py)
                raise Unsupported(f"no kernels for opset domain {dom!r} (unknown to this onnx, no local function)")
            raise Rejected(f"unknown opset domain {dom!r}, used but not imported")
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as exc:
        raise Rejected(f"invalid model: {str(exc).strip().splitlines()[0]}") from exc
    return opsets


def _used_domains(graph: onnx.GraphProto) -> set[str]:
    used = set()
    for node in graph.node:
        used.add(_domain(node.domain))
        for g in _graph_attrs(node):
            used |= _used_domains(g)
    return used


def compile_model(model: onnx.ModelProto, fuse: bool = True) -> Plan:
    """The model's plan; ``fuse=False`` leaves per-channel affine chains unfused (the plain
    path a fused plan is compared with)."""
    opsets = validate(model)
    if model.functions:
        model = onnx.inliner.inline_local_functions(model)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shapes are an optimisation hint only
        pass
    with np.errstate(all="ignore"):  # constant folding runs kernels
        return Compiler(opsets, overridable=model.ir_version >= 4, fuse=fuse).compile_graph(model.graph)
