"""Which tolerance applies to a case: its own, or the per-dtype default, then the first
matching override from ``harness/data/tolerances.toml`` (and any file the user adds)."""

from __future__ import annotations

import functools
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from .case import Case, Tolerance
from .schema import dtype_label

BUILTIN = Path(__file__).parent / "data" / "tolerances.toml"


@functools.lru_cache(maxsize=None)
def load_table(path: str = str(BUILTIN)) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"tolerance file {path}: {exc}") from exc
    for entry in table.get("override", []):
        if not entry.get("reason"):
            raise ValueError(f"tolerance file {path}: override {entry} has no reason")
    return table


def default_for(dtype: str, files: tuple[str, ...] = ()) -> Tolerance:
    for path in (*files, str(BUILTIN)):
        spec = load_table(path).get("defaults", {}).get(dtype)
        if spec:
            return Tolerance.from_dict(spec)
    return Tolerance()


def _matches(entry: dict[str, Any], case: Case) -> bool:
    if "case" in entry and not fnmatchcase(case.id, entry["case"]):
        return False
    if "op" in entry and case.tags.get("op") != entry["op"]:
        return False
    if "dtype" in entry and entry["dtype"] not in [dtype_label(d) for d in case.tags.get("dtypes", [])]:
        return False
    if "backend" in entry:  # tolerances describe the oracle, never a backend
        raise ValueError("tolerance overrides may not name a backend; use expectations for known failures")
    return True


def _override(case: Case, files: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
    for path in (*files, str(BUILTIN)):
        for entry in load_table(path).get("override", []):
            if _matches(entry, case):
                return path, entry
    return None


def effective_tolerance(case: Case, files: tuple[str, ...] = ()) -> Tolerance:
    hit = _override(case, files)
    if hit:
        entry = hit[1]
        return Tolerance.from_dict({**case.tolerance.to_dict(), **{k: entry[k] for k in ("rtol", "atol", "ulp") if k in entry}})
    return case.tolerance


def _file_label(path: str) -> str:
    # no machine path in a report: the built-in table by its place in the repository
    return "harness/data/tolerances.toml" if Path(path) == BUILTIN else Path(path).name


def tolerance_source(case: Case, files: tuple[str, ...] = ()) -> dict[str, Any]:
    """The tolerance that applies to ``case`` (as :func:`effective_tolerance`) and where it comes
    from: ``source`` is ``override`` (with the entry's match and reason), ``dtype default`` (the
    per-dtype default of the tolerance file) or ``case`` (the suite's own: an official case's
    rtol/atol, which has no ULP bound)."""
    tol = effective_tolerance(case, files).to_dict()
    hit = _override(case, files)
    if hit:
        path, entry = hit
        match = {k: entry[k] for k in ("op", "dtype", "case") if k in entry}
        return {**tol, "source": "override", "match": match, "reason": entry["reason"], "file": _file_label(path)}
    dtypes = [dtype_label(d) for d in [case.tags.get("dtype"), *(case.tags.get("dtypes") or [])] if d]
    for d in dict.fromkeys(dtypes):
        for path in (*files, str(BUILTIN)):
            if load_table(path).get("defaults", {}).get(d) and default_for(d, files) == case.tolerance:
                return {**tol, "source": "dtype default", "dtype": d, "file": _file_label(path)}
    return {**tol, "source": "case", "reason": f"the {case.suite} suite's own tolerance for this case"
            + (" (the official test case's rtol/atol; it sets no ULP bound)" if case.suite.startswith("onnx-") else "")}
