"""The ``onnx-harness`` command line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from . import __version__
from .cliutil import CliError, parse_options as _parse_options
from .lookup import find_case

SHOWN_OUTCOMES = ("pass", "unspecified", "mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "crash", "timeout",
                  "export-failed", "xfail", "xpass", "skip")


def _err(msg: str) -> None:
    print(f"onnx-harness: error: {msg}", file=sys.stderr)


# -- run ------------------------------------------------------------------------------------
#: the backends of a run that names none
DEFAULT_BACKENDS = ["reference"]


def _config_from_args(args: argparse.Namespace):
    from .run import RunConfig
    from .runner import BackendSpec

    options = _parse_options(args.option)
    backends = [BackendSpec(b, options.get(b, {})) for b in dict.fromkeys(args.backend or DEFAULT_BACKENDS)]
    unknown = set(options) - {b.name for b in backends}
    if unknown:
        raise CliError(f"--option names backend(s) not in this run: {', '.join(sorted(unknown))}")
    return RunConfig(
        suites=args.suite or ([] if args.model else ["onnx-node"]), backends=backends, pattern=args.k, opset=args.opset,
        jobs=args.jobs, timeout=args.timeout, store=Path(args.store), corpus=Path(args.corpus),
        expectations=[Path(p) for p in args.expectations], restamp=not args.no_restamp, repeat=args.repeat, timing_budget=args.timing,
        examples=args.examples, seed=args.seed, regressions=Path(args.regressions) if args.regressions else None,
        recycle_after=args.recycle_after,
        memory_limit_gib=args.memory_limit, cpu_limit_s=args.cpu_limit, output_limit_mib=args.output_limit,
        max_model_gib=args.max_model_size, models=args.model, dims=args.dim, oracle=args.oracle,
        models_cache=args.models_cache, frameworks=args.framework, rebuild_models=args.rebuild_models, strict=args.strict,
        localize=args.localize, shard=args.shard, executor=args.executor or "local", ray_address=args.ray_address,
        ray_resources=_parse_ray_resources(args.ray_resource, backends),
    )


def _parse_ray_resources(items: list[str], backends) -> dict[str, dict[str, float]]:
    """``--ray-resource openvino.GPU=1`` -> {"openvino": {"GPU": 1.0}}."""
    out = {}
    for backend, res in _parse_options(items).items():
        if backend not in {b.name for b in backends}:
            raise CliError(f"--ray-resource names backend {backend!r}, not in this run")
        for name, amount in res.items():
            if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
                raise CliError(f"--ray-resource {backend}.{name}={amount}: the amount must be a positive number")
            out.setdefault(backend, {})[name] = float(amount)
    return out


def _check_backends(config) -> None:
    from .backends import load_backend_class

    for spec in config.backends:
        load_backend_class(spec.spec)  # raises UnknownBackend with the list of known names


def _progress(total: int):
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    bar = tqdm(total=total, unit="case", dynamic_ncols=True, mininterval=0.5 if tty else 30, file=sys.stderr,
               disable=total == 0, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}] {postfix}")
    seen: Counter = Counter()

    def tick(result) -> None:
        seen["fail" if result.outcome not in ("pass", "unspecified", "xfail", "skip") else result.outcome] += 1
        bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in sorted(seen.items())), refresh=False)
        bar.update(1)
        if bar.n >= total:
            bar.close()

    tick.close = bar.close  # type: ignore[attr-defined]  # the run ends early (an error, Ctrl-C): the bar ends first
    return tick


def cmd_run(args: argparse.Namespace) -> int:
    from .forkserver import start

    # the workers' fork server imports on another core while this process does, the backends' runtimes too
    start(args.backend or DEFAULT_BACKENDS)
    from .run import RunConfig, execute_run
    from .store import Store

    store = Store(args.store)
    run_id = None
    if args.resume is not None:
        run = store.latest_unfinished_run() if args.resume == "latest" else store.run(int(args.resume))
        if run is None:
            raise CliError(f"no interrupted run in {args.store} to resume")
        if run["status"] == "complete":
            raise CliError(f"run {run['id']} is complete; nothing to resume")
        config = RunConfig.from_json(run["args"])
        if args.executor:  # a run resumes where the user says: on a cluster, or here
            config.executor, config.ray_address = args.executor, args.ray_address
        run_id = run["id"]
        print(f"resuming run {run_id}: {len(store.done_pairs(run_id))} results already stored")
    else:
        config = _config_from_args(args)
    _check_backends(config)
    outcome = execute_run(config, store, run_id, say=lambda m: print(m, file=sys.stderr), progress=_progress)
    print_summary(store, outcome.run_id)
    files = ", ".join(f"{_shown_path(f)} ({n} entries)" for f, n in outcome.expectation_files.items())
    print(f"expectations: {files or 'none'}")
    for entry in outcome.stale:
        print(f"expectation matched nothing: {entry.backend} {entry.case} ({_shown_path(entry.source)})")
    out = write_run_json(store, outcome.run_id, Path(args.json) if args.json else None)
    print(f"results: run {outcome.run_id} in {store.path}; JSON: {out}")
    if outcome.interrupted:
        print(f"interrupted: the results above are partial; continue with: onnx-harness run --resume {outcome.run_id} --store {store.path}")
        return 130
    return _exit_status(outcome, out, args.exit_zero)


def _shown_path(path: str | Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


SHOWN_UNEXPECTED = 20


def _exit_status(outcome, json_path: Path, exit_zero: bool) -> int:
    """List the unexpected results and say, in the last line, why the run exits as it does."""
    unexpected = outcome.unexpected
    if not unexpected:
        expected = sum(c["xfail"] for c in outcome.counts.values())
        print(f"exit 0: no unexpected results ({expected} expected failures)")
        return 0
    for u in unexpected[:SHOWN_UNEXPECTED]:
        first = u.message.strip().splitlines()[0][:160] if u.message.strip() and u.outcome != "unavailable" else ""
        print(f"unexpected: {u}" + (f": {first}" if first else ""))
    if len(unexpected) > SHOWN_UNEXPECTED:
        print(f"unexpected: ... and {len(unexpected) - SHOWN_UNEXPECTED} more in {json_path}")
    named = ", ".join(str(u) for u in unexpected[:3]) + (", ..." if len(unexpected) > 3 else "")
    why = f"{len(unexpected)} unexpected result{'s' if len(unexpected) > 1 else ''}: {named}; see {json_path}"
    if exit_zero:
        print(f"exit 0 (--exit-zero): {why}")
        return 0
    print(f"exit 1: {why}; known failures go in harness/expectations/<backend>.toml or --expectations FILE")
    return 1


def backend_counts(store, run_id: int) -> dict[str, dict[str, Any]]:
    """Per backend: counts per outcome, total, loadable and pass rate over loadable cases, and
    the headline numbers (``harness.report.records.headline``, shared with every report)."""
    from .worker import NOT_LOADABLE
    from .report.records import headline
    from .report.records import unchecked as is_unchecked

    table: dict[str, dict[str, Any]] = {}
    for info in store.backends(run_id):
        table[info["name"]] = {"info": info, "counts": Counter()}
    for row in store.db.execute("SELECT backend, outcome, COUNT(*) FROM results WHERE run_id = ? GROUP BY backend, outcome", (run_id,)):
        table.setdefault(row[0], {"info": {"available": True}, "counts": Counter()})["counts"][row[1]] = row[2]
    for entry in table.values():
        entry["not_loadable"] = 0
    # judged on the outcome before expectations: a known rejection is still a case it could not load
    marks = ",".join("?" * len(NOT_LOADABLE))
    for name, n in store.db.execute(f"SELECT backend, COUNT(*) FROM results WHERE run_id = ? AND COALESCE(raw_outcome, outcome) IN ({marks}) "
                                    "GROUP BY backend", (run_id, *NOT_LOADABLE)):
        table[name]["not_loadable"] = n
    raw: dict[str, Counter] = {name: Counter() for name in table}
    for name, outcome, n in store.db.execute("SELECT backend, COALESCE(NULLIF(raw_outcome, ''), outcome), COUNT(*) FROM results "
                                             "WHERE run_id = ? GROUP BY 1, 2", (run_id,)):
        raw[name][outcome] += n
    unchecked: Counter = Counter()
    for name, outcome, verdict in store.db.execute("SELECT backend, outcome, verdict FROM results WHERE run_id = ? AND outcome = 'unspecified'", (run_id,)):
        unchecked[name] += is_unchecked({"outcome": outcome, "verdict": json.loads(verdict) if verdict else {}})
    for name, entry in table.items():
        c = entry["counts"]
        entry["total"] = sum(c.values()) - c["skip"]
        # unspecified is counted apart from the rate (neither numerator nor denominator)
        entry["loadable"] = entry["total"] - entry["not_loadable"] - c["unspecified"]
        entry["pass_rate"] = (c["pass"] + c["xpass"]) / entry["loadable"] if entry["loadable"] else None
        entry["headline"] = headline(c, raw[name], entry["not_loadable"], unchecked[name])
    return table


def print_summary(store, run_id: int) -> None:
    from tabulate import tabulate

    rows = []
    table = backend_counts(store, run_id)
    present = [o for o in SHOWN_OUTCOMES if any(e["counts"][o] for e in table.values())]
    for name, entry in table.items():
        info = entry["info"]
        if not info.get("available", True):
            rows.append([name, f"unavailable: {info.get('reason', '')}"] + [""] * (len(present) + 1))
            continue
        h = entry["headline"]
        rate = f"{100 * h['conformance']:.1f}% of {h['attempted']}" if h["conformance"] is not None else "-"
        rows.append([f"{name} {info.get('version', '')}".strip(), rate]
                    + [_share(h[k], h[f"{s}_share"]) for k, s in (("wrong_answers", "wrong_answer"), ("not_implemented", "not_implemented"), ("errors", "error"))]
                    + [h["refused"] or "", h["unspecified"] or "", h["unchecked"] or ""] + [entry["counts"][o] for o in present] + [entry["total"]])
    print(tabulate(rows, headers=["backend", "conformance (pass rate)", "wrong answers", "not implemented", "errors", "refused (invalid model)",
                                  "unspecified (apart)", "of them unchecked", *present, "total"], tablefmt="github"))
    for name, entry in table.items():
        h = entry["headline"]
        if h["unspecified"]:
            print(f"unspecified on {name}: {h['unspecified']} results (the spec is silent there), {h['unchecked']} of them unchecked "
                  "(no reading of the point computes the output)")
    print_top_groups(store, run_id, list(table))


def _share(n: int, share: float | None) -> str:
    return f"{n} ({100 * share:.1f}%)" if n and share is not None else (str(n) if n else "")


#: failure groups named per backend after ``run``
TOP_GROUPS = 5


def print_top_groups(store, run_id: int, backends: list[str], top: int = TOP_GROUPS) -> None:
    """The largest failure groups per backend (wrong answers first, as in the report), then the
    command that writes and opens the report."""
    from .report.failures import CAUSE_KINDS, failure_groups

    groups = failure_groups(store.results(run_id, outcomes=CAUSE_KINDS), backends)  # the non-passes alone are grouped
    for name in backends:
        mine = [g for g in groups if g.backend == name]
        if not mine:
            continue
        print(f"{name}: {sum(g.cases for g in mine)} non-passes in {len(mine)} groups by cause" + (f"; the first {top}:" if len(mine) > top else ":"))
        for g in mine[:top]:
            print(f"  {g.cases:>6}  {g.kind}: {g.label[:150]}")
            print(f"          e.g. {g.example['case_id']}")
    store_arg = "" if Path(store.path).resolve() == Path("reports", "results.sqlite").resolve() else f" --store {_shown_path(store.path)}"
    print(f"report: onnx-harness report {run_id}{store_arg} -o reports/  (then open reports/index.html)")


def write_run_json(store, run_id: int, path: Path | None = None) -> Path:
    """The run as one JSON document: the run, its backends, the summary, then its results, one a
    line, each written from the store's own JSON columns as they are (not parsed and encoded
    again: a default operators run holds 300,000 results)."""
    from .store import JSON_COLUMNS, run_json_path

    from .report.sources import _run_root, portable_bundle, portable_text, portable_value

    path = path or run_json_path(store.path, run_id)
    run = store.run(run_id)
    root = _run_root(Path(store.path), run["args"].get("store"))  # no path of the machine in the file
    summary = {name: {k: (dict(v) if isinstance(v, Counter) else v) for k, v in e.items() if k != "info"} for name, e in backend_counts(store, run_id).items()}
    head = json.dumps({"run": portable_value(run, root), "backends": portable_value(store.backends(run_id), root), "summary": summary},
                      indent=1, default=str)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write(head[:-2] + ',\n "results": [')  # the head's closing "\n}" comes after the results
        for n, r in enumerate(store.results(run_id, parse=False)):
            plain = {k: v for k, v in r.items() if k not in JSON_COLUMNS}
            plain.update(bundle=portable_bundle(r["bundle"], root) or None, message=portable_text(r["message"], root))
            fh.write(("\n  " if n == 0 else ",\n  ") + json.dumps(plain, default=str)[:-1]
                     + "".join(f', "{k}": {r[k] or "{}"}' for k in JSON_COLUMNS) + "}")
        fh.write("\n ]\n}\n")
    return path


# -- corpus, list, show, repro ----------------------------------------------------------------
def cmd_corpus(args: argparse.Namespace) -> int:
    from .suites import onnx_official as official

    root = Path(args.corpus)
    if args.action == "build":
        from tqdm import tqdm

        bar = tqdm(unit="case", file=sys.stderr, mininterval=0.5 if sys.stderr.isatty() else 30)
        manifest = official.build_corpus(root, args.suite or None, progress=lambda _: bar.update(1))
        bar.close()
        counts = ", ".join(f"{k} {v}" for k, v in manifest["counts"].items())
        print(f"corpus {root}: {manifest['total']} cases ({counts}); onnx {manifest['onnx']}, numpy {manifest['numpy']}; sha256 {manifest['corpus_sha256'][:16]}")
        return 0
    report = official.verify_corpus(root)
    manifest = official.read_manifest(root)
    bad = sum(len(v) for v in report.values())
    for kind, ids in report.items():
        for case_id in ids:
            print(f"{kind}: {case_id}")
    print(f"corpus {root}: {manifest['total']} recorded; {len(report['changed'])} changed, {len(report['missing'])} missing, {len(report['added'])} added")
    return 1 if bad else 0


def cmd_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    if args.what == "backends":
        from .backends import BUILTIN, known_backends, load_backend_class
        from .backends.external import ExecBackend

        rows = []
        for name, target in sorted({**BUILTIN, **known_backends()}.items()):
            version = ""
            try:
                cls = load_backend_class(name)
                ok, reason = cls.available()
                if ok and not issubclass(cls, ExecBackend):  # a runner's version is known once it answers
                    version = cls().version()
            except Exception as exc:  # a plug-in that fails to load is listed with its error, not hidden
                ok, reason = False, f"{type(exc).__name__}: {exc}"
            source = "built-in" if name in BUILTIN else "plug-in"
            rows.append([name, source, version, "yes" if ok else "no", reason])
        print(tabulate(rows, headers=["backend", "source", "version", "available", "reason"], tablefmt="github"))
        print("also: onnxruntime:<ExecutionProvider>, NAME@VERSION (a release in its own environment, e.g. onnxruntime@1.28), "
              "exec:CMD, module:Class")
    elif args.what == "suites":
        from .suites import SUITES

        print(tabulate([[n, d] for n, (d, _) in SUITES.items()], headers=["suite", "what"], tablefmt="github"))
    else:
        from .run import RunConfig, select_cases

        config = RunConfig(suites=args.suite or ["onnx-node"], backends=[], pattern=args.k, corpus=Path(args.corpus))
        cases = select_cases(config, say=lambda m: print(m, file=sys.stderr))
        for case in cases:
            print(case.id)
        print(f"{len(cases)} cases", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .store import Store
    from .values import describe

    case = find_case(args.case, Path(args.corpus), Path(args.store))
    model = case.load_model()
    print(f"case {case.id}")
    print(f"  model: ir_version {model.ir_version}, opsets " + ", ".join(f"{i.domain or 'ai.onnx'}:{i.version}" for i in model.opset_import))
    print(f"  nodes: {len(model.graph.node)} ({', '.join(sorted({n.op_type for n in model.graph.node}))})")
    print(f"  tolerance: {case.tolerance.to_dict()}; check: {case.check}")
    print(f"  tags: {json.dumps(case.tags, sort_keys=True)}")
    for n, ds in enumerate(case.load_data(model)):
        ins = ", ".join(f"{k}: {describe(v)}" for k, v in ds.inputs.items())
        outs = ", ".join(describe(v) for v in ds.expected or [])
        print(f"  data set {n}: inputs {ins} -> expected {outs or '(oracle)'}")
    if Path(args.store).exists():
        history = Store(args.store).case_history(case.id)
        for row in history:
            print(f"  run {row['run_id']} {row['backend']}: {row['outcome']} {row['message'] or ''}"[:200])
        if not history:
            print("  no stored results")
    return 0


def cmd_repro(args: argparse.Namespace) -> int:
    from .worker import ExecOptions
    from .repro import write_bundle
    from .runner import BackendSpec, _build_backend

    case = find_case(args.case, Path(args.corpus), Path(args.store))
    backend = args.backend or _stored_failing_backend(args.case, Path(args.store))
    spec = BackendSpec(backend, _parse_options(args.option).get(backend, {}))
    from .worker import execute_case

    result = execute_case(_build_backend(spec), case, ExecOptions(restamp=not args.no_restamp))
    folder = write_bundle(Path(args.output), case, result, spec.spec, spec.options, not args.no_restamp)
    print(f"{case.id} on {backend}: {result.outcome} {result.message}".rstrip())
    print(f"bundle: {folder}; on a machine without the harness: cd {folder} && python repro.py")
    return 0


def _stored_failing_backend(case_id: str, store_path: Path) -> str:
    """The backend of the newest stored result of ``case_id`` that did not pass (``repro`` without ``--backend``)."""
    from .store import Store

    if not store_path.is_file():
        raise CliError(f"repro: no store {store_path} to find the backend of {case_id} in; give --backend")
    rows = [r for r in Store(store_path).case_history(case_id, limit=1000) if r["outcome"] not in ("pass", "skip")]
    if not rows:
        raise CliError(f"repro: {store_path} holds no failing result of {case_id}; give --backend")
    return rows[0]["backend"]


def cmd_bisect(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from .backends.releases import DISTRIBUTIONS, first_change, registry_versions, releases_between
    from .worker import ExecOptions, execute_case
    from .runner import BackendSpec, _build_backend

    if args.backend not in DISTRIBUTIONS:
        raise CliError(f"bisect installs releases of {', '.join(DISTRIBUTIONS)}; not {args.backend!r}")
    case = find_case(args.case, Path(args.corpus), Path(args.store))
    versions = releases_between(registry_versions(DISTRIBUTIONS[args.backend]), *args.between)
    if len(versions) < 2:
        raise CliError(f"the registry has {len(versions)} release(s) of {args.backend} between {args.between[0]} and {args.between[1]}: {versions}")
    print(f"{case.id}: bisecting {len(versions)} releases of {args.backend}: {', '.join(versions)}", file=sys.stderr)
    messages: dict[str, str] = {}

    def outcome_at(version: str) -> str:
        result = execute_case(_build_backend(BackendSpec(f"{args.backend}@{version}")), case, ExecOptions())
        messages[version] = result.message
        print(f"  {args.backend} {version}: {result.outcome}", file=sys.stderr)
        return result.outcome

    index, seen = first_change(versions, outcome_at)
    print(tabulate([[v, seen[v], messages[v][:100]] for v in versions if v in seen], headers=["release", "outcome", "message"], tablefmt="github"))
    if index is None:
        print(f"no change: {args.backend} {versions[0]} and {versions[-1]} both give {seen[versions[0]]}")
    else:
        print(f"first release with a different outcome: {args.backend} {versions[index]} ({seen[versions[index]]}; "
              f"{versions[index - 1]} gave {seen[versions[index - 1]]})")
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from .coverage import coverage, family_counts

    rows = coverage()
    if args.family:
        rows = [r for r in rows if r.family == args.family]
    if not args.summary:
        shown = [r for r in rows if (r.covered or not args.covered_only)]
        print(tabulate([[r.key, r.family, "yes" if r.covered else "deprecated" if r.deprecated else "no", r.module] for r in shown],
                       headers=["op-version", "family", "covered", "module"], tablefmt="github"))
        print()
    if args.edges:
        _print_edge_coverage(args, tabulate)
    fams = family_counts(rows)
    print(tabulate([[f, c, t, f"{100 * c / t:.0f}%"] for f, (c, t) in fams.items()], headers=["family", "covered", "op-versions", "share"], tablefmt="github"))
    for domain in ("ai.onnx", "ai.onnx.ml"):
        dom = [r for r in rows if r.domain == domain]
        if dom:
            old = sum(r.deprecated for r in dom)
            print(f"{domain}: {sum(r.covered for r in dom)} of {len(dom)} op-versions covered (they build value-checked cases)"
                  + (f"; {old} deprecated, listed apart" if old else ""))
    deprecated = [r for r in rows if r.deprecated]
    if deprecated:
        print("\ndeprecated op-versions (no valid model holds one: no case, not counted covered):")
        print(tabulate([[r.key, r.module, r.checked] for r in deprecated], headers=["op-version", "module", "what is checked"], tablefmt="github"))
    return 0


def _print_edge_coverage(args: argparse.Namespace, tabulate: Any) -> None:
    """Per covered op-version: the edge classes its examples reach and those it misses."""
    from .coverage import EDGE_CLASSES, edge_coverage, family_of

    rows = [r for r in edge_coverage(examples=args.examples or 0) if not args.family or family_of(r.key.rsplit("-", 1)[0]) == args.family]
    if not args.summary:
        mark = lambda r, c: ("yes" if c in r.reached else "GAP") if c in r.applies else "-"  # noqa: E731
        print(tabulate([[r.key] + [mark(r, c) for c in EDGE_CLASSES] for r in rows], headers=["op-version", *EDGE_CLASSES], tablefmt="github"))
        print()
    gaps = [r for r in rows if r.gaps]
    print(f"edge classes: {len(rows) - len(gaps)} of {len(rows)} covered op-versions reach every class that applies to them")
    for cls in EDGE_CLASSES:
        missing = [r.key for r in gaps if cls in r.gaps]
        if missing:
            print(f"  {cls} not reached by {len(missing)}: {', '.join(missing)}")
    fixed = [f"{r.key} ({', '.join(r.fixed_attrs)})" for r in rows if r.fixed_attrs]
    if fixed:
        print(f"optional attributes no edge example varies, in {len(fixed)} op-versions: {'; '.join(fixed)}")
    print()


def cmd_spec_silent(args: argparse.Namespace) -> int:
    """Every spec-silent point: op-versions, the spec's words, our choice, the invariants."""
    from tabulate import tabulate

    from .coverage import spec_silent_rows, spec_silent_toml

    rows = spec_silent_rows()
    print(tabulate([[r.id, ", ".join(r.op_versions), r.spec, r.expected, "; ".join(r.invariants)] for r in rows],
                   headers=["point", "op-versions", "the spec says", "our choice", "invariants"], tablefmt="github", maxcolwidths=48))
    print(f"\n{len(rows)} spec-silent points over {len({v for r in rows for v in r.op_versions})} op-versions")
    if args.toml:
        Path(args.toml).write_text(spec_silent_toml(rows))
        print(f"written: {args.toml}")
    bad = [f"{r.id}: {', '.join(r.unquoted)}" for r in rows if r.unquoted]
    for line in bad:
        print(f"spec text not found in the op-version's doc: {line}", file=sys.stderr)
    return 1 if bad else 0


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from .crosscheck import disagreements, load_notes, silent_choices
    from .run import RunConfig, execute_run
    from .runner import BackendSpec
    from .store import Store

    store = Store(args.store)
    config = RunConfig(suites=["operators"], backends=[BackendSpec("reference")], pattern=args.k, jobs=args.jobs,
                       store=Path(args.store), examples=args.examples, seed=args.seed)
    outcome = execute_run(config, store, say=lambda m: print(m, file=sys.stderr), progress=_progress)
    groups = disagreements(list(store.results(outcome.run_id)), load_notes())
    lacking = [g for g in groups if set(g.outcomes) == {"unsupported"}]
    groups = [g for g in groups if g not in lacking]
    rows = []
    for g in groups:
        side = g.note["side"] if g.note else "UNEXPLAINED"
        why = (g.note.get("spec", "") if g.note else g.first_message)[:160]
        rows.append([g.op_version, len(g.cases), ", ".join(f"{k} {v}" for k, v in g.outcomes.items()), side, why])
    print(tabulate(rows, headers=["op-version", "cases", "outcomes", "spec supports", "spec text / first message"], tablefmt="github"))
    unexplained = [g for g in groups if g.note is None]
    if lacking:
        print(f"onnx.reference does not implement: {', '.join(g.op_version for g in lacking)}")
    print(f"{len(groups)} op-versions where onnx.reference and our reference disagree; {len(unexplained)} unexplained (run {outcome.run_id})")
    choices = silent_choices(list(store.results(outcome.run_id)))
    if choices:
        print("\nspec-silent points where onnx.reference chooses differently (every invariant kept):")
        print(tabulate([[p, ", ".join(c["op_versions"]), c["cases"], f"ours {c['ours']}, onnx.reference {c['theirs']}", c["example"]]
                        for p, c in choices.items()], headers=["point", "op-versions", "cases", "first difference", "example"],
                       tablefmt="github"))
    return 0


# -- the parser ------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from .runner import default_jobs

    p = argparse.ArgumentParser(prog="onnx-harness", description="ONNX conformance and cross-runtime harness")
    p.add_argument("--version", action="version", version=f"onnx-harness {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--corpus", default=str(Path("corpus")), help="frozen official corpus folder (default: ./corpus)")
        sp.add_argument("--store", default=str(Path("reports") / "results.sqlite"), help="results store (default: reports/results.sqlite)")

    r = sub.add_parser("run", help="run suites on backends and store the results")
    common(r)
    r.add_argument("--suite", action="append", help="suite to run (repeatable; default onnx-node); see: list suites")
    r.add_argument("--backend", action="append", help="backend name or module:Class (repeatable; default reference)")
    r.add_argument("--option", action="append", default=[], metavar="BACKEND.NAME=VALUE", help="backend option, e.g. onnxruntime.threads=1")
    r.add_argument("-k", metavar="PATTERN", help="only cases whose id matches this regular expression")
    r.add_argument("--opset", type=int, help="stamp models at this opset; cases whose op-versions differ there are skipped")
    r.add_argument("-j", "--jobs", type=int, default=default_jobs(), help="worker processes (default: cores)")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per case and backend (default 120)")
    r.add_argument("--expectations", action="append", default=[], help="TOML file of known failures (repeatable)")
    r.add_argument("--strict", action="store_true", help="an expectation that matched nothing, and an unspecified result, are unexpected too")
    r.add_argument("--exit-zero", action="store_true", help="exit 0 even when a result is unexpected (exploration)")
    r.add_argument("--no-restamp", action="store_true", help="run models exactly as stamped (no opset negotiation)")
    r.add_argument("--repeat", type=int, default=0, help="calibrated timing of each passing case with at least N samples "
                   "(warm-ups until settled, median with a 95%% interval, peak memory; see --timing)")
    r.add_argument("--timing", type=float, nargs="?", const=1.0, default=0.0, metavar="SECONDS",
                   help="calibrated timing of each passing case within SECONDS per case and backend (default 1); -j 1 for quiet numbers")
    r.add_argument("--examples", type=int, help="generated examples per op-version and dtype (operators suite)")
    r.add_argument("--seed", type=int, help="seed for generated examples (operators suite)")
    r.add_argument("--regressions", metavar="DIR", help="generated suite: replay the regression cases a fuzz campaign wrote "
                   "under DIR (default: the checked-in ones)")
    r.add_argument("--recycle-after", type=int, default=0, help="replace each worker after N cases (0: never)")
    r.add_argument("--model", action="append", default=[], metavar="PATH",
                   help="your own model: a .onnx file, an onnx_test_runner folder, or a folder of models (repeatable)")
    r.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="bind a dynamic dimension of --model inputs ('INPUT[AXIS]=VALUE' for an unnamed one)")
    r.add_argument("--oracle", default="reference", help="backend computing expected outputs for --model without stored outputs (default reference)")
    r.add_argument("--models-cache", help="where the models suite keeps built models (default: next to the corpus)")
    r.add_argument("--framework", action="append", help="models suite: only these frameworks (torch, transformers, keras, sklearn, light, quantized)")
    r.add_argument("--rebuild-models", action="store_true", help="models suite: rebuild the cache")
    r.add_argument("--memory-limit", type=float, default=8.0, metavar="GIB", help="memory per worker; a breach is crash (default 8)")
    r.add_argument("--cpu-limit", type=float, metavar="SECONDS", help="CPU seconds per case; a breach is timeout")
    r.add_argument("--output-limit", type=int, default=64, metavar="MIB", help="output a case may print (default 64)")
    r.add_argument("--max-model-size", type=float, default=4.0, metavar="GIB", help="larger models are refused (default 4)")
    r.add_argument("--resume", nargs="?", const="latest", metavar="RUN_ID", help="continue an interrupted run")
    r.add_argument("--json", help="where to write the run's JSON (default: next to the store)")
    r.add_argument("--executor", choices=["local", "ray"], help="where cases run: worker processes here (local, the default) "
                   "or Ray tasks on a cluster (ray; needs the [ray] extra)")
    r.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: the cluster to join (default: RAY_ADDRESS, else a "
                   "local one started for the run)")
    r.add_argument("--ray-resource", action="append", default=[], metavar="BACKEND.NAME=AMOUNT",
                   help="with --executor ray: a resource each case of BACKEND asks for beyond its CPUs, e.g. openvino.GPU=1")
    r.add_argument("--shard", metavar="I/N", help="only shard I of N of the selected cases (a stable hash of the case id; "
                   "N jobs with I = 1..N cover each case exactly once; merge their stores with: report --store DIR)")
    r.add_argument("--localize", type=float, nargs="?", const=300.0, default=0.0, metavar="SECONDS",
                   help="name the first diverging node of each failing multi-node model (onnx-harness localize), "
                        "within this many seconds in all (default 300)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("corpus", help="build or verify the frozen official corpus")
    c.add_argument("action", choices=["build", "verify"])
    c.add_argument("--corpus", default="corpus")
    c.add_argument("--suite", action="append", help="only these official suites (build)")
    c.set_defaults(func=cmd_corpus)

    ls = sub.add_parser("list", help="list backends, suites or cases")
    common(ls)
    ls.add_argument("what", choices=["backends", "suites", "cases"])
    ls.add_argument("--suite", action="append")
    ls.add_argument("-k", metavar="PATTERN")
    ls.set_defaults(func=cmd_list)

    sh = sub.add_parser("show", help="show a case: model, inputs, tolerance, last results (any case id the store holds)")
    common(sh)
    sh.add_argument("case")
    sh.set_defaults(func=cmd_show)

    rp = sub.add_parser("repro", help="re-run a case on a backend and write its repro bundle: a folder whose repro.py needs only "
                        "numpy, onnx and the runtime (any case id the store holds)")
    common(rp)
    rp.add_argument("case")
    rp.add_argument("--backend", help="default: the backend of the case's newest failing result in the store")
    rp.add_argument("--option", action="append", default=[])
    rp.add_argument("-o", "--output", required=True)
    rp.add_argument("--no-restamp", action="store_true")
    rp.set_defaults(func=cmd_repro)
    bi = sub.add_parser("bisect", help="the first release of a runtime where a case changed outcome (installs releases into cached environments)")
    common(bi)
    bi.add_argument("case")
    bi.add_argument("--backend", required=True, help="the runtime, e.g. onnxruntime")
    bi.add_argument("--between", nargs=2, required=True, metavar=("OLD", "NEW"), help="release range, e.g. 1.24 1.32 (newest patch of each line)")
    bi.set_defaults(func=cmd_bisect)
    cv = sub.add_parser("coverage", help="every ai.onnx / ai.onnx.ml op-version: covered by our references or not")
    cv.add_argument("--family", help="only this family")
    cv.add_argument("--covered-only", action="store_true")
    cv.add_argument("--summary", action="store_true", help="counts per family only")
    cv.add_argument("--edges", action="store_true", help="also which edge classes (NaN, inf, -0, subnormal, empty, ties, overflow, "
                    "broadcast, negative indices, negative exponents, non-default attributes, integer dtypes) each covered op-version's examples reach")
    cv.add_argument("--examples", type=int, help="with --edges: also this many drawn examples per dtype (default: edge examples only)")
    cv.set_defaults(func=cmd_coverage)

    ss = sub.add_parser("spec-silent", help="every spec-silent point: op-versions, spec text, our choice, the invariants")
    ss.add_argument("--toml", help="also write them to this TOML file (operator_cases/spec_silent.toml is the checked-in copy)")
    ss.set_defaults(func=cmd_spec_silent)
    cc = sub.add_parser("crosscheck", help="our references against onnx.reference, with the spec text that decides")
    cc.add_argument("--store", default=str(Path("reports") / "results.sqlite"))
    cc.add_argument("-k", metavar="PATTERN")
    cc.add_argument("-j", "--jobs", type=int, default=default_jobs())
    cc.add_argument("--examples", type=int)
    cc.add_argument("--seed", type=int)
    cc.set_defaults(func=cmd_crosscheck)

    from .bench import register as register_bench
    from .baseline import register as register_baseline
    from .findings import register as register_findings
    from .generated.cli import register as register_fuzz
    from .report.commands import register as register_report
    from .site import register as register_site

    register_report(sub)
    register_fuzz(sub)
    register_localize(sub)
    register_bench(sub)
    register_findings(sub)
    register_baseline(sub)
    register_site(sub)
    return p


# =============================================================================================
# localize: the first node whose output diverges
# =============================================================================================
def register_localize(subparsers: Any) -> None:
    """Add the ``localize`` subcommand."""
    p = subparsers.add_parser("localize", help="find the first node whose output diverges (a non-pass case on a backend)")
    p.add_argument("case", help="case id (any case the store holds, a --model case too)")
    p.add_argument("--backend", required=True, help="backend name or module:Class")
    p.add_argument("--option", action="append", default=[], metavar="BACKEND.NAME=VALUE", help="backend option")
    p.add_argument("--oracle", default="reference", help="backend computing the values our references do not cover (default reference)")
    p.add_argument("--data-set", type=int, default=0, help="which data set of the case to run (default 0)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per backend run (default 120)")
    p.add_argument("-o", "--output", help="folder of the one-node repro bundle (default: next to the store, localize/<case>)")
    p.add_argument("--json", help="also write the result as JSON here")
    p.add_argument("--in-process", action="store_true", help="run backends in this process (faster; a crash ends localize)")
    p.add_argument("--corpus", default=str(Path("corpus")), help="frozen official corpus folder (default: ./corpus)")
    p.add_argument("--store", default=str(Path("reports") / "results.sqlite"), help="results store (default: reports/results.sqlite)")
    p.set_defaults(func=cmd_localize)


def cmd_localize(args: Any) -> int:
    from .localize import LocalizeError, localize
    from .runner import BackendSpec

    case = find_case(args.case, Path(args.corpus), Path(args.store))
    options = _parse_options(args.option)
    backend = BackendSpec(args.backend, options.get(args.backend, {}))
    oracle = BackendSpec(args.oracle, options.get(args.oracle, {}))
    safe = re.sub(r"[^A-Za-z0-9._-]+", "__", case.id)
    folder = Path(args.output) if args.output else Path(args.store).parent / "localize" / re.sub(r"[^A-Za-z0-9._-]+", "_", backend.name) / safe
    try:
        loc = localize(case, backend, oracle, args.data_set, args.timeout, folder, args.in_process)
    except LocalizeError as exc:
        raise CliError(str(exc)) from exc
    print(loc.render())
    if args.json:
        Path(args.json).write_text(json.dumps(loc.to_dict(), indent=1, default=str))
    return 0 if loc.status == "found" else 1


def main(argv: list[str] | None = None) -> int:
    from .backends import UnknownBackend
    from .case import ModelIntakeError
    from .expectations import ExpectationError
    from .run import BadPattern
    from .suites import SuiteError
    from .suites.onnx_official import CorpusError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CliError, UnknownBackend, SuiteError, BadPattern, CorpusError, ModelIntakeError, ExpectationError, KeyError) as exc:
        _err(str(exc).strip("'\""))
        return 2
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
