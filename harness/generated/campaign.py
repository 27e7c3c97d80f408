"""``onnx-harness fuzz``: property-based differential testing with generated graphs.

Each example is a graph drawn by :mod:`harness.generated`; the property runs it on every
selected backend and compares each output with the composed reference under that output's
tolerance (and, for ONNX Runtime, the optimized session with the unoptimized one). A
disagreement makes the property fail, Hypothesis shrinks the graph (deleting node specs,
moving knobs and references to 0), and the smallest failing graph becomes a *finding*: stored
as a result of suite ``generated``, with a repro bundle. Findings are deduplicated by
(sorted op pattern of the minimal graph, backend, symptom), so one root cause gives one report;
a later graph that fails the same way on a backend and contains a known finding's ops is
counted as a duplicate without shrinking again. Before any shrinking, a disagreement is keyed by
its root cause (:func:`root_cause`: backend family, kind of symptom, dtype, and the op-version
whose output first goes wrong, or the optimizer patterns of a failure that needs the whole
graph): only the first graph of each root cause is shrunk, later ones count against it.

A campaign is a series of Hypothesis runs with fresh seeds until the wall-clock budget ends;
each run ends at its first disagreement (after shrinking it). Ctrl-C keeps every finding. Any
other exception is a bug of the harness: it ends the campaign with its traceback (the store
marks the run ``failed``), never a report of "0 findings".

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
    #: disagreements counted against a root cause already being (or having been) shrunk
    root_duplicates: int = 0
    shrink_steps: int = 0
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
        #: root causes (root_cause) already shrunk, each with the finding it became (None while
        #: its session still shrinks it)
        self.roots: dict[tuple[str, ...], Finding | None] = {}

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
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis.errors import Unsatisfiable

        cfg = self.config
        self._setup()
        self.deadline = time.monotonic() + cfg.budget_s
        base_seed = cfg.seed if cfg.seed is not None else int.from_bytes(os.urandom(4), "big")
        low = cfg.min_specs if cfg.min_specs is not None else max(1, cfg.gen.max_nodes // 2)
        strategy = graph_specs(low, cfg.max_specs or max(low, 2 * cfg.gen.max_nodes))
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
                def prop(spec: GraphSpec) -> None:
                    session.check(spec)

                try:
                    prop()
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
                    session.close()
                    self._finalize(session, final=True, reduce=True)
                    break
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

    def _finalize(self, session: _Session, final: bool = False, reduce: bool = True) -> None:
        """Turn a session's smallest failing graphs into findings: reduce each further (fewer
        outputs, nodes cut into inputs) while it fails the same way, then deduplicate."""
        for sig, (g, f) in session.best.items():
            shrunk = sig in session.raised
            if not shrunk and not final:
                continue  # it will come back in a later session and be shrunk then
            if shrunk and reduce and time.monotonic() < self.deadline + self.config.shrink_s:
                g = reduce_graph(g, lambda h: self.failure_of(h, sig) is not None)
                f = self.failure_of(g, sig) or f
            self._add(g, f, shrunk, session.roots.get(sig))
        session.best.clear()

    def _add(self, g: Graph, f: Failure, shrunk: bool, root: tuple[str, ...] | None) -> None:
        """A minimal failing graph as a new finding, or one more count of the finding it repeats."""
        key = (g.pattern, f.group, f.kind)
        if key in self.findings:
            self.findings[key].count += 1
            self.findings[key].symptoms[f.symptom] += 1
            if root is not None:
                self.roots[root] = self.findings[key]
            return
        spec_status = "spec"
        # an optimizer changing the result, or two sessions disagreeing, is a bug whatever
        # the spec says about NaN
        if f.kind.endswith("nan") and g.nan_assumed_ops and not f.kind.startswith(("opt-vs-noopt", "optimized")):
            spec_status = f"ambiguous: the spec does not say what {', '.join(sorted(set(g.nan_assumed_ops)))} do with NaN"
        finding = Finding(g.pattern, f.backend, f.group, f.symptom, f.outcome, f.message, g, f, shrunk=shrunk,
                          spec_status=spec_status, symptoms=Counter({f.symptom: 1}))
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


class _Session:
    """One Hypothesis run: generation until the first new disagreement, then its shrinking."""

    def __init__(self, campaign: Campaign) -> None:
        self.c = campaign
        #: signature -> (smallest failing graph, its failure)
        self.best: dict[tuple[str, str], tuple[Graph, Failure]] = {}
        self.raised: set[tuple[str, str]] = set()
        #: signature -> root cause of the graph this session shrinks for it
        self.roots: dict[tuple[str, str], tuple[str, ...]] = {}
        self.first_failure: float | None = None
        self.last_progress = 0.0
        self.started = time.monotonic()

    def close(self) -> None:
        end = self.first_failure if self.first_failure is not None else time.monotonic()
        self.c.stats.gen_seconds += end - self.started

    def check(self, spec: GraphSpec) -> None:
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
        g = realize(spec, c.config.gen)
        if not g.nodes:
            if self.first_failure is None:
                stats.drawn += 1
                stats.empty += 1
            reject()
        if self.first_failure is None:
            stats.drawn += 1
        try:
            model = check_graph(g)
        except InvalidGraph as exc:
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
            stats.edge["nan" if g.nan_mode else g.edge] += 1
            stats.patterns.update(g.patterns)
            stats.silent_reached.update(p for site in {id(s): s for s in g.silent.values()}.values() for p in site.points)
        model_bytes = model.SerializeToString()
        failures = c.tester.test(g, model_bytes)
        if self.first_failure is None:
            stats.tested += 1
            if not failures:
                c.record_pass(g)
        fresh: list[tuple[Graph, Failure]] = []
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
                if self.first_failure is None:
                    rc = root_cause(h, root)
                    if rc in c.roots:  # its first graph is (being) shrunk: this one only counts
                        stats.duplicates += 1
                        stats.root_duplicates += 1
                        counted = c.roots[rc]
                        if counted is not None:
                            counted.count += 1
                            counted.symptoms[root.symptom] += 1
                        continue
                    self.roots.setdefault(root.signature, rc)
            fresh.append((h, root))
        if self.first_failure is None:
            # localized to one node: minimal by node count already, a finding without shrinking
            # (its inputs keep their drawn shapes; the finding says "not shrunk")
            for h, f in [(h, f) for h, f in fresh if len(h.nodes) == 1]:
                c._add(h, f, False, self.roots.get(f.signature))
            fresh = [(h, f) for h, f in fresh if len(h.nodes) > 1]
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
        if sig in self.roots:
            c.roots.setdefault(self.roots[sig], None)
        raise _disagreement(sig)(f"{sig[0]} {sig[1]}: {fresh[0][1].message[:300]}")

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
