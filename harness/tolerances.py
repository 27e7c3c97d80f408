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


def effective_tolerance(case: Case, files: tuple[str, ...] = ()) -> Tolerance:
    for path in (*files, str(BUILTIN)):
        for entry in load_table(path).get("override", []):
            if _matches(entry, case):
                return Tolerance.from_dict({**case.tolerance.to_dict(), **{k: entry[k] for k in ("rtol", "atol", "ulp") if k in entry}})
    return case.tolerance
