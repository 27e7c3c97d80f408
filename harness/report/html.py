"""The single-file HTML report: ``index.html``, rendered by Jinja2 (autoescape on).

Everything is inline (CSS, JS, SVG, data), so the file opens from disk and makes no network
request. The results travel as one compact JSON document: columns of numbers instead of one
object per result, and a string table for every repeated text (outcome reasons, messages,
bundle folders, tags), so 50,000 results stay a few megabytes; the page renders tables a page
at a time. Static parts (backend headers, charts) are rendered here; the matrix, case list,
drill-down and filters run in the page's script, counting the rows this module prepared.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from collections import Counter
from typing import Any

import jinja2
from markupsafe import Markup

from ..worker import FAILURES, OUTCOMES
from ..schema import dtype_label
from .export_matrix import ExportMatrix
from .diff import CHANGE_KINDS
from .matrix import Report
from .perf import against_reference
from .records import APART, PASSING, VIEWS

TEMPLATES = Path(__file__).parent / "templates"
#: failure groups listed in the "Failures by cause" section (all are in the case list's cause view)
GROUPS_SHOWN = 30
#: longest message kept in the page (the full text is in results.json and the store)
MESSAGE_CHARS = 1200

OUTCOME_COLOURS = {
    "pass": "#2e9d4f", "unspecified": "#7fbf9a", "xpass": "#4f8fd6", "xfail": "#cdb64a", "skip": "#c9ced6",
    "mismatch": "#d7301f", "wrong-shape": "#ef6a1a", "wrong-dtype": "#f39a4a", "rejected": "#8c6bb1",
    "unsupported": "#8a8f98", "error": "#a50f15", "crash": "#2b2b2b", "timeout": "#8c510a",
    "export-failed": "#6d4c41",
}
#: the export matrix's cells (:mod:`.export_matrix`), in the outcome colours they stand for
EXPORT_CELL_COLOURS = {"pass": OUTCOME_COLOURS["pass"], "wrong": OUTCOME_COLOURS["mismatch"], "rejected": OUTCOME_COLOURS["rejected"],
                       "error": OUTCOME_COLOURS["error"], "export-failed": OUTCOME_COLOURS["export-failed"],
                       "unspecified": OUTCOME_COLOURS["unspecified"], "skip": OUTCOME_COLOURS["skip"]}
SERIES_COLOURS = ["#3366cc", "#dc6b19", "#2e9d4f", "#9b4dca", "#c2185b", "#00838f", "#7c6f00", "#5d4037"]


# -- small formatting helpers ------------------------------------------------------------------
#: how every report shows a missing value (one mark, never "-" here and "–" there)
MISSING = "–"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return MISSING
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s" if s < 100 else f"{s:,.0f} s"


def fmt_int(n: int | None) -> str:
    return MISSING if n is None else f"{n:,}"


def fmt_pct(x: float | None) -> str:
    return MISSING if x is None else f"{100 * x:.1f} %"


def fmt_ratio(x: float | None) -> str:
    return MISSING if x is None else f"×{x:.3g}"


def fmt_time(t: float | None) -> str:
    return MISSING if not t else datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _num(x: Any, digits: int = 4) -> Any:
    """A float shortened for the page (4 significant digits); inf/nan as strings (JSON has none)."""
    if x is None:
        return None
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return int(x)  # counts and ULP distances stay exact
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    y = float(f"{x:.{digits}g}")
    return int(y) if y.is_integer() and abs(y) < 1e15 else y


class _Strings:
    """The string table: every repeated text once; -1 stands for none."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, s: Any) -> int:
        if s is None or s == "":
            return -1
        s = str(s)
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.items)
            self.items.append(s)
        return i


def _localized(loc: dict[str, Any]) -> dict[str, Any]:
    """What the drill-down shows of ``run --localize``'s result (``harness.localize``)."""
    keep = ("status", "method", "oracle", "message", "single_outcome", "single_message", "confirmed", "bundle", "inputs", "expected", "actual")
    node = loc.get("node") or {}
    return {**{k: loc.get(k) for k in keep if loc.get(k) not in (None, "", [], {})},
            **({"node": node.get("label"), "input_shapes": node.get("input_shapes")} if node else {})}


def _bundle_name(case_id: str) -> str:
    # the folder name harness.repro.bundle_dir gives a case; the page derives it the same way
    return re.sub(r"[^A-Za-z0-9._-]+", "__", case_id)


# -- the embedded data ----------------------------------------------------------------------------
_CASE_TAG_KEYS = ("suite", "op", "domain", "since_version", "opset", "dtype")


def _sparse(values: list[Any], default: Any) -> Any:
    """A column mostly equal to ``default`` becomes {"d": default, "i": index gaps, "v": values}."""
    hits = [(i, v) for i, v in enumerate(values) if v != default or v is None and default is not None]
    if len(hits) * 2 >= len(values):
        return values
    gaps, prev = [], 0
    for i, _ in hits:
        gaps.append(i - prev)
        prev = i
    return {"d": default, "i": gaps, "v": [v for _, v in hits]}


def _deltas(values: list[int]) -> list[int]:
    return [v - (values[i - 1] if i else 0) for i, v in enumerate(values)]


def _front_coded(ids: list[str]) -> dict[str, list[Any]]:
    """Sorted ids as (length shared with the previous id, rest): most of an id is its neighbour's."""
    p, rest, prev = [], [], ""
    for text in ids:
        n = 0
        limit = min(len(text), len(prev))
        while n < limit and text[n] == prev[n]:
            n += 1
        p.append(n)
        rest.append(text[n:])
        prev = text
    return {"p": p, "s": rest}


def _us(seconds: Any) -> Any:
    """Seconds as microseconds with 3 significant digits (what the page shows)."""
    return None if seconds is None else _num(seconds * 1e6, 3)


def _extra_tags(info) -> dict[str, Any]:
    """Tags beyond the columns, without those the case id or the columns already say."""
    extra = {k: v for k, v in info.tags.items() if k not in _CASE_TAG_KEYS}
    if "ops" in extra and extra["ops"] == ([info.op] if info.op else None):  # a failed export has no ops
        extra.pop("ops")
    if extra.get("dtypes") is not None and ",".join(dtype_label(d) for d in extra["dtypes"]) == info.dtype:
        extra.pop("dtypes")
    if str(extra.get("example", "\0")) == info.case_id.rsplit("/", 1)[-1]:
        extra.pop("example")
    return extra


def _evidence(r: dict[str, Any]) -> str | None:
    """What the drill-down shows of a non-pass beyond the verdict numbers, as one JSON text that
    the page parses only when the result is opened: the run-time evidence (inputs, outputs, the
    window around the first bad element), the tolerance with its source, the spec-silent point."""
    if r["outcome"] in PASSING or r["outcome"] == "skip":
        return None
    v = r.get("verdict") or {}
    ev = {k: v[k] for k in ("evidence", "window", "tolerance", "spec_silent") if v.get(k)}
    expected = (v.get("evidence") or {}).get("expected") or []
    output = v.get("output")
    dtype = expected[output].get("dtype") if isinstance(output, int) and 0 <= output < len(expected) else None
    if ev.get("tolerance") and dtype and not dtype.startswith(FLOATING):
        # the comparator compares other types for equality: the tolerance applied is "exact"
        ev["tolerance"] = {**ev["tolerance"], "exact": dtype}
    if ev.get("window") and ev.get("evidence"):  # the window shows the values that matter: keep the outputs' shapes only
        ev["evidence"] = {**ev["evidence"], **{side: [{k: x for k, x in t.items() if k != "values"} for t in ev["evidence"][side]]
                                               for side in ("expected", "actual") if side in ev["evidence"]}}
    return json.dumps(_exact_ints(ev), sort_keys=True, separators=(",", ":")) if ev else None


#: dtype names the comparator judges within a tolerance (``compare._is_float``); any other is compared for equality
FLOATING = ("float", "bfloat", "double", "half", "complex")


def _exact_ints(x: Any) -> Any:
    """``x`` with every integer a JavaScript number cannot hold exactly (beyond 2**53) as its
    decimal text: int64 and uint64 values stay exact in the page."""
    if isinstance(x, dict):
        return {k: _exact_ints(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_exact_ints(v) for v in x]
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) > 2**53:
        return str(x)
    return x


def _note_index(notes: list[dict[str, Any]]):
    """case id -> index of the first crosscheck note whose case pattern covers it (or -1)."""
    from fnmatch import fnmatchcase

    def find(case_id: str) -> int:
        if not case_id.startswith("operators/"):
            return -1
        for n, note in enumerate(notes):
            pattern = note.get("cases") or f"operators/{note.get('op_version')}/*"
            if fnmatchcase(case_id, pattern):
                return n
        return -1
    return find


def _commands(report: Report) -> list[dict[str, Any]]:
    """Per run: the ``run`` arguments per suite and the ``--option`` arguments per backend
    (:mod:`harness.report.reproduce`), from which the page builds each result's commands."""
    from .reproduce import _options, run_prefix

    suites = sorted({info.suite for info in report.matrix.cases.values()})
    out = []
    for run in report.runs:
        names = [b.get("name") for b in run.args.get("backends") or []]
        out.append({"p": {suite: run_prefix(run.args, suite) for suite in suites},
                    "o": {name: _options(name, run.args) for name in names if _options(name, run.args)},
                    "nr": run.args.get("restamp") is False})
    return out


def page_data(report: Report) -> dict[str, Any]:
    from .. import findings
    from ..crosscheck import load_notes
    from .failures import _natural

    S = _Strings()
    labels = [b.label for b in report.backends]
    bidx = {label: n for n, label in enumerate(labels)}
    oidx = {o: n for n, o in enumerate(OUTCOMES)}
    cases = report.matrix.cases
    case_ids = sorted(cases, key=_natural)
    cidx = {c: n for n, c in enumerate(case_ids)}

    cols: dict[str, Any] = {"id": _front_coded(case_ids)}
    for key in ("suite", "op", "dom", "sv", "opset", "dt", "x"):
        cols[key] = []
    for case_id in case_ids:
        info = cases[case_id]
        cols["suite"].append(S(info.suite))
        cols["op"].append(S(info.op_label))
        cols["dom"].append(S(info.domain))
        cols["sv"].append(info.since_version)
        cols["opset"].append(info.opset)
        cols["dt"].append(S(info.dtype))
        extra = _extra_tags(info)
        cols["x"].append(S(json.dumps(extra, sort_keys=True, separators=(", ", ": "))) if extra else -1)
    cols["x"] = _sparse(cols["x"], -1)
    # matrix rows per view, sorted here; every case points at its row in each view
    views: dict[str, Any] = {}
    for view in VIEWS:
        ordered = [(r.group, r.key) for r in report.matrix.rows(view)]
        position = {k: n for n, k in enumerate(ordered)}
        views[view] = {"g": [S(g) for g, _ in ordered], "k": [S(k) for _, k in ordered],
                       "row": [position[cases[c].row_key(view)] for c in case_ids]}
    cols["views"] = views

    results = sorted(report.results, key=lambda r: (cidx[r["case_id"]], bidx[r["column"]]))
    res: dict[str, list[Any]] = {k: [] for k in ("c", "b", "o", "ro", "rs", "m", "ma", "mr", "mu", "bc", "tot", "fb", "nan",
                                                  "out", "pr", "rt", "md", "p9", "bd", "bn", "rst", "run", "only", "lz", "g", "ev", "cx", "fd")}
    notes = load_notes()
    named, records = findings.named_by_expectations(), findings.load()
    note_of = _note_index(notes)
    # failures grouped by cause: one entry per group, and each result's group (-1: in none)
    groups = report.failure_groups()
    member = {m: n for n, g in enumerate(groups) for m in g.members}
    page_groups = {"b": [bidx[g.backend] for g in groups], "op": [S(g.op) for g in groups], "o": [oidx[g.outcome] for g in groups],
                   "k": [S(g.kind) for g in groups], "m": [S(g.cause) for g in groups], "n": [g.cases for g in groups],
                   "dt": [S(", ".join(g.dtypes)) for g in groups]}
    run_index = {r.label: n for n, r in enumerate(report.runs)}
    only = report.matrix.fails_only_here
    for r in results:
        v = r.get("verdict") or {}
        res["c"].append(cidx[r["case_id"]])
        res["b"].append(bidx[r["column"]])
        res["o"].append(oidx.get(r["outcome"], oidx["error"]))
        raw = r.get("raw_outcome") or r["outcome"]
        res["ro"].append(-1 if raw == r["outcome"] else oidx.get(raw, -1))
        res["rs"].append(S(r.get("reason")))
        message = r.get("message") or ""
        if len(message) > MESSAGE_CHARS:
            message = message[:MESSAGE_CHARS] + f" … ({len(message) - MESSAGE_CHARS} more characters in results.json)"
        res["m"].append(S(message))
        res["ma"].append(_num(r.get("max_abs")))
        res["mr"].append(_num(r.get("max_rel")))
        res["mu"].append(_num(r.get("max_ulp"), 15))
        res["bc"].append(r.get("bad_count"))
        res["tot"].append(v.get("total") if r.get("bad_count") else None)
        res["fb"].append(S(r.get("first_bad")))
        res["nan"].append(v.get("nan_mismatch") or None)
        res["out"].append(v.get("output"))
        res["pr"].append(_us(r.get("prepare_s")))
        res["rt"].append(_us(r.get("run_s")))
        res["md"].append(_us(r.get("run_median_s")))
        res["p9"].append(_us(r.get("run_p90_s")))
        bundle = r.get("bundle_rel") or ""  # never the machine's path (matrix.portable_bundle)
        folder, _, name = bundle.rpartition("/")
        res["bd"].append(S(folder) if bundle else -1)
        res["bn"].append(-1 if not bundle or name == _bundle_name(r["case_id"]) else S(name))
        res["rst"].append(S(json.dumps(r["restamp"], sort_keys=True)) if r.get("restamp") else -1)
        res["run"].append(run_index.get(r.get("run"), 0))
        res["only"].append(1 if (r["case_id"], r["column"]) in only else 0)
        res["lz"].append(S(json.dumps(_localized(v["localized"]), sort_keys=True)) if v.get("localized") else -1)
        res["g"].append(member.get((r["case_id"], r["column"]), -1))
        ev = _evidence(r)
        res["ev"].append(S(ev) if ev else -1)
        res["cx"].append(note_of(r["case_id"]) if ev is not None or r["outcome"] in FAILURES else -1)
        found = r.get("reason") and findings.finding_of(named, r.get("backend") or r["column"], r["case_id"], r["reason"])
        res["fd"].append(S(json.dumps({k: records[found][k] for k in ("id", "title", "upstream")})) if found in records else -1)
    res["c"] = _deltas(res["c"])
    defaults = {"ro": -1, "rs": -1, "m": -1, "ma": None, "mr": None, "mu": None, "bc": None, "tot": None, "fb": -1, "nan": None,
                "out": None, "md": None, "p9": None, "bd": -1, "bn": -1, "rst": -1, "run": 0, "only": 0, "lz": -1, "g": -1,
                "ev": -1, "cx": -1, "fd": -1}
    for key, default in defaults.items():
        common = Counter(res[key]).most_common(1)
        res[key] = _sparse(res[key], common[0][0] if key in ("ma", "mr", "mu", "bc") and common else default)

    perf_rows = sorted(report.perf.rows, key=lambda row: cidx[row.case_id])
    perf = {"c": _deltas([cidx[row.case_id] for row in perf_rows]),
            "f": [bidx[row.fastest] for row in perf_rows],
            "m": [sum(1 << bidx[b] for b in row.cells) for row in perf_rows]}

    diff = None
    if report.diff is not None:
        kinds = {k: n for n, k in enumerate(CHANGE_KINDS)}
        d = report.diff
        diff = {"base": d.base, "new": d.new, "counts": {k: d.counts()[k] for k in CHANGE_KINDS},
                "k": [kinds[c.kind] for c in d.changes], "c": [S(c.case_id) for c in d.changes],
                "b": [S(c.backend) for c in d.changes],
                "o0": [oidx.get(c.before, -1) if c.before else -1 for c in d.changes],
                "o1": [oidx.get(c.after, -1) if c.after else -1 for c in d.changes],
                # the changes an expectation allows (index, why): shown, not counted as regressions
                "allowed": [[n, S(c.allowed_by)] for n, c in enumerate(d.changes) if c.allowed]}

    return {
        "v": 1,
        "outcomes": list(OUTCOMES),
        "failures": list(FAILURES),
        "passing": list(PASSING),
        "apart": list(APART),
        "views": list(VIEWS),
        "kinds": list(CHANGE_KINDS),
        "backends": [{"label": b.label, "name": b.name, "version": b.version, "available": b.available} for b in report.backends],
        "ort": bidx[report.perf.onnxruntime] if report.perf.onnxruntime else -1,
        "runs": [r.label for r in report.runs],
        "cases": cols,
        "res": res,
        "perf": perf,
        "diff": diff,
        "groups": page_groups,
        "notes": [{k: note.get(k, "") for k in ("op_version", "side", "spec", "explanation")} for note in notes],
        "cmd": _commands(report),
        "S": S.items,
    }


# -- charts (SVG geometry; the template draws it) ---------------------------------------------------
def history_chart(report: Report, width: int = 760, height: int = 240) -> dict[str, Any] | None:
    hist = report.history
    if hist is None or not hist.runs:
        return None
    pad_l, pad_r, pad_t, pad_b = 56, 16, 14, 36
    n = len(hist.runs)
    step = _nice_step(max([p.passed or 0 for pts in hist.series.values() for p in pts] + [4]) / 4)
    top = step * math.ceil(max([p.passed or 0 for pts in hist.series.values() for p in pts] + [1]) / step)
    x = lambda i: pad_l + (width - pad_l - pad_r) * (i / (n - 1) if n > 1 else 0.5)  # noqa: E731
    y = lambda v: pad_t + (height - pad_t - pad_b) * (1 - v / top)  # noqa: E731
    series = []
    for k, (name, points) in enumerate(hist.series.items()):
        if all(p.passed is None for p in points):
            continue  # never available in these runs: the table says so
        segments, current, dots = [], [], []
        for i, p in enumerate(points):
            if p.passed is None:
                if current:
                    segments.append(current)
                current = []
                continue
            current.append(f"{x(i):.1f},{y(p.passed):.1f}")
            run = hist.runs[i]
            dots.append({"x": round(x(i), 1), "y": round(y(p.passed), 1),
                         "title": f"{name}, {run['label']} ({run['status']}): {p.passed:,} pass of {p.total:,}"})
        if current:
            segments.append(current)
        series.append({"name": name, "colour": SERIES_COLOURS[k % len(SERIES_COLOURS)],
                       "segments": [" ".join(s) for s in segments], "dots": dots,
                       "last": next((p for p in reversed(points) if p.passed is not None), None)})
    ticks = [{"y": round(y(v), 1), "label": f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"}
             for v in (step * i for i in range(int(round(top / step)) + 1))]
    step = max(1, math.ceil(n / 12))
    xlabels = [{"x": round(x(i), 1), "label": str(r["id"]) if not r["label"].count(":") else r["label"].replace(":run ", ":")}
               for i, r in enumerate(hist.runs) if i % step == 0 or i == n - 1]
    table_runs = hist.runs[-30:]
    offset = len(hist.runs) - len(table_runs)
    table = [{"run": r, "cells": {name: pts[offset + i] for name, pts in hist.series.items()}} for i, r in enumerate(table_runs)]
    return {"width": width, "height": height, "series": series, "ticks": ticks, "xlabels": xlabels,
            "x0": pad_l, "x1": width - pad_r, "y0": pad_t, "y1": height - pad_b, "table": table,
            "names": list(hist.series), "hidden_runs": offset}


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k that is at least ``raw``."""
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if raw <= m * mag)


def model_chart(report: Report, width: int = 760) -> dict[str, Any] | None:
    rows = report.perf.model_rows()
    if not rows:
        return None
    labels = [b.label for b in report.backends]
    colours = {label: SERIES_COLOURS[n % len(SERIES_COLOURS)] for n, label in enumerate(labels)}
    values = [c.latency_s for r in rows for c in r.cells.values() if c.latency_s > 0]
    if not values:
        return None
    lo = math.floor(math.log10(min(values)))
    hi = max(lo + 1, math.ceil(math.log10(max(values))))
    x0, x1 = 190, width - 130
    scale = lambda v: x0 + (x1 - x0) * ((math.log10(v) - lo) / (hi - lo)) if v > 0 else x0  # noqa: E731
    bar, gap = 14, 3
    y = 28
    groups = []
    for row in rows:
        bars = []
        gy = y
        for label in labels:
            cell = row.cells.get(label)
            if cell is None:
                continue
            bars.append({"y": y, "w": round(max(1.0, scale(cell.latency_s) - x0), 1), "colour": colours[label],
                         "text": f"{fmt_seconds(cell.latency_s)}" + (f" {fmt_ratio(cell.ratio_fastest)}" if cell.ratio_fastest > 1.005 else " fastest"),
                         "title": f"{row.case_id} on {label}: {fmt_seconds(cell.latency_s)} ({cell.source}), {fmt_ratio(cell.ratio_fastest)} the fastest"
                                  + (f", {fmt_ratio(cell.ratio_onnxruntime)} onnxruntime" if cell.ratio_onnxruntime else "")})
            y += bar + gap
        groups.append({"label": row.case_id.split("/", 1)[-1], "case": row.case_id, "y": gy, "h": y - gy, "bars": bars})
        y += 10
    ticks = [{"x": round(scale(10.0 ** e), 1), "label": fmt_seconds(10.0 ** e)} for e in range(lo, hi + 1)]
    return {"width": width, "height": y + 6, "x0": x0, "groups": groups, "ticks": ticks, "bar": bar,
            "legend": [{"label": label, "colour": colours[label]} for label in labels if any(label in r.cells for r in rows)]}


# -- the writer ---------------------------------------------------------------------------------------
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "sort_keys": False, "ensure_ascii": False}
    env.filters.update(secs=fmt_seconds, num=fmt_int, pct=fmt_pct, ratio=fmt_ratio, when=fmt_time)
    return env


def write_downloads(report: Report, folder: Path) -> dict[int, str]:
    """The repro bundle of each shown cause group's example case as a zip in ``folder/repro/``
    (:func:`harness.repro.zip_bundle`): shown group index -> its href. A group whose example has
    no bundle on this machine has none."""
    from ..repro import zip_bundle

    hrefs = {}
    for n, g in enumerate(report.failure_groups()[:GROUPS_SHOWN]):
        bundle = Path(g.example.get("bundle_path") or "")
        if not g.example.get("bundle_path") or not (bundle / "meta.json").is_file():
            continue
        name = f"repro/{n:02d}-{bundle.name}.zip"
        (Path(folder) / "repro").mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_bytes(zip_bundle(bundle))
        hrefs[n] = name
    return hrefs


def render(report: Report, folder: Path | None = None, downloads: dict[int, str] | None = None) -> str:
    """The page; ``folder``: where it is written (bundle links are relative to it); ``downloads``:
    the zips of the cause groups' example bundles (:func:`write_downloads`)."""
    from .sources import relative_link

    env = environment()
    perf_summary = report.perf.summary()
    unspecified = report.unspecified()
    if folder is not None:
        paths = {(r["case_id"], r["column"]): r.get("bundle_path") for r in report.results if r.get("bundle_path")}
        for g in unspecified:
            for p in g["points"]:
                p["href"] = relative_link(paths.get((p["example"], g["backend"])), folder)
    return env.get_template("report.html.j2").render(
        report=report,
        data=page_data(report),
        unspecified=unspecified,
        exports=ExportMatrix.of_report(report),
        export_cells=EXPORT_CELL_COLOURS,
        groups=report.failure_groups()[:GROUPS_SHOWN],
        downloads=downloads or {},
        outcomes=OUTCOMES,
        colours=OUTCOME_COLOURS,
        failures=FAILURES,
        perf_summary=perf_summary,
        vs_reference=against_reference(report.perf, {b.label: b.name for b in report.backends}),
        history=history_chart(report),
        models=model_chart(report),
        perf_extra=perf_extra(report),
        generated=fmt_time(report.generated),
        css=Markup((TEMPLATES / "report.css").read_text()),
        script=Markup((TEMPLATES / "report.js").read_text()),
    )


def perf_extra(report: Report) -> dict[str, Any]:
    """The perf matrix and the operator benchmark (:mod:`.perf_html`)."""
    from .perf_html import bench_section, perf_matrix

    return {"matrix": perf_matrix(report), "bench": bench_section(report)}


class HtmlWriter:
    name = "html"
    filename = "index.html"

    def write(self, report: Report, folder: Path) -> Path:
        path = Path(folder) / self.filename
        path.write_text(render(report, Path(folder), write_downloads(report, Path(folder))), encoding="utf-8")
        return path
