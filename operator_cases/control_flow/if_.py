"""If: run then_branch when cond is true, else_branch otherwise (ONNX spec: If-1, 11, 13, 16,
19, 21, 23, 24, 25).

"then_branch: Graph to run if condition is true. Has N outputs: values you wish to be live-out
to the enclosing scope. The number of outputs must match the number of outputs in the
else_branch." If-1: "The return values in the `then_branch` and `else_branch` must be of the
same shape and same data type"; from If-11 they "may produce tensors with the same element type
and different shapes". Later versions only widen the types V (sequences from 13, optionals from
16, float8 from 19, 4-bit from 21, float4 from 23, ...). The branch taken is evaluated by our
own references (operator_cases._control_util.run_graph), the values in scope (x0, the
condition) captured by name.

Drawn branches: the subgraph's own initializers passed out through Identity, a Constant node,
Add of two initializers (float32/float64/int32/int64), and a nested If whose condition is the
outer x0 captured two scopes out. Every tensor type V allows and our strategies know is swept;
the branches move the type's edge values (NaN, +-inf, -0.0, subnormals, extremes) untouched.
Sequence outputs (If-13 on: SequenceConstruct of initializers, SequenceEmpty) and optional
outputs (If-16 on: Optional of an initializer or of a sequence, the empty Optional of a type)
are named edges, for the element types V allows as seq(tensor(...)) and optional(...) at the
version: the branch taken gives the value, the other one a different kind (an empty sequence, an
empty optional), so the branch taken shows.
"""

from __future__ import annotations

import numpy as np
import onnx

from harness import strategies as S
from harness.registry import Example, Operator
from harness.values import Typed, optional_type, sequence_type, tensor_type

from harness import schema

from .._control_util import allows, arith_ok, edge_array, graph, init, node, run_graph, top_scope, values, vi

op = Operator("If", type_param="V")
VERSIONS = (1, 11, 13, 16, 19, 21, 23, 24, 25)
st = S.st


def _typed(value, info: onnx.ValueInfoProto):
    """A branch output as the If's output: a sequence or optional as a Typed of the type the
    branch declares (an empty one keeps its element type), a tensor as is."""
    if info.type.WhichOneof("value") in ("sequence_type", "optional_type"):
        return Typed(list(value) if isinstance(value, list) else value, info.type)
    return value


def _if(cond, then_branch, else_branch, outer, opset):
    c = np.asarray(cond)
    if c.size != 1:
        raise ValueError(f"If: cond holds {c.size} elements, the spec wants a single one")
    branch = then_branch if bool(c.reshape(-1)[0]) else else_branch
    return tuple(_typed(v, info) for v, info in zip(run_graph(branch, [], outer, opset), branch.output))


def _make(since: int):
    def if_ref(cond, *, then_branch, else_branch, _outer=None, _opset=None):
        outer = top_scope([cond]) if _outer is None else _outer
        return _if(cond, then_branch, else_branch, outer, since if _opset is None else _opset)

    if_ref.__name__ = f"if_{since}"
    return if_ref


for _v in VERSIONS:
    op.reference(_v)(_make(_v))
# If-1 is at opset 1 (IR 3), where a subgraph initializer must also be a graph input and a
# branch has no inputs: its data comes from Constant nodes. Constant-1 holds float16, float and
# double only: integer and bool branch values are double Constants through Cast-1 (values a
# double holds exactly); Cast-1 casts no strings and no complex, so those are not swept
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
op.restrict(1, dtypes=("float16", "float32", "float64", *INTS, "bool"))


def _exact_in_double(a: np.ndarray) -> np.ndarray:
    """The elements of an integer array a double holds exactly (|v| <= 2**53): If-1's integer
    branch values pass through a double Constant."""
    if a.dtype.kind not in "iu":
        return a
    return a[np.abs(a.astype(np.float64)) <= 2.0**53]


# -- branches -----------------------------------------------------------------------------
def branch(prefix: str, kind: str, arrays: list[np.ndarray], dtype: str, opset: int, rng_arrays=None):
    """A branch with one output per array: ``kind`` init (initializer -> Identity), constant (a
    Constant node), add (Add of the array minus one and a ones initializer), nested (an If on the
    captured x0 whose both branches give the arrays)."""
    nodes, inits, outs = [], [], []
    for k, arr in enumerate(arrays):
        out = f"{prefix}_y{k}"
        outs.append(vi(out, dtype, arr.shape))
        if opset < 9 and not allows("Constant", opset, dtype):
            # Constant-1 holds float16, float and double only: an integer or bool branch value is
            # a double Constant cast to the type (Cast-1 names it by string: "INT32", "BOOL")
            nodes += [node("Constant", [], [f"{prefix}_d{k}"], value=init(f"{prefix}_v{k}", arr.astype(np.float64))),
                      node("Cast", [f"{prefix}_d{k}"], [out], to=onnx.TensorProto.DataType.Name(S.onnx_code(dtype)))]
        elif kind == "constant" or opset < 9:  # IR 3 (opsets 1-8): a subgraph initializer must be a graph input
            nodes.append(node("Constant", [], [out], value=init(f"{prefix}_v{k}", arr)))
        elif kind == "add":
            one = np.ones(arr.shape, arr.dtype)
            inits += [init(f"{prefix}_a{k}", arr - one), init(f"{prefix}_b{k}", one)]
            nodes.append(node("Add", [f"{prefix}_a{k}", f"{prefix}_b{k}"], [out]))
        else:
            inits.append(init(f"{prefix}_c{k}", arr))
            nodes.append(node("Identity", [f"{prefix}_c{k}"], [out]))
    if kind == "nested":
        inner_then = branch(prefix + "t", "init", arrays, dtype, opset)
        inner_else = branch(prefix + "e", "init", [np.flip(a) if a.ndim else a for a in arrays], dtype, opset)
        nodes = [node("If", ["x0"], [o.name for o in outs], then_branch=inner_then, else_branch=inner_else)]
        inits = []
    return graph(prefix, nodes, [], outs, inits)


def kinds(dtype: str, opset: int) -> list[str]:
    out = ["init", "nested"]
    if allows("Constant", opset, dtype):
        out.append("constant")
    if arith_ok(dtype, opset):
        out.append("add")
    return out


def example(cond, then_arrays, else_arrays, dtype, opset, then_kind="init", else_kind="init", name=""):
    attrs = {"then_branch": branch("then", then_kind, then_arrays, dtype, opset),
             "else_branch": branch("else", else_kind, else_arrays, dtype, opset)}
    return Example([np.asarray(cond, dtype=bool)], attrs, name=name)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    n_out = d(st.integers(1, 2))
    shapes_then = [S.shapes(d, 0, 3, 0, 3) for _ in range(n_out)]
    # If-1: both branches of the same shape; from If-11 the shapes may differ
    shapes_else = shapes_then if opset < 11 or d(st.booleans()) else [S.shapes(d, 0, 3, 0, 3) for _ in range(n_out)]
    pick = (lambda s: S.arrays(d, dtype, shape=s, lo=0, hi=100)) if opset < 9 and dtype in INTS else (lambda s: values(d, dtype, s))
    then_arrays = [pick(s) for s in shapes_then]
    else_arrays = [pick(s) for s in shapes_else]
    menu = kinds(dtype, opset)
    cond = np.array(d(st.booleans())) if d(st.booleans()) else np.array([d(st.booleans())])
    return example(cond, then_arrays, else_arrays, dtype, opset, d(st.sampled_from(menu)), d(st.sampled_from(menu)))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_array(dtype) if opset >= 9 else _exact_in_double(edge_array(dtype))
    other = np.full(e.shape, "", dtype=object) if dtype == "string" else np.zeros_like(e)
    out = [example(True, [e], [other], dtype, opset, name="then_edge_values"),
           example(False, [other], [e], dtype, opset, name="else_edge_values"),
           example(np.array([False]), [other.reshape(1, -1)], [e.reshape(1, -1)], dtype, opset, name="cond_rank1"),
           example(True, [np.zeros((2, 0), e.dtype)], [np.zeros((2, 0), e.dtype)], dtype, opset, name="empty"),
           example(False, [e[:2], e[-1:].reshape(())], [e[-2:], e[0:1].reshape(())], dtype, opset,
                   "nested", "nested", name="nested_two_outputs")]
    if opset >= 11:  # "may produce tensors with the same element type and different shapes"
        out += [example(True, [e[:3]], [e.reshape(1, -1)], dtype, opset, name="shapes_differ_then"),
                example(False, [e[:3]], [e.reshape(1, -1)], dtype, opset, name="shapes_differ_else")]
    if allows("Constant", opset, dtype):
        out.append(example(True, [e], [other], dtype, opset, "constant", "init", name="constant_node"))
    if arith_ok(dtype, opset):
        out.append(example(False, [other[:2]], [e[:2]], dtype, opset, "init", "add", name="add_in_branch"))
    return out + seq_edges(dtype, opset)


# -- sequence and optional outputs (If-13 on, If-16 on) --------------------------------------
def _v_allows(opset: int, type_str: str) -> bool:
    sch = schema.schema_at("If", opset)
    return type_str in schema.allowed_types(sch).get("V", [])


def seq_ok(dtype: str, opset: int) -> bool:
    return opset >= 13 and _v_allows(opset, f"seq({_type_name(dtype)})") and allows("SequenceConstruct", opset, dtype)


def opt_ok(dtype: str, opset: int) -> bool:
    return opset >= 16 and _v_allows(opset, f"optional({_type_name(dtype)})") and allows("Optional", opset, dtype, "V")


def _type_name(dtype: str) -> str:
    """``float32`` -> ``tensor(float)``: the schema's spelling of the tensor type."""
    for t in schema.allowed_types(schema.schema_at("If", 25)).get("V", []):
        if t.startswith("tensor(") and S.label_from_type_str(t) == dtype:
            return t
    return f"tensor({dtype})"


def seq_branch(prefix: str, kind: str, arrays: list[np.ndarray], dtype: str) -> onnx.GraphProto:
    """One output: ``seq`` SequenceConstruct of the arrays (initializers), ``seq_empty``
    SequenceEmpty of the dtype, ``opt`` Optional of the first array, ``opt_empty`` the empty
    Optional of tensor(dtype), ``opt_seq`` Optional of SequenceConstruct of the arrays."""
    code = S.onnx_code(dtype)
    inits = [init(f"{prefix}_c{k}", a) for k, a in enumerate(arrays)] if kind in ("seq", "opt", "opt_seq") else []
    names = [t.name for t in inits]
    out = f"{prefix}_y"
    if kind == "seq":
        nodes, tp = [node("SequenceConstruct", names, [out])], sequence_type(code)
    elif kind == "seq_empty":
        nodes, tp = [node("SequenceEmpty", [], [out], dtype=code)], sequence_type(code)
    elif kind == "opt":
        nodes, tp = [node("Optional", names[:1], [out])], optional_type(tensor_type(code))
        inits = inits[:1]
    elif kind == "opt_empty":
        nodes, tp = [node("Optional", [], [out], type=tensor_type(code))], optional_type(tensor_type(code))
    elif kind == "opt_seq":
        nodes = [node("SequenceConstruct", names, [f"{prefix}_s"]), node("Optional", [f"{prefix}_s"], [out])]
        tp = optional_type(sequence_type(code))
    else:
        raise ValueError(kind)
    return graph(prefix, nodes, [], [onnx.helper.make_value_info(out, tp)], inits)


def seq_example(cond, then_kind, then_arrays, else_kind, else_arrays, dtype, name):
    return Example([np.asarray(cond, dtype=bool)], {"then_branch": seq_branch("then", then_kind, then_arrays, dtype),
                                                     "else_branch": seq_branch("else", else_kind, else_arrays, dtype)}, name=name)


def seq_edges(dtype: str, opset: int) -> list[Example]:
    e = edge_array(dtype)
    parts = [e, e[:1].reshape(()), np.zeros((2, 0), e.dtype)]
    out = []
    if seq_ok(dtype, opset):
        out += [seq_example(True, "seq", parts, "seq_empty", [], dtype, "sequence_then"),
                seq_example(False, "seq", parts, "seq", parts[:1], dtype, "sequence_else_shorter"),
                seq_example(False, "seq", parts, "seq_empty", [], dtype, "sequence_empty_taken")]
    if opt_ok(dtype, opset):
        out += [seq_example(True, "opt", [e], "opt_empty", [], dtype, "optional_then"),
                seq_example(False, "opt", [e], "opt_empty", [], dtype, "optional_empty_taken")]
        if seq_ok(dtype, opset) and _v_allows(opset, f"optional(seq({_type_name(dtype)}))"):
            out.append(seq_example(True, "opt_seq", parts, "opt_seq", parts[:1], dtype, "optional_sequence"))
    return out


# -- how it enters a generated graph ---------------------------------------------------------
def _fuzz_branch(c, prefix: str, x, other, dtype: str, opset: int) -> onnx.GraphProto:
    """A branch of one or two elementwise ops on the captured pool value ``x``: an exact unary
    op (Neg, Abs; Not in a bool graph) or none, then one op that rounds once (Add, Sub or Mul
    with a constant of the branch or with the captured ``other`` of x's shape) or none. At
    most one rounding op: the branch's own error is one rounding of |y| (the template's ulps)."""
    nodes, inits = [], []
    cur = x.name
    code = S.onnx_code(dtype)
    unary = ["Not"] if dtype == "bool" else [o for o in ("Neg", "Abs") if allows(o, opset, dtype)]
    binary = [] if dtype == "bool" else [o for o in ("Add", "Sub", "Mul") if allows(o, opset, dtype)]
    u = c.choice([None] + unary)
    if u is not None:
        nodes.append(node(u, [cur], [f"{prefix}u"]))
        cur = f"{prefix}u"
    b = c.choice([None] + binary) if binary else None
    if b is not None or not nodes:
        if b is None:
            nodes.append(node("Identity", [cur], [f"{prefix}y"]))
        else:
            if other is not None and c.pick(2):
                rhs = other.name
            else:
                shape = x.shape if c.pick(2) else ()
                rhs = f"{prefix}k"
                inits.append(init(rhs, c.floats(shape, -2.0, 2.0).astype(S.np_dtype(dtype))))
            nodes.append(node(b, [cur, rhs], [f"{prefix}y"]))
    else:
        nodes[-1].output[0] = f"{prefix}y"
    return graph(prefix.rstrip("_"), nodes, [], [vi(f"{prefix}y", code, x.shape)], inits)


@op.fuzz(nan="ieee", ulps=2.0, type_param="V")
def fuzz(c):
    """If with a bool condition of one element (a bool pool value of a comparison, whose
    template keeps it away from its threshold, or a constant) and two branches of one or two
    elementwise ops (:func:`_fuzz_branch`) on values captured from the outer scope, both of x's
    shape and dtype. The engine evaluates the node through this reference, which runs the branch
    the condition takes with our references (_control_util.run_graph)."""
    from harness.fuzz_api import Plan

    x = c.take("float", 0, lambda v: v.node is not None or v.name.startswith("x"))
    if x is None or x.const:
        return None
    other = c.take("float", 1, lambda v: v.shape == x.shape and not v.const and v.name != x.name)
    pre = c.fresh("if")
    mode = c.pick(3)
    steps, cond = [], None
    if mode == 1:
        cond = c.take("bool", 2, lambda v: v.size == 1 and not v.const)
    elif mode == 2:
        steps, cond = _computed_cond(c, pre)
    if cond is None:
        cond = c.const(np.array(bool(c.pick(2))) if c.pick(2) else np.array([bool(c.pick(2))]), "bool")
    then_b = _fuzz_branch(c, pre + "t_", x, other, c.dtype, c.opset)
    else_b = _fuzz_branch(c, pre + "e_", x, other, c.dtype, c.opset)
    caps = [x] + ([other] if other is not None and any(other.name in n.input for g in (then_b, else_b) for n in g.node) else [])
    return Plan([cond], {"then_branch": then_b, "else_branch": else_b}, captures=caps, steps=steps)


def _computed_cond(c, pre: str):
    """cond = ReduceSum(v) > 0 of a pool value v, as two helper steps, or (no steps, None) when
    the sum sits within its error of 0 (the branch taken would then be a coin toss: error of
    the sum = twice v's error estimate plus n units of roundoff of sum |v|, the classic bound)
    or when an integer sum could wrap (spec-silent overflow)."""
    from harness.fuzz_api import PERTURB, ROUNDOFF, Step

    if c.dtype == "bool" or not (allows("ReduceSum", c.opset, c.dtype) and allows("Greater", c.opset, c.dtype)):
        return [], None
    v = c.take("float", 1, lambda v: not v.has_nan)
    if v is None:
        return [], None
    wide = v.wide.astype(np.float64)
    total = float(np.sum(wide))
    u = ROUNDOFF.get(c.dtype, 0.0)
    slack = PERTURB * float(np.sum(v.err)) + 4 * (v.size + 1) * u * float(np.sum(np.abs(wide)))
    if c.exact:
        lo, hi = S.finite_range(c.dtype)
        if not (lo <= float(np.sum(np.minimum(wide, 0))) and float(np.sum(np.maximum(wide, 0))) <= hi):
            return [], None
        if total == 0:  # a sum of 0 gives false exactly; kept
            slack = -1.0
    elif abs(total) <= slack or total == 0:
        return [], None
    zero = c.const(np.zeros((), dtype=S.np_dtype(c.dtype)) if c.exact else np.zeros(()))
    s, cond = pre + "sum", pre + "cond"
    return [Step("ReduceSum", [v], [s], {"keepdims": 0}), Step("Greater", [c.local(s), zero], [cond])], c.local(cond)
