"""The ``generated`` suite: random multi-operator graphs, drawn by Hypothesis, built directly as
ONNX (no exporter), with the composed reference as the oracle.

Encoding (chosen for shrinking). A graph is a :class:`GraphSpec`: a base shape, a few input
specs, a value seed and a *list of node specs*. A node spec is context-free data, one
Hypothesis choice of bytes: an enable byte, an op index, three relative input references ("how
far back in the pool of values", taken modulo the number of values that fit), an expose flag
(the node's outputs become graph outputs) and six knobs (integers a template reads modulo its
own ranges for axes, permutations, slice bounds, attribute values ...). Every spec has the same
structure whatever the graph around it, so the shrinker can delete or disable any spec and the
later ones keep their meaning; a spec that cannot apply (no value fits, unsafe values, a type
the op-version does not take) is *skipped*, never rejected. Bytes shrink towards zeros, which
every field reads as its simplest choice. :func:`realize` turns a spec into a :class:`Graph`
deterministically; :func:`with_outputs`, :func:`cut` and :func:`reduce_graph` take a failing
graph further down than the spec encoding can (fewer outputs, a node replaced by an input).

Templates. How an op enters a graph (which values it takes, its attributes, its safe domain,
its stability test) is its *fuzz template*, registered in its own module beside its reference
(``@op.fuzz`` in ``operator_cases/<op>.py``, shared shapes in the family's ``_*_util.py``)
through the small API of :mod:`harness.fuzz_api`. This module is the engine: it draws specs,
plans each node with the op's template, composes and checks values, and builds the model.

Plans of more than one node. A plan may place helper steps before its node (``Plan.steps``: a
sequence built by SequenceConstruct or SplitToSequence and consumed by ConcatFromSequence in the
same plan, If's condition computed as ReduceSum > 0, a Reshape to RNN's rank-3 X) and its
subgraphs may read pool values by name (``Plan.captures``: If's branches, a Loop body). The
engine evaluates the steps and the node as one function of the pool values and constants they
read, checks, perturbs and judges it as one node, and keeps only the node's tensor outputs in
the pool: sequences live inside a plan, never in the pool. A node that gives a sequence
(SequenceInsert, SequenceErase, SequenceMap) is followed by helper steps of its plan that turn
it back into a tensor (``Plan.then``: ConcatFromSequence, SequenceAt); their outputs are then
the plan's.

Oracle. Our per-op-version references (``operator_cases/``) are composed in float64 while the
graph is realized ("value-aware generation"): a node is placed only when its inputs are inside
the op's safe domain (Log/Sqrt of positive values, |divisor| >= 0.05, positive Pow bases),
its outputs are finite with |y| <= 1e4, and the output is stable when the inputs move by their
estimated error (that removes values next to a Floor/Ceil/Round/Sign boundary, near-ties under
ArgMax or a comparison, and ill-conditioned points). NaN appears only in NaN mode, where some
graph inputs carry NaN and only ops whose NaN behaviour we rely on may consume them
(``fuzz_api.NAN_IEEE``: IEEE 754 arithmetic and copies; ``NAN_ASSUMED``: the spec is silent,
we assume propagation as numpy and IEEE 754-2019 ``maximum`` do).

Integer and bool graphs. A graph's dtype may also be an integer type (int8..int64,
uint8..uint64) or bool, drawn where every op's schema allows it (its template's type
parameter), except the ops whose integer result the spec gives only through a float formula
(``FLOAT_FORMULA_OPS``). Their values are held exactly in the dtype (no float64 copy, no NaN, no
perturbation), inputs are small integers with many equal ones (ties: ArgMax and Hardmax on exact
values are judged by the spec's first-index rule), unsigned ones non-negative, and every result
is kept exact: integer overflow is a spec-silent point (``int_overflow`` of Add, Sub, Mul), so a
node whose result would wrap is skipped (checked on int64-widened inputs up to 32 bits, by
magnitude for 64-bit types). Their outputs are compared with tolerance zero. A graph input's
first dim is 0 now and then (empty inputs), and window ops draw asymmetric pads.

Tolerance (per graph output). Every value carries an elementwise estimate of the absolute error
a correct implementation in the graph's dtype may have: its inputs' errors pushed through the
op (measured by re-evaluating the reference on inputs moved by twice their error: random signs,
all up, all down and, with several inputs, opposite directions) plus the op's own rounding: a
few units of roundoff of |y|, of |y| + |x| for ops the spec defines by a formula that cancels
(Gelu's 1 + erf, Elu's exp(x) - 1), ``n * u * ref(|inputs|)`` for ops that accumulate n terms
(the classic bound for sums and dot products), and the smallest subnormal (a value may round
to 0). An output passes when ``|a - e| <= atol + rtol * |e|`` with

- ``rtol = depth * rtol_dtype`` and ``ulp = depth * ulp_dtype``: each op on the longest path
  may round once more; the per-dtype base comes from ``harness/data/tolerances.toml``;
- ``atol = depth * atol_dtype + 4 * max(err)``: the propagated error (cancellation,
  amplification) with a factor 4 of safety for a randomised estimate.

Nodes whose error estimate exceeds ``sqrt(u) * max(|y|, 1)`` are skipped, so no tolerance is
loose enough to hide a wrong value of the size real bugs produce. Checked end to end: every op
computed by our references in the graph's own dtype (``tests/seeded_faults.py:OurReferences``,
for the tolerances) and plain numpy written in the tests (``PlainNumpy``, independent of the
references) pass every graph.
"""

from __future__ import annotations

import functools
import json
import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from .. import schema
from .. import strategies as S
from ..case import Case, DataSet, Tolerance
from ..fuzz_api import (
    LOCAL,
    MAX_ELEMENTS,
    NAN_ASSUMED,
    PERTURB,
    ROUNDOFF,
    Ctx,
    Plan,
    Step,
    Template,
    Value,
    as_list,
    size_of,
)
from ..fuzz_api import TEMPLATES as _TEMPLATES
from ..registry import load_all
from ..tolerances import default_for
from ..values import Typed, reference_value
from .frozen import digest, load_or_build, without_local_constants

MIN_OPSET = 13
#: elements of a graph input (a node may produce up to MAX_ELEMENTS)
INPUT_ELEMENTS = 64
#: |y| above this makes a node unsafe (brief: outputs with |y| > 1e4)
MAX_MAGNITUDE = 1e4
N_KNOBS = 6
N_REFS = 3
#: tolerance safety factor (see the module docstring; PERTURB, the perturbation factor, is in fuzz_api)
SAFETY = 4.0
#: smallest subnormal per float dtype
SUBNORMAL = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}
DTYPES = ("float32", "float16", "float64")
#: integer and bool graph dtypes: values exact, results kept exact (no overflow), tolerance zero
INT_DTYPES = S.INTS
EXACT_DTYPES = INT_DTYPES + ("bool",)
ALL_DTYPES = DTYPES + EXACT_DTYPES
#: |y| above this makes a node of a 64-bit integer graph unsafe (its overflow check is by magnitude)
INT_MAGNITUDE = 2**40
#: ops whose integer result the spec gives only through a float formula (a mean, a square root,
#: a logarithm, a negative power): how it rounds is spec-silent, so integer graphs leave them out
FLOAT_FORMULA_OPS = frozenset({"AveragePool", "GlobalAveragePool", "Mean", "Pow", "ReduceL2", "ReduceLogSum",
                               "ReduceLogSumExp", "ReduceMean"})
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


# =============================================================================================
# specs: what Hypothesis draws
# =============================================================================================
@dataclass(frozen=True)
class NodeSpec:
    op: int
    refs: tuple[int, ...]
    knobs: tuple[int, ...]
    expose: bool = False

    #: a disabled spec is skipped: what the shrinker reaches by zeroing a spec's first byte,
    #: so a graph shrinks below the list's minimum length
    enabled: bool = True

    #: one spec is one Hypothesis choice of this many bytes (cheap to draw; shrinks to zeros)
    SIZE: ClassVar[int] = 2 + N_REFS + 1 + 2 * N_KNOBS

    @classmethod
    def from_bytes(cls, b: bytes) -> NodeSpec:
        knobs = tuple(int.from_bytes(b[6 + 2 * i: 8 + 2 * i], "big") for i in range(N_KNOBS))
        return cls(op=b[1], refs=tuple(b[2:2 + N_REFS]), knobs=knobs, expose=b[2 + N_REFS] >= 192, enabled=b[0] >= 4)


@dataclass(frozen=True)
class InputSpec:
    #: 0 base shape, 1 some dims set to 1, 2 a suffix of the base shape, 3 both
    variant: int = 0
    mask: int = 0
    #: value distribution: 0 [-2, 2], 1 [-10, 10], 2 positive [0.1, 4], 3 multiples of 0.5 in [-3, 3]
    dist: int = 0

    @classmethod
    def from_bytes(cls, b: bytes) -> InputSpec:
        return cls(variant=b[0] % 4, mask=b[1] % 16, dist=b[2] % 4)


@dataclass(frozen=True)
class GraphSpec:
    opset: int = 0
    dtype: int = 0
    rank: int = 0
    dims: tuple[int, ...] = (1, 1, 1, 1)
    inputs: tuple[InputSpec, ...] = (InputSpec(),)
    nodes: tuple[NodeSpec, ...] = ()
    seed: int = 0
    nan: int = 0

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GraphSpec:
        return cls(
            opset=d["opset"], dtype=d["dtype"], rank=d["rank"], dims=tuple(d["dims"]),
            inputs=tuple(InputSpec(**i) for i in d["inputs"]),
            nodes=tuple(NodeSpec(n["op"], tuple(n["refs"]), tuple(n["knobs"]), n["expose"], n.get("enabled", True)) for n in d["nodes"]),
            seed=d["seed"], nan=d["nan"],
        )


def _header(b: bytes) -> dict[str, Any]:
    return {"opset": b[0], "dtype": b[1], "rank": b[2] % 8, "dims": tuple(v % 8 for v in b[3:7]),
            "seed": int.from_bytes(b[7:11], "big"), "nan": b[11] % 100}


def _decode(raw: tuple[bytes, list[bytes], list[bytes]]) -> GraphSpec:
    header, inputs, nodes = raw
    return GraphSpec(inputs=tuple(map(InputSpec.from_bytes, inputs)), nodes=tuple(map(NodeSpec.from_bytes, nodes)), **_header(header))


def graph_specs(min_specs: int = 1, max_specs: int = 20, max_inputs: int = 3) -> st.SearchStrategy[GraphSpec]:
    """GraphSpecs with ``min_specs..max_specs`` node specs (some may be skipped when realized).

    Every field is decoded from bytes: one Hypothesis choice per node spec (and one map for
    the whole graph) keeps drawing at a few milliseconds per graph, and bytes shrink towards
    zeros, which every field reads as its simplest value."""
    return st.tuples(
        st.binary(min_size=12, max_size=12),
        st.lists(st.binary(min_size=3, max_size=3), min_size=1, max_size=max_inputs),
        st.lists(st.binary(min_size=NodeSpec.SIZE, max_size=NodeSpec.SIZE), min_size=min_specs, max_size=max_specs),
    ).map(_decode)


@dataclass(frozen=True)
class GenConfig:
    """What graphs to draw: opsets, dtypes and ops to use, how many nodes at most."""

    opsets: tuple[int, ...] = field(default_factory=lambda: tuple(range(MIN_OPSET, schema.newest_opset() + 1)))
    dtypes: tuple[str, ...] = DTYPES
    #: op names to use (None: every op with a template and a registered reference)
    ops: tuple[str, ...] | None = None
    max_nodes: int = 20
    #: share of graphs (0..1) whose inputs carry NaN
    nan_rate: float = 0.1
    #: value-aware generation (off only to measure what it buys)
    value_aware: bool = True
    #: (op-version key, dtype) pairs not to draw (a campaign adds those a backend lacks)
    exclude: frozenset[tuple[str, str]] = frozenset()
    #: graphs whose first dim is 0 (empty inputs) when the spec's first dim byte says so
    empty: bool = True

    def dtype_of(self, knob: int) -> str:
        # with float and exact (integer, bool) dtypes, half the graphs (knob >= 128) are exact ones,
        # shared evenly; among the floats 80 % the first (float32), the rest shared; knob 0 (what
        # shrinking reaches) is the first float type
        floats = [d for d in self.dtypes if d in ROUNDOFF]
        exact = [d for d in self.dtypes if d not in ROUNDOFF]
        if exact and (knob >= 128 or not floats):
            return exact[knob % len(exact)]
        knob %= 20
        if len(floats) == 1 or knob < 16:
            return floats[0]
        return floats[1 + knob % (len(floats) - 1)]

    def opset_of(self, knob: int) -> int:
        return self.opsets[knob % len(self.opsets)]


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

    # -- what a backend sees --------------------------------------------------------------
    def model(self) -> onnx.ModelProto:
        return build_model(self)

    def feeds(self) -> dict[str, np.ndarray]:
        return {v.name: _narrow(v, self.dtype) for v in self.inputs}

    def expected(self) -> list[np.ndarray]:
        return [_narrow(v, self.dtype) for v in self.outputs]

    def tolerances(self) -> list[Tolerance]:
        return [output_tolerance(v, self.dtype) for v in self.outputs]

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
        lines = [f"opset {self.opset}, {self.dtype}{', NaN inputs' if self.nan_mode else ''}"]
        for v in self.inputs:
            kind = "" if v.kind == "float" else f" ({'int64' if v.kind == 'int' else 'bool'})"
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
    return v.wide.astype(bool)


def output_tolerance(v: Value, dtype: str) -> Tolerance:
    if is_exact(dtype) or v.kind != "float":
        return Tolerance(rtol=0.0, atol=0.0, ulp=None)  # integers and bools: exactly equal
    base = default_for(dtype)
    depth = max(1, v.depth)
    err = float(np.max(v.err)) if v.kind == "float" and v.err.size else 0.0
    ulp = base.ulp * depth if base.ulp is not None else None
    return Tolerance(rtol=base.rtol * depth, atol=base.atol * depth + SAFETY * err, ulp=ulp)


# =============================================================================================
# templates (each in its operator's module) and which apply at an opset and dtype
# =============================================================================================
def templates() -> dict[str, Template]:
    """Every op's fuzz template by op name. Operator modules register theirs beside their
    reference (``Operator.fuzz``, :mod:`harness.fuzz_api`), so the registry is loaded first."""
    load_all()
    return _TEMPLATES


def __getattr__(name: str) -> Any:
    # ``TEMPLATES`` (what harness.fuzz and the tests read) is filled as the registry loads
    if name == "TEMPLATES":
        return templates()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
# realizing a spec
# =============================================================================================
class Builder:
    def __init__(self, spec: GraphSpec, config: GenConfig) -> None:
        self.spec = spec
        self.config = config
        self.opset = config.opset_of(spec.opset)
        self.dtype = config.dtype_of(spec.dtype)
        self.exact = is_exact(self.dtype)
        self.u = ROUNDOFF.get(self.dtype, 0.0)
        self.nan_mode = spec.nan >= 100 - round(100 * config.nan_rate) and not self.exact
        self.pool: list[Value] = []
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.skipped: list[tuple[int, str]] = []
        self.exposed: set[str] = set()
        self.nan_assumed: list[str] = []
        self.registry = load_all()

    # -- inputs ----------------------------------------------------------------------------
    def make_inputs(self) -> None:
        spec = self.spec
        rank = (2, 1, 3, 4, 2, 1, 3, 0)[spec.rank % 8]
        dims: list[int] = []
        for i in range(rank):
            room = max(1, INPUT_ELEMENTS // max(1, size_of(tuple(dims))))
            dims.append(min(1 + spec.dims[i] % 5, room))
        if self.config.empty and rank and spec.dims[0] == 7 and (spec.seed >> 8) % 2 == 0:
            dims[0] = 0  # an empty input: every op-version must take zero-size dims
        base = tuple(dims)
        for k, ispec in enumerate(spec.inputs):
            shape = base
            if ispec.variant in (2, 3) and shape:
                shape = shape[ispec.mask % (len(shape) + 1):] if ispec.variant == 2 else shape[(ispec.mask >> 2) % len(shape):]
            if ispec.variant in (1, 3):
                shape = tuple(1 if ispec.mask >> i & 1 else d for i, d in enumerate(shape))
            rng = np.random.default_rng([spec.seed, 1000 + k])
            n = size_of(shape)
            if ispec.dist == 0:
                vals = rng.uniform(-2, 2, n)
            elif ispec.dist == 1:
                vals = rng.uniform(-10, 10, n)
            elif ispec.dist == 2:
                vals = rng.uniform(0.1, 4, n)
            else:
                vals = rng.integers(-6, 7, n) / 2.0
            if self.nan_mode and n and rng.uniform() < 0.75:
                vals[rng.choice(n, size=1 + int(rng.integers(0, max(1, n // 8))), replace=False)] = np.nan
            if self.exact:
                wide = _exact_values(self.dtype, vals.reshape(shape), ispec.dist)
            else:
                wide = vals.reshape(shape).astype(S.np_dtype(self.dtype)).astype(np.float64)
            v = Value(f"x{k}", "float", wide, np.zeros(shape), 0)
            self.inputs.append(v)
            self.pool.append(v)

    # -- nodes -----------------------------------------------------------------------------
    def apply(self, index: int, nspec: NodeSpec, available: tuple[tuple[str, int], ...]) -> str | None:
        """Place one node; return None, or why the spec was skipped."""
        op, since = available[nspec.op % len(available)]
        c = Ctx(self, nspec, since)
        try:
            plan = templates()[op].plan(c)
        except (ValueError, IndexError, ZeroDivisionError):
            plan = None
        if plan is None:
            return f"{op}: no value fits"
        return self.evaluate(op, since, plan.inputs, plan.attrs, plan.n_acc, plan.n_outputs, index, nspec.expose,
                             captures=plan.captures, steps=plan.steps, then=plan.then, own=plan.outputs)

    def evaluate(self, op: str, since: int, ins: list[Value | None], attrs: dict[str, Any], n_acc: int = 0,
                 n_outputs: int | None = None, index: int = -1, expose: bool = False,
                 out_names: list[str] | None = None, captures: list[Value] = (), steps: list[Step] = (),
                 then: list[Step] = (), own: list[str] = ()) -> str | None:
        """Evaluate one node on pool values with the reference, check its values and add it
        (and its outputs to the pool); return None, or why it cannot be placed. ``captures``
        (values its subgraphs read by name) are checked and perturbed as inputs after ``ins``;
        ``steps`` and ``then`` (reading the node's outputs ``own``) are placed before and after it."""
        tmpl = templates()[op]
        attrs = _as_stored(op, self.opset, attrs)
        ins = list(ins)
        while ins and ins[-1] is None:
            ins.pop()
        captures = list(captures)
        if any(v.const or not v.name for v in captures):
            return f"{op}: a captured value must be a named pool value"
        n_in = len(ins)
        ref = self.registry[("", op, since)].reference
        if captures:
            ref = _with_scope(ref, n_in, [v.name for v in captures], self.opset)
            ins = ins + captures
        main_ins = ins
        step_rows: list[tuple[str, int, list[Value | None], list[str], dict[str, Any]]] = []
        then_rows: list[tuple[str, int, list[Value | None], list[str], dict[str, Any]]] = []
        if then and not own:
            return f"{op}: helper steps after the node need the node's output names (Plan.outputs)"
        for rows, helpers in ((step_rows, steps), (then_rows, then)):
            for st_ in helpers:
                sch = schema.schema_at(st_.op, self.opset)
                if sch is None or ("", st_.op, sch.since_version) not in self.registry:
                    return f"{op}: helper {st_.op} has no reference at opset {self.opset}"
                if (f"{st_.op}-{sch.since_version}", self.dtype) in self.config.exclude:
                    return f"{op}: helper {st_.op}-{sch.since_version} not drawn at {self.dtype}"
                rows.append((st_.op, sch.since_version, list(st_.inputs), list(st_.outputs),
                             _as_stored(st_.op, self.opset, st_.attrs)))
        if step_rows or then_rows:
            ref, ins = _with_steps(ref, step_rows, main_ins, self.registry, then_rows, list(own))
        wide_in = [v.wide if v is not None else None for v in ins]
        nan_in = any(v is not None and v.has_nan for v in ins)
        if nan_in and tmpl.nan is None:
            return f"{op}: NaN input, behaviour not defined"
        if self.config.value_aware and tmpl.guard is not None and not tmpl.guard(wide_in):
            return f"{op}: input outside the safe domain"
        if self.config.value_aware and tmpl.stable is not None and not tmpl.stable(ins, attrs, self.u):
            return f"{op}: near a tie or an equality"
        plan = Plan(ins, attrs, n_acc, n_outputs)
        try:
            ys = as_list(ref(*wide_in, **attrs))[:n_outputs]
        except Exception as exc:  # a template drew something the reference refuses: skip it
            return f"{op}: reference raised {type(exc).__name__}: {exc}"[:200]
        kinds = [_kind_of(y, self.dtype) for y in ys]
        if any(k is None for k in kinds):
            return f"{op}: output type not handled"
        ys = [np.asarray(y, dtype=np.float64) if k == "float" and not self.exact else np.asarray(y) for y, k in zip(ys, kinds)]
        if any(y.size > MAX_ELEMENTS for y in ys):
            return f"{op}: output too large"
        errs = [np.zeros(y.shape) for y in ys]
        if self.exact:
            why = _exact_result(ref, ins, attrs, ys, self.dtype)
            if why:
                return f"{op}: {why}"
        elif self.config.value_aware:
            why = self._check_values(tmpl, ref, plan, ins, ys, errs, nan_in)
            if why:
                return f"{op}: {why}"
        # place the node
        names = [self._name_input(v) for v in main_ins[:n_in]]
        rows = [(o, s_, [self._name_input(v) for v in vs], outs_, a) for o, s_, vs, outs_, a in step_rows]
        outs = out_names or [f"v{len(self.nodes)}" + (f"_{i}" if len(ys) > 1 else "") for i in range(len(ys))]
        after = [(o, s_, [self._name_input(v) for v in vs], outs_, a) for o, s_, vs, outs_, a in then_rows]
        if after:  # the last helper gives the plan's outputs: it writes the pool names
            o, s_, vs, outs_, a = after[-1]
            after[-1] = (o, s_, vs, list(outs) + list(outs_[len(outs):]), a)
        depth = 1 + len(step_rows) + len(then_rows) + max([v.depth for v in ins if v is not None] or [0])
        self.nodes.append(Node(op, since, names, outs, dict(attrs), index, n_acc, n_outputs, [v.name for v in captures], rows,
                               after, list(own) if after else []))
        for name, y, e, k in zip(outs, ys, errs, kinds):
            v = Value(name, k, y, e, depth, node=len(self.nodes) - 1)
            self.pool.append(v)
            if expose:
                self.exposed.add(name)
        if nan_in and tmpl.nan == NAN_ASSUMED:
            self.nan_assumed.append(op)
        return None

    def _name_input(self, v: Value | None) -> str:
        if v is None:
            return ""
        if not v.const or v.name in self.initializers:
            return v.name
        name = f"c{len(self.initializers)}"
        arr = _narrow(v, self.dtype) if v.kind == "float" else v.wide
        self.initializers[name] = np.asarray(arr)
        v.name = name
        return name

    def _check_values(self, tmpl: Template, ref: Callable, plan: Plan, ins: list[Value | None], ys: list[np.ndarray],
                      errs: list[np.ndarray], nan_in: bool) -> str | None:
        """Value-aware checks of one node (numpy warnings are off: see :func:`realize`). Fills
        ``errs`` with the outputs' error estimates; returns why the node is unsafe, or None."""
        clean = (lambda a: np.nan_to_num(a)) if nan_in else (lambda a: a)
        for y in ys:
            if y.dtype.kind != "f" or not y.size:
                continue
            if nan_in:
                if np.isinf(y).any():
                    return "infinite output"
            elif not np.isfinite(y).all():
                return "NaN or infinite output"
            if np.max(clean(np.abs(y))) > MAX_MAGNITUDE:
                return "output magnitude above 1e4"
        # perturb the float inputs by their error (and, where outputs jump, by a few ulps more)
        u = self.u
        deltas: dict[int, np.ndarray] = {}
        for i, v in enumerate(ins):
            if v is None or v.kind != "float" or v.const:
                continue
            d = PERTURB * v.err
            if tmpl.jumps:
                d = d + clean(4 * u * np.abs(v.wide)) + 1e-30
            if d.any():
                deltas[i] = d
        if deltas:
            first = min(deltas)
            rng = np.random.default_rng([self.spec.seed, len(self.nodes), 7])
            random_signs = {i: rng.choice([-1.0, 1.0], size=d.shape) for i, d in deltas.items()}
            diffs = [np.zeros(y.shape) for y in ys]
            # sign patterns: independent random signs; all up; all down (a kink or a boundary is
            # crossed whichever side of it the value sits); with several inputs also the first up
            # and the others down and vice versa (the difference of two erroneous values is not
            # taken as exact)
            patterns = ("random", (1.0, 1.0), (-1.0, -1.0)) + (((1.0, -1.0), (-1.0, 1.0)) if len(deltas) > 1 else ())
            for pattern in patterns:
                args = []
                for i, v in enumerate(ins):
                    if i not in deltas:
                        args.append(v.wide if v is not None else None)
                        continue
                    sign = random_signs[i] if pattern == "random" else pattern[0 if i == first else 1]
                    args.append(v.wide + sign * deltas[i])
                try:
                    yp = as_list(ref(*args, **plan.attrs))[: plan.n_outputs]
                except Exception:
                    return "reference fails near these values"
                for k, (y, y2) in enumerate(zip(ys, yp)):
                    y2 = np.asarray(y2)
                    if y2.shape != y.shape:
                        return "unstable shape"
                    if y.dtype.kind != "f":
                        if not np.array_equal(y, y2):
                            return "near a discontinuity"
                        continue
                    diff = np.abs(y2.astype(np.float64) - y)
                    if nan_in:
                        if not np.array_equal(np.isnan(y), np.isnan(y2)) or np.isinf(y2).any():
                            return "non-finite near these values"
                        diff = np.nan_to_num(diff)
                    elif not np.isfinite(diff).all():
                        return "non-finite near these values"
                    np.maximum(diffs[k], diff, out=diffs[k])
            for k, y in enumerate(ys):
                if y.dtype.kind == "f":
                    errs[k] = diffs[k] / PERTURB
        # the op's own rounding, and the conditioning limit
        u = max(u, tmpl.compute_u)
        bounds: list | None = None
        if tmpl.bound is not None:  # a bound that raises or does not fit y is a bug of its template: it propagates
            got = tmpl.bound(ref, [v.wide if v is not None else None for v in ins], plan.attrs)
            # one array for a node of one output, or a list of them, one per output
            bounds = list(got) if isinstance(got, (list, tuple)) else [got]
            if len(bounds) != len(ys):
                raise ValueError(f"{tmpl.op}: its template's bound gave {len(bounds)} array(s) for {len(ys)} output(s)")
        for k, y in enumerate(ys):
            if y.dtype.kind != "f":
                continue
            mag = clean(np.abs(y))
            scale = mag
            if bounds is not None:
                scale = np.broadcast_to(clean(np.asarray(bounds[k], dtype=np.float64)), y.shape)
            # plus the absolute error of rounding into the subnormal range (a value below the
            # smallest subnormal legitimately becomes 0: Softmax of float16 does)
            errs[k] = errs[k] + (tmpl.ulps + plan.n_acc) * u * scale + SUBNORMAL[self.dtype]
            if np.any(errs[k] > math.sqrt(u) * np.maximum(mag, 1.0)):
                return "ill-conditioned here (error estimate too large)"
        return None

    # -- outputs -----------------------------------------------------------------------------
    def finish(self) -> Graph:
        consumed = {name for n in self.nodes for name in n.reads}
        outputs = [v for v in self.pool if v.node is not None and (v.name in self.exposed or v.name not in consumed)]
        used_inputs = [v for v in self.inputs if v.name in consumed]
        return Graph(self.spec, self.opset, self.dtype, self.nan_mode, used_inputs, self.nodes, self.initializers, outputs,
                     self.skipped, self.nan_assumed, self.config)


def _with_scope(ref: Callable, n_in: int, names: list[str], opset: int) -> Callable:
    """``ref`` taking the captured values as positional arguments after its ``n_in`` inputs
    and passing them on as the enclosing scope (Plan.captures)."""

    def call(*args: Any, **attrs: Any) -> Any:
        return ref(*args[:n_in], **attrs, _outer=dict(zip(names, args[n_in:])), _opset=opset)

    return call


def _with_steps(ref: Callable, steps: list, main_ins: list[Value | None], registry: Any, then: list = (),
                own: list[str] = ()) -> tuple[Callable, list[Value]]:
    """The node and its helper steps as one function of the values they read from the pool
    and constants (Plan.steps, Plan.then), and those values: what the engine evaluates, checks
    and perturbs in place of the node alone. With ``then`` the node's outputs are bound to the
    local names ``own`` and the function returns the last helper's outputs."""
    ext: list[Value] = []
    for v in [v for _, _, vs, _, _ in steps for v in vs] + list(main_ins) + [v for _, _, vs, _, _ in then for v in vs]:
        if v is not None and v.kind != LOCAL and not any(v is e for e in ext):
            ext.append(v)

    def slot(v: Value | None) -> Any:
        if v is None:
            return None
        if v.kind == LOCAL:
            return ("local", v.name)
        return ("ext", next(k for k, e in enumerate(ext) if e is v))

    plan_steps = [(registry[("", o, s_)].reference, [slot(v) for v in vs], outs, a) for o, s_, vs, outs, a in steps]
    after = [(registry[("", o, s_)].reference, [slot(v) for v in vs], outs, a) for o, s_, vs, outs, a in then]
    main_slots = [slot(v) for v in main_ins]

    def run(rows: list, env: dict[str, Any], get: Callable[[Any], Any]) -> list[Any]:
        vals: list[Any] = []
        for r, slots, outs, a in rows:
            result = r(*[get(s) for s in slots], **a)
            # a sequence is one Typed value; several outputs come as a tuple or list
            vals = [result] if isinstance(result, Typed) or not isinstance(result, (list, tuple)) else list(result)
            env.update(zip(outs, map(reference_value, vals)))
        return vals

    def call(*args: Any, **attrs: Any) -> Any:
        env: dict[str, Any] = {}

        def get(s: Any) -> Any:
            if s is None:
                return None
            return args[s[1]] if s[0] == "ext" else env[s[1]]

        run(plan_steps, env, get)
        result = ref(*[get(s) for s in main_slots], **attrs)
        if not after:
            return result
        vals = [result] if isinstance(result, Typed) or not isinstance(result, (list, tuple)) else list(result)
        env.update(zip(own, map(reference_value, vals)))
        return tuple(run(after, env, get))

    return call, ext


def _as_stored(op: str, opset: int, attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes as the model stores them: FLOAT attributes are float32 (alpha=0.1 is
    0.100000001490116...), and the reference must see that value, not the Python float."""
    sch = schema.schema_at(op, opset)
    A = onnx.defs.OpSchema.AttrType
    out = {}
    for k, v in attrs.items():
        kind = sch.attributes[k].type if sch is not None and k in sch.attributes else None
        if kind == A.FLOAT:
            v = float(np.float32(v))
        elif kind == A.FLOATS:
            v = [float(np.float32(x)) for x in v]
        out[k] = v
    return out


def _kind_of(y: Any, dtype: str = "float32") -> str | None:
    arr = np.asarray(y)
    if is_exact(dtype):
        if arr.dtype == S.np_dtype(dtype):
            return "float"
        return "bool" if arr.dtype == bool else ("int" if arr.dtype == np.int64 else None)
    if arr.dtype.kind == "f":
        return "float"
    if arr.dtype == bool:
        return "bool"
    if arr.dtype == np.int64:
        return "int"
    return None


def _exact_values(dtype: str, vals: np.ndarray, dist: int) -> np.ndarray:
    """A graph input of an integer or bool graph from the float draw ``vals``: small integers
    (many equal ones: ties), non-negative for unsigned types, or bools."""
    if dtype == "bool":
        return vals > (0.5 if dist == 2 else 0.0)
    scale = (1.0, 1.0, 1.0, 2.0)[dist]  # dist 3 (multiples of 0.5) becomes -6..6
    out = np.round(vals * scale)
    if dtype.startswith("uint"):
        out = np.abs(out)
    return out.astype(S.np_dtype(dtype))


def _exact_result(ref: Callable, ins: list[Value | None], attrs: dict[str, Any], ys: list[np.ndarray],
                  dtype: str) -> str | None:
    """An integer graph keeps every result exact: integer overflow is spec-silent (the ops'
    ``int_overflow`` points), so a node whose result wraps is not placed. Types up to 32 bits
    are checked by evaluating the node again on inputs widened to int64 (the exact result);
    64-bit types by magnitude, on a float64 evaluation too (a product that wraps to 0)."""
    if dtype == "bool":
        return None
    if S.np_dtype(dtype).itemsize < 8:
        args = [v.wide.astype(np.int64) if v is not None and v.kind == "float" else (v.wide if v is not None else None) for v in ins]
        try:
            wide = as_list(ref(*args, **attrs))[:len(ys)]
        except Exception as exc:
            return f"exactness not checkable ({type(exc).__name__}: {exc})"[:200]
        for y, w in zip(ys, wide):
            w = np.asarray(w)
            if y.dtype.kind in "iu" and (w.shape != y.shape or not np.array_equal(y.astype(np.int64), w.astype(np.int64))):
                return "integer overflow here (spec-silent; kept exact)"
        return None
    for y in ys:
        if y.dtype.kind in "iu" and y.size and np.max(np.abs(y.astype(np.float64))) > INT_MAGNITUDE:
            return "integer result too large to be sure it is exact"
    args = [v.wide.astype(np.float64) if v is not None and v.kind == "float" else (v.wide if v is not None else None) for v in ins]
    try:
        wide = as_list(ref(*args, **attrs))[:len(ys)]
    except Exception as exc:  # unchecked exactness is not assumed: the node is not drawn
        return f"exactness not checkable ({type(exc).__name__}: {exc})"[:200]
    for y, w in zip(ys, wide):
        w = np.asarray(w)
        if y.dtype.kind in "iu" and w.dtype.kind == "f" and w.size and not np.all(np.abs(np.nan_to_num(w, nan=0.0, posinf=np.inf)) <= INT_MAGNITUDE):
            return "integer overflow likely here (spec-silent; kept exact)"
    return None


def realize(spec: GraphSpec, config: GenConfig = GenConfig()) -> Graph:
    """The graph a spec describes (deterministic). Specs that cannot apply are skipped."""
    b = Builder(spec, config)
    b.make_inputs()
    available = available_ops(b.opset, b.dtype, config.ops, config.exclude)
    with np.errstate(all="ignore"):
        for index, nspec in enumerate(spec.nodes if available else ()):
            if len(b.nodes) >= config.max_nodes:
                break
            why = b.apply(index, nspec, available) if nspec.enabled else "disabled"
            if why:
                b.skipped.append((index, why))
    return b.finish()


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
    return Graph(g.spec, g.opset, g.dtype, g.nan_mode, [v for v in g.inputs if v.name in needed], keep,
                 {k: a for k, a in g.initializers.items() if k in needed}, list(outputs), [],
                 [op for op in g.nan_assumed_ops if op in ops], g.config, reduced=True)


def values_of(g: Graph) -> dict[str, Value]:
    """Every value of a realized graph by name (re-evaluated: cheap, and graphs keep only outputs)."""
    b = _reevaluate(g, set()) if g.nodes else None
    return {v.name: v for v in (b.pool if b is not None else [*g.inputs, *g.outputs])}


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
    pool = {v.name: v for v in h.pool}
    if any(n not in pool for n in out_names):
        return None
    return _prune(h.finish(), [pool[n] for n in out_names])


def _reevaluate(g: Graph, drop: set[int], extra_inputs: list[Value] = ()) -> Builder | None:
    b = Builder(g.spec, g.config)
    b.opset, b.dtype, b.u, b.nan_mode = g.opset, g.dtype, ROUNDOFF.get(g.dtype, 0.0), g.nan_mode
    b.exact = is_exact(g.dtype)
    b.inputs = list(g.inputs) + list(extra_inputs)
    b.pool = list(b.inputs)
    names = {v.name: v for v in b.pool}
    for name, arr in g.initializers.items():
        if b.exact:
            kind = "float" if arr.dtype == S.np_dtype(g.dtype) else ("bool" if arr.dtype == bool else "int")
            wide = arr
        else:
            kind = "float" if arr.dtype.kind == "f" else ("bool" if arr.dtype == bool else "int")
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
                             then=then, own=list(node.own))
            if why:
                return None
            names.update({v.name: v for v in b.pool[-len(node.outputs):]})
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


# =============================================================================================
# the ONNX model
# =============================================================================================
def _attr_value(sch: onnx.defs.OpSchema, name: str, value: Any) -> Any:
    kind = sch.attributes[name].type
    A = onnx.defs.OpSchema.AttrType
    if kind == A.FLOAT:
        return float(value)
    if kind == A.INT:
        return int(value)
    if kind == A.INTS:
        return [int(v) for v in value]
    if kind == A.FLOATS:
        return [float(v) for v in value]
    if kind == A.STRING:
        return value.encode() if isinstance(value, str) else value
    return value


def _value_info(v: Value, dtype: str) -> onnx.ValueInfoProto:
    code = S.onnx_code(dtype) if v.kind == "float" else (TensorProto.INT64 if v.kind == "int" else TensorProto.BOOL)
    return helper.make_tensor_value_info(v.name, code, list(v.shape))


def _make_node(op: str, opset: int, ins: list[str], outs: list[str], attrs: dict[str, Any], name: str) -> onnx.NodeProto:
    sch = schema.schema_at(op, opset)
    node = helper.make_node(op, ins, outs, name=name)
    node.attribute.extend(helper.make_attribute(a, _attr_value(sch, a, v), attr_type=int(sch.attributes[a].type))
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


# =============================================================================================
# cases
# =============================================================================================
def case_id(g: Graph) -> str:
    ops = "+".join(sorted({n.op for n in g.nodes})) or "empty"
    if len(ops) > 80:
        ops = ops[:77] + "..."
    return f"generated/{ops}/opset{g.opset}/{g.dtype}/{g.digest()}"


def graph_case(g: Graph, model: onnx.ModelProto | None = None, tolerance: Tolerance | None = None,
               expected: list[np.ndarray] | None = None, extra_tags: dict[str, Any] | None = None) -> Case:
    """A case for graph ``g``: the composed reference's outputs and (unless given) the loosest
    of the per-output tolerances, so re-running the case judges no output more strictly than
    the fuzzer did."""
    model = model or g.model()
    tols = g.tolerances()
    if tolerance is None:
        tolerance = Tolerance(max((t.rtol for t in tols), default=1e-5), max((t.atol for t in tols), default=1e-6),
                              max((t.ulp or 0 for t in tols), default=None) or None)
    tags = {
        "suite": "generated", "ops": sorted({n.op for n in g.nodes}), "op_versions": g.op_versions, "opset": g.opset,
        "dtypes": [g.dtype], "dtype": g.dtype, "nodes": len(g.nodes), "pattern": g.pattern, "nan_inputs": g.nan_mode,
        "output_tolerances": [t.to_dict() for t in tols], "spec": g.spec.to_json(),
    }
    if len(g.nodes) == 1:  # reports then file the case under its op-version
        tags.update(op=g.nodes[0].op, domain="ai.onnx", since_version=g.nodes[0].since)
    tags.update(extra_tags or {})
    return Case(id=case_id(g), suite="generated", model_bytes=model.SerializeToString(),
                data=[DataSet(g.feeds(), expected if expected is not None else g.expected())], tolerance=tolerance, tags=tags)


def draw_graphs(n: int, seed: int, config: GenConfig = GenConfig(), min_specs: int = 1, max_specs: int | None = None,
                valid_only: bool = True) -> list[Graph]:
    """``n`` graphs drawn deterministically from ``seed`` (Hypothesis' generation, no shrinking)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    drawn: list[Graph] = []
    strategy = graph_specs(min_specs, max_specs or max(min_specs, 2 * config.max_nodes))

    @settings(max_examples=n * 4 + 20, database=None, deadline=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(spec: GraphSpec) -> None:
        if len(drawn) >= n:
            return
        g = realize(spec, config)
        if not g.nodes:
            return
        if valid_only:
            try:
                check_graph(g)
            except InvalidGraph:
                return
        drawn.append(g)

    collect()
    return drawn


DEFAULT_EXAMPLES = 50
DEFAULT_SEED = 20261122
#: nodes per graph in the ``generated`` suite (fuzz campaigns choose their own)
SUITE_MAX_NODES = 10


def _suite_fingerprint() -> str:
    """What frozen suite graphs depend on: this module, the strategies, the template API, every
    reference and template."""
    import harness
    import operator_cases

    from .. import fuzz_api

    sources = [Path(__file__), Path(S.__file__), Path(fuzz_api.__file__), *sorted(Path(operator_cases.__file__).parent.glob("*.py"))]
    return digest(sources, onnx.__version__, np.__version__, harness.__version__)


def generated_cases(ctx: Any) -> Iterator[Case]:
    """The ``generated`` suite for ``onnx-harness run``: ``--examples`` graphs (default 50) of up
    to 10 nodes, drawn from ``--seed`` at ``--opset`` (default: every opset from 13), frozen
    under ``<corpus>/generated/`` so that every backend and later run sees the same graphs."""
    n = ctx.examples if ctx.examples is not None else DEFAULT_EXAMPLES
    seed = ctx.seed if ctx.seed is not None else DEFAULT_SEED
    config = GenConfig(opsets=(ctx.opset,) if ctx.opset else GenConfig().opsets, max_nodes=SUITE_MAX_NODES)
    file = Path(ctx.corpus) / "generated" / f"seed{seed}-examples{n}-opset{ctx.opset or 'all'}.pickle"

    def build() -> list[Case]:
        ctx.say(f"drawing {n} generated graphs (seed {seed}) into {file}")
        with without_local_constants():
            return [graph_case(g) for g in draw_graphs(n, seed, config)]

    if ctx.opset is not None and ctx.opset < MIN_OPSET:
        from . import SuiteError

        raise SuiteError(f"the generated suite draws graphs at opset {MIN_OPSET} or later, not {ctx.opset}")
    yield from load_or_build(file, _suite_fingerprint(), build)
