"""What an operator module needs to take part in generated graphs: its *fuzz template*.

A template plans one node of a multi-operator graph (:mod:`harness.suites.generated` is the
engine that draws, composes and judges those graphs). It reads the node spec's knobs and refs
through a :class:`Ctx`, picks pool values and constants, and returns a :class:`Plan` (inputs,
attributes, how many terms one output accumulates), or None when nothing fits. Beside the plan a
template declares what the engine's value checks need: NaN behaviour, whether outputs jump, the
op's own rounding allowance, a safe input domain, a stability test.

An operator module registers its template beside its reference::

    op = Operator("Clip")

    @op.fuzz(nan=NAN_ASSUMED, ulps=0.0)
    def fuzz(c: Ctx) -> Plan | None:
        x = c.take("float", 0)
        ...

This module holds only those types and the shape and magnitude helpers templates share; it
imports nothing of the engine, so operator modules never import the engine's internals.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import strategies as S

if TYPE_CHECKING:
    from .generated.builder import Builder
    from .generated.spec import NodeSpec

#: largest tensor a node may produce (elements)
MAX_ELEMENTS = 256
#: perturbation factor of the value checks (see harness.suites.generated)
PERTURB = 2.0
#: unit roundoff per float dtype
ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}

#: NaN inputs: IEEE 754 arithmetic and copies define the result
NAN_IEEE = "ieee"
#: NaN inputs: the spec is silent; we assume propagation as numpy and IEEE 754-2019 ``maximum`` do
NAN_ASSUMED = "assumed"


@dataclass
class Value:
    """A value of the graph being drawn: its composed float64 reference and error estimate."""

    name: str
    kind: str  # "float" (the graph's dtype, integer or bool too), "int" (int64), "bool", QUANT
    wide: np.ndarray  # float64 for floats: the composed reference; the dtype itself in integer and bool graphs
    err: np.ndarray  # estimated absolute error of a correct implementation (floats; zeros otherwise)
    depth: int
    node: int | None = None  # producing node (index in Graph.nodes); None for graph inputs
    const: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.wide.shape)

    @property
    def rank(self) -> int:
        return self.wide.ndim

    @property
    def size(self) -> int:
        return int(self.wide.size)

    @property
    def has_nan(self) -> bool:
        return self.kind == "float" and bool(np.isnan(self.wide).any())


@dataclass
class Step:
    """A helper node a plan places before its own node (SequenceConstruct before the
    ConcatFromSequence that consumes it, a comparison that computes If's condition) or after it
    (ConcatFromSequence of the sequence a SequenceInsert gives: :attr:`Plan.then`). Its inputs
    are pool values, constants, or :meth:`Ctx.local` values naming an earlier step's output (or
    the node's, :attr:`Plan.outputs`); its outputs are the plan's own (a sequence never enters
    the pool, which holds tensors)."""

    op: str
    inputs: list[Value | None]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)


#: the kind of a value only a plan's steps and node see (Ctx.local)
LOCAL = "local"
#: the kind of a quantized integer value in a float graph (QuantizeLinear's output, a
#: DequantizeLinear's input: 8- or 16-bit, or an int32 bias), held in its own dtype; only the
#: quantization ops and the QDQ patterns (harness.generated.patterns) take one
QUANT = "quant"
QUANT_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32))


@dataclass
class Plan:
    inputs: list[Value | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: number of terms a single output accumulates (error bound n * u * bound)
    n_acc: int = 0
    #: outputs to request (optional outputs left out); None: every output the reference returns
    n_outputs: int | None = None
    #: pool values a subgraph attribute (If's branches, a Loop body) reads from the enclosing
    #: scope by name. They are the node's inputs to the engine (NaN, perturbation, pruning) but
    #: not to the ONNX node, and the reference gets them as ``_outer`` (name -> value) and the
    #: graph's opset as ``_opset``, the convention of operator_cases._control_util.run_graph.
    #: Only values of the pool (their names are fixed) can be captured.
    captures: list[Value] = field(default_factory=list)
    #: helper nodes placed before the node, in order (see :class:`Step`); the engine evaluates
    #: the steps and the node together, as one function of the pool values and constants they
    #: read, and checks, perturbs and judges that whole as it does one node
    steps: list[Step] = field(default_factory=list)
    #: helper nodes placed after the node, in order, for a node whose outputs cannot enter the
    #: pool (a sequence): they read the node's outputs as :meth:`Ctx.local` values named by
    #: ``outputs`` and turn them back into tensors; the last step's outputs are then the plan's
    #: outputs, the values that enter the pool (``n_outputs`` counts them). The engine judges
    #: steps, node and these as one function, as it does ``steps``
    then: list[Step] = field(default_factory=list)
    #: local names of the node's own outputs, which the ``then`` steps read (needed with ``then``)
    outputs: list[str] = field(default_factory=list)


@dataclass
class Template:
    op: str
    plan: Callable[[Ctx], Plan | None]
    #: NaN inputs: NAN_IEEE (defined), NAN_ASSUMED (spec silent; we assume propagation), None (skip)
    nan: str | None = None
    #: outputs jump (Floor, Sign, comparisons): perturb also by a few ulps of margin
    jumps: bool = False
    #: rounding allowance of the op itself, in units of roundoff of |y| (or of the bound)
    ulps: float = 2.0
    #: bound(ref, inputs, attrs) -> array like y: the magnitude the op's rounding scales with
    #: (a list of such arrays, one per output, for an op of several outputs)
    bound: Callable[..., np.ndarray] | None = None
    #: guard(inputs) -> bool: the inputs are inside the op's safe domain
    guard: Callable[[list[np.ndarray]], bool] | None = None
    #: the type parameter the graph's float dtype must be allowed for (None: the op takes no
    #: value of that type, as the logical ops on bool)
    type_param: str | None = "T"
    #: stable(inputs, attrs, u) -> bool, for outputs that elementwise perturbation cannot
    #: test: equality, and which element of a near-tie is the largest
    stable: Callable[[list[Value], dict, float], bool] | None = None
    #: unit roundoff the spec lets the op compute in when that is coarser than the graph's
    #: dtype (LayerNormalization: stage one in stash_type, float32 at the most, for double X)
    compute_u: float = 0.0


#: op name -> its template (filled as operator modules are imported: harness.registry.load_all)
TEMPLATES: dict[str, Template] = {}


def register(t: Template) -> Template:
    """Add ``t``; an op has one template (a second one is a mistake, not an override)."""
    if t.op in TEMPLATES:
        raise ValueError(f"{t.op} already has a fuzz template ({TEMPLATES[t.op].plan.__module__})")
    TEMPLATES[t.op] = t
    return t


def template(op: str, **kw: Any) -> Callable[[Callable[[Ctx], Plan | None]], Callable[[Ctx], Plan | None]]:
    """Decorator: ``fn`` plans nodes of ``op`` (keywords: the :class:`Template` fields)."""

    def deco(fn: Callable[[Ctx], Plan | None]) -> Callable[[Ctx], Plan | None]:
        register(Template(op, fn, **kw))
        return fn

    return deco


class Ctx:
    """What a template sees while planning one node: the pool, the spec's knobs and refs, and
    a way to add constants (initializers)."""

    def __init__(self, builder: Builder, spec: NodeSpec, since: int) -> None:
        self.b = builder
        self.spec = spec
        self.since = since
        self.opset = builder.opset
        self.dtype = builder.dtype
        self._knob = 0
        self._rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        """Values of this node's constants: seeded by the graph's seed and the spec itself, so
        deleting another spec does not change them."""
        if self._rng is None:
            spec = self.spec
            self._rng = np.random.default_rng([self.b.spec.seed, zlib.crc32(repr((spec.op, spec.refs, spec.knobs)).encode())])
        return self._rng

    def pick(self, n: int) -> int:
        """The next knob modulo ``n`` (0 when the knobs are used up)."""
        if n <= 1:
            self._knob += 1
            return 0
        k = self.spec.knobs[self._knob] if self._knob < len(self.spec.knobs) else 0
        self._knob += 1
        return k % n

    def choice(self, options: list | tuple) -> Any:
        return options[self.pick(len(options))]

    def take(self, kind: str = "float", slot: int = 0, fits: Callable[[Value], bool] | None = None) -> Value | None:
        """A pool value of ``kind`` that ``fits``, ``refs[slot]`` steps back from the newest."""
        kinds = {kind}
        if self.dtype == "bool" and kind in ("float", "bool"):
            kinds = {"float", "bool"}  # a bool graph: its values are the logical ops' operands too
        cands = [v for v in self.b.pool if v.kind in kinds and (fits is None or fits(v))]
        if not cands:
            return None
        ref = self.spec.refs[slot] if slot < len(self.spec.refs) else 0
        # distances 0..5 back, the newest value most often (what shrinking reaches too)
        return cands[-1 - ((ref % 16) // 3) % len(cands)]

    def const(self, arr: np.ndarray, kind: str | None = None) -> Value:
        """A constant input (initializer); floats are stored in the graph's dtype."""
        arr = np.asarray(arr)
        if kind is None and arr.dtype in QUANT_DTYPES and not self.exact:
            kind = QUANT
        if kind is None:
            kind = "float" if arr.dtype.kind == "f" else ("bool" if arr.dtype == bool else "int")
        if kind == "float" and self.exact:
            wide = arr.astype(S.np_dtype(self.dtype))
        elif kind == "float":
            wide = arr.astype(S.np_dtype(self.dtype)).astype(np.float64)
        else:
            wide = arr
        return Value("", kind, wide, np.zeros(wide.shape), 0, const=True)

    @property
    def exact(self) -> bool:
        """An integer or bool graph (values held exactly in the graph's dtype)."""
        return self.dtype not in ROUNDOFF

    def floats(self, shape: tuple[int, ...], lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
        """Constant values in [lo, hi]; in an integer graph the integers there (that the dtype
        holds), in a bool graph 0 and 1."""
        if self.dtype == "bool":
            return (self.rng.uniform(size=shape) < 0.5).astype(np.float64)
        if self.exact:
            low, high = S.finite_range(self.dtype)
            a, b = max(math.ceil(lo), low), min(math.floor(hi), high)
            if a > b:
                a, b = max(0, low), min(1, high)
            return self.rng.integers(a, b + 1, size=shape).astype(np.float64)
        return self.rng.uniform(lo, hi, size=shape)

    def fresh(self, stem: str) -> str:
        """A name prefix no other value of the graph has (for the values inside a subgraph)."""
        return f"{stem}{len(self.b.nodes)}_"

    def local(self, name: str) -> Value:
        """The output ``name`` of one of the plan's steps, as an input of a later step or of
        the node (it never enters the pool)."""
        return Value(name, LOCAL, np.zeros(0), np.zeros(0), 0)

    def ints(self, values: list[int] | np.ndarray) -> Value:
        return self.const(np.asarray(values, dtype=np.int64), "int")

    def operand(self, a: Value, slot: int = 1, shape_of: Callable[[tuple, tuple], tuple | None] | None = None,
                const_shape: Callable[[Ctx, Value], tuple[int, ...]] | None = None, lo: float = -2.0, hi: float = 2.0) -> Value:
        """A second float operand for ``a``: a pool value whose shape combines with ``a``'s
        (broadcasting by default), or, one time in four (or when none fits), a constant."""
        combine = shape_of or (lambda x, y: broadcast_shape(x, y))
        if self.pick(4) != 3:
            b = self.take("float", slot, lambda v: (s := combine(a.shape, v.shape)) is not None and size_of(s) <= MAX_ELEMENTS)
            if b is not None:
                return b
        shape = const_shape(self, a) if const_shape else broadcast_variant(self, a.shape)
        return self.const(self.floats(shape, lo, hi))


# -- shapes ----------------------------------------------------------------------------------
def size_of(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape)) if shape else 1


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    if not a or not b:
        return None
    aa = a if len(a) > 1 else (1,) + a
    bb = b if len(b) > 1 else b + (1,)
    if aa[-1] != bb[-2]:
        return None
    batch = broadcast_shape(aa[:-2], bb[:-2])
    if batch is None:
        return None
    out = batch + ((aa[-2],) if len(a) > 1 else ()) + ((bb[-1],) if len(b) > 1 else ())
    return out


def broadcast_variant(c: Ctx, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``shape``: itself, a suffix, a scalar, or with dims set to 1."""
    mode = c.pick(4)
    if mode == 0 or not shape:
        return shape
    if mode == 1:
        return shape[c.pick(len(shape) + 1):]
    if mode == 2:
        return ()
    mask = c.pick(1 << len(shape))
    return tuple(1 if mask >> i & 1 else d for i, d in enumerate(shape))


def axes_subset(c: Ctx, rank: int, min_size: int = 1) -> list[int]:
    subsets = [s for n in range(min_size, rank + 1) for s in itertools.combinations(range(rank), n)]
    chosen = list(subsets[c.pick(len(subsets))]) if subsets else []
    # negative axes sometimes (accepted from opset 11 on)
    return [a - rank if c.pick(3) == 2 else a for a in chosen]


def options(c: Ctx, choices: list[dict]) -> dict:
    """Attribute sets; the first (what shrinking reaches) is always "spec defaults"."""
    return dict(c.choice([{}] + choices))


# -- values, bounds and stability ------------------------------------------------------------
def finite(x: np.ndarray) -> np.ndarray:
    return x[~np.isnan(x)] if x.dtype.kind == "f" else x


def as_list(y: Any) -> list:
    return list(y) if isinstance(y, (list, tuple)) else [y]


def abs_bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    """ref(|inputs|): the magnitude sums and dot products round with (|A| |B| for MatMul)."""
    return np.abs(np.asarray(ref(*[np.abs(x) if x is not None and x.dtype.kind == "f" else x for x in ins], **attrs), dtype=np.float64))


def with_input(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    """|y| + |x|: ops evaluated by formulas (1 + erf, exp(x) - 1, log(x + sqrt(x^2 + 1)) ...)
    keep an absolute error proportional to the input where the result is small; the spec
    gives the formula, so such an evaluation is correct."""
    x = np.abs(np.nan_to_num(ins[0]))
    return np.abs(np.nan_to_num(np.asarray(ref(*ins, **attrs), dtype=np.float64))) + x


def margin(v: Value, u: float) -> np.ndarray:
    """How far ``v`` may be from the composed reference: twice its error estimate plus a few
    units of roundoff (what a correct implementation may move it by); none for the exact
    values of an integer or bool graph."""
    if v.wide.dtype.kind != "f":
        return np.zeros(v.shape)
    return PERTURB * v.err + 4 * u * np.nan_to_num(np.abs(v.wide)) + 1e-30
