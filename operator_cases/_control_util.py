"""Control flow (If, Loop, Scan, SequenceMap): a small evaluator of a subgraph (GraphProto)
through OUR OWN references, and the builders of the small bodies the strategies draw.

Evaluator. ``run_graph(graph, args, outer, opset)`` binds the graph's inputs to ``args`` (by
position: "The input/output of subgraph (produced by loop node) matching is based on order
instead of name"), its own initializers by name, and every other name it reads to ``outer``
(the values in scope where the node is: the enclosing graph's values, captured by name). Each
node is computed by the reference registered for the op-version in force at ``opset``
(``harness.registry``); a node with a subgraph attribute (a nested If inside a Loop body) is
handed the current scope as ``_outer``, so its own subgraphs see the body's values and,
through them, the values further out. Nothing of ``onnx.reference`` or ``harness.backends``
is used: the oracle never shares code with a system under test.

Opset. A control-flow reference evaluates its bodies at its own ``since_version`` (the opset a
case of that op-version is stamped at); the body ops we draw (Identity, Add, Mul, Sub, Neg,
Concat, Less, Where, If) behave the same in every version at the types we draw them for.

Top-level scope. A case's single node reads its inputs from graph inputs named ``x0``, ``x1``,
... (``harness.suites.operators.build_case``); a body that captures an outer value names one of
them. ``top_scope`` rebuilds that scope from the reference's positional inputs
(tests/test_ops_control_flow.py checks the naming).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from harness import schema
from harness import strategies as S
from harness.values import attribute_value, reference_value

OUTER = "x{}"
#: dtypes whose bodies may do arithmetic (Add/Mul/Sub/Neg, Less on the iteration count): the
#: types every backend under test has kernels for; the others move data only (Identity, Concat)
ARITH = ("float32", "float64", "int32", "int64")


def top_scope(inputs: list[Any]) -> dict[str, Any]:
    """The outer scope of a case's node: its inputs by their graph names (x0, x1, ...)."""
    return {OUTER.format(i): v for i, v in enumerate(inputs) if v is not None}


def _reference(node: onnx.NodeProto, opset: int):
    from harness.registry import REGISTRY

    domain = schema.canonical_domain(node.domain)
    sch = schema.schema_at(node.op_type, opset, domain)
    if sch is None:
        raise ValueError(f"{node.op_type} has no schema at opset {opset}")
    entry = REGISTRY.get((domain, node.op_type, sch.since_version))
    if entry is None or entry.reference is None:
        raise ValueError(f"no reference of ours for {node.op_type}-{sch.since_version} (a body node)")
    return entry.reference, sch


def _outputs_of(result: Any, node: onnx.NodeProto) -> list[Any]:
    """The node's outputs from a reference's return: one value, or a tuple/list of outputs."""
    if len(node.output) == 1 and not isinstance(result, (tuple, list)):
        return [result]
    if isinstance(result, tuple) or (isinstance(result, list) and len(node.output) > 1):
        return list(result)
    return [result]  # a list returned for one output: a sequence value


def run_graph(graph: onnx.GraphProto, args: list[Any], outer: dict[str, Any], opset: int) -> list[Any]:
    """The graph's outputs, its inputs bound by position to ``args`` (see the module docstring)."""
    if len(args) != len(graph.input):
        raise ValueError(f"subgraph {graph.name!r} takes {len(graph.input)} inputs, got {len(args)}")
    env = dict(outer)
    for init in graph.initializer:
        env[init.name] = numpy_helper.to_array(init)
    for info, value in zip(graph.input, args):
        env[info.name] = value
    for node in graph.node:
        ref, _ = _reference(node, opset)
        attrs = {a.name: attribute_value(a) for a in node.attribute}
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            attrs["_outer"], attrs["_opset"] = env, opset
        missing = [i for i in node.input if i and i not in env]
        if missing:
            raise ValueError(f"subgraph {graph.name!r}: {node.op_type} reads {missing}, defined nowhere in scope")
        with np.errstate(all="ignore"):
            result = ref(*[env[i] if i else None for i in node.input], **attrs)
        for name, value in zip(node.output, _outputs_of(result, node)):
            if name:  # a sequence or optional (Typed) flows on as the value a reference is given
                env[name] = reference_value(value)
    return [env[o.name] for o in graph.output]


def declared_shape(info: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    """The static shape a value info declares, or None (no shape, or a symbolic/unknown dim)."""
    tt = info.type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return None if None in dims else tuple(dims)


def declared_dtype(info: onnx.ValueInfoProto) -> np.dtype:
    return S.np_dtype(S.label_of(info.type.tensor_type.elem_type))


def empty_stack(info: onnx.ValueInfoProto, lead: tuple[int, ...] = (0,)) -> np.ndarray:
    """The scan output of zero iterations: ``lead`` then the element shape the body declares
    (the spec: "[] denotes an empty tensor"; its element shape is the one the body's output
    type fixes, the only one an element of it could have)."""
    shape = declared_shape(info)
    if shape is None:
        raise ValueError(f"zero iterations and the body output {info.name!r} declares no static element shape")
    return np.zeros(lead + shape, dtype=declared_dtype(info))


# -- building bodies ---------------------------------------------------------------------
def vi(name: str, dtype: str | int, shape: Any = "same") -> onnx.ValueInfoProto:
    """A tensor value info; ``shape`` a tuple (None dims unknown), or None for no shape."""
    code = dtype if isinstance(dtype, int) else S.onnx_code(dtype)
    return helper.make_tensor_value_info(name, code, None if shape is None else list(shape))


def init(name: str, value: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def node(op: str, ins: list[str], outs: list[str], **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs, **attrs)


def graph(name: str, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
          inits: list[onnx.TensorProto] = ()) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))


def allows(op: str, opset: int, dtype: str, param: str = "T") -> bool:
    """``op`` at ``opset`` accepts tensors of ``dtype`` for its type parameter ``param``."""
    sch = schema.schema_at(op, opset)
    if sch is None:
        return False
    allowed = schema.allowed_types(sch).get(param, [])
    return any(S.label_from_type_str(t) == dtype for t in allowed)


def arith_ok(dtype: str, opset: int) -> bool:
    return dtype in ARITH and opset >= 7 and allows("Add", opset, dtype)


def values(d: Any, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Drawn values: small integers in integer types (no overflow in a few additions), in
    [-4, 4] for floats, anything for the other types (they are only moved)."""
    if dtype in ARITH:
        return S.arrays(d, dtype, shape=shape, lo=-4, hi=4)
    if dtype == "string":  # non-empty strings: a string lost on the way shows (it reads as "")
        n = int(np.prod(shape)) if shape else 1
        vals = d(S.st.lists(S.st.text(alphabet="abcXYZ019 _", min_size=1, max_size=5), min_size=n, max_size=n))
        return np.array(vals, dtype=object).reshape(shape)
    return S.arrays(d, dtype, shape=shape)


def edge_array(dtype: str) -> np.ndarray:
    """The dtype's edge values (NaN, +-inf, -0.0, subnormals, extremes): control flow must move them untouched."""
    return S.edge_values(dtype)


def same_values(a: Any, b: Any) -> bool:
    """Bitwise-equal NaN-aware comparison helper for tests."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.all((a == b) | ((a != a) & (b != b))))
