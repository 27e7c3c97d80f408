"""Loop: a loop with an optional trip count M and an optional condition (ONNX spec: Loop-1, 11,
13, 16, 19, 21, 23, 24, 25).

The spec's table of operating modes:

    input (trip_count, cond):  for (int i=0; i < trip_count && cond; ++i) { cond = ...; }
    input (trip_count, ""):    for (int i=0; i < trip_count; ++i) { cond = ...; // ignored }
    input ("", cond):          bool cond = ...; for (int i=0; cond; ++i) { cond = ...; }
    input ("", ""):            for (int i=0; ; ++i) { cond = ... // ignored }   (never ends: not drawn)

body: "It has 2+N inputs: (iteration_num, condition, loop carried dependencies...). It has
1+N+K outputs: (condition, loop carried dependencies..., scan_outputs...). Each scan_output is
created by concatenating the value of the specified output value at the end of each iteration
of the loop. It is an error if the dimensions or data type of these scan_outputs change across
loop iterations." A scan output is the iterations' values stacked along a new axis 0 (the
spec's sample: ``user_defined_vals[i] = user_defined_val``). The spec restricts the scan
outputs' dimensions, not the loop-carried values' ("values that change across loop
iterations"): a carried value may grow (the ``grow`` body concatenates to it). With zero
iterations (M <= 0, cond false) the carried values are the initial ones and a scan output has
0 rows of the element shape the body declares. Later versions widen the types V (sequences at
13, ...) and Loop-13 adds "Scan outputs must be Tensors".

Bodies are evaluated by our own references (operator_cases._control_util.run_graph): the
iteration number is an int64 scalar, the condition passed in is the loop's (true in every
iteration that runs when cond is given); a body reads the outer x2 (the first initial value)
by capture, and a nested If inside the body reads both the body's values and x2.
"""

from __future__ import annotations

import numpy as np
import onnx

from harness import strategies as S
from harness.registry import Example, Operator

from .._control_util import (allows, arith_ok, edge_array, empty_stack, graph, init, node, run_graph, top_scope, values,
                            vi)

op = Operator("Loop", type_param="V")
VERSIONS = (1, 11, 13, 16, 19, 21, 23, 24, 25)
st = S.st
#: a drawn loop never runs longer; more is a bug of the strategy, shown as an oracle error
MAX_TRIPS = 1000


def _loop(M, cond, v_initial, body, outer, opset):
    n = len(v_initial)
    n_scan = len(body.output) - 1 - n
    if n_scan < 0 or len(body.input) != 2 + n:
        raise ValueError(f"Loop body has {len(body.input)} inputs and {len(body.output)} outputs for {n} carried values")
    if M is None and cond is None:
        raise ValueError("Loop without M and cond never ends (spec: input (\"\", \"\"))")
    trip = None if M is None else int(np.asarray(M).reshape(-1)[0])
    keep = True if cond is None else bool(np.asarray(cond).reshape(-1)[0])
    carried = list(v_initial)
    scans: list[list] = [[] for _ in range(n_scan)]
    i = 0
    while keep and (trip is None or i < trip):
        if i >= MAX_TRIPS:
            raise ValueError(f"Loop ran {MAX_TRIPS} iterations")
        outs = run_graph(body, [np.array(i, np.int64), np.array(keep), *carried], outer, opset)
        if cond is not None:  # "cond = ...; // ignored" when the node has no cond input
            keep = bool(np.asarray(outs[0]).reshape(-1)[0])
        carried = list(outs[1:1 + n])
        for acc, value in zip(scans, outs[1 + n:]):
            acc.append(np.asarray(value))
        i += 1
    stacked = [np.stack(acc) if acc else empty_stack(body.output[1 + n + k]) for k, acc in enumerate(scans)]
    return (*carried, *stacked)


def _make(since: int):
    def loop_ref(M=None, cond=None, *v_initial, body, _outer=None, _opset=None):
        outer = top_scope([M, cond, *v_initial]) if _outer is None else _outer
        return _loop(M, cond, list(v_initial), body, outer, since if _opset is None else _opset)

    loop_ref.__name__ = f"loop_{since}"
    return loop_ref


for _v in VERSIONS:
    op.reference(_v)(_make(_v))


# -- bodies -------------------------------------------------------------------------------
def kinds(dtype: str, opset: int) -> list[str]:
    """The bodies that fit the type at the opset (Less on int64 needs opset 9, initializers IR 4)."""
    out = ["pass", "once"]
    if opset >= 4 and allows("Concat", opset, dtype):  # Concat-1 (axis optional) has no kernel in ONNX Runtime or our torch lowering
        out.append("grow")
    if opset >= 9:
        out += ["count", "nested_if"]
    if arith_ok(dtype, opset):
        out.append("accumulate")
    return out


def body(kind: str, dtype: str, shape: tuple[int, ...], opset: int, stop: int = 2, extra: int = 0):
    """The body of ``kind`` for one carried value of ``dtype`` and ``shape`` (plus ``extra``
    carried values passed through unchanged), with one scan output:

    pass: v = Identity(v), scan Identity(v), cond = Identity(cond)
    (and every body's last scan output is Identity(i), the iteration numbers)
    once: as pass, cond = Not(cond) (a do-while that runs once)
    count: cond = Less(i, stop), scan Identity(i) (int64): early exit after iteration ``stop``
    grow: v = Concat(v, x2, axis 0) (the carried value grows by x2 each iteration), scan Identity(x2)
    accumulate: v = Add(v, x2), scan Identity(v)
    nested_if: v = If(Less(i, stop), then Identity(v), else Identity(x2)), scan Identity(v)
    """
    vshape = None if kind == "grow" else shape
    ins = [vi("i", "int64", ()), vi("cond_in", "bool", ()), vi("v_in", dtype, vshape)]
    outs = [vi("cond_out", "bool", ()), vi("v_out", dtype, vshape)]
    nodes, inits = [], []
    for k in range(extra):
        ins.append(vi(f"w{k}_in", dtype, shape))
        outs.append(vi(f"w{k}_out", dtype, shape))
        nodes.append(node("Identity", [f"w{k}_in"], [f"w{k}_out"]))
    cond_node = node("Not" if kind == "once" else "Identity", ["cond_in"], ["cond_out"])
    if kind in ("pass", "once"):
        nodes += [cond_node, node("Identity", ["v_in"], ["v_out"]), node("Identity", ["v_in"], ["s0"])]
        outs.append(vi("s0", dtype, shape))
    elif kind == "count":
        inits.append(init("stop", np.array(stop, np.int64)))
        nodes += [node("Less", ["i", "stop"], ["cond_out"]), node("Identity", ["v_in"], ["v_out"]), node("Identity", ["i"], ["s0"])]
        outs.append(vi("s0", "int64", ()))
    elif kind == "grow":
        nodes += [cond_node, node("Concat", ["v_in", "x2"], ["v_out"], axis=0), node("Identity", ["x2"], ["s0"])]
        outs.append(vi("s0", dtype, shape))
    elif kind == "accumulate":
        nodes += [cond_node, node("Add", ["v_in", "x2"], ["v_out"]), node("Identity", ["v_out"], ["s0"])]
        outs.append(vi("s0", dtype, shape))
    elif kind == "nested_if":
        then_g = graph("then", [node("Identity", ["v_in"], ["then_y"])], [], [vi("then_y", dtype, shape)])
        else_g = graph("else", [node("Identity", ["x2"], ["else_y"])], [], [vi("else_y", dtype, shape)])
        inits.append(init("stop", np.array(stop, np.int64)))
        nodes += [cond_node, node("Less", ["i", "stop"], ["inner_cond"]),
                  node("If", ["inner_cond"], ["v_out"], then_branch=then_g, else_branch=else_g),
                  node("Identity", ["v_out"], ["s0"])]
        outs.append(vi("s0", dtype, shape))
    else:
        raise ValueError(kind)
    # every body also scans its iteration number (int64 scalars: [0, 1, ..., n-1])
    nodes.append(node("Identity", ["i"], ["iters"]))
    outs.append(vi("iters", "int64", ()))
    return graph(f"loop_{kind}", nodes, ins, outs, inits)


def example(M, cond, v, kind, dtype, opset, stop=2, extra=(), name=""):
    shape = tuple(np.shape(v))
    g = body(kind, dtype, shape, opset, stop, len(extra))
    M = None if M is None else np.array(M, np.int64)
    cond = None if cond is None else np.array(cond)
    return Example([M, cond, v, *extra], {"body": g}, name=name)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    menu = kinds(dtype, opset)
    if dtype == "string":  # see the string entry of harness/expectations/onnxruntime.toml: string bodies scan strings for 2+ iterations
        menu = [k for k in menu if k in ("pass", "grow")]
    kind = d(st.sampled_from(menu))
    shape = S.shapes(d, 1 if kind == "grow" else 0, 2, 1 if dtype == "string" else 0, 3)
    v = values(d, dtype, shape)
    extra = [values(d, dtype, shape)] if d(st.booleans()) else []
    # (M, cond) given, M only, or cond only (a body that ends the loop: once, count)
    # a body whose condition turns false runs with a cond input: without one the condition is
    # ignored, which the named edge cond_ignored_without_input checks
    modes = ["both"] + (["cond"] if kind in ("once", "count") else ["M"])
    mode = d(st.sampled_from(modes))
    M = d(st.integers(2 if dtype == "string" else -1, 4)) if mode != "cond" else None
    cond = (True if dtype == "string" else d(st.booleans())) if mode != "M" else None
    return example(M, cond, v, kind, dtype, opset, stop=d(st.integers(0, 3)), extra=extra)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_array(dtype)
    out = [example(3, None, e, "pass", dtype, opset, name="for_M3_edge_values"),
           example(0, True, e, "pass", dtype, opset, name="zero_trip_M0"),
           example(3, False, e, "pass", dtype, opset, name="zero_trip_cond_false")]
    if "grow" in kinds(dtype, opset):
        out.append(example(3, None, e[:2], "grow", dtype, opset, name="carried_grows"))
    if dtype not in ("float32", "int64"):
        return out
    out += [example(-1, None, e, "pass", dtype, opset, name="zero_trip_negative_M"),
            example(None, True, e, "once", dtype, opset, name="do_while_once"),
            example(2, True, e, "once", dtype, opset, extra=[e[::-1].copy()], name="two_carried"),
            example(2, None, np.zeros((2, 0), e.dtype), "pass", dtype, opset, name="empty_carried"),
            *([example(0, None, e[:2], "grow", dtype, opset, name="grow_zero_trip")] if "grow" in kinds(dtype, opset) else [])]
    if opset >= 9:
        out += [example(None, True, e, "count", dtype, opset, stop=2, name="while_exits_after_3"),
                example(2, True, e, "count", dtype, opset, stop=5, name="M_ends_before_cond"),
                example(5, None, e, "count", dtype, opset, stop=0, name="cond_ignored_without_input"),
                example(4, True, e, "nested_if", dtype, opset, stop=2, name="nested_if_captures")]
    if arith_ok(dtype, opset):
        out.append(example(3, True, np.array([1, -2, 3], e.dtype), "accumulate", dtype, opset, name="accumulate_captured"))
    return out


# -- how it enters a generated graph ---------------------------------------------------------
def _fuzz_bound(ref, ins, attrs):
    """The largest partial sum the accumulation passes through: |v_initial| + M |k| (k the
    captured pool value or the body's constant added each iteration)."""
    trips = max(0, int(np.asarray(ins[0]).reshape(-1)[0]))
    v0 = np.abs(np.asarray(ins[2], dtype=np.float64))
    body = attrs["body"]
    add = next(n for n in body.node if n.op_type == "Add")
    k_name = add.input[1]
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in body.initializer}
    k = inits[k_name] if k_name in inits else np.asarray(ins[3])
    return np.broadcast_to(v0 + trips * np.abs(np.asarray(k, dtype=np.float64)), v0.shape)


@op.fuzz(nan="ieee", ulps=2.0, bound=_fuzz_bound, type_param="V")
def fuzz(c):
    """Loop with a constant trip count M (0 to 4; no cond input, or a constant true) over a body that accumulates
    one loop-carried value: ``v = Add(v, k)`` with k a pool value of v's shape captured from the
    outer scope, or a constant of the body; output the final v. Error: M additions, each
    rounding once relative to the partial sum it makes (n_acc = M, bound = |v0| + M |k|)."""
    from harness.fuzz_api import Plan

    if c.dtype == "bool" or not allows("Add", c.opset, c.dtype):
        return None
    v = c.take("float", 0, lambda v: not v.const)
    if v is None:
        return None
    trips = c.pick(5)
    pre = c.fresh("loop")
    other = c.take("float", 1, lambda w: w.shape == v.shape and not w.const) if c.pick(2) else None
    inits = []
    if other is None:
        k = f"{pre}k"
        inits.append(init(k, c.floats(v.shape if c.pick(2) else (), -2.0, 2.0).astype(S.np_dtype(c.dtype))))
    else:
        k = other.name
    b = graph(pre + "body",
              [node("Identity", [f"{pre}c_in"], [f"{pre}c_out"]), node("Add", [f"{pre}v_in", k], [f"{pre}v_out"])],
              [vi(f"{pre}i", "int64", ()), vi(f"{pre}c_in", "bool", ()), vi(f"{pre}v_in", c.dtype, v.shape)],
              [vi(f"{pre}c_out", "bool", ()), vi(f"{pre}v_out", c.dtype, v.shape)], inits)
    # cond absent (the spec's "input (trip_count, \"\")" for loop) or a constant true
    # ("input (trip_count, cond)", the body passing it on): both run M iterations
    cond = c.const(np.array(True), "bool") if c.pick(2) else None
    return Plan([c.ints(np.array(trips, dtype=np.int64)), cond, v], {"body": b}, n_acc=trips,
                captures=[other] if other is not None else [])
