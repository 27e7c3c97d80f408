"""Our references against onnx.reference: every disagreement on the operator cases, joined
with the note (``operator_cases/crosscheck.toml``) that says which side the spec supports; and,
apart, what onnx.reference chooses at each spec-silent point where it differs from our choice
(``unspecified`` results: no side is wrong there)."""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

NOTES_FILE = Path(__file__).resolve().parent.parent / "operator_cases" / "crosscheck.toml"


@dataclass
class Disagreement:
    op_version: str
    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cases: list[str] = field(default_factory=list)
    first_message: str = ""
    note: dict[str, Any] | None = None


def load_notes(path: Path = NOTES_FILE) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path, "rb") as fh:
        notes = tomllib.load(fh).get("note", [])
    for note in notes:
        if note.get("side") not in ("ours", "onnx.reference", "ambiguous"):
            raise ValueError(f"{path}: note for {note.get('op_version')} needs side = ours | onnx.reference | ambiguous")
    return notes


def disagreements(rows: list[dict[str, Any]], notes: list[dict[str, Any]]) -> list[Disagreement]:
    """Group non-pass results of the reference backend on operator cases by op-version."""
    groups: dict[str, Disagreement] = {}
    for row in rows:
        if row["outcome"] in ("pass", "skip", "unspecified"):
            continue
        match = re.match(r"operators/([^/]+)/", row["case_id"])
        key = match.group(1) if match else row["case_id"]
        group = groups.setdefault(key, Disagreement(key))
        group.outcomes[row["raw_outcome"] or row["outcome"]] += 1
        group.cases.append(row["case_id"])
        group.first_message = group.first_message or (row["message"] or "")
        if group.note is None:
            group.note = next((n for n in notes if fnmatchcase(row["case_id"], n.get("cases", f"operators/{n['op_version']}/*"))), None)
    return sorted(groups.values(), key=lambda g: g.op_version)


def silent_choices(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per spec-silent point: the op-versions and number of cases where the backend chose
    differently from us (keeping the invariants), and the first case's two values."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if (row.get("raw_outcome") or row["outcome"]) != "unspecified":
            continue
        info = (row.get("verdict") or {}).get("spec_silent") or {}
        entry = out.setdefault(info.get("point", "?"), {"op_versions": [], "cases": 0, "example": row["case_id"],
                                                          "ours": info.get("expected"), "theirs": info.get("actual"),
                                                          "spec": info.get("spec", "")})
        entry["cases"] += 1
        if info.get("op_version") and info["op_version"] not in entry["op_versions"]:
            entry["op_versions"].append(info["op_version"])
    return dict(sorted(out.items()))
