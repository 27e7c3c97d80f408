"""Graph surgery: the reductions that take a failing graph to its core (the fuzzer's shrinking and
``localize`` share them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .. import strategies as S
from ..fuzz_api import (
    LOCAL,
    QUANT,
    QUANT_DTYPES,
    ROUNDOFF,
    Step,
    Value,
)
from .builder import Builder
from .graph import Graph, Node, _narrow, is_exact


# =============================================================================================
# graph surgery: the reductions that take a failing graph to its core
# =============================================================================================
def _prune(g: Graph, outputs: list[Value]) -> Graph:
    """``g`` with only ``outputs`` and the nodes, inputs and initializers they need."""
    needed = {v.name for v in outputs}
    keep: list[Node] = []
    for node in reversed(g.nodes):
        if any(o in needed for o in node.outputs):
            keep.append(node)
            needed.update(node.reads)
    keep.reverse()
    ops = {n.op for n in keep}
    names = {v.name for v in outputs}
    return Graph(g.spec, g.opset, g.dtype, g.nan_mode, [v for v in g.inputs if v.name in needed], keep,
                 {k: a for k, a in g.initializers.items() if k in needed}, list(outputs), [],
                 [op for op in g.nan_assumed_ops if op in ops], g.config, reduced=True, edge=g.edge,
                 silent={k: s for k, s in g.silent.items() if k in names},
                 patterns=list(g.patterns) if len(keep) > 1 else [])  # one node holds no optimizer pattern


def values_of(g: Graph) -> dict[str, Value]:
    """Every value of a realized graph by name (re-evaluated: cheap, and graphs keep only outputs)."""
    b = _reevaluate(g, set()) if g.nodes else None
    return {v.name: v for v in ([*b.pool, *b.terminal] if b is not None else [*g.inputs, *g.outputs])}


def with_outputs(g: Graph, names: list[str]) -> Graph | None:
    """``g`` exposing exactly the values ``names`` (node outputs), dead nodes removed."""
    vals = values_of(g)
    outs = [vals[n] for n in names if n in vals and vals[n].node is not None]
    return _prune(g, outs) if outs else None


def all_outputs(g: Graph) -> Graph:
    """``g`` with every node output exposed, in topological order (where a value first goes
    wrong is then visible)."""
    return with_outputs(g, [o for n in g.nodes for o in n.outputs]) or g


def prefixes(g: Graph) -> Iterator[Graph]:
    """For each node in order: the graph that computes it alone (its ancestors, its outputs)."""
    for n in g.nodes:
        h = with_outputs(g, list(n.outputs))
        if h is not None:
            yield h


def cut(g: Graph, k: int) -> Graph | None:
    """``g`` with node ``k`` replaced by graph inputs carrying its (reference) outputs, or None
    when the rest no longer evaluates safely."""
    node = g.nodes[k]
    vals = values_of(g)
    new_inputs = []
    for name in node.outputs:
        v = vals[name]
        wide = _narrow(v, g.dtype).astype(np.float64) if v.kind == "float" else v.wide
        if v.kind == "float" and is_exact(g.dtype):
            wide = _narrow(v, g.dtype)
        new_inputs.append(Value(name, v.kind, wide, np.zeros(v.shape), 0))
    out_names = [v.name for v in g.outputs if v.name not in node.outputs]
    if not out_names:
        return None
    h = _reevaluate(g, {k}, extra_inputs=new_inputs)
    if h is None:
        return None
    pool = {v.name: v for v in [*h.pool, *h.terminal]}
    if any(n not in pool for n in out_names):
        return None
    return _prune(h.finish(), [pool[n] for n in out_names])


def _reevaluate(g: Graph, drop: set[int], extra_inputs: list[Value] = ()) -> Builder | None:
    b = Builder(g.spec, g.config)
    b.opset, b.dtype, b.u, b.nan_mode, b.edge = g.opset, g.dtype, ROUNDOFF.get(g.dtype, 0.0), g.nan_mode, g.edge
    b.exact = is_exact(g.dtype)
    b.patterns = list(g.patterns)
    b.inputs = list(g.inputs) + list(extra_inputs)
    b.pool = list(b.inputs)
    names = {v.name: v for v in b.pool}
    for name, arr in g.initializers.items():
        if b.exact:
            kind = "float" if arr.dtype == S.np_dtype(g.dtype) else ("bool" if arr.dtype == bool else "int")
            wide = arr
        else:
            kind = "float" if arr.dtype.kind == "f" else ("bool" if arr.dtype == bool else "int")
            kind = QUANT if arr.dtype in QUANT_DTYPES else kind
            wide = arr.astype(np.float64) if kind == "float" else arr
        names[name] = Value(name, kind, wide, np.zeros(arr.shape), 0, const=True)
        b.initializers[name] = arr
    with np.errstate(all="ignore"):
        for k, node in enumerate(g.nodes):
            if k in drop:
                continue
            locals_ = node.locals
            if any(i not in names for i in node.reads):
                continue  # fed by a dropped node: dead once that node is gone

            def value(i: str) -> Value | None:
                if not i:
                    return None
                return Value(i, LOCAL, np.zeros(0), np.zeros(0), 0) if i in locals_ else names[i]

            ins = [value(i) for i in node.inputs]
            steps = [Step(op, [value(i) for i in si], list(so), dict(sa)) for op, _, si, so, sa in node.steps]
            then = [Step(op, [value(i) for i in si], list(so), dict(sa)) for op, _, si, so, sa in node.then]
            why = b.evaluate(node.op, node.since, ins, node.attrs, node.n_acc, node.n_outputs, node.spec_index,
                             out_names=list(node.outputs), captures=[names[i] for i in node.captures], steps=steps,
                             then=then, own=list(node.own), slack=node.slack)
            if why:
                return None
            names.update({v.name: v for v in b.placed})
    return b


def reduce_graph(g: Graph, still_fails: Callable[[Graph], bool], max_steps: int = 200) -> Graph:
    """Delta debugging on a failing graph: drop outputs, then cut nodes into inputs, keeping
    each change under which ``still_fails``; repeat until nothing more goes."""
    steps = 0
    changed = True
    while changed and steps < max_steps:
        changed = False
        for name in [v.name for v in g.outputs] if len(g.outputs) > 1 else []:
            h = with_outputs(g, [v.name for v in g.outputs if v.name != name])
            steps += 1
            if h is not None and h.nodes and still_fails(h):
                g, changed = h, True
                break
        if changed:
            continue
        for k in range(len(g.nodes)):
            h = cut(g, k)
            steps += 1
            if h is not None and h.nodes and still_fails(h):
                g, changed = h, True
                break
    return g
