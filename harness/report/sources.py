"""Where a report's results come from: runs of one or several stores (``RunRef``), a run's JSON
(``JsonRef``), which runs a report takes by default and which run is the baseline; paths a run
stored, made portable."""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any



class ReportError(Exception):
    """A user-facing problem with the report's inputs (missing store, unknown run, ...)."""


# -- sources ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunRef:
    """One run in one store file; ``store_label`` is set when several stores are merged;
    ``only``: the (suite, backend) pairs taken from it (None: all of it)."""

    store: Path
    run_id: int
    store_label: str = ""
    only: frozenset[tuple[str, str]] | None = None

    @property
    def label(self) -> str:
        return f"{self.store_label}:run {self.run_id}" if self.store_label else f"run {self.run_id}"


@dataclass(frozen=True)
class JsonRef:
    """Results read from a JSON file (``results.json`` of a report, or a run's ``<store>.run-N.json``)."""

    path: Path

    @property
    def label(self) -> str:
        return self.path.name


_STORES: dict[Path, Any] = {}


def open_store(path: Path | str):
    from ..store import Store

    path = Path(path)
    if not path.is_file():
        raise ReportError(f"no results store at {path} (write one with: onnx-harness run ... --store {path})")
    key = path.resolve()
    if key not in _STORES:
        _STORES[key] = Store(path)
    return _STORES[key]


def _store_labels(stores: list[Path]) -> list[str]:
    if len(stores) <= 1:
        return [""] * len(stores)
    names = [Path(s).stem for s in stores]
    if len(set(names)) < len(names):
        names = [portable_path(s, keep=2) for s in stores]
    return names


def suite_of(case_id: str) -> str:
    """The suite a case id belongs to (its first segment: ``onnx-node/test_abs`` -> ``onnx-node``)."""
    return case_id.split("/", 1)[0]


_PAIRS: dict[Path, tuple[Any, dict[int, Counter]]] = {}


def _pairs_per_run(store) -> dict[int, Counter]:
    """Per run: result count per (suite, backend); computed once per state of the store (a scan
    of every result: seconds for a store of 300,000). Treat it as read-only."""
    key, state = Path(store.path).resolve(), store.state()
    cached = _PAIRS.get(key)
    if cached is None or cached[0] != state:
        out: dict[int, Counter] = defaultdict(Counter)
        for run_id, backend, suite, _, n in store.outcome_counts():
            out[run_id][(suite, backend)] += n
        cached = _PAIRS[key] = (state, dict(out))
    return cached[1]


def resolve_run(text: str, stores: list[Path], labels: list[str] | None = None) -> RunRef:
    labels = labels or _store_labels(stores)
    where, sep, which = text.rpartition(":")
    if sep and where:
        if where.isdigit() and 1 <= int(where) <= len(stores) and not Path(where).exists():
            index = int(where) - 1
            return _pick(stores[index], which, labels[index])
        path = Path(where)
        return _pick(path, which, _label_for(path, stores, labels))
    if Path(text).is_file():
        return _pick(Path(text), "latest", _label_for(Path(text), stores, labels))
    if len(stores) != 1:
        raise ReportError(f"run {text!r} is ambiguous with {len(stores)} stores: write STORE:RUN, e.g. 1:{text} or {stores[0]}:{text}")
    return _pick(stores[0], text, labels[0])


def _label_for(path: Path, stores: list[Path], labels: list[str]) -> str:
    for s, label in zip(stores, labels):
        if Path(s).resolve() == path.resolve():
            return label
    return path.stem if len(stores) > 1 or stores and Path(stores[0]).resolve() != path.resolve() else ""


def _pick(store_path: Path, which: str, label: str) -> RunRef:
    store = open_store(store_path)
    runs = store.runs()
    if not runs:
        raise ReportError(f"{store_path} holds no runs yet")
    which = which.strip().lower()
    if which in ("", "latest", "last"):
        return RunRef(store_path, runs[-1]["id"], label)
    if which in ("previous", "prev"):
        if len(runs) < 2:
            raise ReportError(f"{store_path} holds only one run: there is no previous run")
        return RunRef(store_path, runs[-2]["id"], label)
    if not which.isdigit():
        raise ReportError(f"bad run {which!r}: expected a run number, 'latest' or 'previous'")
    ids = [r["id"] for r in runs]
    if int(which) not in ids:
        raise ReportError(f"no run {which} in {store_path} (runs: {_ranges(ids)})")
    return RunRef(store_path, int(which), label)


def _ranges(ids: list[int]) -> str:
    return f"{ids[0]}..{ids[-1]}" if len(ids) > 3 else ", ".join(map(str, ids))


def read_results(store, run_id: int) -> list[dict[str, Any]]:
    """The rows of ``Store.results`` as a list (shared parsed JSON: treat them as read-only)."""
    return list(store.results(run_id))


def pairs_of(ref: RunRef) -> set[tuple[str, str]]:
    """The (suite, backend) pairs a run reference covers."""
    ran = set(_pairs_per_run(open_store(ref.store)).get(ref.run_id, ()))
    return ran if ref.only is None else ran & set(ref.only)


def previous_run(refs: list[RunRef]) -> RunRef | None:
    """The default baseline: the run just before the earliest selected run of the first store."""
    if not refs:
        return None
    first = refs[0]
    selected = {r.run_id for r in refs if r.store == first.store}
    earlier = [r["id"] for r in open_store(first.store).runs() if r["id"] < min(selected)]
    return RunRef(first.store, earlier[-1], first.store_label) if earlier else None


def _run_root(store_path: Path, stored: str | None) -> Path:
    """The folder a run was started from, which relative bundle paths are relative to."""
    resolved = store_path.resolve()
    if stored and not Path(stored).is_absolute():
        parts = Path(stored).parts
        if len(parts) < len(resolved.parts) and resolved.parts[-len(parts):] == parts:
            return Path(*resolved.parts[: -len(parts)])
    return resolved.parent.parent if resolved.parent.name == "reports" else resolved.parent


def _absolute_bundle(bundle: str | None, root: Path) -> str:
    if not bundle:
        return ""
    return bundle if os.path.isabs(bundle) else os.path.join(root, bundle)


def portable_path(path: str | Path | None, root: Path | None = None, keep: int = 3) -> str:
    """A path as a reader elsewhere can use it, never the machine's: a relative path as it is; an
    absolute one relative to ``root`` (the folder the run started in) or to the working folder
    when under one of them, else its last ``keep`` parts (``run-2/onnxruntime/<case>``)."""
    if not path:
        return ""
    if not os.path.isabs(path):
        return Path(path).as_posix()
    resolved = Path(path).resolve()
    for base in (root, Path.cwd()):
        if base is not None:
            try:
                return resolved.relative_to(Path(base).resolve()).as_posix() or "."
            except ValueError:
                pass
    return "/".join(Path(path).parts[-keep:])


def relative_link(path: str | None, folder: Path) -> str:
    """``path`` (absolute, or relative to the working folder) relative to ``folder``, as a URL
    path: a link from a report written in ``folder`` that works from the file system."""
    if not path:
        return ""
    target, folder = (Path(path) if os.path.isabs(path) else Path.cwd() / path).resolve(), Path(folder).resolve()
    if os.path.commonpath([target, folder]) == target.anchor:
        return ""  # only the file system's root in common: a link would spell the machine's folders
    rel = Path(os.path.relpath(target, folder)).as_posix()
    return rel.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("|", "%7C").replace("#", "%23")


def portable_bundle(bundle: str | None, root: Path) -> str:
    """A bundle's path relative to the folder the run started in (``reports/bundles/run-2/...``)."""
    return portable_path(bundle, root)


def portable_value(value: Any, root: Path | None = None) -> Any:
    """``value`` (a run's stored arguments or environment) with every absolute path, alone or as
    a command's word (``--store /abs/x``, ``--store=/abs/x``), made portable (:func:`portable_path`)."""
    if isinstance(value, dict):
        return {k: portable_value(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [portable_value(v, root) for v in value]
    if isinstance(value, str):
        if os.path.isabs(value) and not any(c.isspace() for c in value):
            return portable_path(value, root, keep=1)
        if " /" in value or "=/" in value:
            return portable_command(value, root)
    return value


_ABSOLUTE = re.compile(r"(?<![\w.~-])/(?:[\w.+@-]+/)+[\w.+@-]*")


def portable_text(text: str | None, root: Path | None = None) -> str | None:
    """A message with each absolute path in it made portable (a traceback's
    ``/home/me/venv/.../harness/runner.py`` becomes ``…/harness/runner.py``, which
    ``failures.normalize_message`` still reads as a path)."""
    if not text or "/" not in text:
        return text
    return _ABSOLUTE.sub(lambda m: "…/" + portable_path(m.group(0), root, keep=2), text)


def portable_command(command: str, root: Path | None = None) -> str:
    """A stored command line without the machine's paths: the script's path becomes
    ``onnx-harness`` (stored commands start with it) and each absolute path argument is made
    portable; shell-quoted."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    for n, word in enumerate(argv[:3]):
        if Path(word).name in ("onnx-harness", "cli.py") or word == "harness.cli":
            argv = ["onnx-harness", *argv[n + 1:]]
            break
    out = []
    for word in argv:
        key, eq, val = word.partition("=")
        if eq and key.startswith("-") and os.path.isabs(val):
            out.append(f"{key}={portable_path(val, root, keep=1)}")
        else:
            out.append(portable_path(word, root, keep=1) if os.path.isabs(word) else word)
    return shlex.join(out)


def load_rows(source: RunRef | JsonRef) -> list[dict[str, Any]]:
    """Result rows of a run in a store, or of a JSON file written by ``report`` or ``run``."""
    if isinstance(source, JsonRef):
        try:
            doc = json.loads(source.path.read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(f"cannot read results from {source.path}: {exc}") from exc
        rows = doc.get("results") if isinstance(doc, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) and {"case_id", "backend", "outcome"} <= set(r) for r in rows):
            raise ReportError(f"{source.path} is not a results file (expected a 'results' list with case_id, backend, outcome)")
        return rows
    return _restrict(read_results(open_store(source.store), source.run_id), source.only)


def _restrict(rows: list[dict[str, Any]], only: frozenset[tuple[str, str]] | set[tuple[str, str]] | None) -> list[dict[str, Any]]:
    return rows if only is None else [r for r in rows if (suite_of(r["case_id"]), r["backend"]) in only]


def resolve_source(text: str, stores: list[Path]) -> RunRef | JsonRef:
    """A diff side: a JSON results file, or a run as :func:`resolve_run` reads it."""
    if text.endswith(".json"):
        path = Path(text)
        if not path.is_file():
            raise ReportError(f"no results file {path}")
        return JsonRef(path)
    return resolve_run(text, stores)
