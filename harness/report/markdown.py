"""``summary.md``: short enough for a pull-request comment.

Totals per backend, then regressions against the baseline (first), improvements, and the
failures grouped by cause (wrong answers first, then errors, missing kernels, refused models),
each list capped, every cell cut to a bounded width. A repro bundle is a link relative to the
summary's folder (never the machine's path). Tables by tabulate.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ..worker import OUTCOMES
from .html import fmt_pct, fmt_ratio
from .export_matrix import ExportMatrix
from .diff import Change, KINDS, REGRESSION_KINDS
from .matrix import Report
from .sources import relative_link

#: GitHub refuses comments over 65,536 characters; stay well under
MAX_CHARS = 60_000
LIMITS = {"regressed": 30, "improved": 15, "groups": 25, "exports": 150}


def _cell(text: Any, width: int = 110) -> str:
    """Text for one table cell (or list line): on one line, cut to ``width``, pipes escaped so
    they cannot split the row (GitHub honours the escape inside code spans too)."""
    text = " ".join(str(text or "").split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("|", "\\|")


def _code(text: Any) -> str:
    return f"`{_cell(text, 120)}`"


def _link(bundle: str, folder: Path, shown: str = "") -> str:
    """A link to a repro bundle relative to the summary's folder (it works from the file, and
    in a repository that holds both); ``shown`` (the bundle relative to the folder its run
    started in) as code when the two share only the file system's root; empty without a bundle."""
    rel = relative_link(bundle, folder)
    if not rel and shown:
        return _code(shown)
    if len(rel) > 300:  # a link cannot be cut: name the bundle, cut, and leave the link to index.html
        return _code(rel)
    return f"[repro]({rel})" if rel else ""


def _more(n: int, shown: int, what: str) -> str:
    return f"\n_… and {n - shown:,} more {what}: see `index.html` or `results.json`._\n" if n > shown else ""


def render(report: Report, folder: Path) -> str:
    lines: list[str] = []
    title = f"## ONNX conformance: {report.title}"
    if report.diff is not None:
        title += f" (against {report.diff.base})"
    lines.append(title)
    lines.append("")
    present = [o for o in OUTCOMES if any(b.counts[o] for b in report.backends)]
    rows = []
    for b in report.backends:
        if not b.available:
            rows.append([_cell(b.label, 40), "unavailable (below)"] + [""] * (len(present) + 4))
            continue
        h = b.headline
        rate = f"{fmt_pct(b.pass_rate)} of {b.loadable:,}" if b.pass_rate is not None else "–"
        shares = [f"{h[k]:,} ({fmt_pct(h[sh])})" if h[k] else "" for k, sh in
                  (("wrong_answers", "wrong_answer_share"), ("not_implemented", "not_implemented_share"), ("errors", "error_share"))]
        rows.append([_cell(f"{b.label} {b.version}" if b.label == b.name else b.label, 40), rate, *shares, f"{b.not_loadable:,}" if b.not_loadable else ""]
                    + [f"{b.counts[o]:,}" if b.counts[o] else "" for o in present])
    lines.append(tabulate(rows, headers=["backend", "conformance (of attempted)", "wrong answers", "not implemented", "errors", "refused (invalid model)",
                                         *present], tablefmt="github"))
    lines.append("")
    for b in report.backends:
        if not b.available:
            lines.append(f"- **{_cell(b.label)}** unavailable: {_cell(b.reason, 300)}")
        elif b.over:
            lines.append(f"- **{_cell(b.label)}** over {_cell('; '.join(b.over), 300)}")
    for label, what in report.hidden:
        lines.append(f"- not shown: {_cell(label)} ({_cell(what, 200)}), a subset; the fuller run of that backend is shown")
    if report.bench:
        lines.append(f"- benchmark: {len(report.bench):,} results (`index.html`, performance; not conformance)")
    lines.append("")

    by_pair = {(r["case_id"], r["backend"]): r for r in report.results}
    if report.diff is not None:
        lines.append("**Changes:** " + report.diff.counts_line()
                     + (f" ({_cell(report.diff.scope(), 600)})" if report.diff.scope() else ""))
        lines.append("")
        for kind in REGRESSION_KINDS:  # each kind of regression in its own section
            regressed = [c for c in report.diff.of_kind(kind) if not c.allowed]
            if regressed:
                lines.append(f"### Regressions: {kind}, {KINDS[kind]} ({len(regressed):,})")
                lines.append("")
                lines.append(_changes_table(regressed[: LIMITS["regressed"]], by_pair, folder))
                lines.append(_more(len(regressed), LIMITS["regressed"], kind))
        allowed = [c for c in report.diff.changes if c.regression and c.allowed]
        if allowed:
            lines.append(f"### Regressions allowed ({len(allowed):,}): not counted against the run")
            lines.append("")
            lines.append(tabulate([[_code(c.case_id), _cell(c.backend), _outcomes(c), _cell(c.allowed_by, 160)] for c in allowed[: LIMITS["regressed"]]],
                                  headers=["case", "backend", "outcome", "why allowed"], tablefmt="github"))
            lines.append(_more(len(allowed), LIMITS["regressed"], "allowed"))
        improved = report.diff.of_kind("improved")
        if improved:
            lines.append(f"### Improvements ({len(improved):,})")
            lines.append("")
            lines.append(_changes_table(improved[: LIMITS["improved"]], by_pair, folder, messages=False))
            lines.append(_more(len(improved), LIMITS["improved"], "improvements"))

    groups = report.failure_groups()
    if groups:
        counts = Counter()
        for g in groups:
            counts[g.kind] += g.cases
        lines.append(f"### Failures by cause ({len(groups):,} groups: " + ", ".join(f"{n:,} {k}" for k, n in counts.items()) + ")")
        lines.append("")
        rows = [[_cell(g.backend, 30), _cell(g.kind, 16), _cell(g.op, 30), _cell(g.outcome, 14), f"{g.cases:,}",
                 _cell(", ".join(g.dtypes), 40), _cell(g.cause, 90), _known(g.known),
                 f"{_code(g.example['case_id'])} {_link(g.example.get('bundle_path') or '', folder, g.example.get('bundle_rel') or '')}".rstrip()]
                for g in groups[: LIMITS["groups"]]]
        lines.append(tabulate(rows, headers=["backend", "kind", "op", "outcome", "cases", "dtypes", "message (numbers and names stripped)",
                                             "known: reason, link, finding", "example"], tablefmt="github"))
        lines.append(_more(len(groups), LIMITS["groups"], "groups"))

    silent = report.unspecified()
    if silent:
        bundles = {(r["case_id"], r["column"]): r.get("bundle_path") or "" for r in report.results if r.get("bundle_path")}
        lines.append("### Where runtimes differ on unspecified behaviour (not counted in the pass rate)")
        lines.append("")
        rows = [[_cell(g["backend"]), _code(p["point"]), _cell(", ".join(p["op_versions"]), 60), f"{p['cases']:,}",
                 _cell(f"ours {p['expected']}, theirs {p['actual']}", 50), _cell(p["spec"], 90),
                 f"{_code(p['example'])} {_link(bundles.get((p['example'], g['backend']), ''), folder, p['bundle'])}".rstrip()]
                for g in silent for p in g["points"]]
        lines.append(tabulate(rows[: LIMITS["groups"]], headers=["backend", "spec-silent point", "op-versions", "cases", "first difference",
                                                               "spec text", "example"], tablefmt="github"))
        lines.append(_more(len(rows), LIMITS["groups"], "spec-silent points"))

    lines.extend(_export_section(report))

    timed = report.perf.summary()
    if report.perf.onnxruntime and any(s["cases"] for s in timed.values()):
        lines.append("### Speed")
        lines.append("")
        lines.append(tabulate([[_cell(b), f"{s['cases']:,}", fmt_ratio(s["geomean_vs_fastest"]), fmt_ratio(s["geomean_vs_onnxruntime"])]
                               for b, s in timed.items() if s["cases"]],
                              headers=["backend", "timed cases", "geomean × fastest", f"geomean × {report.perf.onnxruntime}"], tablefmt="github"))
        lines.append("")
        lines.append(_unwarmed_note(report))
    lines.append("Re-run a failure: `python <bundle>/repro.py` (each repro link is relative to this file). Full report: "
                 "[index.html](index.html) (opens from disk); data: [results.json](results.json), [junit.xml](junit.xml).")
    text = "\n".join(lines).rstrip() + "\n"
    if len(text) > MAX_CHARS:  # a last resort; the caps above keep ordinary runs far below it
        text = text[: MAX_CHARS - 80].rsplit("\n", 1)[0] + "\n\n_(cut to fit a comment: see index.html)_\n"
    return text


def _export_section(report: Report) -> list[str]:
    """The export matrix (models suite): one row per model x exporter x opset, one column per
    backend; the exporters' messages listed under it."""
    exports = ExportMatrix.of_report(report)
    if not exports.rows:
        return []
    out = ["### Export matrix (models: framework → exporter × opset → backend)", "",
           "_export-failed: the exporter gave no model; rejected: the backend refused it or lacks a kernel; "
           "wrong: it ran and computed something else; error: it broke while running; * known failure._", ""]
    rows = []
    for row in exports.rows[: LIMITS["exports"]]:
        cells = [(c["cell"] + ("*" if c["known"] else "")) if c else "" for c in (row.cells.get(b) for b in exports.backends)]
        rows.append([_cell(row.framework, 20), _cell(row.model, 40), _cell(row.exporter, 40), row.opset, *cells])
    out.append(tabulate(rows, headers=["framework", "model", "exporter", "opset", *[_cell(b, 30) for b in exports.backends]], tablefmt="github"))
    out.append(_more(len(exports.rows), LIMITS["exports"], "exports"))
    failed = [r for r in exports.rows if r.export_error]
    if failed:
        out.append("Export failures:")
        out.append("")
        out.extend(f"- `{_cell(f'{r.framework}/{r.model}/{r.exporter}/opset{r.opset}', 100)}`: {_cell(r.export_error, 300)}"
                   for r in failed[: LIMITS["exports"]])
        out.append("")
    return out


def _unwarmed_note(report: Report) -> str:
    single, total = report.perf.unwarmed()
    if not single:
        return ""
    return (f"_Warning: {single:,} of {total:,} timings are a single unwarmed run (no `--repeat`), taken while other workers ran: "
            "indicative only; `onnx-harness run --repeat 5 -j 1` measures medians._\n")


def _known(known: dict[str, str]) -> str:
    """The expectation that explains a failure group: its reason, its link, its finding."""
    if not known:
        return ""
    text = _cell(known["reason"], 90)
    if known["link"] and len(known["link"]) < 200:
        text += f" [link]({known['link'].replace('|', '%7C').replace(')', '%29')})"
    return text + (f" (finding `{_cell(known['finding'], 60)}`)" if known["finding"] else "")


def _outcomes(c: Change) -> str:
    return f"{c.before or '(not run)'} → {c.after or '(not run)'}"


def _changes_table(changes: list[Change], by_pair: dict, folder: Path, messages: bool = True) -> str:
    rows = []
    for c in changes:
        row = [_code(c.case_id), _cell(c.backend), _outcomes(c)]
        if messages:
            r = by_pair.get((c.case_id, c.backend)) or {}
            row += [_cell(c.message, 90), _link(r.get("bundle_path") or c.bundle, folder, r.get("bundle_rel") or c.bundle)]
        rows.append(row)
    headers = ["case", "backend", "outcome"] + (["message", "repro"] if messages else [])
    return tabulate(rows, headers=headers, tablefmt="github")


class MarkdownWriter:
    name = "markdown"
    filename = "summary.md"

    def write(self, report: Report, folder: Path) -> Path:
        path = Path(folder) / self.filename
        path.write_text(render(report, Path(folder).resolve()), encoding="utf-8")
        return path
