"""The ``operators`` suite: every registered op-version, swept over the dtypes its schema
allows, with Hypothesis-drawn examples and hand-picked edge examples, each one a case whose
expected outputs come from our own reference implementation.

A case for an op-version is built with the schema in force (attributes that became inputs are
the op-version's own business), stamped at its ``since_version`` (or at ``--opset N`` when that
op-version is the one in force at N). Case ids read ``operators/Clip-11/opset11/float32/3``.

Inputs and outputs may be sequences (lists) and optionals (None when empty): an example or a
reference gives those as ``harness.values.Typed`` so that the graph declares their types, and
the case carries the plain values (see harness/values.py).

Drawing is deterministic: each (op-version, dtype) gets its own Hypothesis seed derived from
the run's seed, so every backend sees the same inputs and a failure is replayable.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import re
import signal
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from .. import schema
from .. import strategies as S
from ..case import Case, DataSet
from .. import registry
from ..registry import Example, OpVersion, broken_modules, load_all, spec_silent_points
from ..tolerances import default_for
from ..values import Typed, TypedSeq, infer_type, innermost_elem, leaves, reference_value, type_text
from .frozen import digest, load_frozen, load_or_build, without_local_constants, write_frozen

DEFAULT_EXAMPLES = 20
DEFAULT_SEED = 20261122
PROFILE = "onnx-harness"

# CI=true makes Hypothesis load its built-in "ci" profile; ours is registered and loaded explicitly.
settings.register_profile(PROFILE, deadline=None, database=None, derandomize=False, print_blob=False,
                          phases=[Phase.generate], suppress_health_check=list(HealthCheck))


class OracleError(RuntimeError):
    """Our reference disagrees with the schema (wrong output dtype, bad example): a bug of ours."""


def dtypes_for(opv: OpVersion, opset: int) -> list[str]:
    sch = schema.schema_at(opv.op, opset, opv.domain)
    if sch is None or sch.deprecated:  # Scatter-11: a node of a deprecated op-version is an invalid model, no case can hold one
        return []
    allowed = schema.allowed_types(sch)
    param = opv.type_param
    if param is None:
        param = sch.inputs[0].type_str if sch.inputs else next(iter(allowed), None)
    labels = [S.label_from_type_str(_element_type_str(t)) for t in allowed.get(param, [param] if param and param.startswith("tensor(") else [])]
    labels = list(dict.fromkeys(l for l in labels if l))  # seq(tensor(x)) and optional(tensor(x)) both sweep x once
    if opv.dtypes is not None:
        labels = [l for l in labels if l in opv.dtypes]
    return labels


def _element_type_str(type_str: str) -> str:
    """``seq(tensor(float))``, ``optional(seq(tensor(float)))`` -> ``tensor(float)``: a sequence or
    optional type parameter sweeps the element types it allows."""
    while type_str.startswith(("seq(", "optional(")) and type_str.endswith(")"):
        type_str = type_str[type_str.index("(") + 1:-1]
    return type_str


def _seed_for(base: int, *parts: Any) -> int:
    return zlib.crc32(("/".join(map(str, parts)) + f"/{base}").encode()) & 0x7FFFFFFF


def draw_examples(opv: OpVersion, dtype: str, opset: int, n: int, seed: int) -> list[Example]:
    if n <= 0 or opv.strategy is None:
        return []
    drawn: list[Example] = []

    @settings(settings.get_profile(PROFILE), max_examples=n)
    @hypothesis_seed(_seed_for(seed, opv.key, dtype))
    @given(st.data())
    def collect(data: Any) -> None:
        if len(drawn) < n:
            drawn.append(opv.strategy(data.draw, dtype, opset))

    with np.errstate(all="ignore"), without_local_constants():
        collect()
    return drawn


def _attr_value(sch: onnx.defs.OpSchema, name: str, value: Any) -> Any:
    """Coerce a Python value to the attribute type the schema declares (1 -> 1.0 for floats)."""
    attr = sch.attributes.get(name)
    if attr is None:
        raise OracleError(f"{sch.name}-{sch.since_version} has no attribute {name!r}")
    A = onnx.defs.OpSchema.AttrType
    if attr.type in (A.FLOATS, A.INTS, A.STRINGS) and len(value) == 0:  # an empty list has no type make_node can infer
        return onnx.helper.make_attribute(name, [], attr_type=int(attr.type))
    return schema.coerce_attribute(sch, name, value)


def _value_info(name: str, value: Any) -> onnx.ValueInfoProto:
    if isinstance(value, Typed):
        return onnx.helper.make_value_info(name, value.type)
    if isinstance(value, (dict, TypedSeq)) or (isinstance(value, list) and value and isinstance(value[0], dict)):
        return onnx.helper.make_value_info(name, infer_type(value))  # a map, a sequence of maps (ZipMap's output)
    if isinstance(value, list):  # a sequence of tensors: its elements' type, shapes left open (they may differ)
        if not value:
            raise OracleError(f"{name}: an empty sequence needs its element type: give it as harness.values.Typed")
        code = S.onnx_code(S.label_of(np.asarray(value[0]).dtype))
        return onnx.helper.make_value_info(name, onnx.helper.make_sequence_type_proto(onnx.helper.make_tensor_type_proto(code, None)))
    if value is None:
        raise OracleError(f"{name}: an optional value needs its type: give it as harness.values.Typed")
    arr = np.asarray(value)
    code = S.onnx_code(S.label_of(arr.dtype))
    return onnx.helper.make_tensor_value_info(name, code, list(arr.shape))


def _outputs(value: Any) -> list[Any]:
    """A reference's result as a list of outputs: a list or tuple holds the outputs; a sequence
    or optional output comes as :class:`Typed` (a bare list inside is a sequence)."""
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, (Typed, list, dict)) else np.asarray(v) for v in value]
    return [value if isinstance(value, (Typed, dict)) else np.asarray(value)]


def _plain(value: Any) -> Any:
    value = value.value if isinstance(value, Typed) else value
    if isinstance(value, list) and not isinstance(value, TypedSeq):
        return list(value)  # a plain list: what backends and the corpus hold
    return value


def _label(value: Any) -> str | None:
    """The element dtype of a value (a tensor, a sequence's first element), None when it has none."""
    found = leaves(value)
    return S.label_of(np.asarray(found[0]).dtype) if found else None


def _node_model(opv: OpVersion, opset: int, in_infos: list[onnx.ValueInfoProto], in_names: list[str],
                out_infos: list[onnx.ValueInfoProto], attrs: dict[str, Any]) -> onnx.ModelProto:
    node = onnx.helper.make_node(opv.op, in_names, [o.name for o in out_infos], domain=opv.domain,
                                 **{k: v for k, v in attrs.items() if not isinstance(v, onnx.AttributeProto)})
    node.attribute.extend(v for v in attrs.values() if isinstance(v, onnx.AttributeProto))
    graph = onnx.helper.make_graph([node], opv.key.replace(".", "_"), in_infos, out_infos)
    imports = [onnx.helper.make_opsetid("", opset if opv.domain == "" else max(13, schema.newest_opset("") - 1))]
    if opv.domain:
        imports.append(onnx.helper.make_opsetid(opv.domain, opset))
    model = onnx.helper.make_model(graph, opset_imports=imports, producer_name="onnx-harness")
    model.ir_version = schema.ir_for_opset(opset if opv.domain == "" else imports[0].version)
    model.ir_version = max(model.ir_version, schema.ir_for_types(model))
    return model


def _tags(opv: OpVersion, opset: int, dtype: str, inputs: list[Any], name: str) -> dict[str, Any]:
    return {
        "suite": "operators", "op": opv.op, "domain": schema.DOMAINS.get(opv.domain, opv.domain), "since_version": opv.since,
        "opset": opset, "dtypes": sorted({S.label_of(np.asarray(t).dtype) for v in inputs if not isinstance(v, dict) for t in leaves(v)}) or [dtype],
        "dtype": dtype, "example": name, "ops": [opv.op],
    }


def case_id(opv: OpVersion, opset: int, dtype: str, index: str) -> str:
    return f"operators/{opv.key}/opset{opset}/{dtype}/{index}"


def build_case(opv: OpVersion, example: Example, dtype: str, opset: int, index: str) -> Case:
    sch = schema.schema_at(opv.op, opset, opv.domain)
    inputs = list(example.inputs)
    while inputs and inputs[-1] is None:
        inputs.pop()
    in_names = [f"x{i}" if v is not None else "" for i, v in enumerate(inputs)]
    typed = {n: v for n, v in zip(in_names, inputs) if n}
    feeds = {n: _plain(v) for n, v in typed.items()}
    inputs = [reference_value(v) for v in inputs]  # the reference sees values: a list for a sequence, None for an empty optional
    try:
        in_infos = [_value_info(n, v) for n, v in typed.items()]
    except OracleError as exc:
        return oracle_error_case(opv, dtype, opset, index, exc)
    try:
        with np.errstate(all="ignore"):
            # a reference whose output count is the node's alone (Split into equal parts) takes it as ``n_outputs``
            wants_count = example.outputs is not None and "n_outputs" in inspect.signature(opv.reference).parameters
            extra = {"n_outputs": example.outputs} if wants_count else {}
            expected = _outputs(opv.reference(*inputs, **example.attrs, **extra))
        n_out = example.outputs or len(expected)
        out_infos = [_value_info(f"y{i}", v) for i, v in enumerate(expected[:n_out])]  # an output of a dtype ONNX lacks
        expected = [_plain(v) for v in expected[:n_out]]
        with np.errstate(all="ignore"):
            silent = [p.id for p in spec_silent_points(opv.op, opv.since, opv.domain) if p.reached(inputs, example.attrs, expected, opv.since)]
        attrs = {k: _attr_value(sch, k, v) for k, v in example.attrs.items()}
        model = _node_model(opv, opset, in_infos, in_names, out_infos, attrs)
    except Exception as exc:  # the oracle failed on this example: a case the user sees as an error, with the exception
        return oracle_error_case(opv, dtype, opset, index, exc, feeds, in_infos, in_names, example.attrs)
    out_dtype = (_label(expected[0]) or dtype) if expected else dtype
    tags = _tags(opv, opset, dtype, inputs, example.name or index)
    if example.random:
        tags["random"] = opv.op
    if silent:  # the spec does not fix the result here: a difference keeping the invariants is `unspecified`
        tags["spec_silent"] = silent
    return Case(
        id=case_id(opv, opset, dtype, index), suite="operators", model_bytes=model.SerializeToString(),
        data=[DataSet(feeds, expected)],
        tolerance=default_for(out_dtype), tags=tags, check="random" if example.random else "values",
    )


ORACLE_ERROR_INDEX = "oracle-error"


def oracle_error_case(opv: OpVersion, dtype: str, opset: int, index: str, exc: BaseException, feeds: dict[str, Any] | None = None,
                      in_infos: list[onnx.ValueInfoProto] | None = None, in_names: list[str] | None = None,
                      attrs: dict[str, Any] | None = None) -> Case:
    """A case whose oracle failed (the reference raised, the strategy could not draw): no expected
    outputs and ``tags["oracle_error"]``, so the run shows it as an ``error`` of the oracle instead
    of leaving the op-version out. With drawn inputs the model is the node; with none (nothing
    could be drawn) it is a stand-in every backend runs, so the result is the oracle's error."""
    if in_infos is None:
        model = _stand_in_model(opv.key)
    else:
        sch = schema.schema_at(opv.op, opset, opv.domain)
        out_infos = [onnx.helper.make_empty_tensor_value_info(f"y{i}") for i in range(len(sch.outputs))]
        try:
            model_attrs = {k: _attr_value(sch, k, v) for k, v in (attrs or {}).items()}
        except (OracleError, TypeError, ValueError):  # the attributes are what the oracle got wrong: the node goes without them
            model_attrs = {}
        model = _node_model(opv, opset, in_infos, in_names or [], out_infos, model_attrs)
        try:  # output types where the schema can infer them, so a backend can load the model
            inferred = {o.name: o for o in onnx.shape_inference.infer_shapes(model).graph.output}
            for out in model.graph.output:
                if inferred.get(out.name) is not None and inferred[out.name].type.HasField("tensor_type"):
                    out.type.CopyFrom(inferred[out.name].type)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
            pass  # the outputs stay untyped: the case is an oracle error whatever a backend makes of it
    tags = _tags(opv, opset, dtype, list((feeds or {}).values()), index)
    tags["oracle_error"] = f"{type(exc).__name__}: {exc}".strip()
    return Case(id=case_id(opv, opset, dtype, index), suite="operators", model_bytes=model.SerializeToString(),
                data=[DataSet(dict(feeds or {}), None)], tolerance=default_for(dtype), tags=tags)


def _stand_in_model(name: str) -> onnx.ModelProto:
    """One Constant: the model of a case whose oracle failed before any input was drawn."""
    out = onnx.helper.make_tensor_value_info("y0", onnx.TensorProto.FLOAT, [])
    node = onnx.helper.make_node("Constant", [], ["y0"], value=onnx.numpy_helper.from_array(np.array(0, np.float32)))
    graph = onnx.helper.make_graph([node], name.replace(".", "_").replace("-", "_"), [], [out])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)], producer_name="onnx-harness")
    model.ir_version = schema.ir_for_opset(13)
    return model


def _deprecated(model: onnx.ModelProto) -> bool:
    """Every node of ``model`` whose schema at the model's opset is marked deprecated in onnx.defs."""
    opsets = {o.domain or "": o.version for o in model.opset_import}
    found = False
    for node in model.graph.node:
        try:
            sch = onnx.defs.get_schema(node.op_type, opsets.get(node.domain or "", 1), node.domain or "")
        except onnx.defs.SchemaError:
            return False
        found = found or sch.deprecated
    return found


def check_case(case: Case) -> None:
    """Our oracle checks itself: the model is valid and shape inference agrees with the
    reference on output dtypes and shapes."""
    if case.tags.get("oracle_error"):
        raise OracleError(f"{case.id}: the oracle failed: {case.tags['oracle_error']}")
    model = case.load_model()
    try:
        try:
            onnx.checker.check_model(model, full_check=True)
        except onnx.checker.ValidationError as exc:
            # a deprecated op-version (GroupNormalization-18, Scatter-11, Upsample-10) is still
            # what models of its opsets hold; the checker refuses it by name, shape inference checks the rest
            if "is deprecated in domain_version" not in str(exc) or not _deprecated(model):
                raise
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as exc:
        raise OracleError(f"{case.id}: invalid model: {exc}") from exc
    for out, declared, exp in zip(inferred.graph.output, model.graph.output, case.data[0].expected or []):
        if isinstance(exp, (dict, TypedSeq)) or (isinstance(exp, list) and any(isinstance(e, dict) for e in exp)):
            # a map or a sequence of maps: its type as a whole
            if type_text(out.type) != type_text(infer_type(exp)):
                raise OracleError(f"{case.id}: reference output {out.name} is {type_text(infer_type(exp))}, the schema says {type_text(out.type)}")
            continue
        if out.type.WhichOneof("value") != "tensor_type" or isinstance(exp, list) or exp is None:
            # a sequence or optional: the kind and element type the schema infers are the ones the reference declared
            if type_text(out.type) != type_text(declared.type):
                raise OracleError(f"{case.id}: reference output {out.name} is {type_text(declared.type)}, the schema says {type_text(out.type)}")
            want = innermost_elem(out.type)
            for leaf in leaves(exp):
                got = S.onnx_code(S.label_of(np.asarray(leaf).dtype))
                if want != got:
                    raise OracleError(f"{case.id}: an element of reference output {out.name} is {S.label_of(got)}, the schema says {S.label_of(want)}")
            continue
        want = out.type.tensor_type.elem_type
        got = S.onnx_code(S.label_of(np.asarray(exp).dtype))
        if want != got:
            raise OracleError(f"{case.id}: reference output {out.name} is {S.label_of(got)}, the schema says {S.label_of(want)}")


def iter_op_versions(ctx: Any) -> Iterator[tuple[OpVersion, int]]:
    """(op-version, opset to stamp at) for every complete registration, honouring --opset and
    the ops filter."""
    ops = ctx.extra.get("ops") if ctx else None
    for (domain, op, since), opv in sorted(load_all(allow_broken=True).items()):
        if not opv.complete or (ops and op not in ops):
            continue
        if ctx is not None and ctx.opset is not None:
            if domain != "" or ctx.opset not in schema.opsets_in_force(op, since, domain):
                continue
            yield opv, ctx.opset
        else:
            yield opv, since


def draw_count(opv: OpVersion, n: int) -> int:
    """Examples to draw per dtype: the run's ``n`` times the op-version's share, at least one."""
    return 0 if n <= 0 else max(1, math.ceil(n * opv.draw_share))


def build_op_version(opv: OpVersion, opset: int, n: int, seed: int) -> list[Case]:
    """Every case of one op-version at one opset: edge examples, then ``n`` drawn per dtype.
    Where the oracle fails (edges or strategy raise, Hypothesis cannot draw, the reference
    raises) the case is an oracle-error case: the failure is a result, never a gap."""
    cases = []
    n = draw_count(opv, n)
    for dtype in dtypes_for(opv, opset):
        try:
            edges = opv.edges(dtype, opset) if opv.edges else []
            drawn = draw_examples(opv, dtype, opset, n, seed)
        except Exception as exc:  # the op's own strategy or edges (Unsatisfiable, a bug): shown as one error case
            cases.append(oracle_error_case(opv, dtype, opset, ORACLE_ERROR_INDEX, exc))
            continue
        for k, ex in enumerate(edges):
            cases.append(build_case(opv, ex, dtype, opset, ex.name or f"edge{k}"))
        for k, ex in enumerate(drawn):
            cases.append(build_case(opv, ex, dtype, opset, str(k)))
    return cases


def case_ids(opv: OpVersion, opset: int, n: int, names: EdgeNames | None = None) -> Iterator[str]:
    """Every id ``build_op_version`` can give this op-version, without drawing (a superset: a
    draw can give fewer than ``n``): what ``-k`` is tested against before anything is drawn.
    The ids that need the edge examples' names (costly for some ops; ``names`` keeps them from
    one run to the next) come last."""
    dtypes = dtypes_for(opv, opset)
    for dtype in dtypes:
        head = case_id(opv, opset, dtype, "")
        yield head + ORACLE_ERROR_INDEX
        yield from map(head.__add__, map(str, range(n)))
    for dtype in dtypes:
        if opv.edges:
            found = names.names(opv, dtype, opset) if names is not None else _edge_names(opv.edges, dtype, opset)
            yield from map(case_id(opv, opset, dtype, "").__add__, found or ())


class EdgeNames:
    """The names of op-versions' edge examples, kept in the corpus (``edge-names.json``) under each
    op-version's fingerprint, the key its frozen cases are kept under: selecting by ``-k`` needs
    every op-version's case ids, and some ops build costly edge examples (forests of 300 trees)
    only to learn their names. Names whose examples failed to build are not kept."""

    def __init__(self, file: Path) -> None:
        self.file, self.added = file, {}
        self.known = self._read()

    def _read(self) -> dict[str, Any]:
        try:
            known = json.loads(self.file.read_text())
        except (OSError, ValueError):  # none yet, unreadable or cut short: worked out again (save() says a failed write)
            return {}
        return known if isinstance(known, dict) else {}

    def names(self, opv: OpVersion, dtype: str, opset: int) -> tuple[str, ...] | None:
        key, fingerprint = f"{opv.key}/{dtype}/{opset}", _fingerprint(opv)
        kept = self.known.get(key)
        if isinstance(kept, list) and len(kept) == 2 and kept[0] == fingerprint:
            return tuple(kept[1])
        found = _edge_names(opv.edges, dtype, opset)
        if found is not None:
            self.known[key] = self.added[key] = [fingerprint, list(found)]
        return found

    def save(self, say: Any = print) -> None:
        """Write the names worked out in this run, beside those another process wrote meanwhile
        (a corpus that cannot be written to keeps none, said, and the run goes on: they are a cache)."""
        if not self.added:
            return
        known = {**self._read(), **self.added}
        tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(known, sort_keys=True))
            os.replace(tmp, self.file)
        except OSError as exc:
            say(f"edge example names not kept in {self.file} ({exc}): the next -k selection works them out again")
        self.added = {}


# a -k pattern searched in all of an op-version's ids at once, one id a line, finds a match
# whenever one id alone has one, unless it looks past an id's ends (\A, \Z, a negative lookaround)
_PER_ID = re.compile(r"\\[AZ]|\(\?<?!")


def may_match(pattern: re.Pattern, opv: OpVersion, opset: int, n: int, names: EdgeNames | None = None) -> bool:
    """Whether ``pattern`` (``-k``, searched in each case id) can match an id of this
    op-version: one search over every id, one a line (a match across two lines only draws an
    op-version whose cases the pattern then leaves out), or id by id where a line would not do."""
    ids = case_ids(opv, opset, n, names)
    if _PER_ID.search(pattern.pattern) or isinstance(pattern.pattern, bytes):
        return any(pattern.search(i) for i in ids)
    return _multiline(pattern).search("\n".join(ids)) is not None


@functools.lru_cache(maxsize=16)
def _multiline(pattern: re.Pattern) -> re.Pattern:
    return re.compile(pattern.pattern, pattern.flags | re.MULTILINE)


@functools.lru_cache(maxsize=None)
def _edge_names(edges: Any, dtype: str, opset: int) -> tuple[str, ...] | None:
    """None where the edge examples fail to build (``build_op_version`` then gives this dtype
    its oracle-error case alone)."""
    try:
        return tuple(ex.name or f"edge{k}" for k, ex in enumerate(edges(dtype, opset)))
    except Exception:  # shown as that oracle-error case when the op-version is drawn
        return None


#: fingerprints by operator module, and "" for what all share: worked out once per selection
_FINGERPRINTS: dict[str, str] = {}


def _fingerprint(opv: OpVersion) -> str:
    """What a frozen op-version depends on: its module and the operator modules it draws on
    (CastLike uses cast.py), then what every op-version shares: the shared helpers, this builder,
    the strategies, onnx and the harness."""
    import harness

    if "" not in _FINGERPRINTS:
        _FINGERPRINTS[""] = digest([Path(__file__), Path(S.__file__), *registry.source_files(shared_only=True)],
                                   onnx.__version__, harness.__version__)
    if opv.module not in _FINGERPRINTS:
        module = sys.modules[opv.module]
        used = {opv.module} | {getattr(v, "__module__", None) or getattr(v, "__name__", "") for v in vars(module).values()}
        sources = sorted(Path(sys.modules[m].__file__) for m in used if m and registry.is_operator_module(m) and m in sys.modules)
        _FINGERPRINTS[opv.module] = digest(sources, _FINGERPRINTS[""])
    return _FINGERPRINTS[opv.module]


def frozen_file(opv: OpVersion, opset: int, root: Path) -> Path:
    return root / f"{opv.key}-opset{opset}.pickle"


def frozen_op_version(opv: OpVersion, opset: int, n: int, seed: int, root: Path) -> list[Case]:
    """The cases of an op-version, drawn once and then read back from ``root``, so that every
    backend, worker and later run sees the very same inputs (a failure is replayable by id).
    A file is rebuilt when the op's module, the shared helpers or the installed onnx change."""
    return load_or_build(frozen_file(opv, opset, root), _fingerprint(opv), lambda: build_op_version(opv, opset, n, seed))


#: op-versions to draw before a selection draws them in several processes (fewer take seconds:
#: not worth starting processes that import every operator module)
PARALLEL_FROM = 16
#: seconds between two progress lines of a parallel draw
DRAW_PROGRESS_S = 15.0


def operator_cases(ctx: Any) -> Iterator[Case]:
    """Every op-version's cases; with ``ctx.pattern`` (``-k``) only the op-versions one of whose
    case ids it can match are drawn (the others' frozen files are neither read nor written).
    Op-versions not yet frozen are drawn first, in ``ctx.jobs`` processes when there are many
    (:func:`draw_frozen`)."""
    n = ctx.examples if ctx.examples is not None else int(os.environ.get("ONNX_HARNESS_EXAMPLES", DEFAULT_EXAMPLES))
    seed = ctx.seed if ctx.seed is not None else DEFAULT_SEED
    root = Path(ctx.corpus) / "operators" / f"seed{seed}-examples{n}"
    pattern = ctx.pattern
    say = getattr(ctx, "say", print)
    _FINGERPRINTS.clear()  # the sources are read again for each selection
    names = EdgeNames(Path(ctx.corpus) / "operators" / "edge-names.json") if pattern is not None else None
    for module, error in sorted(broken_modules().items()):
        yield module_error_case(module, error)
    try:
        chosen = [(opv, opset) for opv, opset in iter_op_versions(ctx) if pattern is None or may_match(pattern, opv, opset, n, names)]
    finally:
        if names is not None:
            names.save(say)
    frozen = {(opv.key, opset): load_frozen(frozen_file(opv, opset, root), _fingerprint(opv)) for opv, opset in chosen}
    todo = [(opv, opset) for opv, opset in chosen if frozen[opv.key, opset] is None]
    jobs = getattr(ctx, "jobs", 1) or 1
    if len(todo) >= PARALLEL_FROM and jobs > 1:
        draw_frozen(todo, n, seed, root, jobs, say)
    for opv, opset in chosen:
        held = frozen[opv.key, opset]
        yield from held if held is not None else frozen_op_version(opv, opset, n, seed, root)


def draw_frozen(todo: list[tuple[OpVersion, int]], n: int, seed: int, root: Path, jobs: int, say: Any) -> None:
    """Draw and freeze the cases of ``todo``'s op-versions in ``jobs`` processes, saying how far it
    got every ``every_s`` seconds (a first run of the whole suite draws for minutes). A draw is
    seeded by the op-version alone, so a process draws what any other would (and a file under
    the same key is what one process would have written). A process's failure ends the
    selection with its error; the op-versions drawn before it stay frozen."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from .. import forkserver

    say(f"drawing the cases of {len(todo)} op-versions in {jobs} processes, once: later runs read them from {root}")
    t0 = last = time.monotonic()
    # Ctrl-C is the selection's to handle: a drawing process finishes the op-version it draws (its
    # file written whole) and goes, as the selection gives up waiting for it
    pool = ProcessPoolExecutor(jobs, mp_context=forkserver.context(), initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:
        pending = {pool.submit(_draw_one, (opv.domain, opv.op, opv.since), _fingerprint(opv), opset, n, seed, str(root)) for opv, opset in todo}
        drawn = cases = 0
        while pending:
            done, pending = wait(pending, timeout=DRAW_PROGRESS_S, return_when=FIRST_COMPLETED)
            for future in done:
                cases += future.result()  # a failure in a process is raised here, as it would be in one
                drawn += 1
            if pending and time.monotonic() - last >= DRAW_PROGRESS_S:
                last = time.monotonic()
                say(f"drawn {drawn} of {len(todo)} op-versions ({cases:,} cases, {last - t0:.0f} s)")
        say(f"drew {cases:,} cases of {len(todo)} op-versions in {time.monotonic() - t0:.0f} s")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a failure or Ctrl-C does not wait for the other draws


def _draw_one(key: tuple[str, str, int], fingerprint: str, opset: int, n: int, seed: int, root: str) -> int:
    """In a drawing process: draw one op-version's cases and freeze them under the fingerprint the
    selection worked out (so that the file it then reads is the one drawn here); the case count."""
    opv = load_all(allow_broken=True)[key]
    cases = build_op_version(opv, opset, n, seed)
    write_frozen(frozen_file(opv, opset, Path(root)), fingerprint, cases)
    return len(cases)


def module_error_case(module: str, error: str) -> Case:
    """An operator module that failed to import registers nothing: its op-versions are unknown,
    so the module itself is the case, an oracle error the user sees."""
    model = _stand_in_model(module)
    tags = {"suite": "operators", "module": module, "oracle_error": error, "ops": []}
    return Case(id=f"operators/{module}/{ORACLE_ERROR_INDEX}", suite="operators", model_bytes=model.SerializeToString(),
                data=[DataSet({}, None)], tags=tags)
