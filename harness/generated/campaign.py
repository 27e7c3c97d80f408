"""``onnx-harness fuzz``: property-based differential testing with generated graphs.

Each example is a graph drawn by :mod:`harness.generated`; the property runs it on every
selected backend and compares each output with the composed reference under that output's
tolerance (and, for ONNX Runtime, the optimized session with the unoptimized one).

A campaign has two phases. Testing: Hypothesis draws and tests graphs until the budget less a
shrinking reserve (:meth:`Campaign.reserve`) is spent. Each disagreement is keyed by its root
cause (:func:`root_cause`: backend family, kind of symptom, dtype, and the op-version whose
output first goes wrong, or the optimizer patterns of a failure that needs the whole graph): a
disagreement localized to one node is a finding at once; the first multi-node graph of a new
root cause waits, with the Hypothesis choices that drew it; later graphs of a root cause, or
holding a known finding's ops with the same symptom, count against it. Shrinking: in the
reserved time, the waiting graphs, most valuable first, are replayed and shrunk by Hypothesis
(deleting node specs, moving knobs and references to 0) and by graph surgery; what the time
leaves unshrunk is a finding "not shrunk" with its whole graph; the time it leaves over goes
back to testing (and so on until the budget ends). Findings (stored as results of
suite ``generated``, with a repro bundle) are deduplicated by (sorted op pattern of the minimal
graph, backend, symptom), so one root cause gives one report.

Ctrl-C keeps every finding (unshrunk). Any other exception is a bug of the harness: it ends the
campaign with its traceback (the store marks the run ``failed``), never a report of "0 findings".

Backends run in a child process by default (``--in-process`` to share the fuzzer's process):
a crash or a hang of a runtime is then a finding like any other instead of the end of the
campaign.
"""

from __future__ import annotations

import os
import re
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import schema
from ..case import Case
from ..worker import Result
from ..record import Recorder
from ..run import RunConfig, environment
from ..runner import BackendSpec
from ..store import Store, bundles_root
from .budget import MIN_SHRINK_S, SHRINK_EACH, SHRINK_SHARE
from .builder import realize
from .cases import case_id, graph_case
from .engine import InProcess, Isolated
from .graph import Graph, InvalidGraph, check_graph
from .judge import Failure, Finding, Tester, _size_key
from .regressions import load_regression, save_regression
from .shrink import all_outputs, prefixes, reduce_graph, with_outputs
from .spec import N_KNOBS, N_REFS, GenConfig, GraphSpec, NodeSpec, graph_specs

SUITE = "generated"


# =============================================================================================
# the campaign
# =============================================================================================
@dataclass
class FuzzConfig:
    backends: list[BackendSpec]
    gen: GenConfig = field(default_factory=lambda: GenConfig())
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
    #: folder of regression cases: each new distinct finding is written there by its root cause
    #: (harness.generated.regressions), and the ``generated`` suite replays it; None: not written
    regressions: Path | None = None
    #: node specs drawn per graph (default: half the node limit up to twice it; the shrinker
    #: still reaches one node by disabling specs)
    min_specs: int | None = None
    max_specs: int | None = None
    #: this campaign's share of the seed's sessions: numbers offset+1, offset+1+stride, ... (a
    #: fan-out of ``stride`` campaigns over one seed covers each session once; see
    #: harness.generated.on_ray.fuzz_on_ray)
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
    #: disagreements counted against a root cause already waiting (or having been shrunk)
    root_duplicates: int = 0
    shrink_steps: int = 0
    #: distinct multi-node disagreements shrunk at the end, and those the budget left unshrunk
    shrunk: int = 0
    unshrunk: int = 0
    #: wall-clock seconds spent generating and testing (shrinking excluded): the throughput's base
    gen_seconds: float = 0.0
    nodes: int = 0
    op_versions: Counter = field(default_factory=Counter)
    #: graphs tested by the edge class of their inputs ("nan" for NaN graphs, "" for plain ones)
    edge: Counter = field(default_factory=Counter)
    #: graph outputs judged ``unspecified`` at a spec-silent point (a reading matched, every
    #: invariant kept), by point; points reached in graphs tested, by point
    unspecified: Counter = field(default_factory=Counter)
    silent_reached: Counter = field(default_factory=Counter)
    #: optimizer patterns (harness.generated.patterns) in graphs tested, by "pattern:variant"
    patterns: Counter = field(default_factory=Counter)
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
        #: root causes (root_cause) seen, each with the finding it became or its first graph,
        #: waiting to be shrunk
        self.roots: dict[tuple[str, ...], Finding | Pending] = {}
        #: the first graph of each root cause that needs shrinking, in the order found
        self.pending: list[Pending] = []
        self.base_seed = 0
        self.strategy: Any = None

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
        self.tester = Tester(self.executor, cfg.backends, groups, pairs, unspecified=self.stats.unspecified)
        if cfg.store is not None:
            self.store = Store(cfg.store)
            env = environment(RunConfig(suites=[SUITE], backends=cfg.backends))
            args = {"command": "fuzz", "backends": [b.__dict__ for b in cfg.backends], "budget_s": cfg.budget_s, "seed": cfg.seed,
                    "opsets": list(cfg.gen.opsets), "dtypes": list(cfg.gen.dtypes), "ops": list(cfg.gen.ops or []),
                    "max_nodes": cfg.gen.max_nodes, "nan_rate": cfg.gen.nan_rate, "edge_rate": cfg.gen.edge_rate,
                    "edge_classes": list(cfg.gen.edge_classes), "patterns": list(cfg.gen.patterns),
                    "suites": [SUITE]}
            self.run_id = self.store.start_run(env["command"], args, env)
            for b in cfg.backends:
                try:
                    version, environment_ = self.executor.info(b.name)
                    self.store.record_backend(self.run_id, b.name, True, "", version, environment_)
                except Exception as exc:  # recorded and said; every graph then shows the load error as a finding
                    self.store.record_backend(self.run_id, b.name, False, str(exc), "", {})
                    self.say(f"backend {b.name} unavailable: {exc}")
        bundles = cfg.bundles or (bundles_root(cfg.store) if cfg.store else None)
        self.recorder = Recorder(self.store, self.run_id or 0, bundles, {b.name: b for b in cfg.backends})

    # -- the property ------------------------------------------------------------------------
    def run(self) -> FuzzReport:
        from hypothesis.errors import Unsatisfiable

        cfg = self.config
        self._setup()
        self.deadline = time.monotonic() + cfg.budget_s
        self.base_seed = cfg.seed if cfg.seed is not None else int.from_bytes(os.urandom(4), "big")
        low = cfg.min_specs if cfg.min_specs is not None else max(1, cfg.gen.max_nodes // 2)
        self.strategy = graph_specs(low, cfg.max_specs or max(low, 2 * cfg.gen.max_nodes))
        interrupted = failed = False
        try:
            exhausted = False
            while True:
                while not self._done():
                    self.stats.sessions += 1
                    number = cfg.session_offset + 1 + cfg.session_stride * (self.stats.sessions - 1)
                    session = _Session(self)
                    try:
                        self._hypothesis(session.check, zlib.crc32(f"{self.base_seed}/{number}".encode()))
                    except StopFuzzing:
                        pass
                    except KeyboardInterrupt:
                        interrupted = True
                    except Unsatisfiable:
                        # every graph the templates can still draw holds an op-version excluded after a
                        # finding: nothing is left to test. Before any exclusion it is a harness bug.
                        if not self.excluded:
                            raise
                        self.say(f"nothing left to draw: every template's op-versions are excluded after a finding "
                                 f"({len(self.excluded)} excluded); the campaign ends early")
                        exhausted = True
                    finally:
                        session.close()
                    if interrupted or exhausted:
                        break
                self._shrink_pending(interrupted)
                # the time the shrinking left over goes back to testing (nothing waits now: the
                # budget, or enough graphs or findings, is what ends it)
                if interrupted or exhausted or self._done():
                    break
        except KeyboardInterrupt:
            interrupted = True
            self._shrink_pending(True)
        except BaseException:
            failed = True
            raise
        finally:
            self.executor.close()
            if self.store is not None:
                self.store.finish_run(self.run_id, "failed" if failed else "interrupted" if interrupted else "complete")
        return FuzzReport(self.stats, list(self.findings.values()), self.run_id, interrupted, list(self.excluded))

    def _hypothesis(self, check: Callable[[GraphSpec], None], seed: int, replay: list[Any] | None = None) -> None:
        """One Hypothesis run of ``check`` over the campaign's graph specs: generation only (the
        testing phase: nothing raises, every disagreement waits in :attr:`pending`), or, given the
        choices of one drawn graph (``replay``), that graph replayed and shrunk while ``check``
        raises for it. The replayed choices are handed over as Hypothesis's database would hand
        over a failure of an earlier run (secondary corpus, so it is shrunk, not taken as minimal)."""
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes

        db = InMemoryExampleDatabase() if replay is not None else None

        @settings(max_examples=10**9, database=db, deadline=None, derandomize=False, print_blob=False,
                  phases=[Phase.reuse, Phase.shrink] if replay is not None else [Phase.generate],
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
        @hypothesis_seed(seed)
        @given(self.strategy)
        def prop(spec: GraphSpec) -> None:
            check(spec)

        if db is not None:
            key = f"shrink/{seed}".encode()
            prop._hypothesis_internal_database_key = key  # type: ignore[attr-defined]
            db.save(key + b".secondary", choices_to_bytes(tuple(replay)))
        prop()

    def reserve(self) -> float:
        """Seconds kept at the end of the budget for shrinking the disagreements waiting: SHRINK_EACH
        (at most ``shrink_s``) for each, at most SHRINK_SHARE of the budget."""
        cfg = self.config
        return min(SHRINK_SHARE * cfg.budget_s, len(self.pending) * min(SHRINK_EACH, cfg.shrink_s))

    def _done(self) -> bool:
        """Whether the testing phase is over: the budget less the shrinking reserve spent, or
        enough graphs tested or distinct disagreements found (shrunk or waiting)."""
        cfg = self.config
        if time.monotonic() >= self.deadline - self.reserve():
            return True
        if cfg.max_graphs is not None and self.stats.tested >= cfg.max_graphs:
            return True
        return cfg.max_findings is not None and len(self.findings) + len(self.pending) >= cfg.max_findings

    # -- findings ------------------------------------------------------------------------------
    def known(self, g: Graph, f: Failure) -> Finding | None:
        """A finding this failure is probably another instance of: same backend family and kind
        of symptom, and the graph holds every op of the finding's minimal graph."""
        ops = {n.op for n in g.nodes}
        for finding in self.findings.values():
            if finding.group == f.group and finding.kind == f.kind and finding.ops <= ops:
                return finding
        return None

    def failure_of(self, g: Graph, sig: tuple[str, str]) -> Failure | None:
        """``g``'s failure with signature ``sig``, if it still has one."""
        try:
            model = check_graph(g)
        except InvalidGraph:
            return None
        for f in self.tester.test(g, model.SerializeToString(), groups={sig[0]}):
            if f.signature == sig:
                return f
        return None

    def localize(self, g: Graph, f: Failure) -> tuple[Graph, Failure]:
        """Where the graph first goes wrong: with every node output exposed, the first output
        that fails (or, for an error, the first node whose prefix graph fails) is the root; its
        graph and failure replace the downstream symptom. A failure that needs the outputs
        hidden (a fusion) stays as it is."""
        if len(g.nodes) <= 1:
            return g, f
        exposed = all_outputs(g)
        try:
            model = check_graph(exposed)
        except InvalidGraph:
            return g, f
        first = next(iter(self.tester.test(exposed, model.SerializeToString(), groups={f.group})), None)
        if first is None:
            return g, f
        if first.verdict is not None and first.verdict.get("output") is not None:
            h = with_outputs(g, [exposed.outputs[first.verdict["output"]].name])
            candidates = [h] if h is not None else []
        else:
            candidates = prefixes(g)
        for h in candidates:
            if len(h.nodes) >= len(g.nodes) and [v.name for v in h.outputs] == [v.name for v in g.outputs]:
                break
            try:
                model = check_graph(h)
            except InvalidGraph:
                continue
            found = next(iter(self.tester.test(h, model.SerializeToString(), groups={f.group})), None)
            if found is not None:
                return h, found
        return g, f

    def triage(self, h: Graph, f: Failure, choices: tuple[Any, ...]) -> None:
        """A disagreement of the testing phase (``h``, ``f``: where it first goes wrong, see
        :meth:`localize`): a count against a known finding or root cause, a finding at once when
        it comes down to one node, else the first graph of a new root cause, waiting in
        :attr:`pending` (with the Hypothesis choices that drew it) to be shrunk at the end."""
        stats = self.stats
        known = self.known(h, f)
        rc = root_cause(h, f)
        counted = known if known is not None else self.roots.get(rc)
        if counted is not None:
            stats.duplicates += 1
            stats.root_duplicates += known is None
            counted.count += 1
            counted.symptoms[f.symptom] += 1
            if isinstance(counted, Pending) and _size_key(h) < _size_key(counted.graph):
                # a smaller graph of a waiting root cause: it is shrunk instead (from one node,
                # not at all: a finding now)
                counted.graph, counted.failure, counted.choices, counted.gen = h, f, tuple(choices), self.config.gen
                if len(h.nodes) == 1:
                    self.pending.remove(counted)
                    self._add(h, f, False, rc, counted.symptoms)
            return
        if len(h.nodes) == 1:
            # minimal by node count already: a finding without shrinking (its inputs keep their
            # drawn shapes; the finding says "not shrunk")
            self._add(h, f, False, rc)
            return
        waiting = Pending(h, f, tuple(choices), rc, self.config.gen, Counter({f.symptom: 1}))
        self.pending.append(waiting)
        self.roots[rc] = waiting

    def _shrink_pending(self, interrupted: bool) -> None:
        """Shrink the waiting disagreements, most valuable first (:func:`_value`), each in a
        share of the time left of the budget (the time left over the ones still waiting, at
        least MIN_SHRINK_S and at most ``shrink_s``); one whose graph holds a finding made
        meanwhile counts against it; what the budget leaves (or all of them after Ctrl-C) becomes
        a finding "not shrunk", with its whole (localized) graph."""
        self.pending.sort(key=_value)
        while self.pending:
            p = self.pending[0]
            now = time.monotonic()
            share = min(self.config.shrink_s, max(MIN_SHRINK_S, (self.deadline - now) / len(self.pending)))
            known = self.known(p.graph, p.failure)
            if known is not None:
                self.stats.duplicates += 1
                self.stats.root_duplicates += 1
                known.count += p.count
                known.symptoms.update(p.symptoms)
                self.roots[p.root] = known
            elif interrupted or self.deadline - now < MIN_SHRINK_S:
                self.stats.unshrunk += 1
                self._add(p.graph, p.failure, False, p.root, p.symptoms)
            else:
                g, f, shrunk = self._shrink(p, now + share)
                self._add(g, f, shrunk, p.root, p.symptoms)
            self.pending.pop(0)

    def _shrink(self, p: Pending, until: float) -> tuple[Graph, Failure, bool]:
        """``p``'s graph shrunk until ``until``: Hypothesis replays the choices that drew it and
        shrinks them (deleting node specs, moving knobs and references to 0) while the graph fails
        with the same signature, then graph surgery (fewer outputs, nodes cut into inputs)."""
        sig = p.failure.signature
        session = _Session(self, shrinking=(sig, p.gen, until))
        self.stats.shrunk += 1
        try:
            self._hypothesis(session.check, zlib.crc32(f"{self.base_seed}/shrink/{self.stats.shrunk}".encode()), p.choices)
        except BaseException as exc:
            # the disagreement Hypothesis re-raises after shrinking ends the session; anything
            # else (a bug of the harness) ends the campaign with its traceback
            if not only_disagreements(exc):
                raise
        if sig not in session.best:  # the replay did not fail again (a flaky backend): as drawn
            self.say(f"{sig[0]} {sig[1]}: the graph drawn did not fail again when replayed; kept as drawn, not shrunk")
            return p.graph, p.failure, False
        g, f = session.best[sig]
        g = reduce_graph(g, lambda h: time.monotonic() < until and self.failure_of(h, sig) is not None)
        return g, self.failure_of(g, sig) or f, True

    def _add(self, g: Graph, f: Failure, shrunk: bool, root: tuple[str, ...] | None, seen: Counter | None = None) -> None:
        """A minimal failing graph as a new finding, or more counts of the finding it repeats
        (``seen``: the symptoms of every graph counted against it, by default this one's)."""
        seen = seen if seen is not None else Counter({f.symptom: 1})
        key = (g.pattern, f.group, f.kind)
        if key in self.findings:
            self.findings[key].count += sum(seen.values())
            self.findings[key].symptoms.update(seen)
            if root is not None:
                self.roots[root] = self.findings[key]
            return
        spec_status = "spec"
        # an optimizer changing the result, or two sessions disagreeing, is a bug whatever
        # the spec says about NaN
        if f.kind.endswith("nan") and g.nan_assumed_ops and not f.kind.startswith(("opt-vs-noopt", "optimized")):
            spec_status = f"ambiguous: the spec does not say what {', '.join(sorted(set(g.nan_assumed_ops)))} do with NaN"
        finding = Finding(g.pattern, f.backend, f.group, f.symptom, f.outcome, f.message, g, f, shrunk=shrunk,
                          spec_status=spec_status, symptoms=Counter(seen), count=sum(seen.values()))
        self.findings[key] = finding
        if root is not None:
            self.roots[root] = finding
        case = None
        if self.config.regressions is not None and f.outcome != "unsupported":  # a missing kernel is no regression
            folder, new = save_regression(finding, self.config.regressions)
            finding.regression = folder.name
            self.say(f"{'new' if new else 'known'} regression case: {folder}")
            if new:  # the case `run --suite generated --regressions DIR` replays
                case = load_regression(folder)
        self._record(finding, case)
        self.say(f"new finding: {finding.summary()}")
        if len(g.nodes) == 1 and f.kind != "nan" and self._fails_plainly(g, f.signature):
            self._stop_drawing(g.nodes[0].key, g.dtype, finding)

    def _fails_plainly(self, g: Graph, sig: tuple[str, str]) -> bool:
        """Whether the one node of ``g`` fails the same way in its plainest form too (every knob
        0: no optional attribute, unit strides, no padding): a missing or wrong kernel for the
        type, rather than a failure of some attributes or shapes only."""
        node = g.nodes[0]
        gen = replace(self.config.gen, opsets=(g.opset,), dtypes=(g.dtype,), ops=(node.op,), nan_rate=0.0)
        for rank in range(8):  # the first input rank at which the op applies
            spec = GraphSpec(rank=rank, dims=(2, 2, 2, 2), nodes=(NodeSpec(0, (0,) * N_REFS, (0,) * N_KNOBS),))
            h = realize(spec, gen)
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

    def _record(self, finding: Finding, case: Case | None = None) -> None:
        """Store ``finding`` through the one recording step, as ``onnx-harness run`` stores the
        same case: its regression case (or the graph as a case of the generated suite) run and
        judged on the backend by the runner's worker code, so a finding, its replay by ``run`` and
        by the pytest plugin are the same row and bundle. A disagreement between two sessions of
        one runtime (optimized vs unoptimized) has no oracle case, and a finding the runner's
        judgement passes (a graph of several nodes judged by its ops' spec-silent invariants): the
        row is then the campaign's own comparison."""
        g, f = finding.graph, finding.failure
        result = None if f.symptom.startswith("opt-vs-noopt") else self.executor.judge(f.backend, case or graph_case(g))
        if result is not None and result.outcome == "pass":  # two judges of one graph disagree: said, and the finding kept
            self.say(f"{result.case_id} on {f.backend}: the campaign found {f.outcome} ({f.message}) where the runner's "
                     f"judgement passes it; stored as the campaign found it")
        if result is None or result.outcome == "pass":
            case = graph_case(g, tolerance=f.tolerance, expected=f.expected)
            result = Result(case.id, f.backend, f.outcome, f.message, verdict=f.verdict, tags=dict(case.tags), raw_outcome=f.outcome)
            result.actual = f.actual
        else:
            case = case or graph_case(g)
        finding.case_id = case.id
        self.recorder.record(result, case)
        if result.bundle:
            finding.bundle = result.bundle
        elif "[bundle not written:" in result.message:  # the reason, as stored
            self.say(f"bundle of {case.id} on {f.backend} not written: {result.message.rpartition(' [')[2].rstrip(']')}")

    def record_pass(self, g: Graph) -> None:
        """Keep a passing graph (up to ``keep_passes``) as the campaign judged it: a graph of
        several nodes may pass by its ops' spec-silent invariants, which its case carries only
        for one node."""
        if self.store is None or self.passes_kept >= self.config.keep_passes:
            return
        self.passes_kept += 1
        cid = case_id(g)
        tags = {"suite": SUITE, "ops": sorted({n.op for n in g.nodes}), "op_versions": g.op_versions, "opset": g.opset,
                "dtypes": [g.dtype], "nodes": len(g.nodes), "pattern": g.pattern, "spec": g.spec.to_json()}
        for b in self.config.backends:
            self.store.add_result(self.run_id, Result(cid, b.name, "pass", tags=tags, raw_outcome="pass"))


def _family(b: BackendSpec) -> str:
    return b.spec if ":" not in b.spec else b.name


@dataclass
class Pending:
    """The first graph of a root cause waiting to be shrunk (and the graphs counted against it)."""

    graph: Graph
    failure: Failure
    #: the Hypothesis choices that drew the graph's spec (replayed to shrink it)
    choices: tuple[Any, ...]
    root: tuple[str, ...]
    #: the generation settings it was drawn with (later exclusions must not change its replay)
    gen: GenConfig
    symptoms: Counter
    count: int = 1


#: kinds of disagreement by value, most valuable first (shrunk first when time is short): a
#: crash or hang, an optimizer changing the result, an error, wrong values, then the rest (NaN
#: placement, often a spec-silent point; refusals)
_VALUE = ("crash", "timeout", "optimized", "opt-vs-noopt", "error", "wrong-values", "wrong-shape", "wrong-dtype")


def _value(p: Pending) -> tuple[int, int]:
    kind = p.failure.kind
    rank = next((i for i, k in enumerate(_VALUE) if kind.startswith(k)), len(_VALUE))
    return (rank, -p.count)


class _Session:
    """One Hypothesis run: the testing phase's generation (every disagreement triaged, nothing
    raised), or, with ``shrinking`` (signature, generation settings, end time), one waiting
    graph replayed and shrunk while it fails with that signature."""

    def __init__(self, campaign: Campaign, shrinking: tuple[tuple[str, str], GenConfig, float] | None = None) -> None:
        self.c = campaign
        self.shrinking = shrinking
        #: signature -> (smallest failing graph, its failure), while shrinking
        self.best: dict[tuple[str, str], tuple[Graph, Failure]] = {}
        self.last_progress = 0.0
        self.started = time.monotonic()

    def close(self) -> None:
        if self.shrinking is None:
            self.c.stats.gen_seconds += time.monotonic() - self.started

    def check(self, spec: GraphSpec) -> None:
        if self.shrinking is not None:
            self._shrink_step(spec, *self.shrinking)
            return
        from hypothesis import reject
        from hypothesis.control import current_build_context

        c = self.c
        stats = c.stats
        if c._done():
            raise StopFuzzing
        now = time.monotonic()
        if c.progress and now - self.last_progress > 0.5:
            self.last_progress = now
            c.progress(c)
        g = realize(spec, c.config.gen)
        stats.drawn += 1
        if not g.nodes:
            stats.empty += 1
            reject()
        try:
            model = check_graph(g)
        except InvalidGraph as exc:
            stats.invalid += 1
            if len(stats.invalid_examples) < 20:
                stats.invalid_examples.append(f"{exc}\n{g.describe()}")
            reject()
        stats.valid += 1
        stats.nodes += len(g.nodes)
        stats.op_versions.update(n.key for n in g.nodes)
        stats.edge["nan" if g.nan_mode else g.edge] += 1
        stats.patterns.update(g.patterns)
        stats.silent_reached.update(p for site in {id(s): s for s in g.silent.values()}.values() for p in site.points)
        failures = c.tester.test(g, model.SerializeToString())
        stats.tested += 1
        if not failures:
            c.record_pass(g)
        for f in failures:
            stats.disagreements += 1
            c.triage(*c.localize(g, f), current_build_context().data.choices)

    def _shrink_step(self, spec: GraphSpec, sig: tuple[str, str], gen: GenConfig, until: float) -> None:
        from hypothesis import reject

        c = self.c
        if time.monotonic() >= until:
            return  # shrinking time is up: nothing fails any more, Hypothesis stops
        c.stats.shrink_steps += 1
        g = realize(spec, gen)
        if not g.nodes:
            reject()
        try:
            model = check_graph(g)
        except InvalidGraph:
            reject()
        for f in c.tester.test(g, model.SerializeToString(), groups={sig[0]}):
            h, root = c.localize(g, f)
            if root.signature != sig:
                continue
            held = self.best.get(sig)
            if held is None or _size_key(h) < _size_key(held[0]):
                self.best[sig] = (h, root)
            raise _disagreement(sig)(f"{sig[0]} {sig[1]}: {root.message[:300]}")

# =============================================================================================
# backends: probing the opsets they accept
# =============================================================================================
def root_cause(h: Graph, f: Failure) -> tuple[str, ...]:
    """The root cause a disagreement is deduplicated by before it is shrunk: backend family,
    kind of symptom, dtype, and where it starts: the op-version producing the one output of a
    localized graph (:meth:`Campaign.localize`), else the optimizer patterns the graph holds
    (a fusion needs the whole graph), else its sorted op types."""
    if len(h.outputs) == 1 and h.nodes:
        where = next((n.key for n in h.nodes if h.outputs[0].name in n.outputs), h.nodes[-1].key)
    else:
        where = "+".join(sorted(h.patterns)) or h.pattern
    return (f.group, f.kind, h.dtype, where)


def max_opset(executor: Any, name: str, low: int = 13) -> int | None:
    """The highest ai.onnx opset at which ``name`` loads and runs a one-node graph."""
    from onnx import TensorProto, helper

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
