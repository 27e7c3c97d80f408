"""A conformance run: cases from suites, on backends, through the runner, into the store.

Every finished result is recorded (its expectation applied and, when it is an unexpected
non-pass, its repro bundle written) and stored in batches, one transaction per 256 results or
per 100 ms: Ctrl-C or an error commits what is waiting; a kill of the controller loses at most
the batch not yet committed, whose cases ``resume`` runs again, so it completes the run without
repeating a stored result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import re
import shlex
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx

from . import __version__, expectations
from .case import Case, CorpusError
from .worker import FAILURES, ExecOptions, Result
from .record import Recorder
from .intake import GIB, Limits
from .timing import TimingPolicy
from .runner import BackendInfo, BackendSpec, Runner, WorkerLimits, default_jobs
from .store import Store, bundles_root
from .suites import SuiteContext, suite_cases
from .suites.onnx_official import read_manifest


@dataclass
class RunConfig:
    suites: list[str]
    backends: list[BackendSpec]
    pattern: str | None = None
    opset: int | None = None
    jobs: int = field(default_factory=default_jobs)
    timeout: float = 120.0
    store: Path = Path("reports/results.sqlite")
    corpus: Path = Path("corpus")
    bundles: Path | None = None
    expectations: list[Path] = field(default_factory=list)
    restamp: bool = True
    repeat: int = 0
    #: calibrated timings (``--timing``): seconds per case and backend, 0: off unless ``repeat``
    timing_budget: float = 0.0
    examples: int | None = None
    seed: int | None = None
    #: generated suite: replay the regression cases under this folder (default: the checked-in ones)
    regressions: Path | None = None
    recycle_after: int = 0
    memory_limit_gib: float = 8.0
    cpu_limit_s: float | None = None
    output_limit_mib: int = 64
    max_model_gib: float = 4.0
    #: the user's own models (--model), dimension bindings (--dim) and oracle backend (--oracle)
    models: list[str] = field(default_factory=list)
    dims: list[str] = field(default_factory=list)
    oracle: str = "reference"
    #: models suite: cache folder, frameworks, rebuild
    models_cache: str | None = None
    frameworks: list[str] | None = None
    rebuild_models: bool = False
    #: an expectation that matched nothing is an unexpected result too
    strict: bool = False
    #: seconds (in total) for localizing the first diverging node of non-passes; 0: off
    localize: float = 0.0
    #: "I/N": only the cases of shard I of N (1-based; see :func:`in_shard`), for CI matrices
    shard: str | None = None
    #: where the cases run: "local" (worker processes here) or "ray" (a Ray cluster)
    executor: str = "local"
    ray_address: str | None = None
    #: Ray resources per backend beyond CPUs: {"openvino-gpu": {"GPU": 1}}
    ray_resources: dict[str, dict[str, float]] = field(default_factory=dict)

    def worker_limits(self) -> WorkerLimits:
        return WorkerLimits(memory=int(self.memory_limit_gib * GIB) or None, cpu=self.cpu_limit_s,
                            output=(self.output_limit_mib << 20) or None)

    def intake_limits(self) -> Limits:
        return Limits(max_model_bytes=int(self.max_model_gib * GIB), max_tensor_bytes=int(self.memory_limit_gib * GIB) or Limits().max_tensor_bytes)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["backends"] = [asdict(b) for b in self.backends]
        return json.loads(json.dumps(d, default=str))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunConfig:
        d = dict(d)
        d["backends"] = [BackendSpec(**b) for b in d["backends"]]
        for key in ("store", "corpus"):
            d[key] = Path(d[key])
        d["bundles"] = Path(d["bundles"]) if d.get("bundles") else None
        d["expectations"] = [Path(p) for p in d.get("expectations", [])]
        return cls(**d)


#: outcomes localize looks into (a node can be named for each); xfail is known, pass and
#: unspecified are not failures, export-failed has no model
LOCALIZED = ("mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout")


def _localize_result(result: Result, case: Case, spec: BackendSpec, config: RunConfig, left: float) -> float:
    """``run --localize``: the first diverging node of a non-pass of a multi-node model, kept in
    the result's verdict (``verdict["localized"]``, shown by the HTML drill-down) with its
    one-node bundle beside the result's own; returns the seconds it took."""
    import time

    from .localize import localize

    if result.outcome not in LOCALIZED:
        return 0.0
    t0 = time.monotonic()
    try:
        if len(case.load_model().graph.node) < 2:
            return time.monotonic() - t0
        folder = Path(result.bundle) / "localized" if result.bundle else None
        loc = localize(case, spec, BackendSpec(config.oracle), timeout=min(config.timeout, max(left, 1.0)), bundle=folder)
        info = loc.to_dict()
    except Exception as exc:  # localize is evidence beside the verdict: its failure is said there, not raised
        info = {"status": "failed", "message": f"{type(exc).__name__}: {exc}"[:500]}
    result.verdict = {**(result.verdict or {}), "localized": info}
    return time.monotonic() - t0


def _record_end_load(store: Store, run_id: int) -> None:
    """The load average at the end of the run beside the one at its start: timings taken on a
    busy machine say so."""
    import os

    try:
        env = store.run(run_id)["environment"]
        env.setdefault("machine_info", {})["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        store.set_environment(run_id, env)
    except (OSError, KeyError) as exc:
        print(f"onnx-harness: load average at the end of run {run_id} not recorded: {exc}", file=sys.stderr)


class BadPattern(ValueError):
    pass


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``: shard 2 of 4, numbered from 1 as CI matrices count."""
    index, sep, count = text.partition("/")
    if not (sep and index.strip().isdigit() and count.strip().isdigit()) or not 1 <= int(index) <= int(count):
        raise BadPattern(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/4")
    return int(index), int(count)


def in_shard(case_id: str, index: int, count: int) -> bool:
    """Whether shard ``index`` of ``count`` holds the case: a stable hash of its id (the same on
    every machine and Python), so the N shards of one selection cover each case exactly once."""
    digest = hashlib.sha256(case_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def select_cases(config: RunConfig, say: Callable[[str], None], verify: bool = True) -> list[Case]:
    """The cases of the run's suites (and ``--model`` files) its ``-k`` and shard select. With
    ``verify`` false a frozen official case's digest is checked where it is loaded, not here."""
    try:
        regex = re.compile(config.pattern) if config.pattern else None
    except re.error as exc:
        raise BadPattern(f"bad -k pattern {config.pattern!r}: {exc}") from exc
    extra = {"models_cache": config.models_cache, "frameworks": config.frameworks, "rebuild": config.rebuild_models,
             "regressions": config.regressions}
    ctx = SuiteContext(corpus=config.corpus, opset=config.opset, examples=config.examples, seed=config.seed, say=say, extra=extra,
                       pattern=regex, verify=verify, jobs=config.jobs)
    sources = [suite_cases(suite, ctx) for suite in config.suites]
    if config.models:
        from .suites.user_models import user_model_cases

        sources.append(user_model_cases(config.models, _parse_dims(config.dims), config.oracle, say=say,
                                        backends=[b.name for b in config.backends]))
    shard = parse_shard(config.shard) if config.shard else None
    cases: dict[str, Case] = {}
    for source in sources:
        for case in source:
            if (regex is None or regex.search(case.id)) and (shard is None or in_shard(case.id, *shard)):
                cases.setdefault(case.id, case)
    return list(cases.values())


def _parse_dims(items: list[str]) -> dict[str, int]:
    dims = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name or not value.strip().isdigit():
            raise BadPattern(f"--dim {item!r}: expected NAME=VALUE with a whole number, e.g. batch=4")
        dims[name.strip()] = int(value)
    return dims


def environment(config: RunConfig) -> dict[str, Any]:
    env: dict[str, Any] = {
        "harness": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        # portable and pasteable: the program by its name (argv[0] is a path on this machine), shell-quoted
        "command": shlex.join(["onnx-harness", *sys.argv[1:]]),
    }
    try:
        manifest = read_manifest(config.corpus)
        env["corpus_sha256"] = manifest["corpus_sha256"]
        env["corpus_onnx"] = manifest["onnx"]
    except Exception:
        pass
    from .timing import machine

    env["machine_info"] = machine()
    env["jobs"] = config.jobs
    try:
        from threadpoolctl import threadpool_info

        env["blas"] = [{k: i.get(k) for k in ("internal_api", "version", "num_threads")} for i in threadpool_info()]
    except Exception:
        pass
    return env


@dataclass
class Unexpected:
    """A result the run did not expect: a non-pass no expectation covers, an xpass, an
    unavailable backend, or (strict) an expectation that matched nothing."""
    backend: str
    case_id: str  # "" for a backend or an expectation
    outcome: str  # an outcome, "unavailable" or "stale expectation"
    message: str = ""

    def __str__(self) -> str:
        if self.outcome == "unavailable":
            return f"{self.backend} unavailable ({self.message})"
        return " ".join(p for p in (self.backend, self.case_id, self.outcome) if p)


@dataclass
class RunOutcome:
    run_id: int
    backends: dict[str, BackendInfo]
    counts: dict[str, Counter]
    #: expectations that matched nothing (see ``expectations.stale``)
    stale: list[expectations.Expectation]
    interrupted: bool = False
    #: expectations files used, with their number of entries
    expectation_files: dict[str, int] = field(default_factory=dict)
    unexpected: list[Unexpected] = field(default_factory=list)


def unexpected_results(config: RunConfig, infos: dict[str, BackendInfo], rows: list[dict[str, Any]],
                       stale: list[expectations.Expectation]) -> list[Unexpected]:
    out = [Unexpected(name, "", "unavailable", info.reason) for name, info in infos.items() if not info.available]
    out += sorted((Unexpected(r["backend"], r["case_id"], r["outcome"], r["message"] or "") for r in rows
                   if r["outcome"] in FAILURES or r["outcome"] == "xpass"), key=lambda u: (u.backend, u.case_id))
    if config.strict:  # a stale entry, a todo entry's match and a spec-silent choice other than ours count too
        out += [Unexpected(e.backend, e.case, "stale expectation", f"matched nothing ({e.source})") for e in stale]
        out += [Unexpected(r["backend"], r["case_id"], "xfail by an undecided entry", r["reason"] or "") for r in rows
                if r["outcome"] == "xfail" and (r.get("reason") or "").startswith("todo: ")]
        out += [Unexpected(r["backend"], r["case_id"], "unspecified", r["message"] or "") for r in rows if r["outcome"] == "unspecified"]
    return out


def _runner(config: RunConfig, timeout: float, options: ExecOptions, say: Callable[[str], None]) -> Any:
    """The local runner, or with ``executor="ray"`` its counterpart on a Ray cluster (same interface)."""
    if config.executor == "ray":
        try:
            from .executors.ray import RayRunner
        except ImportError as exc:
            raise BadPattern(f"--executor ray needs ray: pip install 'onnx-harness[ray]' ({exc})") from exc
        return RayRunner(config.backends, timeout=timeout, options=options, recycle_after=config.recycle_after,
                         limits=config.worker_limits(), address=config.ray_address, resources=config.ray_resources, say=say)
    if config.executor != "local":
        raise BadPattern(f"unknown executor {config.executor!r} (local, ray)")
    return Runner(config.backends, jobs=config.jobs, timeout=timeout, options=options,
                  recycle_after=config.recycle_after, limits=config.worker_limits())


def _select_while_probing(config: RunConfig, runner: Any, say: Callable[[str], None]
                          ) -> tuple[list[Case], dict[str, BackendInfo], Callable[[], expectations.Entries]]:
    """The run's cases, its backends' infos, and what reads the expectations of those that
    loaded (once, when first asked: a run asks on its first result, so the workers start on the
    first cases meanwhile). The local runner's workers start and load their backends in a thread
    while this one selects the cases; they stay, backends loaded, for the run. No case selected,
    or a failure of either: the workers are stopped."""
    if not isinstance(runner, Runner):
        cases, infos = _selected(config, say), runner.probe()
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="probe") as pool:
            probing = pool.submit(runner.probe, keep=True)
            try:
                cases = _selected(config, say)
                infos = probing.result()
            except BaseException:
                wait([probing])  # the probe kills its own workers when it fails
                runner.close()
                raise
    live = [b.name for b in config.backends if infos[b.name].available]
    return cases, infos, functools.cache(lambda: expectations.load(live, config.expectations, say=lambda m: print(m, file=sys.stderr)))


def _selected(config: RunConfig, say: Callable[[str], None]) -> list[Case]:
    cases = select_cases(config, say, verify=False)  # the workers check each case's digest as they load it
    if not cases:
        where = f" in shard {config.shard}" if config.shard else ""
        raise BadPattern(f"no case matches -k {config.pattern!r} in suites {', '.join(config.suites)}{where}" if config.pattern
                         else f"suites {', '.join(config.suites)} hold no cases{where}")
    return cases


def execute_run(config: RunConfig, store: Store, run_id: int | None = None, say: Callable[[str], None] = print,
                progress: Callable[[int], Any] | None = None) -> RunOutcome:
    """Run (or, with ``run_id``, resume) a conformance run. ``progress`` is called with the
    total number of tasks and returns a callable taking each result."""
    options = ExecOptions(restamp=config.restamp, repeat=config.repeat, opset=config.opset, limits=config.intake_limits(),
                          timing=TimingPolicy(budget_s=config.timing_budget) if config.timing_budget else None)
    # timed repeats multiply the work of a case, and so its time limit
    policy = options.timing_policy()
    timeout = config.timeout * (1 + policy.max_warmups + policy.min_samples) + 10 * policy.budget_s if policy else config.timeout
    runner = _runner(config, timeout, options, say)  # before the run is stored: a missing executor leaves no run behind
    cases, infos, load_entries = _select_while_probing(config, runner, say)
    env = environment(config)
    if run_id is None:
        run_id = store.start_run(env["command"], config.to_json(), env, env.get("corpus_sha256"))
    else:
        store.reopen_run(run_id)
    done = store.done_pairs(run_id)
    for name, info in infos.items():
        store.record_backend(run_id, name, info.available, info.reason, info.version, info.environment)
        if not info.available:
            say(f"backend {name} unavailable: {info.reason}")
    live = [b.name for b in config.backends if infos[b.name].available]
    specs = {b.name: b for b in config.backends}
    by_id = {c.id: c for c in cases}
    # biggest models first, so that no worker is left with a long case at the end; cases of one
    # model next to each other, so that a worker gets them together and prepares the model once
    ordered = sorted(cases, key=lambda c: (-c.model_size(), c.model_bytes or b""))
    tasks = [(case, name) for case in ordered for name in live if (case.id, name) not in done]
    bundles = config.bundles or bundles_root(config.store)
    counts: dict[str, Counter] = {name: Counter() for name in live}
    for row in store.summary_rows(run_id):
        if row["backend"] in counts:
            counts[row["backend"]][row["outcome"]] += 1
    tick = progress(len(tasks)) if progress else None
    budget = {"left": config.localize}
    recorder = Recorder(store, run_id, bundles, specs, [], config.restamp, config.opset, batched=True)

    def localize_here(result: Result) -> None:
        if config.localize and budget["left"] > 0:
            budget["left"] -= _localize_result(result, by_id[result.case_id], specs[result.backend], config, budget["left"])

    def on_result(result: Result) -> None:
        if result.tags.get("corpus_mismatch"):  # the corpus cannot be trusted: the run stops, naming the case
            raise CorpusError(result.message)
        if not recorder.entries:  # read on the first result: the workers have their first cases meanwhile
            recorder.entries = load_entries()
        recorder.record(result, by_id[result.case_id], localize_here)
        counts[result.backend][result.outcome] += 1
        if tick:
            tick(result)

    interrupted = False
    try:
        try:
            if isinstance(runner, Runner):
                runner.run(tasks, on_result, on_idle=recorder.due)
            else:
                runner.run(tasks, on_result)
        finally:
            recorder.flush()  # what finished is stored, however the run ends
    except KeyboardInterrupt:
        interrupted = True
    except CorpusError as exc:
        store.finish_run(run_id, "interrupted")  # what it finished stays
        raise CorpusError(f"{exc}; run {run_id} keeps the results it finished: once the corpus is rebuilt, "
                          f"continue with 'onnx-harness run --resume {run_id} --store {config.store}'") from exc
    except expectations.ExpectationError as exc:  # read on the first result: the run has started
        store.finish_run(run_id, "interrupted")
        raise expectations.ExpectationError(f"{exc}; run {run_id} stored no result: once the file is mended, continue with "
                                            f"'onnx-harness run --resume {run_id} --store {config.store}'") from exc
    finally:
        getattr(tick, "close", lambda: None)()
    store.finish_run(run_id, "interrupted" if interrupted else "complete")
    _record_end_load(store, run_id)
    rows = list(store.summary_rows(run_id))  # what the end needs, without parsing each result's JSON
    entries = load_entries()
    for r in rows if done else ():  # a resumed run: what its earlier part's results matched
        if (r["case_id"], r["backend"]) in done:
            raw = r["raw_outcome"] or r["outcome"]
            recorder.usage.note(expectations.matching(entries, r["backend"], r["case_id"]), raw)
    stale = [] if interrupted else recorder.usage.stale(entries, {c.id.split("/", 1)[0] for c in cases},
                                                        narrowed=bool(config.pattern) or config.opset is not None)
    files = dict(Counter(e.source for e in entries))
    return RunOutcome(run_id, infos, counts, stale, interrupted, files, unexpected_results(config, infos, rows, stale))
