"""The ``report`` and ``diff`` subcommands: ``register(subparsers)`` adds both.

    onnx-harness report [RUN ...] [--store S ...] [-o reports/] [--baseline RUN] [--screenshots]
    onnx-harness diff BASE [NEW] [--store S ...] [--allow [BACKEND:]CASE-GLOB ...]

A RUN is a run number, ``latest`` or ``previous`` in the store; with several ``--store`` files
it is ``STORE:N`` (a file, or its 1-based position). ``diff`` also reads ``results.json`` (of a
report) or a run's JSON file as BASE or NEW. ``diff`` lists each kind of change in its own
section (``diff.TRANSITIONS`` is the table) and exits 1 when a case x backend regressed (a
pass or a known failure that now fails, is skipped or is gone; a failure that changed; a case
run for the first time that does not pass) and no ``--allow`` pattern accepts it.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .diff import CHANGE_KINDS, KINDS, REGRESSION_KINDS
from .sources import ReportError

#: kinds that can hold a whole suite (one was added or dropped): listed up to --max-listed
LONG_KINDS = ("new", "new-failing", "removed")

DEFAULT_STORE = str(Path("reports") / "results.sqlite")


def _err(message: str) -> int:
    print(f"onnx-harness: error: {message}", file=sys.stderr)
    return 2


def _size(path: Path) -> str:
    n = path.stat().st_size
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def cmd_report(args: argparse.Namespace) -> int:
    from . import write_all
    from .matrix import build_report
    from .selection import baseline_runs, hidden_runs
    from .selection import resolve_runs
    from .sources import resolve_run

    stores = _expand_stores(args.store or [DEFAULT_STORE])
    try:
        refs = resolve_runs(args.runs, stores)
        if args.baseline and args.baseline.lower() == "none":
            baseline = None
        elif args.baseline:
            baseline = resolve_run(args.baseline, stores)
        else:
            baseline = baseline_runs(refs)
        report = build_report(refs, baseline, history=not args.no_history)
        if not args.runs:
            report.hidden = [(ref.label, what) for ref, what in hidden_runs(refs)]
    except ReportError as exc:
        return _err(str(exc))
    if args.perf_baseline:
        if args.perf_baseline not in [b.label for b in report.backends if b.available]:
            return _err(f"--perf-baseline {args.perf_baseline!r}: not a backend of this report ({', '.join(b.label for b in report.backends)})")
        report.perf_baseline = args.perf_baseline
    out = Path(args.output)
    paths = write_all(report, out, only=args.format or None)
    for b in report.backends:
        if not b.available:
            print(f"{b.label}: unavailable: {b.reason}")
        else:
            h = b.headline
            rate = f"conformance {100 * b.pass_rate:.1f}% of {b.loadable:,} attempted" if b.pass_rate is not None else "no case attempted"
            print(f"{b.label} {b.version}: {rate}; wrong answers {h['wrong_answers']:,}, not implemented {h['not_implemented']:,}, "
                  f"errors {h['errors']:,}; {b.not_loadable:,} refused (invalid model)" + (f", {h['unspecified']:,} unspecified (apart; {h['unchecked']:,} of them unchecked)" if h["unspecified"] else ""))
            print(f"  over {'; '.join(b.over) or 'no conformance case'}")
    for label, what in report.hidden:
        print(f"not shown: {label} ({what}) is a subset; a fuller run of the same backend is shown (report it with: onnx-harness report {label.rsplit(' ', 1)[-1]})")
    if report.bench:
        print(f"benchmark: {len(report.bench):,} results (performance section; not conformance)")
    if report.diff is not None:
        print(f"against {report.diff.base}: {report.diff.counts_line()}" if not report.diff.disjoint else report.diff.scope())
        if report.diff.scope() and not report.diff.disjoint:
            print(f"  ({report.diff.scope()})")
    for path in paths:
        print(f"wrote {path} ({_size(path)})")
    if args.screenshots:
        from .browser import BrowserUnavailable, screenshots

        index = out / "index.html"
        if not index.exists():
            return _err("--screenshots needs the HTML report (add --format html)")
        try:
            for path in screenshots(index, out):
                print(f"wrote {path} ({_size(path)})")
        except BrowserUnavailable as exc:
            return _err(f"--screenshots: {exc}")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from .. import expectations

    from .diff import diff_results
    from .selection import like_for_like, ref_selections
    from .sources import RunRef, load_rows, portable_text, resolve_source

    stores = _expand_stores(args.store or [DEFAULT_STORE])
    if args.perf_threshold is not None:
        from .perf import parse_threshold

        try:
            parse_threshold(args.perf_threshold)
        except ValueError as exc:
            return _err(str(exc))
    try:
        base, new = resolve_source(args.base, stores), resolve_source(args.new, stores)
        base_rows, new_rows = load_rows(base), load_rows(new)
    except ReportError as exc:
        return _err(str(exc))
    selections = lambda side: ref_selections([side]) if isinstance(side, RunRef) else None  # noqa: E731
    # like for like: a backend or suite one side did not run is "not compared", never removed
    base_rows, new_rows, scope = like_for_like(base_rows, new_rows, base.label, new.label, selections(base), selections(new))
    diff = diff_results(base_rows, new_rows, base.label, new.label)
    diff.over, diff.not_compared = scope.compared, scope.not_compared
    if diff.disjoint:  # two different suites (or backends): "15,581 new, 3,768 removed" would say nothing
        return _err(diff.scope())
    unused = diff.allow(args.allow)
    diff.allow_varying(expectations.load(sorted({c.backend for c in diff.changes})))
    perf_regressions = _perf_section(args, base_rows, new_rows, base, new, unused)
    for kind in CHANGE_KINDS:  # one section per kind, regressions first
        changes = diff.of_kind(kind)
        if not changes:
            continue
        limit = len(changes) if args.all or kind not in LONG_KINDS else args.max_listed
        allowed = sum(c.allowed for c in changes)
        print(f"\n## {kind} ({KINDS[kind]}): {len(changes):,}" + (" (regression)" if kind in REGRESSION_KINDS else "")
              + (f", {allowed:,} allowed" if allowed else ""))
        rows = []
        for c in changes[:limit]:
            message = " ".join((portable_text(c.message) or "").split())
            rows.append([c.case_id + (" (allowed)" if c.allowed else ""), c.backend, c.before or "-", c.after or "-",
                         message[:90] + ("…" if len(message) > 90 else "")])
            if c.allowed_by:
                why = f"allowed: {c.allowed_by}"
                rows.append(["", "", "", "", why[:100] + ("…" if len(why) > 100 else "")])
        print(tabulate(rows, headers=["case", "backend", base.label, new.label, "message"], tablefmt="github"))
        if len(changes) > limit:
            print(f"... {len(changes) - limit:,} more {kind} (list them all with --all)")
    print()
    for (suite, backend), how in sorted(diff.over.items()):
        print(f"compared: {suite} on {backend} over {how}")
    for n in diff.not_compared:
        print(f"not compared: {n.text()}")
    for pattern in unused:
        print(f"--allow {pattern!r} matched no change", file=sys.stderr)
    print(f"\n{base.label} -> {new.label}: {diff.counts_line()}")
    if diff.regressions or perf_regressions:
        kinds = Counter(c.kind for c in diff.regressions)
        kinds.update({"perf-regressed": perf_regressions} if perf_regressions else {})
        print(f"FAIL: {len(diff.regressions) + perf_regressions:,} regression(s) not allowed: " + ", ".join(f"{n:,} {k}" for k, n in kinds.items()),
              file=sys.stderr)
        return 1
    return 0


def _perf_section(args: argparse.Namespace, base_rows: list, new_rows: list, base: Any, new: Any, unused: list[str]) -> int:
    """``diff --perf-threshold``: the significant latency changes above the threshold between
    calibrated timings, listed, with the runs' loads; each regression re-measured (unless
    ``--no-remeasure``); returns the number of confirmed regressions no --allow accepts (0
    without the option)."""
    if args.perf_threshold is None:
        return 0
    from tabulate import tabulate

    from .perf import Stat, allow, confirm, load_note, parse_threshold, perf_changes

    threshold = parse_threshold(args.perf_threshold)
    changes, compared = perf_changes(base_rows, new_rows, threshold, args.perf_level)
    used = allow(changes, args.allow)
    unused[:] = [p for p in unused if p not in used]
    print(f"\n## performance: {compared:,} case x backend with calibrated timings in both runs; a change counts when its median moved by "
          f"more than {100 * threshold:g}%, the medians' intervals do not overlap (and a one-sided Mann-Whitney test agrees at "
          f"level {args.perf_level:g}); a regression fails only when a re-measurement confirms it")
    runs = [_stored_run(ref) for ref in (base, new)]
    if all(runs):
        note, differ = load_note(runs[0][0]["environment"], runs[1][0]["environment"])
        print(note, file=sys.stderr if differ else sys.stdout)
    if compared == 0:
        print("no timings to compare (run both with --timing or --repeat)")
    regressions = [c for c in changes if c.regression and not c.allowed]
    if regressions and args.no_remeasure:
        for c in regressions:
            c.note = "not re-measured (--no-remeasure)"
    elif regressions and not all(runs):
        for c in regressions:
            c.note = "not re-measured: the runs are not in a store (a JSON file has no backend specs)"
    elif regressions:
        from ..runner_perf import remeasure

        changed = {(c.case_id, c.backend) for c in changes}
        before = {(r["case_id"], r["backend"]): st for r in base_rows if (st := Stat.of(r)) is not None and st.calibrated}
        unchanged = sorted(((r["case_id"], r["backend"], before[key]) for r in new_rows
                            if (key := (r["case_id"], r["backend"])) in before and key not in changed
                            and (st := Stat.of(r)) is not None and st.calibrated), key=lambda t: t[:2])
        (base_run, base_versions), (new_run, _) = runs
        again = remeasure(regressions, base_run, new_run, base_versions, new.store, unchanged,
                          say=lambda m: print(m, file=sys.stderr))
        confirm(regressions, again, threshold, args.perf_level)
    for kind in ("perf-regressed", "perf-improved"):
        rows = [[c.case_id + (" (allowed)" if c.allowed else ""), c.backend, f"{c.before_s * 1e3:.4g} ms", f"{c.after_s * 1e3:.4g} ms",
                 f"{c.ratio:.2f}x"] + ([c.note] if kind == "perf-regressed" else []) for c in changes if c.kind == kind]
        if rows:
            confirmed = sum(1 for c in changes if c.kind == kind and c.confirmed)
            print(f"\n## {kind}: {len(rows):,}" + (f", {confirmed:,} confirmed by a re-measurement (regression)" if kind == "perf-regressed" else ""))
            print(tabulate(rows, headers=["case", "backend", base.label, new.label, "ratio"] + (["re-measured"] if kind == "perf-regressed" else []),
                           tablefmt="github"))
    return sum(1 for c in changes if c.fails)


def _stored_run(ref: Any) -> tuple[dict, dict[str, str]] | None:
    """A stored run (its arguments and environment) and its backends' versions; None for a JSON file."""
    from .sources import RunRef, open_store

    if not isinstance(ref, RunRef):
        return None
    store = open_store(ref.store)
    return store.run(ref.run_id), {b["name"]: b["version"] for b in store.backends(ref.run_id)}


def _expand_stores(paths: list[str]) -> list[Path]:
    """Store files; a folder stands for every ``*.sqlite`` in it (tox writes one per environment)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        out.extend(sorted(path.glob("*.sqlite")) if path.is_dir() else [path])
    return out


def register(subparsers) -> None:
    """Add ``report`` and ``diff`` to the ``onnx-harness`` subcommands."""
    r = subparsers.add_parser("report", help="write index.html, summary.md, results.json and junit.xml from stored runs",
                              description="Write the reports of one run or a merged view of several. "
                                          "RUN: a run number, 'latest', 'previous', or STORE:N with several --store.")
    r.add_argument("runs", nargs="*", metavar="RUN", help="runs to report, merged side by side (default: per store, the newest full run of every suite "
                   "and backend; a -k or shard subset never hides a fuller run)")
    r.add_argument("--store", action="append", help=f"results store or a folder of stores (repeatable, to merge; default {DEFAULT_STORE})")
    r.add_argument("-o", "--output", default="reports", help="output folder (default: reports/)")
    r.add_argument("--baseline", metavar="RUN", help="run to diff against (default: per suite and backend, the newest earlier run with the same "
                   "selection, else with the same draw; 'none' for no diff)")
    r.add_argument("--format", action="append", choices=["html", "markdown", "json", "junit"], help="only these formats (repeatable; default all)")
    r.add_argument("--no-history", action="store_true", help="leave the history chart out")
    r.add_argument("--perf-baseline", metavar="BACKEND", help="backend the performance ratios divide by (default onnxruntime, else the first)")
    r.add_argument("--screenshots", action="store_true",
                   help="also write screenshot-first.png and screenshot-drilldown.png (headless Chromium, selenium)")
    r.set_defaults(func=cmd_report)

    d = subparsers.add_parser("diff", help="changes per case x backend between two runs, by kind; exit 1 on a regression (a CI gate)",
                              description="Compare two runs (or results.json / run JSON files), one section per kind of change. "
                                          "Exit 1 on a regression (pass -> failure, xfail or skip; a failure that changed; "
                                          "a new or unskipped case that does not pass; a case that disappeared) "
                                          "that no --allow pattern accepts.")
    d.add_argument("base", metavar="BASE", help="the base run: N, 'previous', STORE:N, a store file or a results JSON file")
    d.add_argument("new", metavar="NEW", nargs="?", default="latest", help="the new run (default: latest)")
    d.add_argument("--store", action="append", help=f"results store (repeatable; default {DEFAULT_STORE})")
    d.add_argument("--allow", action="append", default=[], metavar="[BACKEND:]CASE-GLOB",
                   help="accept changes matching this glob on the case id, optionally for one backend (repeatable)")
    d.add_argument("--all", action="store_true", help="list every new, new-failing and removed pair (default: the first 20 of each)")
    d.add_argument("--max-listed", type=int, default=20, help=argparse.SUPPRESS)
    d.add_argument("--perf-threshold", metavar="PERCENT", help="also compare latencies (runs with --timing): a case x backend slower "
                   "by more than this (e.g. 10%%) and significantly so is a regression")
    d.add_argument("--perf-level", type=float, default=0.01, metavar="ALPHA", help="level of the rank test (default 0.01)")
    d.add_argument("--no-remeasure", action="store_true", help="list performance regressions without re-measuring them; "
                   "unconfirmed, they do not fail the gate")
    d.set_defaults(func=cmd_diff)
