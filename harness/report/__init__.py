"""Reports rendered from the results store.

Data first (:mod:`harness.report.matrix`: ``Report``, ``ConformanceMatrix``, ``PerfTable``,
``History``, ``RunDiff``), then one small writer per format behind the :class:`Writer`
protocol: HTML (``index.html``), Markdown (``summary.md``), JSON (``results.json``) and JUnit
XML (``junit.xml``). Writers format; they never recompute verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .matrix import Report


class Writer(Protocol):
    """One output format: ``write(report, folder)`` writes ``folder / filename`` and returns it."""

    name: str
    filename: str

    def write(self, report: "Report", folder: Path) -> Path: ...


def writers() -> list[Writer]:
    from .html import HtmlWriter
    from .junit import JUnitWriter
    from .markdown import MarkdownWriter
    from .results_json import JsonWriter

    return [HtmlWriter(), MarkdownWriter(), JsonWriter(), JUnitWriter()]


def write_all(report: "Report", folder: Path, only: list[str] | None = None) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [w.write(report, folder) for w in writers() if not only or w.name in only]
