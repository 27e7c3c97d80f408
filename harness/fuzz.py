"""``onnx-harness fuzz``: property-based differential testing with generated graphs.

Each example is a graph drawn by :mod:`harness.suites.generated`; the property runs it on every
selected backend and compares each output with the composed reference under that output's
tolerance (and, for ONNX Runtime, the optimized session with the unoptimized one). A
disagreement makes the property fail, Hypothesis shrinks the graph (deleting node specs,
moving knobs and references to 0), and the smallest failing graph becomes a *finding*: stored
as a result of suite ``generated``, with a repro bundle. Findings are deduplicated by
(sorted op pattern of the minimal graph, backend, symptom), so one root cause gives one report;
a later graph that fails the same way on a backend and contains a known finding's ops is
counted as a duplicate without shrinking again.

A campaign is a series of Hypothesis runs with fresh seeds until the wall-clock budget ends;
each run ends at its first disagreement (after shrinking it). Ctrl-C keeps every finding. Any
other exception is a bug of the harness: it ends the campaign with its traceback (the store
marks the run ``failed``), never a report of "0 findings".

Backends run in a child process by default (``--in-process`` to share the fuzzer's process):
a crash or a hang of a runtime is then a finding like any other instead of the end of the
campaign.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import forkserver

if TYPE_CHECKING:
    import numpy as np

    from .case import Tolerance
    from .runner import BackendSpec
    from .suites import generated as G


class _Lazy:
    """A module imported on first use: ``harness.cli`` registers this subcommand at every
    start, and must not pay for onnx, Hypothesis and the operator registry then."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


if not TYPE_CHECKING:
    G = _Lazy("harness.suites.generated")
    np = _Lazy("numpy")

#: outcome priority when one graph fails several ways (the first is shrunk first)
_PRIORITY = ("crash", "timeout", "error", "wrong-shape", "wrong-dtype", "mismatch", "rejected", "unsupported")
SUITE = "generated"


# =============================================================================================
# executing a model on a backend: in this process or in a child process
# =============================================================================================
@dataclass
class Outcome:
    outputs: list[Any] | None
    outcome: str = "pass"
    message: str = ""
    seconds: float = 0.0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:1500] if text else type(exc).__name__


def _run_on(backend: Any, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
    import onnx

    t0 = time.perf_counter()
    model = onnx.load_model_from_string(model_bytes)
    try:
        session = backend.prepare(model)
    except Exception as exc:
        return Outcome(None, backend.classify_error(exc, "prepare"), _one_line(exc), time.perf_counter() - t0)
    try:
        with np.errstate(all="ignore"):
            outputs = list(session.run(feeds))
    except Exception as exc:
        return Outcome(None, backend.classify_error(exc, "run"), _one_line(exc), time.perf_counter() - t0)
    return Outcome(outputs, seconds=time.perf_counter() - t0)


class InProcess:
    """Backends built in this process (fastest; a crashing runtime ends the campaign)."""

    def __init__(self, specs: list[BackendSpec]) -> None:
        from .runner import _build_backend

        self.specs = {s.name: s for s in specs}
        self.backends = {s.name: _build_backend(s) for s in specs}

    def info(self, name: str) -> tuple[str, dict[str, Any]]:
        b = self.backends[name]
        return b.version(), b.environment()

    def run(self, name: str, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
        return _run_on(self.backends[name], model_bytes, feeds)

    def close(self) -> None:
        pass


def _child_main(conn: Connection, specs: dict[str, BackendSpec]) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller decides what Ctrl-C means
    from .runner import _build_backend

    backends: dict[str, Any] = {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        kind, name, payload = msg
        try:
            backend = backends.get(name) or backends.setdefault(name, _build_backend(specs[name]))
        except Exception as exc:
            conn.send(Outcome(None, "error", f"backend {name} failed to load: {_one_line(exc)}"))
            continue
        if kind == "info":
            conn.send((backend.version(), backend.environment()))
        else:
            conn.send(_run_on(backend, *payload))


class Isolated:
    """Backends in one child process: a crash or a hang becomes an outcome, and the child is
    replaced."""

    def __init__(self, specs: list[BackendSpec], timeout: float = 30.0) -> None:
        self.specs = {s.name: s for s in specs}
        self.timeout = timeout
        self.ctx = forkserver.context()
        self.proc: Any = None
        self.conn: Connection | None = None

    def _ensure(self) -> None:
        if self.proc is None or not self.proc.is_alive():
            self.conn, child = self.ctx.Pipe()
            self.proc = self.ctx.Process(target=_child_main, args=(child, self.specs), daemon=True)
            self.proc.start()
            child.close()

    def _ask(self, msg: tuple, timeout: float) -> Any:
        self._ensure()
        assert self.conn is not None
        self.conn.send(msg)
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                pass
            self.proc.join(1)
            code = self.proc.exitcode
            self._kill()
            return Outcome(None, "crash", f"backend process died ({_death(code)}) while running this graph")
        self._kill()
        return Outcome(None, "timeout", f"no answer within {timeout:g} s; backend process killed")

    def info(self, name: str) -> tuple[str, dict[str, Any]]:
        got = self._ask(("info", name, None), max(self.timeout, 120))
        if isinstance(got, Outcome):
            raise RuntimeError(got.message)
        return got

    def run(self, name: str, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
        return self._ask(("run", name, (model_bytes, feeds)), self.timeout)

    def _kill(self) -> None:
        if self.proc is not None and self.proc.pid is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive() and self.conn is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(2)
        self._kill()


def _death(code: int | None) -> str:
    import signal

    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


# =============================================================================================
# judging one graph
# =============================================================================================
@dataclass
class Failure:
    backend: str
    #: the backend family ("onnxruntime" for its optimized and unoptimized sessions)
    group: str
    symptom: str
    outcome: str
    message: str
    verdict: dict[str, Any] | None = None
    #: what the backend was compared with: the oracle, or another session's outputs
    expected: list[Any] | None = None
    tolerance: Tolerance | None = None
    #: what the backend returned (None when it failed to run)
    actual: list[Any] | None = None

    @property
    def kind(self) -> str:
        return kind_of(self.symptom)

    @property
    def signature(self) -> tuple[str, str]:
        return (self.group, self.kind)


_WRONG_VALUES = ("mismatch:values", "mismatch:inf", "mismatch:outputs", "wrong-shape")


def kind_of(symptom: str) -> str:
    """The class of a symptom that findings are deduplicated by: a wrong shape and wrong values
    are one class ("wrong-values", the same root cause often shows as either), NaN placement
    another; errors keep their kind; "optimized:" and "opt-vs-noopt:" prefixes stay."""
    prefix = ""
    for p in ("optimized:", "opt-vs-noopt:"):
        if symptom.startswith(p):
            prefix, symptom = p, symptom[len(p):]
    if symptom in _WRONG_VALUES:
        symptom = "wrong-values"
    elif symptom == "mismatch:nan":
        symptom = "nan"
    return prefix + symptom


def symptom_of(outcome: str, message: str, verdict: dict[str, Any] | None = None) -> str:
    """A coarse, stable description of how a backend failed (part of the deduplication key)."""
    if outcome == "mismatch":
        # NaN placement is its own symptom only when nothing else is off (NaN moved by a wrong
        # broadcast is wrong values)
        if verdict and verdict.get("nan_mismatch") and verdict.get("nan_mismatch") == verdict.get("bad_count"):
            return "mismatch:nan"
        if "infinity" in message:
            return "mismatch:inf"
        return "mismatch:values"
    if outcome in ("error", "rejected", "unsupported"):
        status = re.search(r":\s*([A-Z][A-Z_]{3,})\s*:", message)  # ORT status names (INVALID_ARGUMENT, FAIL)
        kind = status.group(1) if status else message.split(":", 1)[0].strip()[:40]
        return f"{outcome}:{kind}"
    return outcome


@dataclass
class Tester:
    """Runs one graph on every backend and judges it."""

    executor: Any
    backends: list[BackendSpec]
    #: backend name -> family name (variants of one runtime share a family)
    groups: dict[str, str]
    #: (optimized, unoptimized) pairs compared with each other
    pairs: list[tuple[str, str]] = field(default_factory=list)
    comparator: Any = None
    runs: int = 0

    def __post_init__(self) -> None:
        if self.comparator is None:
            from .compare import Comparator

            self.comparator = Comparator()

    def test(self, g: G.Graph, model_bytes: bytes, groups: set[str] | None = None) -> list[Failure]:
        """Failures of ``g`` on every backend (of ``groups`` only, when given)."""
        feeds = g.feeds()
        expected = g.expected()
        tols = g.tolerances()
        outs: dict[str, Outcome] = {}
        failures: list[Failure] = []
        for spec in self.backends:
            if groups is not None and self.groups.get(spec.name, spec.name) not in groups:
                continue
            res = self.executor.run(spec.name, model_bytes, feeds)
            self.runs += 1
            outs[spec.name] = res
            fail = self._judge(spec.name, res, expected, tols)
            if fail:
                failures.append(fail)
        failed = {f.backend for f in failures}
        for opt, noopt in self.pairs:
            # One session failing the oracle alone is classified by _merge ("optimized:" when the
            # optimizer made the difference). Both failing leaves one question the oracle cannot
            # answer where its own verdict rests on an assumption (what NaN does in Max, say):
            # do the two sessions at least agree? Twice the tolerance: two results that each
            # pass the oracle never differ by more.
            a, b = outs.get(opt), outs.get(noopt)
            if opt not in failed or noopt not in failed or a is None or b is None or a.outputs is None or b.outputs is None:
                continue
            fail = self._judge(opt, a, b.outputs, [_scaled(t, 2.0) for t in tols])
            if fail:
                fail.symptom = f"opt-vs-noopt:{fail.symptom}"
                fail.message = f"optimized vs unoptimized session: {fail.message}"
                failures.append(fail)
        return self._merge(failures)

    def _judge(self, name: str, res: Outcome, expected: list[Any], tols: list[Tolerance]) -> Failure | None:
        group = self.groups.get(name, name)
        if res.outputs is None:
            return Failure(name, group, symptom_of(res.outcome, res.message), res.outcome, res.message, expected=expected,
                           tolerance=_loosest(tols))
        if len(res.outputs) != len(expected):
            msg = f"returned {len(res.outputs)} outputs, expected {len(expected)}"
            return Failure(name, group, "mismatch:outputs", "mismatch", msg, expected=expected, tolerance=_loosest(tols),
                           actual=res.outputs)
        for k, (e, a, tol) in enumerate(zip(expected, res.outputs, tols)):
            verdict = self.comparator.compare([e], [a], tol)
            if not verdict:
                vd = verdict.to_dict()
                vd["output"] = k
                message = verdict.message.replace("output 0:", f"output {k}:", 1)
                return Failure(name, group, symptom_of(verdict.outcome, message, vd), verdict.outcome, message, vd,
                               expected=expected, tolerance=tol, actual=res.outputs)
        return None

    def _merge(self, failures: list[Failure]) -> list[Failure]:
        """One failure per (family, symptom); a failure of the optimized session only is an
        optimizer symptom."""
        by_group: dict[str, list[Failure]] = {}
        for f in failures:
            by_group.setdefault(f.group, []).append(f)
        merged: list[Failure] = []
        for fs in by_group.values():
            seen: dict[str, Failure] = {}
            for f in fs:
                seen.setdefault(f.symptom, f)
            for f in seen.values():
                variants = {x.backend for x in fs if x.symptom == f.symptom}
                opt_only = any(f.backend == opt and noopt not in variants and not f.symptom.startswith("opt-vs-noopt")
                               for opt, noopt in self.pairs)
                if opt_only:
                    f.symptom = f"optimized:{f.symptom}"
                merged.append(f)
        merged.sort(key=lambda f: _PRIORITY.index(f.outcome) if f.outcome in _PRIORITY else len(_PRIORITY))
        return merged


def _scaled(t: Tolerance, k: float) -> Tolerance:
    from .case import Tolerance

    return Tolerance(t.rtol * k, t.atol * k, int(t.ulp * k) if t.ulp is not None else None)


def _loosest(tols: list[Tolerance]) -> Tolerance:
    from .case import Tolerance

    if not tols:
        return Tolerance()
    return Tolerance(max(t.rtol for t in tols), max(t.atol for t in tols), max((t.ulp or 0) for t in tols) or None)


# =============================================================================================
# findings
# =============================================================================================
@dataclass
class Finding:
    pattern: str
    backend: str
    group: str
    symptom: str
    outcome: str
    message: str
    graph: G.Graph
    failure: Failure
    shrunk: bool
    count: int = 1
    bundle: str = ""
    case_id: str = ""
    #: "spec" when the spec decides; otherwise why the spec does not (NaN behaviour not stated)
    spec_status: str = "spec"

    #: every symptom seen for this finding (a wrong shape and wrong values count as one kind)
    symptoms: Counter = field(default_factory=Counter)

    @property
    def kind(self) -> str:
        return kind_of(self.symptom)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pattern, self.group, self.kind)

    @property
    def ops(self) -> set[str]:
        return {n.op for n in self.graph.nodes}

    def summary(self) -> str:
        where = f" [{self.spec_status}]" if self.spec_status != "spec" else ""
        return (f"{self.group} {self.kind}: {self.pattern} ({len(self.graph.nodes)} node(s), opset {self.graph.opset}, "
                f"{self.graph.dtype}){where} x{self.count}" + (f" -> {self.bundle}" if self.bundle else ""))


def _size_key(g: G.Graph) -> tuple:
    return (len(g.nodes), len(g.outputs), len(g.inputs), sum(v.size for v in g.inputs), len(g.initializers),
            len(g.spec.nodes), g.spec.opset)


# =============================================================================================
# the campaign
# =============================================================================================
@dataclass
class FuzzConfig:
    backends: list[BackendSpec]
    gen: G.GenConfig = field(default_factory=lambda: G.GenConfig())
    budget_s: float = 600.0
    seed: int | None = None
    #: stop after this many graphs (tests); None: only the budget stops
    max_graphs: int | None = None
    #: stop after this many unique findings
    max_findings: int | None = None
    isolate: bool = True
    timeout: float = 30.0
    #: seconds one disagreement may spend shrinking
    shrink_s: float = 120.0
    store: Path | None = None
    bundles: Path | None = None
    #: passing graphs stored per run (so reports show the suite); findings are always stored
    keep_passes: int = 100
    #: node specs drawn per graph (default: half the node limit up to twice it; the shrinker
    #: still reaches one node by disabling specs)
    min_specs: int | None = None
    max_specs: int | None = None
    #: this campaign's share of the seed's sessions: numbers offset+1, offset+1+stride, ... (a
    #: fan-out of ``stride`` campaigns over one seed covers each session once; see
    #: harness.executors.ray.fuzz_on_ray)
    session_offset: int = 0
    session_stride: int = 1


@dataclass
class FuzzStats:
    started: float = field(default_factory=time.monotonic)
    #: specs drawn; those that realize to no node at all (every spec skipped) are "empty"
    drawn: int = 0
    empty: int = 0
    valid: int = 0
    invalid: int = 0
    tested: int = 0
    disagreements: int = 0
    duplicates: int = 0
    sessions: int = 0
    shrink_steps: int = 0
    #: wall-clock seconds spent generating and testing (shrinking excluded): the throughput's base
    gen_seconds: float = 0.0
    nodes: int = 0
    op_versions: Counter = field(default_factory=Counter)
    invalid_examples: list[str] = field(default_factory=list)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Differential tests (graphs run on every backend and judged) per second of generation."""
        return self.tested / self.gen_seconds if self.gen_seconds else 0.0

    @property
    def graphs(self) -> int:
        """Graphs built (at least one node): valid or not."""
        return self.valid + self.invalid

    @property
    def valid_rate(self) -> float:
        built = self.valid + self.invalid
        return self.valid / built if built else 1.0


@dataclass
class FuzzReport:
    stats: FuzzStats
    findings: list[Finding]
    run_id: int | None = None
    interrupted: bool = False
    #: op-versions at a dtype the campaign stopped drawing after a one-node finding
    excluded: list[str] = field(default_factory=list)


class StopFuzzing(BaseException):
    """Budget spent or enough found: not an Exception, so Hypothesis does not treat it as a
    failure to shrink."""


class Disagreement(Exception):
    """Raised by the property; one subclass per (family, symptom) so Hypothesis shrinks each
    kind of failure on its own and does not slip from one into another."""


_DISAGREEMENT_TYPES: dict[tuple[str, str], type] = {}


def only_disagreements(exc: BaseException) -> bool:
    """Whether ``exc`` is what Hypothesis re-raises for disagreements only: one
    :class:`Disagreement`, a group of them (``report_multiple_bugs``), or its ``FlakyFailure``
    (a group too) around them, raised when a shrunk graph stops failing because the shrinking
    time ran out. A group holding anything else, or any other exception, is not."""
    if isinstance(exc, Disagreement):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return bool(exc.exceptions) and all(only_disagreements(e) for e in exc.exceptions)
    return False


def _disagreement(sig: tuple[str, str]) -> type:
    if sig not in _DISAGREEMENT_TYPES:
        name = "Disagreement_" + re.sub(r"\W+", "_", "_".join(sig))
        _DISAGREEMENT_TYPES[sig] = type(name, (Disagreement,), {})
    return _DISAGREEMENT_TYPES[sig]


class Campaign:
    def __init__(self, config: FuzzConfig, say: Callable[[str], None] = lambda m: None,
                 progress: Callable[[Campaign], None] | None = None) -> None:
        self.config = config
        self.say = say
        self.progress = progress
        self.stats = FuzzStats()
        self.findings: dict[tuple[str, str, str], Finding] = {}
        self.store: Any = None
        self.run_id: int | None = None
        self.passes_kept = 0
        self.executor: Any = None
        self.tester: Tester | None = None
        self.deadline = 0.0
        #: op-versions at a dtype no longer drawn, and why (see _stop_drawing)
        self.excluded: list[str] = []

    # -- setup ---------------------------------------------------------------------------------
    def _setup(self) -> None:
        cfg = self.config
        self.executor = Isolated(cfg.backends, cfg.timeout) if cfg.isolate else InProcess(cfg.backends)
        groups = {b.name: _family(b) for b in cfg.backends}
        pairs = []
        for b in cfg.backends:
            if b.spec == "onnxruntime" and b.options.get("optimization", "all") != "disable":
                other = next((o for o in cfg.backends if o.spec == "onnxruntime" and o.options.get("optimization") == "disable"), None)
                if other is not None:
                    pairs.append((b.name, other.name))
        self.tester = Tester(self.executor, cfg.backends, groups, pairs)
        if cfg.store is not None:
            from .run import environment, RunConfig
            from .store import Store

            self.store = Store(cfg.store)
            env = environment(RunConfig(suites=[SUITE], backends=cfg.backends))
            args = {"command": "fuzz", "backends": [b.__dict__ for b in cfg.backends], "budget_s": cfg.budget_s, "seed": cfg.seed,
                    "opsets": list(cfg.gen.opsets), "dtypes": list(cfg.gen.dtypes), "ops": list(cfg.gen.ops or []),
                    "max_nodes": cfg.gen.max_nodes, "nan_rate": cfg.gen.nan_rate, "suites": [SUITE]}
            self.run_id = self.store.start_run(env["command"], args, env)
            for b in cfg.backends:
                try:
                    version, environment_ = self.executor.info(b.name)
                    self.store.record_backend(self.run_id, b.name, True, "", version, environment_)
                except Exception as exc:  # recorded and said; every graph then shows the load error as a finding
                    self.store.record_backend(self.run_id, b.name, False, str(exc), "", {})
                    self.say(f"backend {b.name} unavailable: {exc}")

    # -- the property ------------------------------------------------------------------------
    def run(self) -> FuzzReport:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed

        cfg = self.config
        self._setup()
        self.deadline = time.monotonic() + cfg.budget_s
        base_seed = cfg.seed if cfg.seed is not None else int.from_bytes(os.urandom(4), "big")
        low = cfg.min_specs if cfg.min_specs is not None else max(1, cfg.gen.max_nodes // 2)
        strategy = G.graph_specs(low, cfg.max_specs or max(low, 2 * cfg.gen.max_nodes))
        interrupted = failed = False
        try:
            while not self._done():
                self.stats.sessions += 1
                session = _Session(self)
                number = cfg.session_offset + 1 + cfg.session_stride * (self.stats.sessions - 1)
                session_seed = zlib.crc32(f"{base_seed}/{number}".encode())

                @settings(max_examples=10**9, database=None, deadline=None, derandomize=False, print_blob=False,
                          phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck), report_multiple_bugs=True)
                @hypothesis_seed(session_seed)
                @given(strategy)
                def prop(spec: G.GraphSpec) -> None:
                    session.check(spec)

                try:
                    prop()
                except StopFuzzing:
                    pass
                except KeyboardInterrupt:
                    interrupted = True
                except BaseException as exc:
                    # The disagreement(s) Hypothesis re-raises after shrinking end the session;
                    # anything else (a bug of the harness: a template, the tester, the store)
                    # ends the campaign with its traceback.
                    if not only_disagreements(exc):
                        raise
                session.close()
                self._finalize(session, final=interrupted or self._done(), reduce=not interrupted)
                if interrupted:
                    break
        except KeyboardInterrupt:
            interrupted = True
        except BaseException:
            failed = True
            raise
        finally:
            self.executor.close()
            if self.store is not None:
                self.store.finish_run(self.run_id, "failed" if failed else "interrupted" if interrupted else "complete")
        return FuzzReport(self.stats, list(self.findings.values()), self.run_id, interrupted, list(self.excluded))

    def _done(self) -> bool:
        cfg = self.config
        if time.monotonic() >= self.deadline:
            return True
        if cfg.max_graphs is not None and self.stats.tested >= cfg.max_graphs:
            return True
        return cfg.max_findings is not None and len(self.findings) >= cfg.max_findings

    # -- findings ------------------------------------------------------------------------------
    def known(self, g: G.Graph, f: Failure) -> Finding | None:
        """A finding this failure is probably another instance of: same backend family and kind
        of symptom, and the graph holds every op of the finding's minimal graph."""
        ops = {n.op for n in g.nodes}
        for finding in self.findings.values():
            if finding.group == f.group and finding.kind == f.kind and finding.ops <= ops:
                return finding
        return None

    def failure_of(self, g: G.Graph, sig: tuple[str, str]) -> Failure | None:
        """``g``'s failure with signature ``sig``, if it still has one."""
        try:
            model = G.check_graph(g)
        except G.InvalidGraph:
            return None
        for f in self.tester.test(g, model.SerializeToString(), groups={sig[0]}):
            if f.signature == sig:
                return f
        return None

    def localize(self, g: G.Graph, f: Failure) -> tuple[G.Graph, Failure]:
        """Where the graph first goes wrong: with every node output exposed, the first output
        that fails (or, for an error, the first node whose prefix graph fails) is the root; its
        graph and failure replace the downstream symptom. A failure that needs the outputs
        hidden (a fusion) stays as it is."""
        if len(g.nodes) <= 1:
            return g, f
        exposed = G.all_outputs(g)
        try:
            model = G.check_graph(exposed)
        except G.InvalidGraph:
            return g, f
        first = next(iter(self.tester.test(exposed, model.SerializeToString(), groups={f.group})), None)
        if first is None:
            return g, f
        if first.verdict is not None and first.verdict.get("output") is not None:
            h = G.with_outputs(g, [exposed.outputs[first.verdict["output"]].name])
            candidates = [h] if h is not None else []
        else:
            candidates = G.prefixes(g)
        for h in candidates:
            if len(h.nodes) >= len(g.nodes) and [v.name for v in h.outputs] == [v.name for v in g.outputs]:
                break
            try:
                model = G.check_graph(h)
            except G.InvalidGraph:
                continue
            found = next(iter(self.tester.test(h, model.SerializeToString(), groups={f.group})), None)
            if found is not None:
                return h, found
        return g, f

    def _finalize(self, session: _Session, final: bool = False, reduce: bool = True) -> None:
        """Turn a session's smallest failing graphs into findings: reduce each further (fewer
        outputs, nodes cut into inputs) while it fails the same way, then deduplicate."""
        for sig, (g, f) in session.best.items():
            shrunk = sig in session.raised
            if not shrunk and not final:
                continue  # it will come back in a later session and be shrunk then
            if shrunk and reduce and time.monotonic() < self.deadline + self.config.shrink_s:
                g = G.reduce_graph(g, lambda h: self.failure_of(h, sig) is not None)
                f = self.failure_of(g, sig) or f
            key = (g.pattern, f.group, f.kind)
            if key in self.findings:
                self.findings[key].count += 1
                self.findings[key].symptoms[f.symptom] += 1
                continue
            spec_status = "spec"
            # an optimizer changing the result, or two sessions disagreeing, is a bug whatever
            # the spec says about NaN
            if f.kind.endswith("nan") and g.nan_assumed_ops and not f.kind.startswith(("opt-vs-noopt", "optimized")):
                spec_status = f"ambiguous: the spec does not say what {', '.join(sorted(set(g.nan_assumed_ops)))} do with NaN"
            finding = Finding(g.pattern, f.backend, f.group, f.symptom, f.outcome, f.message, g, f, shrunk=shrunk,
                              spec_status=spec_status, symptoms=Counter({f.symptom: 1}))
            self.findings[key] = finding
            self._record(finding)
            self.say(f"new finding: {finding.summary()}")
            if len(g.nodes) == 1 and f.kind != "nan" and self._fails_plainly(g, f.signature):
                self._stop_drawing(g.nodes[0].key, g.dtype, finding)
        session.best.clear()

    def _fails_plainly(self, g: G.Graph, sig: tuple[str, str]) -> bool:
        """Whether the one node of ``g`` fails the same way in its plainest form too (every knob
        0: no optional attribute, unit strides, no padding): a missing or wrong kernel for the
        type, rather than a failure of some attributes or shapes only."""
        node = g.nodes[0]
        gen = replace(self.config.gen, opsets=(g.opset,), dtypes=(g.dtype,), ops=(node.op,), nan_rate=0.0)
        for rank in range(8):  # the first input rank at which the op applies
            spec = G.GraphSpec(rank=rank, dims=(2, 2, 2, 2), nodes=(G.NodeSpec(0, (0,) * G.N_REFS, (0,) * G.N_KNOBS),))
            h = G.realize(spec, gen)
            if len(h.nodes) == 1 and h.nodes[0].key == node.key:
                return self.failure_of(h, sig) is not None
        return True

    def _stop_drawing(self, key: str, dtype: str, finding: Finding) -> None:
        """A one-node finding that shows in the op's plainest form too (a missing kernel, a
        kernel that is wrong at this type) would fail every later graph that holds the
        op-version at that type: each such graph would count as a duplicate of it and hide
        whatever else it holds. So the campaign stops drawing it (every backend then loses it:
        fuzz the others alone to keep testing it there). NaN findings stay: they need NaN
        inputs, which few graphs have."""
        gen = self.config.gen
        if (key, dtype) in gen.exclude:
            return
        self.config.gen = replace(gen, exclude=gen.exclude | {(key, dtype)})
        self.excluded.append(f"{key} {dtype} ({finding.group} {finding.kind})")
        self.say(f"not drawn any more: {key} at {dtype} ({finding.group} {finding.kind})")

    def _record(self, finding: Finding) -> None:
        from .execute import Result
        from .repro import bundle_dir, write_bundle
        from .store import bundles_root

        g, f = finding.graph, finding.failure
        case = G.graph_case(g, tolerance=f.tolerance, expected=f.expected, extra_tags={
            "symptom": f.symptom, "pattern": finding.pattern, "shrunk": finding.shrunk, "spec_status": finding.spec_status,
            "family": f.group})
        finding.case_id = case.id
        result = Result(case.id, f.backend, f.outcome, f.message, verdict=f.verdict, tags=dict(case.tags), raw_outcome=f.outcome)
        spec = next(b for b in self.config.backends if b.name == f.backend)
        bundles = self.config.bundles or (bundles_root(self.config.store) if self.config.store else None)
        if bundles is not None:
            try:
                folder = bundle_dir(bundles, self.run_id or 0, f.backend, case.id)
                write_bundle(folder, case, result, spec.spec, spec.options, restamp=False)
                (folder / "graph.txt").write_text(g.describe() + "\n")
                _write_actual(folder / "actual", f.actual)
                finding.bundle = result.bundle = str(folder)
            except Exception as exc:  # evidence, not the verdict: the finding stands, stored and said without it
                result.message += f" [bundle not written: {exc}]"
                self.say(f"bundle of {case.id} on {f.backend} not written: {_one_line(exc)}")
        if self.store is not None:
            self.store.add_result(self.run_id, result)

    def record_pass(self, g: G.Graph) -> None:
        from .execute import Result

        if self.store is None or self.passes_kept >= self.config.keep_passes:
            return
        self.passes_kept += 1
        case_id = G.case_id(g)
        tags = {"suite": SUITE, "ops": sorted({n.op for n in g.nodes}), "op_versions": g.op_versions, "opset": g.opset,
                "dtypes": [g.dtype], "nodes": len(g.nodes), "pattern": g.pattern, "spec": g.spec.to_json()}
        for b in self.config.backends:
            self.store.add_result(self.run_id, Result(case_id, b.name, "pass", tags=tags, raw_outcome="pass"))


def _write_actual(folder: Path, outputs: list[Any] | None) -> None:
    """The backend's outputs beside the expected ones (``actual/output_K.pb``), in the dtype it
    returned them in: the evidence of a wrong value, shape or dtype without re-running."""
    if not outputs:
        return
    from . import values as V

    folder.mkdir(exist_ok=True)
    for k, value in enumerate(outputs):
        V.write_value(folder / f"output_{k}.pb", value, f"output_{k}")


def _family(b: BackendSpec) -> str:
    return b.spec if ":" not in b.spec else b.name


class _Session:
    """One Hypothesis run: generation until the first new disagreement, then its shrinking."""

    def __init__(self, campaign: Campaign) -> None:
        self.c = campaign
        #: signature -> (smallest failing graph, its failure)
        self.best: dict[tuple[str, str], tuple[G.Graph, Failure]] = {}
        self.raised: set[tuple[str, str]] = set()
        self.first_failure: float | None = None
        self.last_progress = 0.0
        self.started = time.monotonic()

    def close(self) -> None:
        end = self.first_failure if self.first_failure is not None else time.monotonic()
        self.c.stats.gen_seconds += end - self.started

    def check(self, spec: G.GraphSpec) -> None:
        from hypothesis import reject

        c = self.c
        stats = c.stats
        now = time.monotonic()
        if self.first_failure is None:
            if c._done():
                raise StopFuzzing
        else:
            stats.shrink_steps += 1
            if now >= c.deadline + min(c.config.shrink_s, 30.0) or now - self.first_failure > c.config.shrink_s:
                return  # shrinking time is up: nothing fails any more, Hypothesis stops
        if c.progress and now - self.last_progress > 0.5:
            self.last_progress = now
            c.progress(c)
        g = G.realize(spec, c.config.gen)
        if not g.nodes:
            if self.first_failure is None:
                stats.drawn += 1
                stats.empty += 1
            reject()
        if self.first_failure is None:
            stats.drawn += 1
        try:
            model = G.check_graph(g)
        except G.InvalidGraph as exc:
            if self.first_failure is not None:
                reject()
            stats.invalid += 1
            if len(stats.invalid_examples) < 20:
                stats.invalid_examples.append(f"{exc}\n{g.describe()}")
            reject()
        if self.first_failure is None:
            stats.valid += 1
            stats.nodes += len(g.nodes)
            stats.op_versions.update(n.key for n in g.nodes)
        model_bytes = model.SerializeToString()
        failures = c.tester.test(g, model_bytes)
        if self.first_failure is None:
            stats.tested += 1
            if not failures:
                c.record_pass(g)
        fresh: list[tuple[G.Graph, Failure]] = []
        for f in failures:
            if self.first_failure is None:
                stats.disagreements += 1
            h, root = c.localize(g, f)
            if root.signature not in self.best:
                known = c.known(h, root)
                if known is not None:
                    if self.first_failure is None:
                        stats.duplicates += 1
                        known.count += 1
                        known.symptoms[root.symptom] += 1
                    continue
            fresh.append((h, root))
        if not fresh:
            return
        for h, f in fresh:
            held = self.best.get(f.signature)
            if held is None or _size_key(h) < _size_key(held[0]):
                self.best[f.signature] = (h, f)
        if self.first_failure is None:
            self.first_failure = now
        sig = fresh[0][1].signature
        self.raised.add(sig)
        raise _disagreement(sig)(f"{sig[0]} {sig[1]}: {fresh[0][1].message[:300]}")


# =============================================================================================
# backends: probing the opsets they accept
# =============================================================================================
def max_opset(executor: Any, name: str, low: int = 13) -> int | None:
    """The highest ai.onnx opset at which ``name`` loads and runs a one-node graph."""
    from onnx import TensorProto, helper

    from . import schema

    for opset in range(schema.newest_opset(), low - 1, -1):
        graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "probe",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = schema.ir_for_opset(opset)
        res = executor.run(name, model.SerializeToString(), {"x": np.array([1.0, -2.0], np.float32)})
        if res.outputs is not None:
            return opset
    return None


def expand_backends(names: list[str], options: dict[str, dict[str, Any]], opt_diff: bool = True) -> list[BackendSpec]:
    """Backend specs for a campaign: ONNX Runtime runs on one thread, and with ``opt_diff`` twice
    (all graph optimizations, and none)."""
    from .runner import BackendSpec

    specs: list[BackendSpec] = []
    for name in dict.fromkeys(names):
        opts = dict(options.get(name, {}))
        if name == "onnxruntime":
            opts.setdefault("threads", 1)
            opts.setdefault("optimization", "all")
            specs.append(BackendSpec(name, opts))
            if opt_diff and opts["optimization"] != "disable":
                specs.append(BackendSpec(name, {**opts, "optimization": "disable"}, "onnxruntime-noopt"))
        else:
            specs.append(BackendSpec(name, opts))
    return specs


# =============================================================================================
# the command line
# =============================================================================================
def parse_budget(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1h30m`` -> seconds."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise ValueError(f"bad budget {text!r}: use seconds or a duration like 90s, 10m, 1h30m")
    return sum(float(a) * {"h": 3600, "m": 60, "s": 1}[b] for a, b in parts)


def register(subparsers: Any) -> None:
    """Add the ``fuzz`` subcommand (``harness.cli`` calls this)."""
    p = subparsers.add_parser("fuzz", help="property-based differential testing with generated graphs")
    p.add_argument("--backend", action="append", help="backend to test (repeatable; default onnxruntime)")
    p.add_argument("--option", action="append", default=[], metavar="BACKEND.NAME=VALUE", help="backend option, e.g. onnxruntime.threads=2")
    p.add_argument("--budget", default="10m", help="wall-clock budget: seconds or 90s, 10m, 1h (default 10m)")
    p.add_argument("--opset", type=int, help="draw every graph at this opset (default: 13 up to the newest every backend loads)")
    p.add_argument("--ops", help="comma-separated op types to draw from (default: every op with a template and a reference)")
    p.add_argument("--dtypes", default=",".join(G.ALL_DTYPES),
                   help="element types of the graphs (default: every float, integer and bool type); with both float and "
                        "integer or bool types, half the graphs are integer or bool ones; among the floats the first gets 80%%")
    p.add_argument("--max-nodes", type=int, default=20, help="nodes per graph at most (default 20)")
    p.add_argument("--seed", type=int, help="seed of the campaign (default: random, printed)")
    p.add_argument("--nan-rate", type=float, default=0.1, help="share of graphs whose inputs carry NaN (default 0.1)")
    p.add_argument("--no-opt-diff", action="store_true", help="do not run ONNX Runtime a second time without graph optimizations")
    p.add_argument("--in-process", action="store_true", help="run backends in this process (faster; a crash ends the campaign)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per graph and backend (default 30)")
    p.add_argument("--shrink-time", type=float, default=120.0, help="seconds to shrink one disagreement (default 120)")
    p.add_argument("--store", default=str(Path("reports") / "results.sqlite"), help="results store (default: reports/results.sqlite)")
    p.add_argument("--bundles", help="repro bundle folder (default: next to the store)")
    p.add_argument("--keep-passes", type=int, default=100, help="passing graphs stored in the run (default 100)")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: fan the campaign out over a Ray cluster, one part of the seed's sessions per CPU; findings dedup")
    p.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: the cluster (default: RAY_ADDRESS, else a local one)")
    p.add_argument("--parts", type=int, help="with --executor ray: campaigns in parallel (default: the cluster's CPUs)")
    p.set_defaults(func=cmd_fuzz)


def _progress_printer(budget: float) -> Callable[[Campaign], None]:
    tty = sys.stderr.isatty()
    state = {"last": 0.0}

    def show(c: Campaign) -> None:
        s = c.stats
        now = time.monotonic()
        if not tty and now - state["last"] < 30:
            return
        state["last"] = now
        rate = s.tested / s.elapsed if s.elapsed else 0.0
        unique = sum(1 for f in c.findings.values() if f.outcome != "unsupported")
        lacking = len(c.findings) - unique
        line = (f"graphs {s.graphs} | valid {100 * s.valid_rate:.2f}% | {rate:.1f} graphs/s | disagreements {s.disagreements} | "
                f"unique bugs {unique}" + (f" (+{lacking} unsupported)" if lacking else "") + f" | {_clock(s.elapsed)} / {_clock(budget)}")
        if tty:
            sys.stderr.write("\r" + line[: os.get_terminal_size(sys.stderr.fileno()).columns - 1].ljust(20) + "\x1b[K")
            sys.stderr.flush()
        else:
            print(line, file=sys.stderr, flush=True)

    return show


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def cmd_fuzz(args: Any) -> int:
    from .cliutil import CliError, parse_options

    try:
        budget = parse_budget(args.budget)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    options = parse_options(args.option)
    names = args.backend or ["onnxruntime"]
    unknown = set(options) - set(names)
    if unknown:
        raise CliError(f"--option names backend(s) not in this campaign: {', '.join(sorted(unknown))}")
    from .backends import load_backend_class

    for name in names:
        load_backend_class(name)
    specs = expand_backends(names, options, opt_diff=not args.no_opt_diff)
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip()) if args.ops else None
    if ops:
        missing = [o for o in ops if o not in G.TEMPLATES]
        if missing:
            raise CliError(f"no graph template for {', '.join(missing)}; templates exist for: {', '.join(G.templated_ops())}")
    dtypes = tuple(d.strip() for d in args.dtypes.split(",") if d.strip())
    bad = [d for d in dtypes if d not in G.ALL_DTYPES]
    if bad:
        raise CliError(f"--dtypes: {', '.join(bad)} not supported; use {', '.join(G.ALL_DTYPES)}")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")

    # the opsets every backend loads
    probe = InProcess(specs) if args.in_process else Isolated(specs, args.timeout)
    try:
        if args.opset:
            opsets: tuple[int, ...] = (args.opset,)
        else:
            tops = {s.name: max_opset(probe, s.name) for s in specs}
            for name, top in tops.items():
                if top is None:
                    raise CliError(f"backend {name} runs no one-node graph at opset {G.MIN_OPSET} or later")
            opsets = tuple(range(G.MIN_OPSET, min(tops.values()) + 1))
    finally:
        probe.close()
    gen = G.GenConfig(opsets=opsets, dtypes=dtypes, ops=ops, max_nodes=args.max_nodes, nan_rate=args.nan_rate)
    if not any(G.available_ops(o, d, ops) for o in opsets for d in dtypes):
        raise CliError("no op can be drawn with these --ops, --opset and --dtypes")
    config = FuzzConfig(backends=specs, gen=gen, budget_s=budget, seed=seed, isolate=not args.in_process, timeout=args.timeout,
                        shrink_s=args.shrink_time, store=Path(args.store), bundles=Path(args.bundles) if args.bundles else None,
                        keep_passes=args.keep_passes)
    print(f"fuzzing {', '.join(s.name for s in specs)} for {_clock(budget)}: opsets {opsets[0]}..{opsets[-1]}, "
          f"up to {args.max_nodes} nodes, seed {seed}", file=sys.stderr)
    say = lambda m: print(("\n" if sys.stderr.isatty() else "") + m, file=sys.stderr)  # noqa: E731
    if args.executor == "ray":
        try:
            from .executors.ray import fuzz_on_ray
        except ImportError as exc:
            raise CliError(f"--executor ray needs ray: pip install 'onnx-harness[ray]' ({exc})") from exc
        report = fuzz_on_ray(config, parts=args.parts, address=args.ray_address, say=say)
    else:
        report = Campaign(config, say=say, progress=_progress_printer(budget)).run()
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print_report(report)
    if report.interrupted:
        print(f"interrupted: the findings above are kept in run {report.run_id} of {config.store}")
        return 130
    return 1 if report.findings else 0


def print_report(report: FuzzReport) -> None:
    s = report.stats
    rate = s.rate
    bugs = [f for f in report.findings if f.outcome != "unsupported"]
    print(f"{s.graphs} graphs built ({s.empty} draws without a node skipped), {s.valid} valid ({100 * s.valid_rate:.2f}%), "
          f"{s.tested} tested ({rate:.1f}/s), {s.nodes / max(1, s.valid):.1f} nodes on average, {len(s.op_versions)} op-versions; "
          f"{s.disagreements} disagreements, {s.duplicates} of them known, {len(bugs)} unique bugs, "
          f"{len(report.findings) - len(bugs)} unsupported op-versions")
    for f in sorted(report.findings, key=lambda f: (f.group, f.symptom, f.pattern)):
        print(f"  {f.summary()}")
        print(f"      {f.message[:240]}")
    if report.excluded:
        print(f"not drawn after their one-node finding: {', '.join(report.excluded)}")
    if report.run_id is not None:
        print(f"results: run {report.run_id} (suite {SUITE})")
