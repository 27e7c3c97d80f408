"""Known failures as data: per-backend TOML files of entries
``{case = "<case-id glob>", outcome = "<outcome>" | "fail", reason = "...", link = "..."}``.

A result whose raw outcome is the expected one becomes ``xfail``; a pass against an entry
becomes ``xpass``; a different failure keeps its own outcome (the entry's reason is noted).
Entries that matched nothing in a run are reported, so the files do not rot.

Built-in files live in ``harness/expectations/<backend>.toml``; ``--expectations FILE`` adds
more (with ``backend = "..."`` on each entry, or a file named after the backend).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from .execute import FAILURES, OUTCOMES, Result

BUILTIN_DIR = Path(__file__).parent / "expectations"


@dataclass
class Expectation:
    backend: str
    case: str
    outcome: str
    reason: str
    link: str = ""
    source: str = ""
    used: int = 0

    def matches(self, result: Result) -> bool:
        return result.backend == self.backend and fnmatchcase(result.case_id, self.case)


class ExpectationError(ValueError):
    pass


def load_file(path: Path, backend: str | None = None) -> list[Expectation]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExpectationError(f"expectations file {path}: {exc}") from exc
    entries = []
    for n, raw in enumerate(data.get("expect", [])):
        name = raw.get("backend", backend or Path(path).stem)
        outcome = raw.get("outcome", "fail")
        if outcome != "fail" and outcome not in OUTCOMES:
            raise ExpectationError(f"{path}: entry {n} has unknown outcome {outcome!r}")
        if not raw.get("case") or not raw.get("reason"):
            raise ExpectationError(f"{path}: entry {n} needs both 'case' and 'reason'")
        entries.append(Expectation(name, raw["case"], outcome, raw["reason"], raw.get("link", ""), str(path)))
    return entries


def load(backends: list[str], extra_files: list[Path] = ()) -> list[Expectation]:
    entries: list[Expectation] = []
    for name in backends:
        file = BUILTIN_DIR / f"{name}.toml"
        if file.exists():
            entries.extend(load_file(file, name))
    for file in extra_files:
        entries.extend(load_file(Path(file)))
    return [e for e in entries if e.backend in backends]


def apply(result: Result, entries: list[Expectation]) -> Result:
    result.raw_outcome = result.outcome
    for entry in entries:
        if not entry.matches(result):
            continue
        entry.used += 1
        if result.outcome == "pass":
            result.outcome = "xpass"
        elif entry.outcome == result.outcome or (entry.outcome == "fail" and result.outcome in FAILURES):
            result.outcome = "xfail"
        result.reason = entry.reason + (f" ({entry.link})" if entry.link else "")
        break
    return result


def unused(entries: list[Expectation]) -> list[Expectation]:
    return [e for e in entries if not e.used]
