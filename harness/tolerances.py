"""Which tolerance applies to a case: its own, or the per-dtype default, then the first
matching override from ``harness/data/tolerances.toml`` (and any file the user adds).

A file's ``[exact]`` table names ops (or op-versions, ``ScatterND-11``) whose outputs have exactly
one right answer (they move, select or copy values, or round once by the spec's rule), each with
its reason: such a case gets rtol = atol = 0 and ulp = 0 whatever its type."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import onnx

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
    for op, reason in table.get("exact", {}).items():
        if not isinstance(reason, str) or not reason:
            raise ValueError(f"tolerance file {path}: exact op {op} has no reason")
    return table


EXACT = {"rtol": 0.0, "atol": 0.0, "ulp": 0}


def _exact(table: dict[str, Any], case: Case) -> dict[str, Any] | None:
    """The ``[exact]`` entry for the case's op (every version) or op-version, as an override."""
    op, since = case.tags.get("op"), case.tags.get("since_version")
    for key in (op, f"{op}-{since}"):
        if key in table.get("exact", {}):
            return {"op": key, **EXACT, "reason": table["exact"][key]}
    return None


def default_for(dtype: str, files: tuple[str, ...] = ()) -> Tolerance:
    for path in (*files, str(BUILTIN)):
        spec = load_table(path).get("defaults", {}).get(dtype)
        if spec:
            return Tolerance.from_dict(spec)
    return Tolerance()


def _matches(entry: dict[str, Any], case: Case) -> bool:
    if "backend" in entry:  # tolerances describe the oracle, never a backend
        raise ValueError("tolerance overrides may not name a backend; use expectations for known failures")
    # the cheap tests first: most entries name another op
    if "op" in entry and case.tags.get("op") != entry["op"]:
        return False
    if "dtype" in entry and entry["dtype"] not in [dtype_label(d) for d in case.tags.get("dtypes", [])]:
        return False
    return "case" not in entry or fnmatchcase(case.id, entry["case"])


@functools.lru_cache(maxsize=None)
def _candidates(path: str, op: str | None) -> tuple[dict[str, Any], ...]:
    """The overrides of a file that can match a case of ``op``, in file order: those naming
    that op and those naming none (most name another op)."""
    return tuple(entry for entry in load_table(path).get("override", []) if "backend" in entry or entry.get("op", op) == op)


def _override(case: Case, files: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
    op = case.tags.get("op")
    for path in (*files, str(BUILTIN)):
        exact = _exact(load_table(path), case) if op else None
        if exact:
            return path, exact
        for entry in _candidates(path, op):
            if _matches(entry, case):
                return path, entry
    return None


def effective_tolerance(case: Case, files: tuple[str, ...] = ()) -> Tolerance:
    hit = _override(case, files)
    if hit:
        entry = hit[1]
        tol = Tolerance.from_dict({**case.tolerance.to_dict(), **{k: entry[k] for k in ("rtol", "atol", "ulp") if k in entry}})
        if "bound" in entry:
            tol = dataclasses.replace(tol, bound=derived_bound(entry["bound"], case))
        return tol
    return case.tolerance


def derived_bound(name: str, case: Case) -> tuple[Any, ...]:
    """The per-element allowance of an override's ``bound = "module:function"``: the function
    takes an operator case's inputs (``x0``, ``x1``, ...; None where absent), its node's attributes
    and its op-version, and gives one array per output (the rounding its computation justifies)."""
    if len(case.data) != 1 or case.data[0].expected is None:
        raise ValueError(f"tolerance bound {name}: {case.id} needs one data set with expected outputs")
    module, _, func = name.partition(":")
    fn = getattr(importlib.import_module(module), func)
    feeds = case.data[0].inputs
    n = 1 + max((int(k[1:]) for k in feeds if k[:1] == "x" and k[1:].isdigit()), default=-1)
    node = onnx.load_from_string(case.model_bytes).graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    out = tuple(fn([feeds.get(f"x{i}") for i in range(n)], attrs, case.tags["since_version"]))[:len(case.data[0].expected)]
    if len(out) != len(case.data[0].expected):
        raise ValueError(f"tolerance bound {name}: {len(out)} arrays for {len(case.data[0].expected)} outputs of {case.id}")
    return out


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
