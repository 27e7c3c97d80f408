"""SequenceMap: "Applies a sub-graph to each sample in the input sequence(s)." (ONNX spec:
SequenceMap-17).

"Inputs can be either tensors or sequences, with the exception of the first input which must be
a sequence. The length of the first input sequence will determine the number of samples in the
outputs. Any other sequence inputs should have the same number of samples. The number of inputs
and outputs, should match the one of the subgraph. For each i-th element in the output, a sample
will be extracted from the input sequence(s) at the i-th position and the sub-graph will be
applied to it. The outputs will contain the outputs of the sub-graph for each sample, in the same
order as in the input." A tensor among the additional inputs is given whole to every sample.
An empty first sequence gives empty output sequences (of the element types the body declares).
"This operator assumes that processing each sample is independent": the bodies drawn here have
no state, so the order of evaluation cannot show.

The body is evaluated by our own references (operator_cases._control_util.run_graph). Bodies:
identity (each element through Identity), tensor (each element and the additional tensor, both
through: two outputs), zip (the element of a second sequence at the same position), add_tensor
(element + the additional tensor, broadcast: float32/float64/int32/int64), add_seq (element +
the second sequence's element at the same position). The type constraint S ties the input and
output sequences to one element type: every body keeps the element type.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._control_util import arith_ok, graph, node, run_graph, top_scope, vi
from .._control_util import values as small_values
from .._sequence_util import edge_items, item, seq, seq_out

op = Operator("SequenceMap", type_param="S")
# a wide type sweep (15 element types) moving values through the body: a share of draws per dtype
op.draws(17, share=0.5)
st = S.st


def _elem_code(info) -> int:
    return info.type.tensor_type.elem_type


@op.reference(17)
def sequence_map(input_sequence, *additional_inputs, body, _outer=None, _opset=None):
    n = len(input_sequence)
    if len(body.input) != 1 + len(additional_inputs):
        raise ValueError(f"SequenceMap body takes {len(body.input)} inputs for {1 + len(additional_inputs)} node inputs")
    for a in additional_inputs:
        if isinstance(a, list) and len(a) != n:
            raise ValueError(f"SequenceMap: a sequence input of {len(a)} samples, the first has {n}")
    outer = top_scope([input_sequence, *additional_inputs]) if _outer is None else _outer
    outs: list[list] = [[] for _ in body.output]
    for i in range(n):
        args = [input_sequence[i]] + [a[i] if isinstance(a, list) else a for a in additional_inputs]
        for acc, v in zip(outs, run_graph(body, args, outer, 17 if _opset is None else _opset)):
            acc.append(np.asarray(v))
    return tuple(seq_out(acc, _elem_code(info)) for acc, info in zip(outs, body.output))


# -- bodies -------------------------------------------------------------------------------
KINDS_ANY = ("identity", "tensor", "zip")
KINDS_ARITH = ("add_tensor", "add_seq")


def kinds(dtype: str) -> list[str]:
    return list(KINDS_ANY) + (list(KINDS_ARITH) if arith_ok(dtype, 17) else [])


def body(kind: str, dtype: str):
    """The body of ``kind`` (element shapes left open: samples may differ in shape)."""
    e, a = vi("e", dtype, None), vi("a", dtype, None)
    if kind == "identity":
        return graph("map_identity", [node("Identity", ["e"], ["y0"])], [e], [vi("y0", dtype, None)])
    if kind == "tensor":
        return graph("map_tensor", [node("Identity", ["e"], ["y0"]), node("Identity", ["a"], ["y1"])], [e, a],
                     [vi("y0", dtype, None), vi("y1", dtype, None)])
    if kind == "zip":
        return graph("map_zip", [node("Identity", ["a"], ["y0"])], [e, a], [vi("y0", dtype, None)])
    if kind in KINDS_ARITH:
        return graph(f"map_{kind}", [node("Add", ["e", "a"], ["y0"])], [e, a], [vi("y0", dtype, None)])
    raise ValueError(kind)


def example(kind: str, dtype: str, xs: list, extra=None, name: str = "") -> Example:
    """``extra``: the additional input (a tensor for tensor/add_tensor, a list of tensors for zip/add_seq)."""
    inputs = [seq(xs, dtype)]
    if kind != "identity":
        inputs.append(seq(extra, dtype) if kind in ("zip", "add_seq") else np.asarray(extra))
    return Example(inputs, {"body": body(kind, dtype)}, name=name)


@op.strategy(17)
def draw(d, dtype, opset):
    """Drawn: 1 to 3 samples of independent shapes (empty sequences are named edges: onnx.reference
    fails on them, see harness/expectations/reference.toml); the additional tensor of add_tensor has shape
    () or (1,) (it broadcasts with every sample); a second sequence has the first's shapes."""
    kind = d(st.sampled_from(kinds(dtype)))
    n = d(st.integers(1, 3))
    arith = kind in KINDS_ARITH
    xs = [small_values(d, dtype, S.shapes(d, 0, 3, 0, 3)) if arith else item(d, dtype) for _ in range(n)]
    if kind == "identity":
        return example(kind, dtype, xs)
    if kind in ("zip", "add_seq"):
        other = [small_values(d, dtype, x.shape) if arith else item(d, dtype) for x in xs]
        return example(kind, dtype, xs, other)
    shape = d(st.sampled_from([(), (1,)])) if arith else S.shapes(d, 0, 2, 0, 3)
    return example(kind, dtype, xs, small_values(d, dtype, shape) if arith else item(d, dtype))


@op.edges(17)
def edges(dtype, opset):
    xs = edge_items(dtype)  # the edge values, a scalar, an empty tensor, a 2-D block
    rev = [np.flip(x) if x.ndim else x for x in xs][::-1]
    out = [example("identity", dtype, xs, name="edge_values"),
           example("identity", dtype, [], name="empty_sequence"),
           example("tensor", dtype, xs[:2], xs[0], name="tensor_to_every_sample"),
           example("tensor", dtype, [], xs[0], name="empty_sequence_with_tensor"),
           example("zip", dtype, xs, rev, name="zip_two_sequences"),
           example("zip", dtype, [], [], name="empty_sequences_zipped"),
           example("identity", dtype, [xs[2]], name="one_empty_tensor")]
    if arith_ok(dtype, 17):
        e = xs[0]
        out += [example("add_tensor", dtype, [e, e[:1].reshape(()), np.zeros((2, 0), e.dtype)], np.ones((1,), e.dtype),
                        name="add_tensor_broadcast"),
                example("add_seq", dtype, [e, e[::-1].copy()], [e[::-1].copy(), e], name="add_sequence_elements")]
    return out


# -- how it enters a generated graph ---------------------------------------------------------
@op.fuzz(nan="ieee", ulps=2.0, type_param="S")
def fuzz(c):
    """SequenceMap over a sequence the plan builds from pool tensors
    (_sequence_util.fuzz_sequence) with a body of one op (element shapes left open): an exact
    unary op (Neg, Abs; Not in a bool graph) or Identity, Add or Mul of the element and an
    additional tensor input (a pool value or a constant that broadcasts to every item without
    changing its shape), Add or Mul of the element and a constant of the body, or Mul of the
    element and the same position of a second sequence input (the sequence itself: each item
    squared). The plan then turns the mapped sequence back into a tensor
    (_sequence_util.fuzz_consume). Error: at most one rounding per element (ulps 2 of |y|)."""
    from harness.fuzz_api import Plan, broadcast_shape

    from .._control_util import allows, init
    from .._sequence_util import fuzz_consume, fuzz_sequence

    built = fuzz_sequence(c, "SequenceMap")
    if built is None:
        return None
    steps, s, shapes = built
    dt = c.dtype
    unary = ["Not"] if dt == "bool" else [o for o in ("Neg", "Abs") if allows(o, c.opset, dt)]
    binary = [] if dt == "bool" else [o for o in ("Add", "Mul") if allows(o, c.opset, dt)]
    kind = c.choice(["unary", "identity"] + (["tensor", "const", "zip"] if binary else []))
    pre = c.fresh("map")
    e, y = vi(f"{pre}e", dt, None), vi(f"{pre}y", dt, None)
    inputs = [s]
    if kind == "identity":
        g = graph(f"{pre}body", [node("Identity", [f"{pre}e"], [f"{pre}y"])], [e], [y])
    elif kind == "unary":
        g = graph(f"{pre}body", [node(c.choice(unary), [f"{pre}e"], [f"{pre}y"])], [e], [y])
    elif kind == "const":
        k = init(f"{pre}k", c.floats((), -2.0, 2.0).astype(S.np_dtype(dt)))
        g = graph(f"{pre}body", [node(c.choice(binary), [f"{pre}e", f"{pre}k"], [f"{pre}y"])], [e], [y], [k])
    elif kind == "zip":
        g = graph(f"{pre}body", [node("Mul", [f"{pre}e", f"{pre}a"], [f"{pre}y"])], [e, vi(f"{pre}a", dt, None)], [y])
        inputs.append(s)
    else:
        fits = lambda v: all(broadcast_shape(sh, v.shape) == sh for sh in shapes)  # noqa: E731
        a = c.take("float", 1, fits) if c.pick(2) else None
        if a is None:
            a = c.const(c.floats((), -2.0, 2.0))
        g = graph(f"{pre}body", [node(c.choice(binary), [f"{pre}e", f"{pre}a"], [f"{pre}y"])], [e, vi(f"{pre}a", dt, None)], [y])
        inputs.append(a)
    own = c.fresh("seq") + "o"
    then = fuzz_consume(c, c.local(own), shapes)
    if then is None:
        return None
    return Plan(inputs, {"body": g}, steps=steps, then=then, outputs=[own])
