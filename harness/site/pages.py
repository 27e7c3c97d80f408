"""Each page of the site as data (a dict the template renders and the page's JSON holds)."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx.defs

from .. import findings as findings_mod
from .. import registry, schema
from ..coverage import family_of
from ..repro import runtime_of
from ..tolerances import load_table
from .data import CLASSES, LISTED, Column, Site, SuiteStat, slug


def _suite(stat: SuiteStat, flag: str) -> dict[str, Any]:
    c = stat.counts
    return {"selection": stat.selection, "flag": flag, "compared": stat.compared, "conformance": stat.conformance,
            "common": stat.common, "common_pass": stat.common_pass, "common_attempted": stat.common_attempted,
            "total": stat.total, "known": stat.known, **{cls: c[cls] for cls in CLASSES}}


def _column(c: Column, root: str = "") -> dict[str, Any]:
    return {"key": c.key, "runtime": c.runtime, "release": c.release, "backend": c.backend, "store": c.store,
            "available": c.available, "reason": c.reason, "href": f"{root}runtime/{slug(c.runtime)}.html#r-{c.slug}",
            "suites": {s: _suite(stat, c.flags.get(s, "")) for s, stat in c.suites.items()}}


def front_page(site: Site, example: dict[str, Any] | None = None) -> dict[str, Any]:
    """``example``: a case page with a download, shown where the page says how to reproduce a failure."""
    return {"suites": site.suites, "columns": [_column(c) for c in site.columns], "stores": site.stores,
            "findings": len(site.findings), "op_versions": len(site.ops), "example": example}


def _mix(counts: Counter | None) -> dict[str, Any] | None:
    if not counts:
        return None
    total = sum(v for k, v in counts.items() if k != "skip")
    return {"counts": {k: counts[k] for k in CLASSES if counts[k]}, "total": total,
            "pass": round(100.0 * counts["pass"] / total, 1) if total else None}


def ops_page(site: Site) -> dict[str, Any]:
    """One row per suite and op-version: a cell compares a release's cases of that suite only."""
    rows = []
    for suite in site.suites:
        for key in sorted(site.ops, key=_op_order):
            cells = site.cells.get(key, {})
            if not any(s == suite for s, _ in cells):
                continue
            meta = site.ops[key]
            rows.append({"key": key, "suite": suite, "op": meta["op"], "domain": meta["domain"], "since": meta["since"],
                         "family": family_of(meta["op"], meta["domain"]), "dtypes": sorted(d for d in meta["dtypes"] if d),
                         "href": f"op/{key}.html", "cells": [_mix(cells.get((suite, k))) for k in range(len(site.columns))]})
    return {"columns": [c.key for c in site.columns], "slugs": [c.slug for c in site.columns], "rows": rows,
            "classes": list(CLASSES), "suites": site.suites, "suite": "operators" if "operators" in site.suites else site.suites[0],
            "families": sorted({r["family"] for r in rows}), "dtypes": sorted({d for r in rows for d in r["dtypes"]})}


def _op_order(key: str) -> tuple:
    name, _, since = key.rpartition("-")
    return (name.lower(), int(since) if since.isdigit() else 0)


def _spec(op: str, since: int, domain: str) -> tuple[str, str]:
    """The first paragraph of the op-version's spec text, and its page on onnx.ai."""
    try:
        doc = onnx.defs.get_schema(op, since, schema.canonical_domain(domain)).doc or ""
    except onnx.defs.SchemaError:
        doc = ""
    summary = doc.strip().split("\n\n", 1)[0].strip()
    page = f"onnx_aionnxml_{op}" if domain == "ai.onnx.ml" else f"onnx__{op}"
    return summary, f"https://onnx.ai/onnx/operators/{page}.html"


def _tolerances(op: str, since: int) -> list[dict[str, str]]:
    table = load_table()
    out = []
    for name in (op, f"{op}-{since}"):
        if name in table.get("exact", {}):
            out.append({"applies": "every dtype (exact)", "why": table["exact"][name]})
    for entry in table.get("override", []):
        if entry.get("op") in (op, f"{op}-{since}"):
            bound = ", ".join(f"{k} {entry[k]}" for k in ("rtol", "atol", "ulp") if k in entry)
            out.append({"applies": f"{entry.get('dtype', 'every dtype')}: {bound}", "why": entry.get("reason", "")})
    if not out:
        out.append({"applies": "the per-dtype defaults", "why": "harness/data/tolerances.toml [defaults]: one rounding of the float64 result"})
    return out


def op_page(site: Site, key: str) -> dict[str, Any]:
    meta = site.ops[key]
    op, since, domain = meta["op"], int(meta["since"]), meta["domain"]
    summary, link = _spec(op, since, domain)
    registry.load_all(allow_broken=True)
    entry = registry.REGISTRY.get((schema.canonical_domain(domain), op, since))
    points = [{"id": p.id, "spec": _spec_text(p.spec, since),
               "expected": p.expected, "readings": list(p.readings), "invariants": list(p.invariants)}
              for p in registry.spec_silent_points(op, since, schema.canonical_domain(domain))]
    columns = []
    for suite in site.suites:
        for k, c in enumerate(site.columns):
            counts = site.cells.get(key, {}).get((suite, k))
            if not counts:
                continue
            failures = site.failures.get(key, {}).get((suite, k), [])
            anchor = f"c-{suite}-{c.slug}"
            columns.append({"key": c.key, "suite": suite, "anchor": anchor, "runtime_href": f"../runtime/{slug(c.runtime)}.html",
                            "mix": _mix(counts), "failures": len(failures), "causes": _causes(failures, anchor, c, "../")})
    named = sorted({g["finding"] for col in columns for g in col["causes"] if g["finding"]} |
                   {fid for fid, r in site.findings.items() if findings_mod.op_version(r) == key})
    return {"key": key, "op": op, "domain": domain, "since": since, "summary": summary, "spec_link": link,
            "module": (entry.module.replace(".", "/") + ".py") if entry and entry.module else "",
            "spec_silent": points, "tolerances": _tolerances(op, since), "columns": columns,
            "findings": [{"id": fid, "title": site.findings[fid]["title"], "href": f"../finding/{fid}.html"} for fid in named if fid in site.findings]}


def _spec_text(spec: str | dict[int, str], since: int) -> str:
    """A point's spec quote for this version (a point quoting several versions keys them by version)."""
    if isinstance(spec, str):
        return spec
    earlier = [v for v in spec if v <= since]
    return spec[max(earlier)] if earlier else spec[min(spec)]


def _causes(failures: list[dict[str, Any]], anchor: str, column: Column, root: str) -> list[dict[str, Any]]:
    """Non-passes grouped by outcome and the reason an expectation gives (or none), most cases
    first: each group under its own anchor with its first ``LISTED`` cases, and its first case
    as the example to reproduce (its case page)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for f in failures:
        groups.setdefault((f["raw"], f["reason"] or "", f["finding"] or ""), []).append(f)
    out = []
    for n, ((o, r, fid), cases) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))):
        out.append({"outcome": o, "reason": r or "not expected: no expectation lists it", "finding": fid or None, "count": len(cases),
                    "anchor": f"{anchor}-g{n}", "example": {"case": cases[0]["case"], "href": root + case_page_name(column, cases[0]["case"])},
                    "cases": [{k: f[k] for k in ("case", "outcome", "raw", "message")} for f in cases[:LISTED]],
                    "more": max(0, len(cases) - LISTED)})
    return out


def case_page_name(column: Column, case_id: str) -> str:
    """The case page of a column's case (``case/<column>/<the case's bundle folder name>.html``)."""
    return f"case/{column.slug}/{re.sub(r'[^A-Za-z0-9._-]+', '__', case_id)}.html"


def case_pages(site: Site, key: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(page name, data, the bundle's folder on this machine or "") of each cause group's example
    case of op-version ``key``: what a reader needs to reproduce it (the bundle as a zip beside
    the page, the commands: without the harness, and with it)."""
    for (suite, k), failures in site.failures.get(key, {}).items():
        column = site.columns[k]
        for group in _causes(failures, f"c-{suite}-{column.slug}", column, ""):
            f = next(f for f in failures if f["case"] == group["example"]["case"])
            name = case_page_name(column, f["case"])
            bundle = f["bundle"] if f["bundle"] and (Path(f["bundle"]) / "meta.json").is_file() else ""
            data = {"case": f["case"], "suite": suite, "column": column.key, "backend": column.backend, "outcome": f["outcome"],
                    "raw": f["raw"], "message": f["message"], "reason": f["reason"], "finding": f["finding"],
                    "finding_href": f"../../finding/{f['finding']}.html" if f["finding"] in site.findings else None,
                    "op": key, "op_href": f"../../op/{key}.html#{group['anchor']}",
                    "harness_command": shlex.join(["onnx-harness", "repro", f["case"], "--backend", column.backend, "-o", "repro"]),
                    "zip": None, "folder": None, "runtime": None, "commands": []}
            if bundle:
                meta = json.loads((Path(bundle) / "meta.json").read_text())
                folder = Path(bundle).name
                data.update(zip=Path(name).with_suffix(".zip").name, folder=folder,  # the zip beside the page (build_site writes it)
                            runtime=runtime_of(meta["backend_spec"], meta.get("backend_options") or {}))
                data["commands"] = [f"unzip {data['zip']} && cd {folder}", f"pip install numpy onnx {data['runtime']['pip']}", "python repro.py"]
            yield name, data, bundle


def runtime_page(site: Site, runtime: str) -> dict[str, Any]:
    ks = [k for k, c in enumerate(site.columns) if c.runtime == runtime]
    releases = [{**_column(site.columns[k], "../"), "anchor": f"r-{site.columns[k].slug}"} for k in ks]
    found = []
    for fid, record in site.findings.items():
        where = sorted(k for k in site.finding_columns.get(fid, ()) if k in ks)
        if not where and not _same_runtime(record, runtime):
            continue
        found.append({"id": fid, "title": record["title"], "op_version": findings_mod.op_version(record), "href": f"../finding/{fid}.html",
                      "upstream": record.get("upstream", ""), "first": site.columns[where[0]].release if where else None,
                      "last": site.columns[where[-1]].release if where else None, "affected": record.get("affected", [])})
    return {"runtime": runtime, "releases": releases, "suites": site.suites, "findings": found}


def _same_runtime(record: dict, runtime: str) -> bool:
    return record.get("runtime", "").replace("onnx.reference", "reference") == runtime


def finding_page(site: Site, fid: str) -> dict[str, Any]:
    record = site.findings[fid]
    failing = [site.columns[k].key for k in sorted(site.finding_columns.get(fid, ()))]
    return {"id": fid, "title": record["title"], "runtime": record.get("runtime", ""), "op_version": findings_mod.op_version(record),
            "op_href": f"../op/{findings_mod.op_version(record)}.html" if findings_mod.op_version(record) in site.ops else None,
            "upstream": record.get("upstream", ""), "affected": record.get("affected", []), "failing_in": failing,
            "issue": findings_mod.issue(record), "script": findings_mod.script(record)}
