"""Known failures as data: per-backend TOML files of entries
``{case = "<case-id glob>", outcome = "<outcome>", reason = "...", link = "..."}`` (optionally
``triage`` and ``finding``; see :mod:`harness.baseline`)
(``cases = [...]`` for several cases with one reason).

A result whose raw outcome is the expected one becomes ``xfail``; a pass against an entry
becomes ``xpass``; a different failure keeps its own outcome (the entry's reason is noted).
Entries that matched nothing in a run are reported (``stale``), so the files do not rot; a
run that asks for it (``--strict``) counts them as unexpected. A skipped result is left alone.

Built-in files live in ``harness/expectations/<backend>.toml``; ``--expectations FILE`` adds
more. A file's entries are for the backend its top-level ``backend = "..."`` names (the run's
name for it: ``my_pkg:MyBackend``, ``exec:...``), else for the backend the file is named after;
an entry's own ``backend`` key overrides both. A file whose entries name no backend of the run
is reported (:func:`load`), never silently ignored. A variant of a
backend (``onnxruntime-noopt``, ``onnxruntime:<ExecutionProvider>``) takes its own file first,
then its base backend's entries; an entry with a ``variants`` list holds only for the backends
it names (``variants = ["onnxruntime"]``: the optimizing session only).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from .worker import FAILURES, OUTCOMES, Result

BUILTIN_DIR = Path(__file__).parent / "expectations"


@dataclass
class Expectation:
    backend: str
    case: str
    outcome: str
    reason: str
    link: str = ""
    source: str = ""
    #: "todo": written by ``expectations update``, not decided yet (``run --strict`` and
    #: ``expectations check`` say so); "missing-kernel": an unsupported result listed by cause
    triage: str = ""
    #: the id of the finding (``harness/findings``) this entry's cause is
    finding: str = ""
    #: the backend's failure depends on state it does not control (a stale buffer): a pass
    #: against this entry is a pass of that execution, not an xpass
    nondeterministic: bool = False

    def matches(self, result: Result) -> bool:
        return result.backend == self.backend and fnmatchcase(result.case_id, self.case)


class ExpectationError(ValueError):
    pass


_GLOB = re.compile(r"[*?[]")


class Entries(list):
    """The loaded entries, in order, with an index that finds the ones matching a case id without
    trying every glob: a run checks each of thousands of results against hundreds of entries."""

    def matching(self, backend: str, case_id: str) -> list[Expectation]:
        """The entries matching (backend, case_id), in file order (the first one decides)."""
        index = getattr(self, "_index", None)
        if index is None or index[0] != len(self):
            index = self._index = (len(self), _build_index(self))
        by_head, by_prefix, lengths = index[1]
        head = _head(case_id)
        found = [hit for hit in by_head.get((backend, head), ()) if case_id.startswith(hit[3])]
        # a prefix with no head that starts this id is shorter than the id's head
        longest = len(head) - 1 if head else len(case_id)
        found += [hit for size in lengths.get(backend, ()) if size <= longest for hit in by_prefix.get((backend, case_id[:size]), ())]
        return [entry for _, entry, match, _ in sorted(found, key=lambda hit: hit[0]) if match(case_id)]


def _head(case_id: str) -> str:
    """A case id up to its second ``/`` (its suite and op-version or test: ``operators/Add-14/``),
    or "" where it has fewer."""
    second = case_id.find("/", case_id.find("/") + 1)
    return case_id[:second + 1] if second > 0 else ""


def _build_index(entries: list[Expectation]) -> tuple[dict, dict, dict]:
    """Entries by (backend, the head of their pattern's literal prefix) where that prefix holds a
    head, else by (backend, the literal prefix) with per backend the prefix lengths in use: a case
    id can only match a pattern whose literal prefix it starts with."""
    by_head: dict[tuple[str, str], list] = {}
    by_prefix: dict[tuple[str, str], list] = {}
    lengths: dict[str, set[int]] = {}
    for order, entry in enumerate(entries):
        glob = _GLOB.search(entry.case)
        prefix = entry.case[:glob.start()] if glob else entry.case
        # a glob is compiled when a case id first reaches it (fnmatch caches it): most never are
        match = functools.partial(fnmatchcase, pat=entry.case) if glob else entry.case.__eq__
        if _head(prefix):
            by_head.setdefault((entry.backend, _head(prefix)), []).append((order, entry, match, prefix))
        else:
            by_prefix.setdefault((entry.backend, prefix), []).append((order, entry, match, prefix))
            lengths.setdefault(entry.backend, set()).add(len(prefix))
    return by_head, by_prefix, lengths


def matching(entries: list[Expectation], backend: str, case_id: str) -> list[Expectation]:
    if isinstance(entries, Entries):
        return entries.matching(backend, case_id)
    return [e for e in entries if e.backend == backend and fnmatchcase(case_id, e.case)]


def base_of(name: str) -> str | None:
    """The backend a variant's known failures come from: ``onnxruntime`` for
    ``onnxruntime-noopt`` and ``onnxruntime:<Provider>``; None for any other name."""
    if name.startswith("onnxruntime:") or name == "onnxruntime-noopt":
        return "onnxruntime"
    if name in ("tensorflow-eager", "tensorflow-xla"):
        return "tensorflow"
    return None


def load_file(path: Path, backend: str | None = None, variant: str | None = None) -> list[Expectation]:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ExpectationError(f"expectations file {path}: {exc}") from exc
    return load_text(text, str(path), backend or Path(path).stem, variant)


def load_text(text: str, source: str, backend: str, variant: str | None = None) -> list[Expectation]:
    """The entries of one file's text (``source`` names it in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationError(f"expectations file {source}: {exc}") from exc
    backend = data.get("backend", backend)
    if not isinstance(backend, str) or not backend:
        raise ExpectationError(f"{source}: 'backend' must name a backend (e.g. backend = \"my_pkg:MyBackend\")")
    entries = []
    for n, raw in enumerate(data.get("expect", [])):
        name = raw.get("backend", backend)
        if (variant or name) not in raw.get("variants", [variant or name]):
            continue
        cases = raw.get("cases", [raw["case"]] if raw.get("case") else [])
        if not cases or not raw.get("reason"):
            raise ExpectationError(f"{source}: entry {n} needs both 'case' (or a list 'cases') and 'reason'")
        outcome = raw.get("outcome")
        if outcome in (None, "fail"):  # "any failure" would hide a new one, a harness error included
            raise ExpectationError(f"{source}: entry {n} needs the exact outcome it expects ({', '.join(sorted(FAILURES))}), "
                                   f"not {outcome or 'none'!r}: 'fail' is no longer accepted")
        if outcome not in OUTCOMES:
            raise ExpectationError(f"{source}: entry {n} has unknown outcome {outcome!r}")
        entries += [Expectation(variant or name, case, outcome, raw["reason"], raw.get("link", ""), source, raw.get("triage", ""),
                                raw.get("finding", ""), bool(raw.get("nondeterministic", False))) for case in cases]
    return entries


def load(backends: list[str], extra_files: list[Path] = (), say=None) -> Entries:
    """The entries for ``backends``: the built-in files', then ``extra_files``'. An extra file
    none of whose entries is for one of ``backends`` is reported through ``say`` (default:
    standard error): its entries would apply to nothing."""
    entries: list[Expectation] = []
    for name in backends:
        file = BUILTIN_DIR / f"{name}.toml"
        if file.exists():
            entries.extend(load_file(file, name))
        base = base_of(name)
        if base and (BUILTIN_DIR / f"{base}.toml").exists():
            entries.extend(load_file(BUILTIN_DIR / f"{base}.toml", base, variant=name))
    for file in extra_files:
        mine = load_file(Path(file))
        entries.extend(mine)
        named = sorted({e.backend for e in mine})
        if named and not set(named) & set(backends):
            (say or _stderr)(f"warning: expectations file {file}: its {len(mine)} entries are for {', '.join(named)}, "
                             f"not a backend of this run ({', '.join(backends) or 'none available'}): they apply to nothing; "
                             f"name the backend at the top of the file, e.g. backend = \"{backends[0] if backends else 'my_pkg:MyBackend'}\"")
    return Entries(e for e in entries if e.backend in backends)


def _stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr)


def deciding(hits: list[Expectation], outcome: str) -> Expectation | None:
    """Of the entries matching a case (in file order), the one that decides a result with raw
    ``outcome``: the first expecting exactly that outcome, else the first (several entries may
    name one case, each for one outcome: a drawn case's outcome can depend on its inputs)."""
    return next((e for e in hits if e.outcome == outcome), hits[0] if hits else None)


def apply(result: Result, entries: list[Expectation], usage: Usage | None = None) -> Result:
    """Judge ``result`` by the entries (its outcome becomes ``xfail`` or ``xpass`` or stays; the
    raw outcome is kept); with ``usage``, what the entries matched is noted there."""
    result.raw_outcome = result.outcome
    found = matching(entries, result.backend, result.case_id)
    if usage is not None:
        usage.note(found, result.outcome)
    if result.outcome == "skip":  # not run: no expectation can be met or missed
        return result
    entry = deciding(found, result.outcome)
    if entry is not None:
        if result.outcome == "pass":
            result.outcome = "pass" if entry.nondeterministic else "xpass"
        elif entry.outcome == result.outcome:
            result.outcome = "xfail"
        result.reason = ("todo: " if entry.triage == "todo" else "") + entry.reason + (f" ({entry.link})" if entry.link else "")
    return result


class Usage:
    """What a run's results made of the entries, noted as each result is judged, so that the
    stale entries are known at the end without matching every result again."""

    def __init__(self) -> None:
        self.used: set[int] = set()  # entries that decided a result that ran
        self.ran: set[int] = set()  # entries matching a result that ran
        self.skipped: set[int] = set()  # entries matching a skipped result

    def note(self, found: list[Expectation], raw_outcome: str) -> None:
        hits = [id(e) for e in found]
        if raw_outcome == "skip":
            self.skipped.update(hits)
        elif hits:
            self.used.add(id(deciding(found, raw_outcome)))
            self.ran.update(hits)

    def stale(self, entries: list[Expectation], suites: set[str], narrowed: bool) -> list[Expectation]:
        """The entries that matched no result (see :func:`stale`)."""
        def is_stale(e: Expectation) -> bool:
            if id(e) in self.used:
                return False
            if id(e) in self.ran:
                return True  # shadowed by an earlier entry
            return id(e) not in self.skipped and not narrowed and any(fnmatchcase(s, e.case.split("/", 1)[0]) for s in suites)

        return [e for e in entries if is_stale(e)]


def stale(entries: list[Expectation], results: list[tuple[str, str, str]], suites: set[str], narrowed: bool) -> list[Expectation]:
    """Entries of a run's backends that matched no result: ``results`` are the run's
    ``(backend, case_id, raw outcome)``, ``suites`` the suites of its selected cases (the part of a
    case id before ``/``), ``narrowed`` whether -k or --opset selected only part of them.

    An entry shadowed by an earlier one is stale. One that names no case of the run is stale only
    when the run held every case of that entry's suite (not narrowed); one matching only skipped
    cases is not."""
    usage = Usage()
    for backend, case_id, outcome in results:
        usage.note(matching(entries, backend, case_id), outcome)
    return usage.stale(entries, suites, narrowed)
