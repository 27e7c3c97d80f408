"""``onnx-harness localize``: the first node of a model whose output diverges.

For a case that does not pass on a backend, localize runs the model's intermediate values on the
backend and on an oracle and names the first node (in the graph's topological order) whose
output leaves its tolerance:

1. Oracle. Our per-op-version references composed node by node, in the model's own dtypes,
   when every node of the main graph has one (ai.onnx, no subgraph attribute). Otherwise the
   ``--oracle`` backend (default ``reference``) computes the nodes we have no reference for, and
   ours the others: the backend runs a copy of the model whose every node output is a graph
   output, and a node of its own whose inputs came from our references runs alone on those
   values. Where our reference and the oracle backend disagree, ours is taken and the first such
   node is said (onnx 1.23.2's ``onnx.reference`` computes Softmax-1 over the last axis, where
   the spec coerces the input to 2-D at ``axis``: squeezenet's last node).
2. Intermediates. A copy of the model exposes every node output as a graph output, each typed
   by ``onnx.shape_inference`` (``strict_mode=False``) or, where inference leaves it unknown,
   by the oracle's value (its dtype and shape). The backend runs it in a child process (the
   fuzzer's :class:`harness.generated.engine.Isolated`: a crash or a hang is an outcome, never the end of
   localize). The first node with an output outside its tolerance is the answer.
3. Prefix bisection. A backend that fuses nodes may compute something else once the fused
   intermediates are graph outputs (the fusion no longer applies), and a backend may refuse the
   exposed copy. When the exposed run fails, or shows no divergence although the case does not
   pass, the graph is cut into prefix models (the first k nodes, whose outputs are the values
   later nodes or the graph read, plus the last node's outputs) and the smallest k whose prefix
   diverges (or fails) is found by bisection: the k-th node, maybe fused with its producers.

Tolerance. The fuzzer's propagation (:func:`harness.generated.graph.output_tolerance`): the
per-dtype base grows with the value's depth (the longest path from a graph input: each op on it
may round once more). The fuzzer's propagated-error term needs each op's fuzz template (its
error model and safe domain), which the ops of an arbitrary model do not all have, so it is 0
here. A value is judged with the larger of that and the case's own tolerance, so a value within
the tolerance the case was judged by is never called the divergence.

Result. The node (op, name, op-version, input shapes), its inputs (the oracle's values), the
oracle's and the backend's outputs, and a one-node repro bundle (:func:`harness.repro.write_bundle`)
running that node alone on those inputs, whose result says whether the node is wrong on its own
("confirmed") or only inside the graph (accumulated rounding, or a fusion with its producers).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

    from .case import Case, Tolerance
    from .runner import BackendSpec

COMPOSED = "composed references"


class LocalizeError(RuntimeError):
    """Localization cannot run (the oracle fails, no data set); the message says why."""


@dataclass
class NodeInfo:
    index: int
    op: str
    name: str
    domain: str
    since: int | None
    inputs: list[str]
    outputs: list[str]
    input_shapes: list[str]

    @property
    def label(self) -> str:
        dom = f"{self.domain}:" if self.domain not in ("", "ai.onnx") else ""
        ver = f"-{self.since}" if self.since else ""
        return f"node {self.index} {dom}{self.op}{ver} {self.name!r}"


@dataclass
class Localization:
    case_id: str
    backend: str
    oracle: str
    #: "intermediates" (every value exposed) or "prefix" (bisection over prefix models)
    method: str = ""
    #: "found", or "agrees" (no value diverges, the case's outputs included)
    status: str = "agrees"
    node: NodeInfo | None = None
    #: the node's inputs (the oracle's values), and its outputs on the oracle and the backend
    inputs: dict[str, Any] = field(default_factory=dict)
    expected: list[Any] = field(default_factory=list)
    actual: list[Any] | None = None
    #: why the node's output is judged diverging (the comparison's message, or the backend's failure)
    message: str = ""
    tolerance: dict[str, Any] | None = None
    #: the one-node repro: its outcome and message; confirmed: the node alone is wrong too
    single_outcome: str = ""
    single_message: str = ""
    bundle: str = ""
    case_tolerance: dict[str, Any] | None = None
    #: what was tried, in order (one line each)
    steps: list[str] = field(default_factory=list)
    values_compared: int = 0
    runs: int = 0

    @property
    def confirmed(self) -> bool:
        return self.single_outcome not in ("", "pass")

    def to_dict(self) -> dict[str, Any]:
        from .values import describe

        def show(v: Any) -> dict[str, Any]:
            return {"type": describe(v), "values": _preview(v)}

        return {
            "case_id": self.case_id, "backend": self.backend, "oracle": self.oracle, "method": self.method,
            "status": self.status, "node": None if self.node is None else {**self.node.__dict__, "label": self.node.label},
            "inputs": {k: show(v) for k, v in self.inputs.items()},
            "expected": [show(v) for v in self.expected],
            "actual": None if self.actual is None else [show(v) for v in self.actual],
            "message": self.message, "tolerance": self.tolerance, "single_outcome": self.single_outcome,
            "single_message": self.single_message, "confirmed": self.confirmed, "bundle": self.bundle,
            "steps": self.steps, "values_compared": self.values_compared, "runs": self.runs,
        }

    def render(self) -> str:
        from .values import describe

        lines = [f"{self.case_id} on {self.backend} (oracle: {self.oracle})"]
        lines += [f"  {s}" for s in self.steps]
        if self.node is None:
            lines.append("no node diverges: every value compared agrees with the oracle within its tolerance")
            return "\n".join(lines)
        n = self.node
        lines.append(f"first diverging: {n.label} (found by {self.method})")
        shapes = ", ".join(f"{i or '-'}: {s}" for i, s in zip(n.inputs, n.input_shapes))
        lines.append(f"  inputs: {shapes}")
        lines.append(f"  why: {self.message}")
        lines.append(f"  tolerance: {self.tolerance}")
        for name, v in self.inputs.items():
            lines.append(f"  input {name} = {describe(v)} {_preview(v)}")
        for k, name in enumerate(n.outputs):
            e = self.expected[k] if k < len(self.expected) else None
            a = self.actual[k] if self.actual is not None and k < len(self.actual) else None
            lines.append(f"  output {name}: oracle {describe(e)} {_preview(e)}")
            got = f"{describe(a)} {_preview(a)}" if self.actual is not None else "(failed)"
            lines.append(f"  output {name}: backend {got}")
        verdict = ("fails alone too: the node itself is wrong (confirmed)" if self.confirmed
                   else "agrees when run alone on these inputs (accumulated error, or a fusion with its producers)")
        lines.append(f"  the node alone: {self.single_outcome}: {verdict}" + (f"; {self.single_message}" if self.single_message else ""))
        if self.bundle:
            lines.append(f"  one-node bundle: {self.bundle} (re-run: python {Path(self.bundle) / 'repro.py'})")
        return "\n".join(lines)


def _preview(v: Any, n: int = 8) -> Any:
    import numpy as np

    if v is None or isinstance(v, (list, dict)):
        return None
    arr = np.asarray(v).reshape(-1)
    if arr.dtype.kind not in "biuf":
        return [str(x) for x in arr[:n]]
    return [x.item() for x in arr[:n]] + (["..."] if arr.size > n else [])


# =============================================================================================
# the graph: nodes, depths, types
# =============================================================================================
@dataclass
class _Graph:
    model: onnx.ModelProto
    nodes: list[onnx.NodeProto]
    opset: int
    depth: dict[str, int]
    #: types from shape inference (elem type known); the oracle's values fill in the rest
    types: dict[str, onnx.TypeProto]
    initializers: dict[str, Any]


def _graph(model: onnx.ModelProto) -> _Graph:
    import onnx
    from onnx import numpy_helper

    from . import schema

    nodes = list(model.graph.node)
    depth: dict[str, int] = {}
    for node in nodes:
        d = 1 + max([depth.get(i, 0) for i in node.input if i] or [0])
        for o in node.output:
            if o:
                depth[o] = d
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    except Exception as exc:  # inference refusing the model leaves every type to the oracle's values
        print(f"localize: shape inference failed ({type(exc).__name__}: {exc}); types come from the oracle's values", file=sys.stderr)
        infos = list(model.graph.output)
    types = {}
    for info in infos:
        t = info.type
        if t.HasField("tensor_type") and t.tensor_type.elem_type:
            types[info.name] = t
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return _Graph(model, nodes, schema.opset_of(model, "") or 1, depth, types, inits)


def _node_info(g: _Graph, k: int, values: dict[str, Any]) -> NodeInfo:
    from . import schema
    from .values import describe

    node = g.nodes[k]
    since = None
    if node.domain in ("", "ai.onnx"):
        sch = schema.schema_at(node.op_type, g.opset)
        since = sch.since_version if sch is not None else None
    shapes = [describe(values.get(i)) if i else "-" for i in node.input]
    return NodeInfo(k, node.op_type, node.name, node.domain, since, list(node.input), list(node.output), shapes)


def _with_outputs(model: onnx.ModelProto, nodes: list[onnx.NodeProto], names: list[str], types: dict[str, onnx.TypeProto]) -> bytes:
    """A copy of ``model`` with only ``nodes`` and with ``names`` as its outputs (typed where known)."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    del out.graph.output[:]
    for name in names:
        info = onnx.ValueInfoProto(name=name)
        if name in types:
            info.type.CopyFrom(types[name])
        out.graph.output.append(info)
    return out.SerializeToString()


def _all_outputs(g: _Graph) -> list[str]:
    return [o for node in g.nodes for o in node.output if o]


# =============================================================================================
# the oracle
# =============================================================================================
def reference_steps(g: _Graph) -> list[tuple[Any, dict[str, Any]] | str]:
    """Per node: (our reference, its attributes), or why we have none for it."""
    import onnx

    from .registry import load_all
    from .values import attribute_value

    registry = load_all()
    steps: list[tuple[Any, dict[str, Any]] | str] = []
    for k, node in enumerate(g.nodes):
        info = _node_info(g, k, {})
        entry = registry.get(("", node.op_type, info.since)) if node.domain in ("", "ai.onnx") else None
        if entry is None or entry.reference is None:
            steps.append(f"no reference of ours for {info.label}")
            continue
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            steps.append(f"{info.label} has a subgraph attribute")
            continue
        steps.append((entry.reference, {a.name: attribute_value(a) for a in node.attribute}))
    return steps


def _apply(step: tuple[Any, dict[str, Any]], node: onnx.NodeProto, env: dict[str, Any]) -> list[Any]:
    import numpy as np

    ref, attrs = step
    with np.errstate(all="ignore"):
        ys = ref(*[env[i] if i else None for i in node.input], **attrs)
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    return [np.asarray(y) for y in ys]


# =============================================================================================
# tolerance and comparison
# =============================================================================================
def value_tolerance(value: Any, depth: int, case_tol: Tolerance) -> Tolerance:
    """The fuzzer's tolerance at this depth for the value's dtype (no propagated-error term: see
    the module docstring), or the case's own where that is larger."""
    import numpy as np

    from .case import Tolerance
    from .fuzz_api import Value
    from .generated.graph import output_tolerance
    from .values import dtype_name

    arr = value if not isinstance(value, (list, dict)) and value is not None else None
    dtype = dtype_name(np.asarray(arr).dtype) if arr is not None else "float32"
    grown = output_tolerance(Value("", "float", np.zeros(0), np.zeros(0), depth), dtype)
    ulps = [u for u in (grown.ulp, case_tol.ulp) if u is not None]
    return Tolerance(max(grown.rtol, case_tol.rtol), max(grown.atol, case_tol.atol), max(ulps) if ulps else None)


def _compare(expected: Any, actual: Any, tol: Tolerance) -> Any:
    from .compare import Comparator

    with _quiet():
        return Comparator().compare([expected], [actual], tol)


def _quiet():
    import numpy as np

    return np.errstate(all="ignore")


# =============================================================================================
# localize
# =============================================================================================
def localize(case: Case, backend: BackendSpec, oracle: BackendSpec | None = None, data_set: int = 0, timeout: float = 60.0,
             bundle: Path | None = None, in_process: bool = False) -> Localization:
    """Find the first diverging node of ``case`` on ``backend`` (see the module docstring);
    ``bundle``: where to write the one-node repro bundle (None: none is written)."""
    from .generated.engine import InProcess, Isolated
    from .runner import BackendSpec

    oracle = oracle or BackendSpec("reference")
    model = case.load_model()
    data = case.load_data(model)
    if not data:
        raise LocalizeError(f"case {case.id} has no data set to run")
    if data_set >= len(data):
        raise LocalizeError(f"case {case.id} has {len(data)} data sets; --data-set {data_set} is not one")
    feeds = dict(data[data_set].inputs)
    g = _graph(model)
    if not g.nodes:
        raise LocalizeError(f"case {case.id} has no nodes")
    loc = Localization(case.id, backend.name, COMPOSED, case_tolerance=case.tolerance.to_dict())
    specs = [backend] + ([oracle] if oracle.name != backend.name else [])
    runner = InProcess(specs) if in_process else Isolated(specs, timeout)
    try:
        values = _oracle_values(g, feeds, oracle, runner, loc)
        for name, v in values.items():  # the oracle's values type what inference left unknown
            if name not in g.types and v is not None:
                from .values import infer_type

                try:
                    g.types[name] = infer_type(v)
                except (TypeError, ValueError) as exc:
                    loc.steps.append(f"value {name}: no ONNX type for the oracle's {type(v).__name__} ({exc})")
        found = _by_intermediates(g, feeds, values, case, runner, loc)
        if found is None:
            found = _by_prefix(g, feeds, values, case, runner, loc)
        if found is not None:
            k, outputs, message, tol = found
            _report_node(loc, g, k, values, outputs, message, tol)
            _single_node(loc, g, k, values, case, backend, runner, bundle)
    finally:
        runner.close()
    return loc


def _oracle_values(g: _Graph, feeds: dict[str, Any], oracle: BackendSpec, runner: Any, loc: Localization) -> dict[str, Any]:
    """Every value of the graph: our references where we have them, computed from the values
    before them; the oracle backend's for the other nodes (from the whole exposed model where
    the node's inputs are the backend's own, else the node alone on our values)."""
    steps = reference_steps(g)
    env: dict[str, Any] = {**g.initializers, **feeds}
    if all(not isinstance(st, str) for st in steps):
        try:
            for node, step in zip(g.nodes, steps):
                env.update((o, y) for o, y in zip(node.output, _apply(step, node, env)) if o)
            loc.steps.append(f"oracle: our references composed over {len(g.nodes)} nodes")
            return env
        except Exception as exc:  # a reference refusing these values: the oracle backend takes that node, said so
            loc.steps.append(f"oracle: a reference raised {type(exc).__name__}: {exc}"[:300])
            env = {**g.initializers, **feeds}
    names = _all_outputs(g)
    out = runner.run(oracle.name, _with_outputs(g.model, g.nodes, names, g.types), feeds)
    loc.runs += 1
    if out.outputs is None or len(out.outputs) != len(names):
        where = _first_failing_prefix(g, feeds, oracle, runner, loc)
        raise LocalizeError(f"the oracle {oracle.name} fails too{where} (so the model, its data or the oracle is at fault, "
                            f"not only the backend): {out.outcome}: {out.message}")
    theirs = dict(zip(names, out.outputs))
    same = set(env)  # names whose value in env is the oracle backend's own
    ours = alone = 0
    disagree = ""
    for k, (node, step) in enumerate(zip(g.nodes, steps)):
        outs = [o for o in node.output if o]
        ys = None
        if not isinstance(step, str):
            try:
                ys = _apply(step, node, env)
                ours += 1
            except Exception as exc:  # this node goes to the oracle backend, said so
                loc.steps.append(f"oracle: our reference for node {k} raised {type(exc).__name__}: {exc}"[:300])
        if ys is not None:
            if not disagree:
                for o, y in zip(outs, ys):
                    v = _compare(theirs.get(o), y, value_tolerance(y, g.depth.get(o, 1), loc_tolerance(loc)))
                    if v.outcome != "pass":
                        disagree = (f"oracle: our reference and {oracle.name} disagree at {_node_info(g, k, env).label} "
                                    f"({o}: {v.message.removeprefix('output 0: ')}); ours is taken")[:400]
                        break
            env.update(zip(outs, ys))
            continue
        if all(i in same for i in node.input if i):
            env.update((o, theirs[o]) for o in outs)
            same.update(outs)
            continue
        model, node_feeds = _one_node(g, k, env)
        got = runner.run(oracle.name, model.SerializeToString(), node_feeds)
        loc.runs += 1
        alone += 1
        if got.outputs is None or len(got.outputs) != len(outs):
            raise LocalizeError(f"the oracle {oracle.name} failed on node {k} alone: {got.outcome}: {got.message}")
        env.update(zip(outs, got.outputs))
    loc.oracle = f"{COMPOSED} + {oracle.name}" if ours else oracle.name
    loc.steps.append(f"oracle: our references for {ours} nodes, {oracle.name} for {len(g.nodes) - ours} "
                     f"({alone} of them run alone on our values)")
    if disagree:
        loc.steps.append(disagree)
    return env


def _first_failing_prefix(g: _Graph, feeds: dict[str, Any], spec: BackendSpec, runner: Any, loc: Localization) -> str:
    """`` at node K ...``: the last node of the shortest prefix model ``spec`` fails on (bisection), or ""."""
    def fails(k: int) -> bool:
        names = _prefix_outputs(g, k)
        loc.runs += 1
        out = runner.run(spec.name, _with_outputs(g.model, g.nodes[:k], names, g.types), feeds)
        return out.outputs is None or len(out.outputs) != len(names)

    lo, hi = 0, len(g.nodes)
    if not fails(hi):
        return " on the exposed copy only"
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    shapes = ", ".join(f"{i}: {_describe_type(g.types.get(i))}" for i in g.nodes[hi - 1].input if i)
    return f" at {_node_info(g, hi - 1, {}).label} (inputs {shapes})"


def _describe_type(t: Any) -> str:
    if t is None or not t.HasField("tensor_type"):
        return "?"
    import onnx

    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type)
    if not t.tensor_type.HasField("shape"):
        return f"{dtype}[rank unknown]"
    dims = [d.dim_param or (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.tensor_type.shape.dim]
    return f"{dtype}[{','.join(dims)}]"


def loc_tolerance(loc: Localization) -> Tolerance:
    from .case import Tolerance

    return Tolerance.from_dict(loc.case_tolerance) if loc.case_tolerance else Tolerance()


def _first_divergence(g: _Graph, names: list[str], got: dict[str, Any], values: dict[str, Any], case: Case,
                      loc: Localization, upto: int | None = None) -> tuple[int, str, Tolerance] | None:
    """The first node (index) among the first ``upto`` whose compared outputs leave their
    tolerance, with the comparison's message."""
    producer = {o: k for k, node in enumerate(g.nodes) for o in node.output if o}
    for name in names:
        if name not in got:
            continue
        k = producer[name]
        if upto is not None and k >= upto:
            continue
        tol = value_tolerance(values.get(name), g.depth.get(name, 1), case.tolerance)
        verdict = _compare(values.get(name), got[name], tol)
        loc.values_compared += 1
        if verdict.outcome != "pass":
            return k, f"{name}: {verdict.message.removeprefix('output 0: ')}", tol
    return None


def _by_intermediates(g: _Graph, feeds: dict[str, Any], values: dict[str, Any], case: Case, runner: Any,
                      loc: Localization) -> tuple[int, list[Any] | None, str, Tolerance] | None:
    names = _all_outputs(g)
    out = runner.run(loc.backend, _with_outputs(g.model, g.nodes, names, g.types), feeds)
    loc.runs += 1
    if out.outputs is None:
        loc.steps.append(f"intermediates exposed ({len(names)} values): the backend fails: {out.outcome}: {out.message}"[:300])
        return None
    if len(out.outputs) != len(names):
        loc.steps.append(f"intermediates exposed: the backend returned {len(out.outputs)} values, expected {len(names)}")
        return None
    got = dict(zip(names, out.outputs))
    hit = _first_divergence(g, names, got, values, case, loc)
    if hit is None:
        loc.steps.append(f"intermediates exposed ({len(names)} values): all agree; bisecting prefix models "
                         "(exposing an intermediate can undo a fusion)")
        return None
    k, message, tol = hit
    loc.method = "intermediates"
    loc.steps.append(f"intermediates exposed ({len(names)} values): first divergence at node {k}")
    return k, [got.get(o) for o in g.nodes[k].output], message, tol


def _prefix_outputs(g: _Graph, k: int) -> list[str]:
    """Outputs of the first ``k`` nodes that later nodes or the graph read, and the k-th node's."""
    later = {i for node in g.nodes[k:] for i in node.input} | {o.name for o in g.model.graph.output}
    names = [o for node in g.nodes[:k] for o in node.output if o and o in later]
    return names + [o for o in g.nodes[k - 1].output if o and o not in names]


def _by_prefix(g: _Graph, feeds: dict[str, Any], values: dict[str, Any], case: Case, runner: Any,
               loc: Localization) -> tuple[int, list[Any] | None, str, Tolerance] | None:
    cache: dict[int, tuple[int, list[Any] | None, str, Tolerance] | None] = {}

    def diverges(k: int) -> tuple[int, list[Any] | None, str, Tolerance] | None:
        if k in cache:
            return cache[k]
        names = _prefix_outputs(g, k)
        out = runner.run(loc.backend, _with_outputs(g.model, g.nodes[:k], names, g.types), feeds)
        loc.runs += 1
        last = list(g.nodes[k - 1].output)
        tol = value_tolerance(values.get(last[0]), g.depth.get(last[0], 1), case.tolerance)
        if out.outputs is None:
            cache[k] = (k - 1, None, f"the backend fails on the prefix ending here: {out.outcome}: {out.message}", tol)
        elif len(out.outputs) != len(names):
            cache[k] = (k - 1, None, f"the backend returned {len(out.outputs)} values for {len(names)} outputs", tol)
        else:
            got = dict(zip(names, out.outputs))
            hit = _first_divergence(g, names, got, values, case, loc)
            cache[k] = None if hit is None else (k - 1, [got.get(o) for o in last], hit[1], hit[2])
        return cache[k]

    n = len(g.nodes)
    if diverges(n) is None:
        loc.steps.append("prefix bisection: the whole model agrees with the oracle within the grown tolerance")
        return None
    lo, hi = 0, n  # invariant: the prefix of lo nodes agrees (0: nothing ran), that of hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if diverges(mid) is None:
            lo = mid
        else:
            hi = mid
    loc.method = "prefix"
    loc.steps.append(f"prefix bisection: {loc.runs} runs; the first {hi - 1} nodes agree, the first {hi} do not")
    k, outputs, message, tol = cache[hi]
    return k, outputs, message, tol


def _report_node(loc: Localization, g: _Graph, k: int, values: dict[str, Any], outputs: list[Any] | None, message: str,
                 tol: Tolerance) -> None:
    node = g.nodes[k]
    loc.status = "found"
    loc.node = _node_info(g, k, values)
    loc.inputs = {i: values.get(i) for i in node.input if i}
    loc.expected = [values.get(o) for o in node.output if o]
    loc.actual = outputs
    loc.message = message
    loc.tolerance = tol.to_dict()


def _single_node(loc: Localization, g: _Graph, k: int, values: dict[str, Any], case: Case, backend: BackendSpec, runner: Any,
                 bundle: Path | None) -> None:
    """Run the node alone on the oracle's input values; write its repro bundle."""
    from .case import Case, DataSet
    from .worker import Result

    node = g.nodes[k]
    model, feeds = _one_node(g, k, values)
    outs = [o for o in node.output if o]
    expected = [values.get(o) for o in outs]
    tol = value_tolerance(expected[0], 1, case.tolerance)
    tags = {"localized_from": case.id, "node": loc.node.__dict__ if loc.node else {}, "source": case.tags.get("source", "")}
    single = Case(id=f"{case.id}@node{k}_{node.op_type}", suite=case.suite, model_bytes=model.SerializeToString(),
                  data=[DataSet(feeds, expected)], tolerance=tol, tags=tags)
    out = runner.run(backend.name, single.model_bytes, feeds)
    loc.runs += 1
    if out.outputs is None:
        result = Result(single.id, backend.name, out.outcome, out.message, tags=tags)
    else:
        from .compare import Comparator

        with _quiet():
            verdict = Comparator().compare(expected, out.outputs, tol)
        result = Result(single.id, backend.name, verdict.outcome, verdict.message, verdict=verdict.to_dict(), tags=tags)
    loc.single_outcome, loc.single_message = result.outcome, result.message
    if bundle is not None:
        from .repro import write_bundle

        folder = write_bundle(Path(bundle), single, result, backend.spec, backend.options)
        (folder / "localize.json").write_text(json.dumps(loc.to_dict(), indent=1, default=str))
        loc.bundle = str(folder)


def _one_node(g: _Graph, k: int, values: dict[str, Any]) -> tuple[onnx.ModelProto, dict[str, Any]]:
    """Node ``k`` alone: its initializers kept, its other inputs graph inputs fed ``values``."""
    import onnx

    node = g.nodes[k]
    model = onnx.ModelProto()
    model.CopyFrom(g.model)
    graph = model.graph
    del graph.node[:], graph.input[:], graph.output[:], graph.initializer[:], graph.value_info[:]
    graph.node.append(node)
    graph.name = f"{node.op_type}_{k}"
    feeds = {}
    for name in dict.fromkeys(i for i in node.input if i):
        if name in g.initializers:
            graph.initializer.append(onnx.numpy_helper.from_array(g.initializers[name], name))
        else:
            graph.input.append(onnx.ValueInfoProto(name=name, type=_type_of(values.get(name))))
            feeds[name] = values.get(name)
    for name in (o for o in node.output if o):
        info = onnx.ValueInfoProto(name=name)
        if name in g.types or name in values:
            info.type.CopyFrom(g.types.get(name) or _type_of(values.get(name)))
        graph.output.append(info)
    return model, feeds


def _type_of(value: Any) -> onnx.TypeProto:
    from .values import infer_type

    return infer_type(value)
