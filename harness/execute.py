"""Running one case on one backend, as a worker process does it.

Load the case, re-stamp the model (opset negotiation), ``prepare``, ``run`` every data set, time
it and hand the outputs to the comparator. Every exception becomes an outcome with its message;
nothing here formats or stores.
"""

from __future__ import annotations

import statistics
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import onnx

from .backends.base import Backend
from .case import Case, ModelIntakeError
from .compare import PASS, Comparator
from .intake import Limits, check_model
from .schema import iter_nodes, negotiate, stamp_at
from .tolerances import effective_tolerance

OUTCOMES = ("pass", "mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout",
            "export-failed", "xfail", "xpass", "skip")
FAILURES = ("mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout", "export-failed")


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
    restamp: dict[str, Any] = field(default_factory=dict)
    #: the outcome before expectations were applied, and the expectation's reason
    raw_outcome: str = ""
    reason: str = ""
    bundle: str = ""
    tags: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExecOptions:
    restamp: bool = True
    #: stamp every model at this ai.onnx opset (cases whose op-versions differ there are skipped)
    opset: int | None = None
    limits: Limits = field(default_factory=Limits)
    #: extra timed runs of the first data set (median and p90 are reported)
    repeat: int = 0
    warmup: int = 1


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {text}"[:2000] if text else name


def _random_attrs(model: onnx.ModelProto, op: str) -> dict[str, Any]:
    for node in iter_nodes(model.graph):
        if node.op_type == op:
            return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return {}


def execute_case(backend: Backend, case: Case, options: ExecOptions | None = None) -> Result:
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
        model = case.load_model()
        check_model(model, options.limits, case.model_size())
        data = case.load_data(model)
    except ModelIntakeError as exc:
        return _fail(result, "rejected", f"intake: {exc}")
    except Exception as exc:  # a case that cannot be read is the case's fault, said plainly
        return _fail(result, "error", f"cannot load case: {_one_line(exc)}")
    if options.opset is not None:
        original = model.ir_version, [(i.domain, i.version) for i in model.opset_import]
        stamped, why = stamp_at(model, options.opset)
        if stamped is None:
            return _fail(result, "skip", f"not applicable at opset {options.opset}: {why}")
        model = stamped
        if (model.ir_version, [(i.domain, i.version) for i in model.opset_import]) != original:
            result.restamp = {"opset": [dict(original[1]).get("", 0), options.opset]}
        result.tags["opset"] = options.opset
    elif options.restamp and not case.tags.get("keep_opset"):  # a repro bundle of a run without re-stamping
        model, result.restamp = negotiate(model)

    t0 = time.perf_counter()
    try:
        session = backend.prepare(model)
    except Exception as exc:
        result.prepare_s = time.perf_counter() - t0
        return _fail(result, backend.classify_error(exc, "prepare"), _one_line(exc), exc)
    result.prepare_s = time.perf_counter() - t0

    comparator = Comparator()
    tolerance = effective_tolerance(case)
    random_op = case.tags.get("random") if case.check == "random" else None
    attrs = _random_attrs(model, random_op) if random_op else None
    times = []
    for n, ds in enumerate(data):
        t0 = time.perf_counter()
        try:
            outputs = session.run(ds.inputs)
        except Exception as exc:
            result.run_s = sum(times) or None
            return _fail(result, backend.classify_error(exc, "run"), f"data set {n}: {_one_line(exc)}", exc)
        times.append(time.perf_counter() - t0)
        if ds.expected is None:
            if case.tags.get("oracle_error"):  # a case with no oracle can never pass
                return _fail(result, "error", f"no oracle: {case.tags['oracle_error']}")
            continue
        verdict = comparator.compare(ds.expected, list(outputs), tolerance, random_op, attrs)
        if verdict.outcome != PASS:
            result.outcome = verdict.outcome
            result.message = f"data set {n}: {verdict.message}" if len(data) > 1 else verdict.message
            result.verdict = verdict.to_dict()
            break
        if result.verdict is None:
            result.verdict = verdict.to_dict()
    result.run_s = sum(times) if times else None
    if options.repeat and data and result.outcome == PASS:
        _time_repeats(session, data[0].inputs, options, result)
    return result


def _time_repeats(session: Any, feeds: dict[str, Any], options: ExecOptions, result: Result) -> None:
    try:
        for _ in range(options.warmup):
            session.run(feeds)
        samples = []
        for _ in range(options.repeat):
            t0 = time.perf_counter()
            session.run(feeds)
            samples.append(time.perf_counter() - t0)
    except Exception:  # the verdict already stands; timing is best effort
        return
    result.run_median_s = statistics.median(samples)
    result.run_p90_s = float(np.percentile(samples, 90))


def _fail(result: Result, outcome: str, message: str, exc: BaseException | None = None) -> Result:
    result.outcome = outcome
    result.message = message
    if exc is not None and outcome == "error":
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            last = frames[-1]
            result.message += f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return result
