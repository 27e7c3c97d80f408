"""What Hypothesis draws for a generated graph: node, input and graph specs (the encoding the
shrinker works on) and the generation settings."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np
from hypothesis import strategies as st

from .. import schema
from .. import strategies as S
from ..fuzz_api import (
    ROUNDOFF,
)

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
#: edge classes of graph inputs (issue 35): some elements of a graph's float inputs are set to
#: +-inf ("inf"), -0.0 ("neg_zero"), subnormals of the dtype ("subnormal"), or finite values
#: large enough that a product of two overflows the dtype ("overflow": |x| = max ** 0.55 .. 4x)
EDGE_CLASSES = ("inf", "neg_zero", "subnormal", "overflow")
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
    #: share of float graphs (0..1) whose inputs carry edge values of one class of
    #: ``edge_classes`` (see :data:`EDGE_CLASSES`): the share just below the NaN graphs' in the
    #: spec's ``nan`` byte, so shrinking (towards 0) leaves edge values last
    edge_rate: float = 0.1
    edge_classes: tuple[str, ...] = EDGE_CLASSES
    #: value-aware generation (off only to measure what it buys)
    value_aware: bool = True
    #: (op-version key, dtype) pairs not to draw (a campaign adds those a backend lacks)
    exclude: frozenset[tuple[str, str]] = frozenset()
    #: graphs whose first dim is 0 (empty inputs) when the spec's first dim byte says so
    empty: bool = True
    #: subgraph patterns optimizers rewrite (harness.generated.patterns), drawn like ops in
    #: float graphs: the spec's op index covers the ops, then these
    patterns: tuple[str, ...] = ()

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

    def edge_of(self, spec: GraphSpec) -> str:
        """The edge class whose values ``spec``'s inputs carry ("" for none): the ``nan`` byte
        in the ``edge_rate`` share just below the NaN share, the class from the seed."""
        top = 100 - round(100 * self.nan_rate)
        if not self.edge_classes or not top - round(100 * self.edge_rate) <= spec.nan < top:
            return ""
        return self.edge_classes[(spec.seed >> 12) % len(self.edge_classes)]

    def opset_of(self, knob: int) -> int:
        return self.opsets[knob % len(self.opsets)]
