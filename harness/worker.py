"""Running one case on one backend, as a worker process does it.

Load the case, re-stamp the model (opset negotiation), ``prepare``, ``run`` every data set, time
it and hand the outputs to the comparator, telling it which outputs are random by the spec
(``random_outputs``). A case without an oracle (no data sets, no expected outputs, an oracle
that failed) is an ``error`` before the backend runs, never a pass. A mismatch on a case whose
inputs reach spec-silent points (``tags["spec_silent"]``) is judged again against the points'
invariants (``unspecified`` or ``mismatch``). Every exception becomes an outcome with its
message; nothing here formats or stores.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import onnx

from .backends.base import Backend
from .case import Case, CorpusError, ModelIntakeError, verify_folder
from .compare import NOT_CHECKED, PASS, UNSPECIFIED, Comparator, RandomOutput
from .intake import Limits, check_model
from .schema import RANDOM_OPS, canonical_domain, iter_nodes, negotiate, opset_of, stamp_at
from .evidence import summary as evidence_summary
from .timing import TimingPolicy, measure
from .tolerances import effective_tolerance, tolerance_source

OUTCOMES = ("pass", "unspecified", "mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout",
            "export-failed", "xfail", "xpass", "skip")
#: outcomes that say the backend could not load the case (an exporter's failure is not the backend's):
#: they leave the pass-rate denominator, judged on the outcome before expectations
NOT_LOADABLE = ("rejected", "export-failed")
FAILURES = ("mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout", "export-failed")
#: ``unspecified`` is neither a pass nor a failure: the backend differs from our choice only where
#: the spec is silent and keeps every invariant (counted apart, outside the conformance rate)


@dataclass
class Result:
    case_id: str
    backend: str
    outcome: str
    message: str = ""
    verdict: dict[str, Any] | None = None
    prepare_s: float | None = None
    run_s: float | None = None
    run_median_s: float | None = None
    run_p90_s: float | None = None
    #: calibrated timing (harness.timing.Timing.to_dict) with ``--timing``, and the case's
    #: ``peak_rss`` (bytes, the worker's high-water mark over the case) always
    timing: dict[str, Any] = field(default_factory=dict)
    restamp: dict[str, Any] = field(default_factory=dict)
    #: the outcome before expectations were applied, and the expectation's reason
    raw_outcome: str = ""
    reason: str = ""
    bundle: str = ""
    tags: dict[str, Any] = field(default_factory=dict)
    #: the outputs the backend gave on data set ``actual_set`` where it did not pass (the repro
    #: bundle keeps them beside the expected ones); not stored in the results store
    actual: list[Any] | None = field(default=None, repr=False, compare=False)
    actual_set: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["actual"], out["actual_set"]
        return out


@dataclass
class ExecOptions:
    restamp: bool = True
    #: stamp every model at this ai.onnx opset (cases whose op-versions differ there are skipped)
    opset: int | None = None
    limits: Limits = field(default_factory=Limits)
    #: at least this many timed samples of the first data set (``--repeat``; calibrated as ``timing``)
    repeat: int = 0
    #: calibrated timing of each passing case (``--timing``); None and ``repeat`` 0: none
    timing: TimingPolicy | None = None

    def timing_policy(self) -> TimingPolicy | None:
        if self.timing is None and not self.repeat:
            return None
        policy = self.timing or TimingPolicy()
        return replace(policy, min_samples=max(policy.min_samples, self.repeat)) if self.repeat else policy


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {text}"[:2000] if text else name


def random_outputs(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[RandomOutput | None] | None:
    """How each graph output is judged: None by value; a ``RandomOutput`` for an output of a
    random op (by that op's spec) or one that depends on a random op through other nodes. None
    when every output is deterministic. Dropout is random only in training mode with a ratio
    above 0 (``training_mode`` true from opset 12, ``is_test`` 0 before 7; from 7 to 11 it has
    no training mode): otherwise it is the identity with an all-true mask, compared by value."""
    graph = model.graph
    if not any((n.op_type in RANDOM_OPS or n.op_type == "Dropout") and n.domain in ("", "ai.onnx") for n in iter_nodes(graph)):
        return None  # the common case, decided without reading initializers or attributes
    known: dict[str, Any] = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    known.update(feeds)
    opset = opset_of(model, "") or 1
    direct: dict[str, RandomOutput] = {}
    tainted: dict[str, str] = {}  # tensor -> the random op it comes from
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            for attr in node.attribute:
                if attr.name == "value":
                    known[node.output[0]] = onnx.numpy_helper.to_array(attr.t)
        spec = _random_node(node, known, opset)
        if spec is not None:
            for k, out in enumerate(node.output[:2] if node.op_type == "Dropout" else node.output[:1]):
                if out:
                    direct[out] = replace(spec, output=k)
                    tainted[out] = node.op_type
            continue
        used = list(node.input) + [i for g in _subgraphs(node) for n in iter_nodes(g) for i in n.input]
        source = next((tainted[i] for i in used if i in tainted), None)
        if source is None:
            source = next((n.op_type for g in _subgraphs(node) for n in iter_nodes(g) if _random_node(n, known, opset)), None)
        if source is not None:
            for out in node.output:
                tainted[out] = source
    names = [o.name for o in graph.output]
    specs: list[RandomOutput | None] = []
    for name in names:
        if name in direct:
            specs.append(direct[name])
        elif name in tainted:
            specs.append(RandomOutput("", via=tainted[name]))
        else:
            specs.append(None)
    for node in graph.node:  # a Dropout whose data and mask are both graph outputs: check them together
        if node.op_type == "Dropout" and len(node.output) > 1 and node.output[0] in direct and node.output[1] in names:
            for spec, name in zip(specs, names):
                if name == node.output[0] and spec is not None:
                    spec.partner = names.index(node.output[1])
    return specs if any(s is not None for s in specs) else None


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    return [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH] + \
        [g for a in node.attribute if a.type == onnx.AttributeProto.GRAPHS for g in a.graphs]


def _random_node(node: onnx.NodeProto, known: dict[str, Any], opset: int) -> RandomOutput | None:
    """The spec of a random node, or None when this node is deterministic."""
    if node.domain not in ("", "ai.onnx"):
        return None
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    inputs = [known.get(i) if i else None for i in node.input]
    if node.op_type in RANDOM_OPS:
        return RandomOutput(node.op_type, attrs, inputs)
    if node.op_type != "Dropout":
        return None
    since = onnx.defs.get_schema("Dropout", opset).since_version
    if since < 7:
        training, ratio = attrs.get("is_test", 0) == 0, float(attrs.get("ratio", 0.5))
    elif since < 12:
        return None
    else:
        mode = node.input[2] if len(node.input) > 2 else ""
        training = bool(np.asarray(known[mode]).item()) if mode in known else bool(mode)  # computed in the graph: random
        ratio_name = node.input[1] if len(node.input) > 1 else ""
        ratio = 0.5 if not ratio_name else (float(np.asarray(known[ratio_name]).item()) if ratio_name in known else None)
    if not training or ratio == 0:
        return None  # the identity, and an all-true mask
    return RandomOutput("Dropout", attrs, inputs[:1], ratio=ratio)


class Sessions:
    """A worker's sessions of recent in-memory models, so that cases differing only in their
    inputs (one op-version's draws with the same shapes and attributes) share one model and one
    session: the last ``size`` by (backend, model bytes, how they were stamped), each held with
    the model as checked at intake and as stamped (:class:`Prepared`: a later case of the same
    bytes skips both). Models holding a random op or a Dropout are not shared (a session's
    generator state would carry from one case to the next), nor models above ``largest`` bytes."""

    def __init__(self, size: int = 16, largest: int = 1 << 20) -> None:
        from collections import OrderedDict

        self.size, self.largest = size, largest
        self.held: OrderedDict[tuple, Prepared] = OrderedDict()

    def key(self, backend: Backend, case: Case, options: ExecOptions) -> tuple | None:
        if case.model_bytes is None or len(case.model_bytes) > self.largest or not backend.reusable_sessions:
            return None
        return backend.name, case.model_bytes, options.restamp and not case.tags.get("keep_opset"), options.opset

    def get(self, key: tuple | None) -> Prepared | None:
        if key is None or key not in self.held:
            return None
        self.held.move_to_end(key)
        return self.held[key]

    def put(self, key: tuple | None, prepared: Prepared) -> None:
        if key is None or any((n.op_type in RANDOM_OPS or n.op_type == "Dropout") for n in iter_nodes(prepared.model.graph)):
            return
        self.held[key] = prepared
        while len(self.held) > self.size:
            self.held.popitem(last=False)


@dataclass(frozen=True)
class Prepared:
    """A model past intake, as loaded (its data sets are read against it), as stamped for the
    backend, what the stamping changed, and the backend's session of it."""

    model: onnx.ModelProto
    stamped: onnx.ModelProto
    restamp: dict[str, Any]
    session: Any


def model_as_run(case: Case, model: onnx.ModelProto, options: ExecOptions) -> tuple[onnx.ModelProto | None, dict[str, Any], str]:
    """The model as a backend runs it, and what its stamping changed: at ``options.opset``
    (None and why not, when an op-version differs there), else re-stamped by opset negotiation
    (unless the run or the case keeps the opset)."""
    if options.opset is not None:
        original = model.ir_version, [(i.domain, i.version) for i in model.opset_import]
        stamped, why = stamp_at(model, options.opset)
        if stamped is None:
            return None, {}, why
        changed = (stamped.ir_version, [(i.domain, i.version) for i in stamped.opset_import]) != original
        return stamped, {"opset": [dict(original[1]).get("", 0), options.opset]} if changed else {}, ""
    if options.restamp and not case.tags.get("keep_opset"):  # a repro bundle of a run without re-stamping
        stamped, changes = negotiate(model)
        return stamped, changes, ""
    return model, {}, ""


def execute_case(backend: Backend, case: Case, options: ExecOptions | None = None, sessions: Sessions | None = None) -> Result:
    """Run ``case`` on ``backend``; with ``sessions``, a session an earlier case of the same
    model left there is used instead of preparing the model again (``timing["session"]`` says so)."""
    options = options or ExecOptions()
    result = Result(case.id, backend.name, "pass", tags=dict(case.tags))
    if case.tags.get("export_error"):  # the exporter failed: a result about the exporter, no model to run
        return _fail(result, "export-failed", f"export failed: {case.tags['export_error']}")
    # --model cases whose oracle is a backend (harness/suites/user_models.py): an oracle that
    # failed is every backend's verdict; the oracle backend itself is only compared with itself
    if case.tags.get("oracle_error"):
        return _fail(result, "error", f"oracle error: {case.tags['oracle_error']}")
    if case.tags.get("oracle") == backend.name:
        return _fail(result, "skip", "self-check: expected values computed by this backend (use --oracle OTHER)")
    try:
        verify_folder(case)
    except CorpusError as exc:  # not a verdict on the backend: the run stops on it (harness.run)
        result.tags["corpus_mismatch"] = True
        return _fail(result, "error", str(exc))
    key = sessions.key(backend, case, options) if sessions is not None else None
    held = sessions.get(key) if sessions is not None else None  # an earlier case's model of the same bytes
    try:
        model = held.model if held else case.load_model()
        if not held:
            check_model(model, options.limits, case.model_size())
        data = case.load_data(model)
    except ModelIntakeError as exc:
        return _fail(result, "rejected", f"intake: {exc}")
    except Exception as exc:  # a case that cannot be read is the case's fault, said plainly
        return _fail(result, "error", f"cannot load case: {_one_line(exc)}")
    missing = _no_oracle(case, data, model)
    if missing:
        return _fail(result, "error", missing)
    if held:
        model, result.restamp, session = held.stamped, dict(held.restamp), held.session
        result.timing["session"] = "shared"  # prepared for an earlier case of the same model
    else:
        stamped, result.restamp, why = model_as_run(case, model, options)
        if stamped is None:
            return _fail(result, "skip", f"not applicable at opset {options.opset}: {why}")
        t0 = time.perf_counter()
        try:
            session = backend.prepare(stamped)
        except Exception as exc:
            result.prepare_s = time.perf_counter() - t0
            if data:  # what the model would have been fed: shapes and dtypes (the bundle has the values)
                result.verdict = {"evidence": evidence_summary(data[0].inputs, data[0].expected, None, values=0)}
            return _fail(result, backend.classify_error(exc, "prepare"), _one_line(exc), exc)
        result.prepare_s = time.perf_counter() - t0
        if sessions is not None:
            sessions.put(key, Prepared(model, stamped, dict(result.restamp), session))
        model = stamped
    if options.opset is not None:
        result.tags["opset"] = options.opset

    comparator = Comparator()
    tolerance = effective_tolerance(case)
    times = []
    for n, ds in enumerate(data):
        t0 = time.perf_counter()
        try:
            outputs = session.run(ds.inputs)
        except Exception as exc:
            result.run_s = sum(times) or None
            result.verdict = {"evidence": evidence_summary(ds.inputs, ds.expected, None)}
            return _fail(result, backend.classify_error(exc, "run"), f"data set {n}: {_one_line(exc)}", exc)
        times.append(time.perf_counter() - t0)
        verdict = comparator.compare(ds.expected, list(outputs), tolerance, random_outputs(model, ds.inputs))
        if case.tags.get("spec_silent"):
            verdict = _spec_silent(comparator, verdict, case, model, ds, list(outputs), tolerance)
        soft = verdict.outcome in (UNSPECIFIED, NOT_CHECKED)  # neither a pass nor a failure: a later data set may still fail
        if verdict.outcome != PASS and (not soft or result.outcome == PASS):
            result.outcome = verdict.outcome
            result.message = f"data set {n}: {verdict.message}" if len(data) > 1 else verdict.message
            result.verdict = verdict.to_dict()
            # what the report shows of it: inputs, both outputs, the tolerance and its source
            result.verdict.update(evidence=evidence_summary(ds.inputs, ds.expected, list(outputs)), tolerance=tolerance_source(case))
            result.actual, result.actual_set = [_recordable(o) for o in outputs], n
            if not soft:
                break
        if result.verdict is None:
            result.verdict = verdict.to_dict()
        if verdict.message and not result.message:  # what a pass did not check (random outputs)
            result.message = verdict.message
    result.run_s = sum(times) if times else None
    policy = options.timing_policy()
    if policy is not None and data and result.outcome == PASS:
        _time_repeats(session, data[0].inputs, policy, result)
    return result


def _recordable(value: Any) -> Any:
    """An output as a bundle's ``actual/`` can hold it (and the worker can send it): arrays and
    numbers, and sequences, maps and optionals of them; anything else a runtime hands back (ONNX
    Runtime's SparseTensor of a sparse Constant) is None, which the bundle lists as not recorded."""
    if value is None or isinstance(value, (np.ndarray, np.generic, int, float, bool, str, bytes)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_recordable(v) for v in value]
        return None if any(i is None for i in items) else items
    if isinstance(value, dict):
        items = {k: _recordable(v) for k, v in value.items()}
        return None if any(i is None for i in items.values()) else items
    return None


def _spec_silent(comparator: Comparator, verdict: Any, case: Case, model: onnx.ModelProto, ds: Any, outputs: list[Any],
                 tolerance: Any) -> Any:
    """A mismatch on a case whose inputs reach spec-silent points (``tags["spec_silent"]``, set
    by the operators suite) is judged again against the points' invariants. The points are the
    oracle's data, looked up in the registry (the judge consults the oracle side, never the
    reverse)."""
    if verdict.outcome != "mismatch" or len(model.graph.node) != 1:
        return verdict
    from .registry import REGISTRY, spec_silent_point

    node = model.graph.node[0]
    constants = {t.name: t for t in model.graph.initializer}  # an input the model holds (a generated graph's constant)

    def value(name: str) -> Any:
        if name in ds.inputs:
            return ds.inputs[name]
        return onnx.numpy_helper.to_array(constants[name]) if name in constants else None

    inputs = [value(name) if name else None for name in node.input]
    attrs = {}
    for a in node.attribute:
        value = onnx.helper.get_attribute_value(a)
        attrs[a.name] = value.decode() if isinstance(value, bytes) else value
    points = [spec_silent_point(p) for p in case.tags["spec_silent"]]
    since = int(case.tags.get("since_version") or 0)
    entry = REGISTRY.get((canonical_domain(node.domain), node.op_type, since))  # ai.onnx.ml ops' references too
    return comparator.spec_silent(verdict, points, inputs, attrs, ds.expected, outputs, tolerance, since,
                                  entry.reference if entry else None)


def _no_oracle(case: Case, data: list, model: onnx.ModelProto) -> str:
    """Why this case has nothing to compare with ("" when every data set has expected outputs):
    such a case is an error, never a pass (an oracle failure is named as such before this)."""
    if not data:
        return "no oracle: the case has no data sets, nothing to compare"
    for n, ds in enumerate(data):
        if ds.expected is None or (not ds.expected and len(model.graph.output)):
            return f"no oracle: data set {n} has no expected outputs"
    return ""


def _time_repeats(session: Any, feeds: dict[str, Any], policy: TimingPolicy, result: Result) -> None:
    try:
        timing = measure(lambda: session.run(feeds), policy, getattr(session, "clock", None) or time.perf_counter)
    except Exception as exc:  # the verdict already stands; say why there is no timing
        result.message = f"{result.message} [timed repeats failed: {_one_line(exc)}]".strip()
        result.timing["error"] = _one_line(exc)
        return
    result.run_median_s = timing.median_s
    result.run_p90_s = timing.p90_s
    result.timing.update(timing.to_dict())


def _fail(result: Result, outcome: str, message: str, exc: BaseException | None = None) -> Result:
    result.outcome = outcome
    result.message = message
    if exc is not None and outcome == "error":
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            last = frames[-1]
            result.message += f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return result
