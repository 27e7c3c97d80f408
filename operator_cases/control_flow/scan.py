"""Scan: iterate a body over slices of scan inputs, carrying state variables (ONNX spec: Scan-8,
9, 11, 16, 19, 21, 23, 24, 25).

Scan-9 on, the spec's pseudo-code:

    sequence_length = scan_1.shape[axis_1];
    st_1 = init_1; ... ; scan_out_1 = []; ...
    for (int t = 0; t < sequence_length; ++t) {
        si_1 = scan_1<axis=axis_1>[t]; ...
        st_1, ..., st_n, so_1, ..., so_k = loop-body(st_1, ..., st_n, si_1, ..., si_m)
        scan_out_1 = Concat<axis=0>(scan_out_1, so_1); ...
    }

"the iterated element passed to the body subgraph does not have a sequence axis"; the scan
outputs gain one at ``scan_output_axes`` (default 0); ``scan_input_directions`` 1 scans
backward, ``scan_output_directions`` 1 "prepends" (the output in reverse iteration order).
Scan-11: "Negative value for an axis means counting dimensions from the back. Accepted range
is [-r, r-1]" (r the rank of the scan input, or of the scan output). A zero-length scan gives
the initial states and scan outputs with 0 along the axis, of the element shape the body
declares.

Scan-8: "the batch-axis is required to be 0 ... The sequence axis or scan axis is required to be
1"; each batch entry is scanned on its own, for sequence_lens[batch] steps when given, and "the
scan_outputs will consist of a sequence of same length as the input, padded to the
maximum-sequence-length ... Note scan-outputs will have size max_sequence_length, but only first
N values will be meaningful. The remaining values have an undefined value". The padded rows are
a spec-silent point (``Scan.padding``): we fill them with zeros ("" for strings, False for
bool), and whatever a backend puts there the first N rows of every batch entry must be the
scan's. ``directions`` 1 scans the N meaningful elements of a batch entry backward (positions
N-1 down to 0: the entry's sequence is its first N elements, "variable length sequences of
length <= the maximum-sequence-length"). A zero in sequence_lens (the loop runs zero times:
the initial states and N = 0 meaningful rows) is a named edge.

Bodies (evaluated by our own references, operator_cases._control_util.run_graph): pass (states
and scan elements through Identity), cumsum (the state adds each element: float32/float64/
int32/int64) and capture (Scan-9 on: each element plus the outer x0, the first initial state,
read by capture).
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._control_util import arith_ok, edge_array, empty_stack, graph, node, run_graph, top_scope, values, vi

op = Operator("Scan", type_param="V")
VERSIONS = (9, 11, 16, 19, 21, 23, 24, 25)
st = S.st


def _axis(a: int, r: int, since: int) -> int:
    lo = -r if since >= 11 else 0
    if not lo <= a <= r - 1:
        raise ValueError(f"Scan-{since}: axis {a} outside [{lo}, {r - 1}]")
    return a + r if a < 0 else a


def _scan(states, scans, body, in_axes, in_dirs, out_axes, out_dirs, outer, opset, since):
    n, m = len(states), len(scans)
    k = len(body.output) - n
    if len(body.input) != n + m or k < 0:
        raise ValueError(f"Scan body has {len(body.input)} inputs, {len(body.output)} outputs for {n} states and {m} scan inputs")
    axes = [_axis(a, x.ndim, since) for a, x in zip(in_axes, scans)]
    lengths = {x.shape[a] for x, a in zip(scans, axes)}
    if len(lengths) != 1:
        raise ValueError(f"Scan inputs of different sequence lengths {sorted(lengths)}")
    length = lengths.pop()
    carried = list(states)
    acc: list[list] = [[] for _ in range(k)]
    for t in range(length):
        elts = [np.array(np.take(x, length - 1 - t if d else t, axis=a), dtype=x.dtype) for x, a, d in zip(scans, axes, in_dirs)]
        outs = run_graph(body, carried + elts, outer, opset)
        carried = list(outs[:n])
        for j in range(k):
            acc[j].append(np.asarray(outs[n + j]))
    results = []
    for j in range(k):
        vals = acc[j][::-1] if out_dirs[j] else acc[j]
        y = np.stack(vals) if vals else empty_stack(body.output[n + j])
        results.append(np.moveaxis(y, 0, _axis(out_axes[j], y.ndim, since)))
    return carried, results


def _make(since: int):
    def scan_ref(*inputs, body, num_scan_inputs, scan_input_axes=None, scan_input_directions=None, scan_output_axes=None,
                 scan_output_directions=None, _outer=None, _opset=None):
        m = num_scan_inputs
        n = len(inputs) - m
        k = len(body.output) - n
        outer = top_scope(list(inputs)) if _outer is None else _outer
        carried, ys = _scan(list(inputs[:n]), list(inputs[n:]), body, scan_input_axes or [0] * m, scan_input_directions or [0] * m,
                            scan_output_axes or [0] * k, scan_output_directions or [0] * k, outer,
                            since if _opset is None else _opset, since)
        return (*carried, *ys)

    scan_ref.__name__ = f"scan_{since}"
    return scan_ref


for _v in VERSIONS:
    op.reference(_v)(_make(_v))


def _pad_value(dtype: np.dtype):
    return "" if dtype == object else np.zeros((), dtype)


@op.reference(8)
def scan_8(sequence_lens, *inputs, body, num_scan_inputs, directions=None, _outer=None, _opset=None):
    m = num_scan_inputs
    n = len(inputs) - m
    k = len(body.output) - n
    states, scans = list(inputs[:n]), list(inputs[n:])
    if m < 1:
        raise ValueError("Scan-8 without scan inputs")
    batch, max_len = scans[0].shape[0], scans[0].shape[1]
    if any(x.shape[:2] != (batch, max_len) for x in scans) or any(s.shape[:1] != (batch,) for s in states):
        raise ValueError("Scan-8 inputs of different batch sizes or maximum sequence lengths")
    lens = [max_len] * batch if sequence_lens is None else [int(v) for v in np.asarray(sequence_lens).reshape(-1)]
    if len(lens) != batch or not all(0 <= v <= max_len for v in lens):
        raise ValueError(f"Scan-8 sequence_lens {lens} for batch {batch} and maximum length {max_len}")
    outer = top_scope([sequence_lens, *inputs]) if _outer is None else _outer
    opset = 8 if _opset is None else _opset
    bst: list[list] = [[] for _ in range(n)]
    bso: list[list] = [[] for _ in range(k)]
    for b in range(batch):
        carried, ys = _scan([s[b] for s in states], [x[b][:lens[b]] for x in scans], body, [0] * m, directions or [0] * m,
                            [0] * k, [0] * k, outer, opset, 8)
        for acc, v in zip(bst, carried):
            acc.append(np.asarray(v))
        for acc, y in zip(bso, ys):
            padded = np.full((max_len, *y.shape[1:]), _pad_value(y.dtype), dtype=y.dtype)  # "an undefined value": Scan.padding
            padded[:y.shape[0]] = y
            acc.append(padded)
    out_states = [np.stack(acc) if acc else np.asarray(s[:0]) for acc, s in zip(bst, states)]
    out_scans = [np.stack(acc) if acc else np.zeros((0, max_len, *empty_stack(body.output[n + j]).shape[1:]),
                                                    dtype=empty_stack(body.output[n + j]).dtype) for j, acc in enumerate(bso)]
    return (*out_states, *out_scans)


def _padded_rows(inputs: list, attrs: dict, expected: list, since: int) -> list:
    """Open: the rows of every scan output past the batch entry's sequence_lens."""
    lens = inputs[0]
    m = attrs["num_scan_inputs"]
    n = len(inputs) - 1 - m
    if lens is None:
        return [None] * len(expected)
    out: list = [None] * n
    for y in expected[n:]:
        mask = np.zeros(np.shape(y), dtype=bool)
        for b, v in enumerate(np.asarray(lens).reshape(-1)):
            mask[b, int(v):] = True
        out.append(mask)
    return out


def _meaningful_rows_kept(c) -> bool:
    """Every row not open (the first sequence_lens[b] of batch entry b) equals ours."""
    for mask, got, want in zip(c.masks, c.actual, c.expected):
        if mask is None:
            continue
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            return False
        keep = ~mask
        a, b = got[keep], want[keep]
        if not np.all((a == b) | ((a != a) & (b != b))):
            return False
    return True


op.spec_silent(
    "padding", (8,),
    spec="The remaining values have an undefined value.",
    expected="zeros (\"\" for strings, False for bool): the spec names no value; zero is the fill a fresh buffer "
             "of the output's type has",
    where=_padded_rows,
    # no reading computes the padded rows: the text calls them undefined (unchecked, the invariant only)
    invariants={"the first sequence_lens[batch] rows of every scan output are the scan's": _meaningful_rows_kept})


# -- bodies -------------------------------------------------------------------------------
def kinds(dtype: str, opset: int) -> list[str]:
    out = ["pass"]
    if arith_ok(dtype, opset):
        out.append("cumsum")
        if opset >= 9:
            out.append("capture")
    return out


def body(kind: str, dtype: str, n_states: int, m: int, elem: tuple[int, ...], capture: str = "x0"):
    """pass: states and elements through Identity; cumsum: state 0 += element 0, scan output 0 the
    running sum; capture: scan output 0 = element 0 + the outer ``capture`` (states passed through)."""
    ins = [vi(f"s{i}_in", dtype, elem) for i in range(n_states)] + [vi(f"e{j}", dtype, elem) for j in range(m)]
    outs = [vi(f"s{i}_out", dtype, elem) for i in range(n_states)] + [vi(f"y{j}", dtype, elem) for j in range(m)]
    nodes = []
    for i in range(n_states):
        if kind == "cumsum" and i == 0:
            nodes.append(node("Add", ["s0_in", "e0"], ["s0_out"]))
        else:
            nodes.append(node("Identity", [f"s{i}_in"], [f"s{i}_out"]))
    for j in range(m):
        if j == 0 and kind == "cumsum":
            nodes.append(node("Identity", ["s0_out"], ["y0"]))
        elif j == 0 and kind == "capture":
            nodes.append(node("Add", ["e0", capture], ["y0"]))
        else:
            nodes.append(node("Identity", [f"e{j}"], [f"y{j}"]))
    return graph(f"scan_{kind}", nodes, ins, outs)


def example(states, scans, kind, dtype, attrs=None, lens=None, opset=9, name=""):
    """``scans`` are the scan inputs as given to the node (Scan-8: (batch, length, *elem))."""
    if opset == 8:
        elem = tuple(scans[0].shape[2:])
        g = body(kind, dtype, len(states), len(scans), elem)
        return Example([lens, *states, *scans], {"body": g, "num_scan_inputs": len(scans), **(attrs or {})}, name=name)
    axes = (attrs or {}).get("scan_input_axes", [0] * len(scans))
    elem = tuple(np.delete(np.array(scans[0].shape, dtype=np.int64), axes[0] % scans[0].ndim)) if scans[0].ndim else ()
    g = body(kind, dtype, len(states), len(scans), tuple(int(v) for v in elem))
    return Example([*states, *scans], {"body": g, "num_scan_inputs": len(scans), **(attrs or {})}, name=name)


def _scan_input(x: np.ndarray, axis: int) -> np.ndarray:
    """x of shape (length, *elem) with its length axis moved to ``axis``."""
    return np.moveaxis(x, 0, axis % x.ndim)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    """Drawn: states, one or two scan inputs along axis 0, forward, non-empty elements and
    length 1 to 4. Axes, directions and zero lengths are named edges: onnx.reference refuses
    them and ONNX Runtime's worker died (SIGFPE) on a drawn zero-size scan, each classified by
    the edge's name in harness/expectations/."""
    kind = d(st.sampled_from(kinds(dtype, opset)))
    # string elements of rank 0: onnx.reference's Scan raises TypeError ('Issues with types'), not yet classified
    elem = S.shapes(d, 1 if dtype == "string" else 0, 2, 1, 3)
    length = d(st.integers(1, 4))
    m = d(st.integers(1, 2))
    n_states = 1 if kind != "pass" else d(st.integers(0, 2))
    states = [values(d, dtype, elem) for _ in range(n_states)]
    scans = [values(d, dtype, (length, *elem)) for _ in range(m)]
    return example(states, scans, kind, dtype, opset=opset)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    e = edge_array(dtype)
    x = e.reshape(-1, 1)  # length len(e), elements of shape (1,)
    s = e[:1]
    out = [example([s], [x], "pass", dtype, name="edge_values"),
           example([s], [x], "pass", dtype, {"scan_input_directions": [1], "scan_output_directions": [1]}, name="reverse_in_and_out"),
           example([s], [x[:0]], "pass", dtype, name="zero_length"),
           example([s], [x, x], "pass", dtype, {"scan_input_directions": [0, 1]}, name="bidirectional_same_input")]
    if dtype not in ("float32", "int64"):
        return out
    x2 = np.arange(6).astype(e.dtype).reshape(2, 3)  # length 3 along axis 1
    out += [example([], [x2], "pass", dtype, {"scan_input_axes": [1], "scan_output_axes": [1]}, name="axis_1_in_and_out"),
            example([], [x2], "pass", dtype, {"scan_input_axes": [1]}, name="axis_1_in_axis_0_out"),
            example([np.zeros(2, e.dtype)], [x2.T.copy()], "cumsum", dtype, name="cumsum"),
            example([np.zeros(2, e.dtype)], [x2.T[:0].copy()], "cumsum", dtype, name="cumsum_zero_length"),
            example([np.array([10, 20], e.dtype)], [x2.T.copy()], "capture", dtype, name="captures_outer")]
    if opset >= 11:  # "Negative value for an axis means counting dimensions from the back"
        out += [example([], [x2], "pass", dtype, {"scan_input_axes": [-1], "scan_output_axes": [-1]}, name="negative_axes"),
                example([], [x2], "pass", dtype, {"scan_input_axes": [-2], "scan_output_axes": [-2],
                                                  "scan_output_directions": [1]}, name="negative_axes_prepend")]
    return out


# -- Scan-8: batch axis 0, sequence axis 1, optional sequence_lens ---------------------------
def lens_of(values_: list[int] | None):
    return None if values_ is None else np.array(values_, np.int64)


@op.strategy(8)
def draw_8(d, dtype, opset):
    """Drawn: batch 1 to 3, maximum length 1 to 4, lengths 1 to the maximum (or no
    sequence_lens), directions drawn. A zero in sequence_lens is a named edge (ONNX Runtime
    refuses it, see harness/expectations/onnxruntime.toml)."""
    kind = d(st.sampled_from(kinds(dtype, opset)))
    elem = S.shapes(d, 1 if dtype == "string" else 0, 2, 1, 3)
    batch, max_len = d(st.integers(1, 3)), d(st.integers(1, 4))
    m = d(st.integers(1, 2))
    n_states = 1 if kind != "pass" else d(st.integers(0, 2))
    states = [values(d, dtype, (batch, *elem)) for _ in range(n_states)]
    scans = [values(d, dtype, (batch, max_len, *elem)) for _ in range(m)]
    lens = [d(st.integers(1, max_len)) for _ in range(batch)] if d(st.booleans()) else None
    attrs = {"directions": [d(st.integers(0, 1)) for _ in range(m)]} if d(st.booleans()) else {}
    return example(states, scans, kind, dtype, attrs, lens=lens_of(lens), opset=8)


@op.edges(8)
def edges_8(dtype, opset):
    e = edge_array(dtype)
    x = e.reshape(1, -1, 1)  # batch 1, length len(e), elements of shape (1,)
    s = e[:1].reshape(1, 1)
    n = x.shape[1]
    x2 = np.stack([x[0], x[0][::-1]])  # batch 2
    s2 = np.concatenate([s, s])
    out = [example([s], [x], "pass", dtype, opset=8, name="edge_values"),
           example([s], [x], "pass", dtype, lens=lens_of([n]), opset=8, name="full_lens"),
           example([s2], [x2], "pass", dtype, lens=lens_of([n, min(2, n)]), opset=8, name="padded_batch"),
           example([s2], [x2], "pass", dtype, {"directions": [1]}, lens=lens_of([max(n - 1, 1), min(2, n)]), opset=8, name="padded_reverse"),
           example([s2], [x2, x2], "pass", dtype, {"directions": [0, 1]}, lens=lens_of([min(3, n), n]), opset=8,
                   name="bidirectional_padded"),
           example([s2], [x2], "pass", dtype, lens=lens_of([0, n]), opset=8, name="zero_sequence_len"),
           example([np.zeros((2, 0), e.dtype)], [np.zeros((2, 3, 0), e.dtype)], "pass", dtype, lens=lens_of([1, 3]), opset=8,
                   name="empty_elements")]
    if dtype not in ("float32", "int64"):
        return out
    x3 = np.arange(12).astype(e.dtype).reshape(2, 3, 2)  # batch 2, length 3, elements (2,)
    z = np.zeros((2, 2), e.dtype)
    out += [example([z], [x3], "cumsum", dtype, opset=8, name="cumsum"),
            example([z], [x3], "cumsum", dtype, lens=lens_of([1, 3]), opset=8, name="cumsum_padded"),
            example([z], [x3], "cumsum", dtype, {"directions": [1]}, lens=lens_of([2, 3]), opset=8, name="cumsum_reverse_padded"),
            example([], [x3], "pass", dtype, lens=lens_of([3, 1]), opset=8, name="no_states")]
    return out


# -- how it enters a generated graph ---------------------------------------------------------
def _fuzz_bound(ref, ins, attrs):
    """Per output: the scan of the inputs' magnitudes, ref(|inputs|). The bodies drawn add and
    multiply only (Neg and Abs copy a magnitude), so each partial sum of the running sum comes
    out as the sum of magnitudes it rounds relative to, in the output's own layout (axes,
    directions), and an elementwise Add or Mul as |a| + |b| or |a| |b|."""
    mags = [np.abs(x) if x is not None and x.dtype.kind == "f" else x for x in ins]
    out = ref(*mags, **attrs)
    return [np.abs(np.asarray(y, dtype=np.float64)) for y in (out if isinstance(out, (list, tuple)) else [out])]


def _fuzz_body(c, pre: str, kind: str, elem: tuple[int, ...], other):
    """The body of ``kind`` over elements of shape ``elem``, and the pool value it captures
    (or None): map (one scan output, an exact unary op or Add/Mul with a constant of the body
    or the captured ``other``), cumsum (state += element, the running sum as scan output) or
    zip (the elementwise Add or Mul of two scan inputs' elements)."""
    from .._control_util import allows, init

    dt = c.dtype
    e = lambda name: vi(f"{pre}{name}", dt, elem)  # noqa: E731
    binary = [o for o in ("Add", "Mul") if dt != "bool" and allows(o, c.opset, dt)]
    if kind == "cumsum":
        nodes = [node("Add", [f"{pre}s_in", f"{pre}e0"], [f"{pre}s_out"]), node("Identity", [f"{pre}s_out"], [f"{pre}y0"])]
        return graph(f"{pre}body", nodes, [e("s_in"), e("e0")], [e("s_out"), e("y0")]), None
    if kind == "zip":
        op_ = c.choice(binary)
        return graph(f"{pre}body", [node(op_, [f"{pre}e0", f"{pre}e1"], [f"{pre}y0"])], [e("e0"), e("e1")], [e("y0")]), None
    unary = ["Not"] if dt == "bool" else [o for o in ("Neg", "Abs") if allows(o, c.opset, dt)]
    op_ = c.choice(unary + binary)
    inits, captured = [], None
    if op_ in binary:
        if other is not None and c.pick(2):
            rhs, captured = other.name, other
        else:
            rhs = f"{pre}k"
            inits.append(init(rhs, c.floats(elem if c.pick(2) else (), -2.0, 2.0).astype(S.np_dtype(dt))))
        nodes = [node(op_, [f"{pre}e0", rhs], [f"{pre}y0"])]
    else:
        nodes = [node(op_, [f"{pre}e0"], [f"{pre}y0"])]
    return graph(f"{pre}body", nodes, [e("e0")], [e("y0")], inits), captured


@op.fuzz(nan="ieee", ulps=2.0, bound=_fuzz_bound, type_param="V")
def fuzz(c):
    """Scan-9 on (Scan-8, with its batch axis and sequence_lens, is in force below opset 9 only,
    where no generated graph is) of a pool value x along a drawn axis (negative now and then),
    forward or backward, its scan output placed at a drawn axis of its own, in iteration order or
    "prepended" (scan_output_directions 1). Bodies (:func:`_fuzz_body`): map, cumsum (one state:
    a pool value of the element's shape or a constant; outputs the final state and the running
    sums) and zip (a second scan input: a pool value of x's shape or x itself, with a direction
    of its own). Error: at most one rounding per element of map and zip; the running sum rounds
    once per step, n_acc = the scan length with the bound ref(|inputs|)."""
    from harness.fuzz_api import Plan

    if c.since < 9:
        return None
    x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if x is None:
        return None
    r = x.rank
    axis = c.pick(r)
    length = x.shape[axis]
    elem = x.shape[:axis] + x.shape[axis + 1:]
    arith = c.dtype != "bool"
    kind = c.choice(["map", "cumsum", "zip"] if arith else ["map"])
    pre = c.fresh("scan")
    states, scans = [], [x]
    if kind == "cumsum":
        s0 = c.take("float", 1, lambda v: v.shape == elem) if c.pick(2) else None
        states.append(s0 if s0 is not None else c.const(c.floats(elem, -2.0, 2.0)))
    elif kind == "zip":
        w = c.take("float", 1, lambda v: v.shape == x.shape) if c.pick(2) else None
        scans.append(w if w is not None else x)
    other = c.take("float", 2, lambda v: v.shape == elem and not v.const) if kind == "map" else None
    body, captured = _fuzz_body(c, pre, kind, elem, other)
    m = len(scans)
    attrs = {"body": body, "num_scan_inputs": m}
    if axis or c.pick(2):
        attrs["scan_input_axes"] = [axis - r if c.pick(3) == 2 else axis for _ in range(m)]
    dirs = [c.pick(2) for _ in range(m)]
    if any(dirs) or c.pick(2):
        attrs["scan_input_directions"] = dirs
    ro = len(elem) + 1
    out_axis = c.pick(ro)
    if out_axis or c.pick(2):
        attrs["scan_output_axes"] = [out_axis - ro if c.pick(3) == 2 else out_axis]
    out_dir = c.pick(2)
    if out_dir or c.pick(2):
        attrs["scan_output_directions"] = [out_dir]
    return Plan([*states, *scans], attrs, n_acc=length if kind == "cumsum" else 0,
                captures=[captured] if captured is not None else [])
