"""Re-measuring cases for the performance gate (``onnx-harness diff --perf-threshold``).

The cases a diff calls slower are timed again here, now, on one worker: each on the new run's
backend, interleaved round by round with the base run's backend where the version the base run
recorded is the one installed here (both then meet the same load), else beside a few control
cases, pairs of both runs that did not change, which say how much slower the machine is now
than during the base run. The statistics that decide are :func:`harness.report.perf.confirm`'s.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Callable

from .worker import ExecOptions, Result
from .report.perf import PerfChange, Remeasured, Stat
from .runner import BackendSpec, Runner
from .timing import TimingPolicy

#: measurements of each case, interleaved; their samples are pooled
ROUNDS = 3
#: control cases per backend when the base backend cannot be measured again
CONTROLS = 3


def remeasure(changes: list[PerfChange], base_run: dict[str, Any], new_run: dict[str, Any], base_versions: dict[str, str],
              store_path: Path, unchanged: list[tuple[str, str, Stat]], rounds: int = ROUNDS, controls: int = CONTROLS,
              say: Callable[[str], None] = print) -> dict[tuple[str, str], Remeasured]:
    """A :class:`Remeasured` for every regression of ``changes``. ``base_versions``: the base run's
    backend versions by name; ``unchanged``: (case, backend, base timing) of pairs timed in both
    runs that did not change, the control candidates."""
    from .cliutil import CliError
    from .lookup import find_case

    wanted = [c for c in changes if c.regression]
    out: dict[tuple[str, str], Remeasured] = {}
    if not wanted:
        return out
    specs_new = {b["name"]: b for b in (new_run.get("args") or {}).get("backends", [])}
    specs_base = {b["name"]: b for b in (base_run.get("args") or {}).get("backends", [])}
    args = new_run.get("args") or {}
    corpus = Path(args.get("corpus") or "corpus")
    cases: dict[str, Any] = {}

    def case(case_id: str) -> Any:
        if case_id not in cases:
            try:
                cases[case_id] = find_case(case_id, corpus, store_path)
            except CliError as exc:
                cases[case_id] = exc
        return cases[case_id]

    names = sorted({c.backend for c in wanted})
    runner_specs = []
    for name in names:
        if name in specs_new:
            runner_specs.append(BackendSpec(specs_new[name]["spec"], specs_new[name].get("options") or {}, f"new:{name}"))
        if name in specs_base:
            runner_specs.append(BackendSpec(specs_base[name]["spec"], specs_base[name].get("options") or {}, f"base:{name}"))
    runner = Runner(runner_specs, jobs=1, timeout=float(args.get("timeout") or 120.0) * 4,
                    options=ExecOptions(restamp=args.get("restamp", True), opset=args.get("opset"),
                                        timing=TimingPolicy(budget_s=float(args.get("timing_budget") or 0) or TimingPolicy().budget_s)))
    infos = runner.probe(keep=True) if runner_specs else {}
    beside = {name for name in names if f"base:{name}" in infos and infos[f"base:{name}"].available
              and infos[f"base:{name}"].version == base_versions.get(name)}
    tasks: list[tuple[Any, str]] = []
    for c in wanted:
        key, found = (c.case_id, c.backend), case(c.case_id)
        info = infos.get(f"new:{c.backend}")
        if c.backend not in specs_new:
            out[key] = Remeasured(None, why=f"the new run stored no spec of backend {c.backend}")
        elif info is None or not info.available:
            out[key] = Remeasured(None, why=f"backend {c.backend} unavailable here: {info.reason if info else 'not probed'}")
        elif isinstance(found, Exception):
            out[key] = Remeasured(None, why=str(found))
        else:
            tasks += [(found, f"base:{c.backend}")] * (c.backend in beside) + [(found, f"new:{c.backend}")]
    control_cases: dict[str, list[tuple[str, Stat]]] = {}
    for name in names:
        if name in beside or not any(k[1] == name and k not in out for k in ((c.case_id, c.backend) for c in wanted)):
            continue
        picked = []
        for case_id, backend, stat in unchanged:
            if backend == name and len(picked) < controls and not isinstance(case(case_id), Exception):
                picked.append((case_id, stat))
                tasks.append((case(case_id), f"new:{name}"))
        control_cases[name] = picked
    if not tasks:
        runner.close()
        return out
    say(f"re-measuring {len(wanted) - len(out)} case(s) the diff calls slower ({rounds} rounds, interleaved"
        + (f" with the base backend{'s' if len(beside) > 1 else ''} {', '.join(sorted(beside))}" if beside else "") + ")")
    timed: dict[tuple[str, str], list[Stat]] = {}
    failed: dict[tuple[str, str], str] = {}

    def keep(result: Result) -> None:
        stat = Stat.of({"timing": result.timing, "run_median_s": result.run_median_s})
        if stat is None or not stat.calibrated:
            failed[(result.case_id, result.backend)] = f"{result.outcome}: {result.message}"[:200] or "no timing"
        else:
            timed.setdefault((result.case_id, result.backend), []).append(stat)

    runner.run(tasks * rounds, keep)

    def pooled(case_id: str, side: str) -> Stat | None:
        stats = timed.get((case_id, side))
        return Stat.pooled(stats) if stats and len(stats) == rounds else None

    for c in wanted:
        key = (c.case_id, c.backend)
        if key in out:
            continue
        after = pooled(c.case_id, f"new:{c.backend}")
        if after is None:
            out[key] = Remeasured(None, why=failed.get((c.case_id, f"new:{c.backend}"), "no calibrated timing"))
        elif c.backend in beside:
            base = pooled(c.case_id, f"base:{c.backend}")
            out[key] = Remeasured(after, base) if base else Remeasured(None, why=failed.get((c.case_id, f"base:{c.backend}"), "no base timing"))
        else:
            ratios = [s.median / stat.median for case_id, stat in control_cases.get(c.backend, [])
                      if (s := pooled(case_id, f"new:{c.backend}")) is not None and stat.median > 0]
            if not ratios:
                out[key] = Remeasured(None, why=f"the base run's {c.backend} {base_versions.get(c.backend, '?')} is not installed here "
                                               "and no control case could be measured")
            else:
                factor = math.exp(statistics.median(math.log(r) for r in ratios))
                out[key] = Remeasured(after, None, factor, len(ratios))
    return out
