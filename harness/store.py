"""The results store: one SQLite file with the history of runs.

WAL journal. A result is stored alone (:meth:`Store.add_result`) or in a batch of results
committed in one transaction (:class:`ResultBatch`, what a run uses: one commit per N results or
per 100 ms). A run killed at any moment keeps every result committed; one killed before its
batch's commit loses only that batch, whose cases ``--resume`` runs again (once: a result is
stored once per run). A new run adds rows; nothing is overwritten. A run's JSON file and repro bundles go beside the store, named after it
(:func:`run_json_path`, :func:`bundles_root`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from .worker import Result

DEFAULT_STORE = Path("reports") / "results.sqlite"


# Files a run writes beside its store are named after the store, so several stores in one
# folder (one per tox environment, or any --store) never overwrite each other's.
def run_json_path(store_path: Path | str, run_id: int) -> Path:
    """The run's JSON file: ``reports/results.run-3.json`` for ``reports/results.sqlite``."""
    path = Path(store_path)
    return path.parent / f"{path.stem}.run-{run_id}.json"


def bundles_root(store_path: Path | str) -> Path:
    """Where a run's repro bundles go (``<root>/run-N/<backend>/<case>``): ``reports/bundles/results``
    for ``reports/results.sqlite``."""
    path = Path(store_path)
    return path.parent / "bundles" / path.stem

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    finished REAL,
    status TEXT NOT NULL,            -- running, complete, interrupted
    command TEXT,
    args TEXT,                       -- JSON: what --resume needs to continue the run
    environment TEXT,                -- JSON: python, platform, onnx, numpy, corpus hash ...
    corpus_sha256 TEXT
);
CREATE TABLE IF NOT EXISTS backends (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    available INTEGER NOT NULL,
    reason TEXT,
    version TEXT,
    environment TEXT,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    case_id TEXT NOT NULL,
    backend TEXT NOT NULL,
    outcome TEXT NOT NULL,
    raw_outcome TEXT,
    reason TEXT,
    message TEXT,
    max_abs REAL, max_rel REAL, max_ulp REAL, bad_count INTEGER, first_bad TEXT,
    prepare_s REAL, run_s REAL, run_median_s REAL, run_p90_s REAL,
    verdict TEXT, restamp TEXT, tags TEXT, bundle TEXT,
    recorded REAL NOT NULL,
    timing TEXT,                     -- JSON: calibrated samples, median and interval, peak_rss
    UNIQUE (run_id, case_id, backend)
);
CREATE INDEX IF NOT EXISTS results_case ON results(case_id, backend);
"""


class Store:
    def __init__(self, path: Path | str = DEFAULT_STORE) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns a store written by an older harness lacks."""
        have = {r[1] for r in self.db.execute("PRAGMA table_info(results)")}
        if "timing" not in have:
            self.db.execute("ALTER TABLE results ADD COLUMN timing TEXT")

    def close(self) -> None:
        self.db.close()

    # -- runs -----------------------------------------------------------------------------
    def start_run(self, command: str, args: dict[str, Any], environment: dict[str, Any], corpus_sha256: str | None = None) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (started, status, command, args, environment, corpus_sha256) VALUES (?, 'running', ?, ?, ?, ?)",
            (time.time(), command, json.dumps(args), json.dumps(environment), corpus_sha256),
        )
        return int(cur.lastrowid)

    def finish_run(self, run_id: int, status: str = "complete") -> None:
        self.db.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, time.time(), run_id))

    def set_environment(self, run_id: int, environment: dict[str, Any]) -> None:
        self.db.execute("UPDATE runs SET environment = ? WHERE id = ?", (json.dumps(environment), run_id))

    def reopen_run(self, run_id: int) -> None:
        self.db.execute("UPDATE runs SET status = 'running', finished = NULL WHERE id = ?", (run_id,))

    def run(self, run_id: int) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(f"no run {run_id} in {self.path}")
        return _run_dict(row)

    def runs(self) -> list[dict[str, Any]]:
        return [_run_dict(r) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

    def latest_run(self, status: str | None = None) -> dict[str, Any] | None:
        query = "SELECT * FROM runs" + (" WHERE status = ?" if status else "") + " ORDER BY id DESC LIMIT 1"
        row = self.db.execute(query, (status,) if status else ()).fetchone()
        return _run_dict(row) if row else None

    def latest_unfinished_run(self) -> dict[str, Any] | None:
        """The newest run that did not complete: interrupted, or cut off while running."""
        row = self.db.execute("SELECT * FROM runs WHERE status != 'complete' ORDER BY id DESC LIMIT 1").fetchone()
        return _run_dict(row) if row else None

    def record_backend(self, run_id: int, name: str, available: bool, reason: str, version: str, environment: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO backends VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, name, int(available), reason, version, json.dumps(environment)),
        )

    def backends(self, run_id: int) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM backends WHERE run_id = ? ORDER BY rowid", (run_id,))
        return [{**dict(r), "available": bool(r["available"]), "environment": json.loads(r["environment"] or "{}")} for r in rows]

    # -- results --------------------------------------------------------------------------
    def add_result(self, run_id: int, r: Result) -> None:
        self.add_results(run_id, [r])

    def add_results(self, run_id: int, results: list[Result]) -> None:
        """Store results in one transaction: all of them, or (killed before the commit) none. Inside
        a transaction the caller opened, they are part of it."""
        rows = [_result_row(run_id, r) for r in results]
        if not rows:
            return
        if self.db.in_transaction:
            self.db.executemany(_INSERT_RESULT, rows)
            return
        self.db.execute("BEGIN")
        try:
            self.db.executemany(_INSERT_RESULT, rows)
            self._commit()
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def _commit(self) -> None:
        self.db.execute("COMMIT")

    def done_pairs(self, run_id: int) -> set[tuple[str, str]]:
        return {(r[0], r[1]) for r in self.db.execute("SELECT case_id, backend FROM results WHERE run_id = ?", (run_id,))}

    def results(self, run_id: int, backend: str | None = None, outcomes: Iterable[str] | None = None,
                parse: bool = True) -> Iterator[dict[str, Any]]:
        """A run's results in the order stored (of ``backend``, with one of ``outcomes``, when
        given), their JSON columns (:data:`JSON_COLUMNS`) parsed, or kept as the stored JSON text
        without ``parse``. Identical texts (a case's tags, shared by every backend) are parsed once
        and shared: treat them as read-only."""
        query, params = "SELECT * FROM results WHERE run_id = ?", [run_id]
        if backend:
            query, params = query + " AND backend = ?", [*params, backend]
        if outcomes is not None:
            outcomes = list(outcomes)
            query, params = query + f" AND outcome IN ({','.join('?' * len(outcomes))})", [*params, *outcomes]
        parsed: dict[str, Any] = {}
        for row in self.db.execute(query + " ORDER BY id", params):
            d = dict(row)
            if not parse:
                yield d
                continue
            d["verdict"] = json.loads(d["verdict"]) if d["verdict"] else {}
            d["timing"] = json.loads(d["timing"]) if d["timing"] else {}
            for key in ("restamp", "tags"):
                text = d[key]
                d[key] = (parsed.get(text) or parsed.setdefault(text, json.loads(text))) if text else {}
            yield d

    def summary_rows(self, run_id: int) -> Iterator[dict[str, Any]]:
        """A run's results without their verdict and timing (what a summary over many runs needs:
        ``case_id, backend, outcome, raw_outcome, reason, message``, ``tags`` as stored text, ``bundle``)."""
        query = "SELECT case_id, backend, outcome, raw_outcome, reason, message, tags, bundle FROM results WHERE run_id = ? ORDER BY id"
        for row in self.db.execute(query, (run_id,)):
            yield dict(row)

    def outcome_counts(self) -> list[tuple[int, str, str, str, int]]:
        """(run id, backend, suite, outcome, count) for every run of the store."""
        return [tuple(r) for r in self.db.execute(
            "SELECT run_id, backend, CASE WHEN instr(case_id, '/') > 0 THEN substr(case_id, 1, instr(case_id, '/') - 1) "
            "ELSE case_id END, outcome, COUNT(*) FROM results GROUP BY 1, 2, 3, 4")]

    def state(self) -> tuple[int, int | None]:
        """(number of runs, newest result id): changes whenever a run or a result is added, so
        that what is computed from the whole store can be kept until it does."""
        runs, last = self.db.execute("SELECT (SELECT COUNT(*) FROM runs), (SELECT MAX(id) FROM results)").fetchone()
        return int(runs), last

    def unavailable_backends(self) -> set[tuple[int, str]]:
        """(run id, backend) of every backend a run could not load."""
        return {(r[0], r[1]) for r in self.db.execute("SELECT run_id, name FROM backends WHERE available = 0")}

    def case_rows(self, case_id: str) -> list[tuple[int, dict[str, Any], str | None]]:
        """(run id, tags, bundle) of every stored result of ``case_id``, newest run first."""
        rows = self.db.execute("SELECT run_id, tags, bundle FROM results WHERE case_id = ? ORDER BY run_id DESC, id", (case_id,))
        return [(run_id, json.loads(tags) if tags else {}, bundle) for run_id, tags, bundle in rows]

    def case_history(self, case_id: str, limit: int = 10) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT run_id, backend, outcome, message, max_abs, max_ulp, run_s FROM results WHERE case_id = ? ORDER BY run_id DESC, backend LIMIT ?",
            (case_id, limit),
        )
        return [dict(r) for r in rows]


#: the result columns holding JSON (an object, or NULL for an empty one)
JSON_COLUMNS = ("verdict", "timing", "restamp", "tags")

_INSERT_RESULT = """INSERT OR IGNORE INTO results (run_id, case_id, backend, outcome, raw_outcome, reason, message,
   max_abs, max_rel, max_ulp, bad_count, first_bad, prepare_s, run_s, run_median_s, run_p90_s,
   verdict, restamp, tags, bundle, recorded, timing) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""


def _result_row(run_id: int, r: Result) -> tuple:
    v = r.verdict or {}
    return (run_id, r.case_id, r.backend, r.outcome, r.raw_outcome or r.outcome, r.reason, r.message,
            v.get("max_abs"), v.get("max_rel"), v.get("max_ulp"), v.get("bad_count"), v.get("first_bad"),
            r.prepare_s, r.run_s, r.run_median_s, r.run_p90_s,
            json.dumps(v) if v else None, json.dumps(r.restamp) if r.restamp else None, json.dumps(r.tags), r.bundle, time.time(),
            json.dumps(r.timing) if r.timing else None)


class ResultBatch:
    """A run's results on their way to the store: committed together when ``size`` are waiting or
    the oldest has waited ``seconds`` (checked as each arrives and by :meth:`due`, which the
    runner calls while it waits), and by :meth:`flush` at the end. A kill before a commit loses
    the waiting results only from the store: their cases are not done, so ``--resume`` runs them."""

    def __init__(self, store: Store, run_id: int, size: int = 256, seconds: float = 0.1) -> None:
        self.store, self.run_id, self.size, self.seconds = store, run_id, size, seconds
        self.waiting: list[Result] = []
        self.since = 0.0

    def add(self, result: Result) -> None:
        if not self.waiting:
            self.since = time.monotonic()
        self.waiting.append(result)
        if len(self.waiting) >= self.size:
            self.flush()
        else:
            self.due()

    def due(self) -> None:
        """Commit the waiting results if the oldest has waited ``seconds``."""
        if self.waiting and time.monotonic() - self.since >= self.seconds:
            self.flush()

    def flush(self) -> None:
        """Commit every waiting result (they stay waiting if the commit fails)."""
        if self.waiting:
            self.store.add_results(self.run_id, self.waiting)
            self.waiting = []


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    d["args"] = json.loads(d["args"] or "{}")
    d["environment"] = json.loads(d["environment"] or "{}")
    return d
