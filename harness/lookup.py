"""Finding a case by its id, wherever it came from: the newest stored run that holds it (rebuilt
with that run's arguments, or a fuzz campaign's graph from its stored spec), a repro bundle
stored for it, or its suite at its defaults. ``show``, ``repro`` and ``localize`` use it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .cliutil import CliError


def find_case(case_id: str, corpus: Path, store_path: Path):
    """The case with this id, wherever it came from: rebuilt as the newest stored run that holds
    it made it (that run's suites, --model files, --examples/--seed; a fuzz campaign's graph
    from its stored spec), else read from a repro bundle stored for it, else from its suite's
    defaults. Raises :class:`CliError` saying why and what to pass when none of them has it."""
    import re
    from dataclasses import replace

    from .run import RunConfig, select_cases
    from .suites import SUITES

    suite = case_id.split("/", 1)[0]
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    exact = f"^{re.escape(case_id)}$"
    tried: list[str] = []
    rows = _stored_rows(case_id, store_path)
    per_run: dict[int, dict[str, Any]] = {}
    for row in rows:
        per_run.setdefault(row["run"]["id"], row)
    for row in per_run.values():  # one row per run, newest run first
        run, tags = row["run"], row["tags"]
        if run["args"].get("command") == "fuzz":  # a finding has its bundle (read below), a pass its spec
            if not any(r["bundle"] for r in rows if r["run"]["id"] == run["id"]):
                case = _fuzz_case(case_id, tags, run["args"])
                if case is not None:
                    return case
                tried.append(f"run {run['id']} (a fuzz campaign) does not rebuild it from its stored spec")
            continue
        if not {"suites", "backends"} <= set(run["args"]):  # only its bundle can help
            tried.append(f"run {run['id']} stored no arguments to rebuild it from")
            continue
        config = RunConfig.from_json(run["args"])
        config.pattern = exact
        config.corpus = config.corpus if config.corpus.exists() else corpus
        attempts: list[tuple[list[str], list[str]]] = []
        if suite == "user":  # the case's own model file first, then every model of the run
            models = [_stored_path(m, store_path, run["args"]) for m in config.models]
            source = _stored_path(tags["source"], store_path, run["args"]) if tags.get("source") else None
            attempts = [([], [str(m)]) for m in (source,) if m is not None and m.exists()]
            attempts.append(([], [str(m) for m in models if m.exists()]))
            gone = [str(m) for m in models if not m.exists()]
            if gone:
                tried.append(f"run {run['id']}'s model {gone[0]} is gone")
        elif config.suites:  # an official suite's cases may come from the group 'onnx'
            attempts = [([suite] if suite in config.suites else config.suites, [])]
        for suites, models in attempts:
            if suites or models:
                found = select_cases(replace(config, suites=suites, models=models), say)
                if found:
                    return found[0]
        if attempts:
            tried.append(f"run {run['id']}'s arguments no longer give it")
    for row in rows:
        if row["bundle"]:
            folder = _stored_path(row["bundle"], store_path, row["run"]["args"])
            if (folder / "meta.json").is_file():
                return _bundle_case(folder)
            tried.append(f"its bundle {folder} is gone")
    if not rows and suite in SUITES:  # no run holds it: the suite as it stands, at its defaults
        found = select_cases(RunConfig(suites=[suite], backends=[], pattern=exact, corpus=corpus), say)
        if found:
            return found[0]
        tried.append(f"no run in {store_path} holds it and suite {suite} (at its default --examples/--seed) does not")
    elif not rows:
        tried.append(f"no run in {store_path} holds it and {suite!r} is not a suite ({', '.join(SUITES)})")
    where = "; ".join(tried)
    raise CliError(f"cannot find case {case_id!r}: {where}. Pass the --store (and --corpus) of the run that holds it, "
                   f"or see the ids with: onnx-harness list cases --suite {suite if suite in SUITES else 'SUITE'}")


def _stored_rows(case_id: str, store_path: Path) -> list[dict[str, Any]]:
    """The stored results of ``case_id``, newest run first, each with its run."""
    if not Path(store_path).is_file():
        return []
    from .store import Store

    store = Store(store_path)
    runs: dict[int, dict[str, Any]] = {}
    out = []
    for run_id, tags, bundle in store.case_rows(case_id):
        run = runs.get(run_id) or runs.setdefault(run_id, store.run(run_id))
        out.append({"run": run, "tags": tags, "bundle": bundle})
    store.close()
    return out


def _stored_path(text: str, store_path: Path, run_args: dict[str, Any]) -> Path:
    """A path a run stored: as given, else relative to the folder the run was started from."""
    from .report.sources import _run_root

    path = Path(text)
    if path.is_absolute() or path.exists():
        return path
    return _run_root(Path(store_path), run_args.get("store")) / path


def _fuzz_case(case_id: str, tags: dict[str, Any], args: dict[str, Any]):
    """A fuzz campaign's graph, realized again from its stored spec with the campaign's settings;
    None when that gives another graph (the campaign had stopped drawing some op-versions)."""
    if "spec" not in tags:
        return None
    from .generated.builder import realize
    from .generated.cases import graph_case
    from .generated.spec import GenConfig, GraphSpec

    config = GenConfig(opsets=tuple(args["opsets"]), dtypes=tuple(args["dtypes"]), ops=tuple(args["ops"]) or None,
                       max_nodes=args["max_nodes"], nan_rate=args.get("nan_rate", GenConfig.nan_rate),
                       edge_rate=args.get("edge_rate", 0.0),  # campaigns before edge values drew none
                       edge_classes=tuple(args.get("edge_classes", GenConfig.edge_classes)),
                       patterns=tuple(args.get("patterns", ())))
    case = graph_case(realize(GraphSpec.from_json(tags["spec"]), config))
    return case if case.id == case_id else None


def _bundle_case(folder: Path):
    """The case a repro bundle holds (its model, data sets and expected outputs, tolerance, tags)."""
    from .case import Case, Tolerance

    meta = json.loads((folder / "meta.json").read_text())
    return Case(id=meta["case_id"], suite=meta["suite"], path=folder, tolerance=Tolerance.from_dict(meta["tolerance"]),
                tags=meta["tags"], check=meta["check"])
