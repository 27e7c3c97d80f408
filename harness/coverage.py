"""Which op-versions our oracle covers: every ai.onnx and ai.onnx.ml op-version in the
installed onnx, covered or not, with counts per family. An op-version is covered only when it
builds value-checked cases (a reference, a strategy and a swept dtype); a deprecated one builds
none (no valid model holds it) and is listed apart, with what is checked for it."""

from __future__ import annotations

import functools
import tomllib
from collections import Counter
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from . import schema
from .registry import load_all

FAMILIES_FILE = Path(__file__).parent / "data" / "families.toml"
DOMAINS = ("", "ai.onnx.ml")


@functools.lru_cache(maxsize=None)
def _families() -> dict[str, str]:
    with open(FAMILIES_FILE, "rb") as fh:
        table = tomllib.load(fh)
    return {op: family for family, ops in table["ai_onnx"].items() for op in ops}


def family_of(op: str, domain: str = "") -> str:
    if schema.canonical_domain(domain) == "ai.onnx.ml":
        return "ai.onnx.ml"
    return _families().get(op, "other")


@dataclass
class CoverageRow:
    domain: str
    op: str
    since: int
    family: str
    #: it builds value-checked cases: a reference, a strategy and at least one dtype to sweep
    covered: bool
    module: str = ""
    #: deprecated in onnx.defs: no valid model holds it, so it builds no case
    deprecated: bool = False
    #: for a deprecated op-version, what is checked of it instead (said, even when nothing)
    checked: str = ""

    @property
    def key(self) -> str:
        return f"{self.op}-{self.since}" if self.domain in ("", "ai.onnx") else f"{self.domain}.{self.op}-{self.since}"


def coverage() -> list[CoverageRow]:
    from .suites.operators import dtypes_for

    registry = load_all()
    rows = []
    for domain in DOMAINS:
        for op, since in schema.all_op_versions(domain):
            entry = registry.get((domain, op, since))
            deprecated = bool(schema.schema_at(op, since, domain).deprecated)
            rows.append(CoverageRow(schema.DOMAINS.get(domain, domain), op, since, family_of(op, domain),
                                    bool(entry and entry.complete and dtypes_for(entry, since)), entry.module if entry else "",
                                    deprecated, deprecated_checks(domain, op, since) if deprecated else ""))
    return rows


def deprecated_checks(domain: str, op: str, since: int) -> str:
    """What is checked of a deprecated op-version: onnx.checker's verdict on a model holding it
    (one node, its required inputs and outputs float tensors), computed here. No case holds it, so
    no backend is checked on it (an error input expecting ``rejected`` would be: not built yet)."""
    import onnx
    from onnx import helper

    sch = schema.schema_at(op, since, domain)
    required = [f"x{k}" for k, f in enumerate(sch.inputs) if f.option != onnx.defs.OpSchema.FormalParameterOption.Optional]
    outputs = [f"y{k}" for k in range(len(sch.outputs))]
    info = lambda name: helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, [1])  # noqa: E731
    graph = helper.make_graph([helper.make_node(op, required, outputs, domain=domain)], "deprecated",
                              [info(n) for n in required], [info(n) for n in outputs])
    imports = [helper.make_opsetid(domain, since)] + ([helper.make_opsetid("", onnx.defs.onnx_opset_version())] if domain else [])
    try:
        onnx.checker.check_model(helper.make_model(graph, opset_imports=imports))
    except onnx.checker.ValidationError as exc:
        return f"no case, no backend checked: onnx.checker refuses a model holding it ({str(exc).splitlines()[0]})"
    return "no case, no backend checked: onnx.defs marks it deprecated (onnx.checker accepts a model holding it)"


def family_counts(rows: list[CoverageRow]) -> dict[str, tuple[int, int]]:
    """family -> (covered, total) op-versions."""
    total, covered = Counter(), Counter()
    for row in rows:
        total[row.family] += 1
        covered[row.family] += row.covered
    return {f: (covered[f], total[f]) for f in sorted(total, key=lambda f: (-covered[f], f))}


# -- spec-silent points -------------------------------------------------------------------------
@dataclass
class SilentRow:
    """One spec-silent point as listed by ``onnx-harness spec-silent``."""

    id: str
    op_versions: list[str]
    spec: str
    expected: str
    invariants: list[str]
    module: str
    #: op-versions whose spec text (``onnx.defs``) does not hold the quoted words
    unquoted: list[str]


def _words(text: str) -> str:
    return " ".join(text.split())


def spec_silent_rows() -> list[SilentRow]:
    """Every spec-silent point the operator modules declare, with a check that its quoted spec
    text is in the doc of each op-version it names (``[...]`` marks words left out)."""
    from .registry import SPEC_SILENT

    load_all()
    rows = []
    for point in sorted(SPEC_SILENT.values(), key=lambda p: p.id):
        unquoted = []
        for since in point.versions:
            sch = schema.schema_at(point.op, since, point.domain)
            # the doc, and the descriptions of the attributes, inputs and outputs (ai.onnx.ml
            # defines much of an operator there)
            doc = _words(" ".join([sch.doc or ""] + [a.description for a in sch.attributes.values()]
                                  + [f.description for f in list(sch.inputs) + list(sch.outputs)]))
            if not all(_words(part) in doc for part in point.spec_at(since).split("[...]")):
                unquoted.append(f"{point.op}-{since}")
        quotes = {point.spec_at(v): v for v in sorted(point.versions, reverse=True)}
        spec = " | ".join(f"({point.op}-{v} on) {q}" for q, v in sorted(quotes.items(), key=lambda kv: kv[1])) if len(quotes) > 1 else point.spec_at(point.versions[0])
        rows.append(SilentRow(point.id, [f"{point.op}-{v}" for v in point.versions], spec, point.expected,
                              list(point.invariants), point.module, unquoted))
    return rows


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def spec_silent_toml(rows: list[SilentRow]) -> str:
    """The data file of every spec-silent point (generated: ``onnx-harness spec-silent --toml FILE``)."""
    out = ["# Every spec-silent point the operator modules declare (generated by `onnx-harness spec-silent --toml`;",
           "# edit the operator module, then regenerate). A backend that differs from `expected` there but keeps",
           "# every invariant gets the outcome `unspecified`; one that breaks an invariant gets `mismatch`.", ""]
    for row in rows:
        out += ["[[point]]", f"id = {_toml_str(row.id)}", f"op_versions = [{', '.join(map(_toml_str, row.op_versions))}]",
                f"spec = {_toml_str(row.spec)}", f"expected = {_toml_str(row.expected)}",
                f"invariants = [{', '.join(map(_toml_str, row.invariants))}]", f"module = {_toml_str(row.module)}", ""]
    return "\n".join(out)


# -- edge classes -------------------------------------------------------------------------------
#: the edge classes, in report order, with what reaching one means
EDGE_CLASSES = {
    "nan": "a float input holds NaN",
    "inf": "a float input holds +inf or -inf",
    "neg_zero": "a float input holds -0.0",
    "subnormal": "a float input holds a subnormal value",
    "empty": "an input has a zero-size dim",
    "ties": "equal values where the op selects or orders (a repeated value, equal inputs, x.5 for Round)",
    "overflow": "an input holds its dtype's largest or lowest finite value (or an example is named for overflow), where the op can overflow",
    "broadcast": "inputs of different shapes that broadcast (a size-1 or missing dim stretched), where the op broadcasts",
    "index": "a negative (or, where the spec clamps it, out-of-range) index, where the spec defines one",
    "exponent": "a negative integral exponent (Pow on a float base)",
    "non_default_attrs": "an optional attribute set to a value other than its default",
    "integer": "examples in an integer type of the swept type constraint",
    "bool": "examples in bool, where the swept type constraint allows it",
}

#: ops that select or order: equal values decide which one, or where
TIES_OPS = frozenset({
    "Max", "Min", "ArgMax", "ArgMin", "TopK", "Hardmax", "ReduceMax", "ReduceMin", "MaxPool", "GlobalMaxPool",
    "MaxRoiPool", "Unique", "Round", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Equal", "Clip",
    "NonMaxSuppression", "Sort",
})
#: ops whose integer (or low-precision float) result can leave the type: sums, products, negation, narrowing
OVERFLOW_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Sum", "Mean", "Pow", "CumSum", "CumProd", "ReduceSum", "ReduceProd",
    "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceMean", "ReduceLogSum", "ReduceLogSumExp", "MatMul",
    "MatMulInteger", "Gemm", "Einsum", "Det", "Cast", "CastLike", "BitShift", "QuantizeLinear", "Conv", "ConvInteger",
    "Softmax", "LogSoftmax", "Exp",
})
#: the spec words that make an op-version broadcast its inputs (besides the legacy ``broadcast``
#: attribute and Expand, whose second input is the shape to broadcast to)
BROADCAST_WORDS = ("multidirectional (i.e., numpy-style) broadcasting", "unidirectional broadcasting",
                   "unidirectional (numpy-style) broadcasting")
#: inputs (or Slice-1's attributes) holding indices into a dim, for the ``index`` class
INDEX_NAMES = ("indices", "starts", "ends")
#: spec words saying a negative index counts from the back
NEGATIVE_INDEX_WORDS = ("[-s, s-1]", "negative value")
#: attributes with no effect on values (legacy), left out of ``non_default_attrs``
LEGACY_ATTRS = frozenset({"consumed_inputs", "is_test", "spatial"})
#: op-version -> why it draws no empty tensor (the spec forbids or gives no result for a zero-size dim)
NO_EMPTY: dict[str, str] = {
    "ArgMax-11": '"The input tensor must not be empty."', "ArgMin-11": '"The input tensor must not be empty."',
    "Range-11": '"start : Scalar." (limit and delta too)', "Range-27": '"start : Scalar." (limit and delta too)',
    "HannWindow-17": '"size: A scalar value"', "HammingWindow-17": '"size: A scalar value"',
    "BlackmanWindow-17": '"size: A scalar value"',
    "MelWeightMatrix-17": '"num_mel_bins: The number of bands" (every input a scalar)',
}
#: op-version -> why no example holds NaN (the spec gives no result for one)
NO_NAN: dict[str, str] = {
    "Range-11": '"number_of_elements = max( ceil( (limit - start) / delta ) , 0 )" has no value for a NaN',
    "Range-27": '"number_of_elements = max( ceil( (limit - start) / delta ) , 0 )" has no value for a NaN',
    "Bernoulli-15": '"All values in input have to be in the range:[0, 1]."',
    "Bernoulli-22": '"All values in input have to be in the range:[0, 1]."',
    "Multinomial-7": '"the unnormalized log-probability of each corresponding outcome": NaN is none',
    "Multinomial-22": '"the unnormalized log-probability of each corresponding outcome": NaN is none',
}
#: op-version -> why no example holds an infinity (the spec gives no result for one)
NO_INF: dict[str, str] = {
    "Bernoulli-15": '"All values in input have to be in the range:[0, 1]."',
    "Bernoulli-22": '"All values in input have to be in the range:[0, 1]."',
}


@dataclass
class EdgeRow:
    """Which edge classes an op-version's examples reach (``applies`` minus ``reached``: its gaps)."""

    key: str
    module: str
    applies: list[str]
    reached: list[str]
    examples: int
    #: optional attributes no example sets to a value other than the default (shown, not a gap)
    fixed_attrs: list[str]

    @property
    def gaps(self) -> list[str]:
        return [c for c in self.applies if c not in self.reached]


def _floats(arr: Any) -> Any:
    import numpy as np

    from . import strategies as S

    a = np.asarray(arr)
    if a.dtype == object or a.dtype.kind in "USbiu" or not S.is_float(S.label_of(a.dtype)):
        return None
    return a.astype(np.float64)


def _smallest_normal(dtype: Any) -> float:
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).smallest_normal)


def _extreme(arr: Any) -> bool:
    """``arr`` holds its dtype's largest or lowest finite value."""
    import ml_dtypes
    import numpy as np

    a = np.asarray(arr)
    if a.size == 0 or a.dtype == object or a.dtype.kind in "USb":
        return False
    integer = a.dtype.kind in "iu" or "int" in a.dtype.name  # int4/uint4 are of kind "V"
    info = ml_dtypes.iinfo(a.dtype) if integer else ml_dtypes.finfo(a.dtype)
    wide = a.astype(object) if integer else a.astype(np.float64)
    return bool(np.any(wide == info.max) or np.any(wide == info.min))


def _has_ties(op: str, inputs: list[Any]) -> bool:
    """A repeated (non-NaN) value in an input, equal elements of two inputs of one dtype at the
    same broadcast position, or (Round) a value halfway between two integers."""
    import numpy as np

    arrays = [np.asarray(x) for x in inputs if x is not None and np.asarray(x).dtype != object]
    if op == "Round":
        return any(np.any(np.abs(f - np.floor(f) - 0.5) == 0) for f in map(_floats, arrays) if f is not None)
    for a in arrays:
        flat = a.ravel()
        flat = flat[~np.isnan(flat.astype(np.float64))] if _floats(a) is not None else flat
        if flat.size != np.unique(flat).size:
            return True
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            if a.dtype == b.dtype and a.size and b.size:
                try:
                    left, right = np.broadcast_arrays(a, b)
                except ValueError:  # shapes that do not broadcast (Gather's data and indices): no position in common
                    continue
                if np.any(left == right):
                    return True
    return False


def _broadcasts(op: str, arrays: list[Any]) -> bool:
    """Two inputs of different shapes that broadcast to one (Expand: the input stretched to the
    shape its second input holds)."""
    import numpy as np

    shapes = [np.shape(a) for a in arrays]
    if op == "Expand" and len(arrays) == 2:
        try:
            return np.broadcast_shapes(shapes[0], tuple(int(v) for v in np.asarray(arrays[1]).ravel())) != shapes[0]
        except ValueError:
            return False
    if len(set(shapes)) < 2:
        return False
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:  # inputs that do not broadcast together (MatMul's, Gather's): not this class
        return False
    return True


def _index_reached(sch: Any, ex: Any) -> bool:
    """An index input (or Slice-1's starts/ends attribute) holds a negative value, or a start or
    end beyond the data's dims (which Slice clamps)."""
    import numpy as np

    named = {i.name: x for i, x in zip(sch.inputs, ex.inputs) if x is not None}
    named.update({k: v for k, v in ex.attrs.items() if k in ("starts", "ends")})
    data = named.get("data")
    bound = max(np.shape(data), default=0) if data is not None else None
    for name in INDEX_NAMES:
        if name not in named:
            continue
        values = np.asarray(named[name])
        if values.dtype.kind not in "iu" or not values.size:
            continue
        if values.min() < 0 or (name != "indices" and bound is not None and values.max() > bound):
            return True
    return False


def _negative_integral(exponent: Any) -> bool:
    import numpy as np

    f = np.asarray(exponent).astype(np.float64)
    return bool(np.any(np.isfinite(f) & (f < 0) & (f == np.round(f))))


def _non_default(sch: Any, attrs: dict[str, Any]) -> set[str]:
    """The optional attributes ``attrs`` set to a value other than the schema's default."""
    import numpy as np
    import onnx

    varied = set()
    for name, value in attrs.items():
        spec = sch.attributes.get(name)
        if spec is None or spec.required or name in LEGACY_ATTRS:
            continue
        default = spec.default_value
        if default.type == onnx.AttributeProto.UNDEFINED:
            varied.add(name)
            continue
        want = onnx.helper.get_attribute_value(default)
        if isinstance(want, bytes) and isinstance(value, str):
            value = value.encode()
        if default.type in (onnx.AttributeProto.FLOAT, onnx.AttributeProto.FLOATS):  # as the model stores it
            want, value = np.float32(want), np.float32(value)
        try:
            same = bool(np.array_equal(np.asarray(want, dtype=object), np.asarray(value, dtype=object)))
        except (TypeError, ValueError):
            same = want == value
        if not same:
            varied.add(name)
    return varied


def edge_classes_reached(op: str, sch: Any, examples: list[tuple[str, Any]]) -> set[str]:
    """The edge classes (keys of EDGE_CLASSES) ``examples`` reach; ``examples`` are (dtype, Example)."""
    import numpy as np

    reached: set[str] = set()  # edge classes, and "attr:NAME" for each optional attribute varied
    with np.errstate(all="ignore"):
        for dtype, ex in examples:
            reached |= _reach(op, sch, dtype, ex)
    return reached


def _reach(op: str, sch: Any, dtype: str, ex: Any) -> set[str]:
    import numpy as np

    from . import strategies as S

    reached = {"integer"} if S.is_int(dtype) else {"bool"} if dtype == "bool" else set()
    if "overflow" in ex.name:  # an explicit example built to overflow (exp of 12 in float16, ...)
        reached.add("overflow")
    from .values import Typed, leaves

    present = [x for x in ex.inputs if x is not None and not isinstance(x, (list, tuple, dict, Typed))]
    # a sequence's elements and an optional's content (harness.values.Typed) reach the classes
    # as tensors do; an empty sequence is an empty input
    for x in ex.inputs:
        if isinstance(x, Typed):
            present += leaves(x)
            if isinstance(x.value, list) and not x.value:
                reached.add("empty")
    # a map's values reach the classes too (DictVectorizer, CastMap)
    present += [np.array(list(x.values())) for x in ex.inputs if isinstance(x, dict)]
    # a tensor attribute's values (Constant's, ConstantOfShape's ``value``) reach the classes too
    present += [v for v in ex.attrs.values() if isinstance(v, np.ndarray)]
    # and so do the values a node carries in its subgraphs (If's branches, Loop's and Scan's
    # bodies): their initializers and Constant values flow through the node to its outputs
    carried = [v for g in ex.attrs.values() for v in _subgraph_values(g)]
    for x in present + carried:
        a = np.asarray(x)
        if a.ndim and a.size == 0:
            reached.add("empty")
        if _extreme(a):
            reached.add("overflow")
        f = _floats(a)
        if f is None or not f.size:
            continue
        if np.isnan(f).any():
            reached.add("nan")
        if np.isinf(f).any():
            reached.add("inf")
        if np.any((f == 0) & np.signbit(f)):
            reached.add("neg_zero")
        if np.any((f != 0) & (np.abs(f) < _smallest_normal(a.dtype))):
            reached.add("subnormal")
    if _has_ties(op, present):
        reached.add("ties")
    if _broadcasts(op, present):
        reached.add("broadcast")
    if _index_reached(sch, ex):
        reached.add("index")
    if op == "Pow" and len(ex.inputs) > 1 and _negative_integral(ex.inputs[1]):
        reached.add("exponent")
    reached |= {f"attr:{name}" for name in _non_default(sch, ex.attrs)}
    if any(c.startswith("attr:") for c in reached):
        reached.add("non_default_attrs")
    return reached


def _subgraph_values(value: Any) -> list[Any]:
    """The tensors a GRAPH attribute holds: its initializers and tensor attributes (Constant's
    ``value``), nested subgraphs' included."""
    import onnx
    from onnx import numpy_helper

    graphs = [value] if isinstance(value, onnx.GraphProto) else [g for g in value if isinstance(g, onnx.GraphProto)] \
        if isinstance(value, (list, tuple)) else []
    out: list[Any] = []
    for g in graphs:
        out += [numpy_helper.to_array(t) for t in g.initializer]
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    out.append(numpy_helper.to_array(a.t))
                elif a.type == onnx.AttributeProto.GRAPH:
                    out += _subgraph_values(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    out += _subgraph_values(list(a.graphs))
    return out


def edge_classes_applying(op: str, sch: Any, dtypes: list[str], allowed: list[str]) -> list[str]:
    """The edge classes an op-version must reach, from its schema: float types -> NaN, inf, -0,
    subnormal; an integer type allowed -> integer (and overflow where the op can overflow);
    ops that select or order -> ties; every op with inputs -> empty (unless NO_EMPTY says why
    not); ops whose spec text says they broadcast -> broadcast; index inputs whose spec text
    counts negative ones from the back -> index; Pow on a float base -> exponent; optional
    attributes -> non-default attributes."""
    from . import strategies as S

    out = []
    if sch.inputs and any(S.is_float(d) for d in dtypes):  # no input (RandomNormal): no value to hold one
        key = f"{op}-{sch.since_version}"
        out += [c for c in ("inf", "neg_zero", "subnormal") if not (c == "inf" and key in NO_INF)] + (["nan"] if key not in NO_NAN else [])
    if sch.inputs and f"{op}-{sch.since_version}" not in NO_EMPTY:
        out.append("empty")
    if op in TIES_OPS:
        out.append("ties")
    if op in OVERFLOW_OPS and any(S.is_int(d) or d in ("float16", "bfloat16") for d in allowed):
        out.append("overflow")
    doc = " ".join((sch.doc or "").lower().split())
    if op == "Expand" or "broadcast" in sch.attributes or any(w in doc for w in BROADCAST_WORDS):
        out.append("broadcast")
    said = " ".join([doc] + [" ".join(i.description.lower().split()) for i in sch.inputs if i.name in INDEX_NAMES])
    if any(n in INDEX_NAMES for n in [i.name for i in sch.inputs] + list(sch.attributes)) and any(w in said for w in NEGATIVE_INDEX_WORDS):
        out.append("index")
    if op == "Pow" and any(S.is_float(d) for d in dtypes):
        out.append("exponent")
    if any(not a.required and name not in LEGACY_ATTRS for name, a in sch.attributes.items()):
        out.append("non_default_attrs")
    if any(S.is_int(d) for d in allowed):
        out.append("integer")
    if "bool" in allowed:
        out.append("bool")
    return [c for c in EDGE_CLASSES if c in out]


def edge_coverage(examples: int = 0, seed: int | None = None, ops: set[str] | None = None) -> list[EdgeRow]:
    """Per covered op-version (at its own opset): the edge classes that apply and those its
    examples reach: the explicit edge examples of every swept dtype, plus ``examples`` drawn ones
    per dtype (0: edge examples only; an edge class must be reached on purpose, not by chance)."""
    from . import strategies as S
    from .suites.operators import DEFAULT_SEED, draw_examples, dtypes_for

    rows = []
    for (domain, op, since), opv in sorted(load_all().items()):
        if not opv.complete or (ops and op not in ops):
            continue
        sch = schema.schema_at(op, since, domain)
        dtypes = dtypes_for(opv, since)
        param = opv.type_param or (sch.inputs[0].type_str if sch.inputs else None)
        allowed = [S.label_from_type_str(t) for t in schema.allowed_types(sch).get(param, [])]
        allowed = [d for d in allowed if d] or dtypes
        got: list[tuple[str, Any]] = []
        for dtype in dtypes:
            got += [(dtype, ex) for ex in (opv.edges(dtype, since) if opv.edges else [])]
            got += [(dtype, ex) for ex in draw_examples(opv, dtype, since, examples, DEFAULT_SEED if seed is None else seed)]
        reached = edge_classes_reached(op, sch, got)
        if sch.deprecated:  # no valid model holds it (dtypes_for sweeps nothing): no edge class applies
            rows.append(EdgeRow(opv.key, opv.module, [], [], 0, []))
            continue
        fixed = sorted(n for n, a in sch.attributes.items() if not a.required and n not in LEGACY_ATTRS and f"attr:{n}" not in reached)
        rows.append(EdgeRow(opv.key, opv.module, edge_classes_applying(op, sch, dtypes, allowed),
                            sorted((c for c in reached if c in EDGE_CLASSES), key=list(EDGE_CLASSES).index), len(got), fixed))
    return rows
