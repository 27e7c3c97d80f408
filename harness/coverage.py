"""Which op-versions our oracle covers: every ai.onnx and ai.onnx.ml op-version in the
installed onnx, covered or not, with counts per family."""

from __future__ import annotations

import functools
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import schema
from .registry import load_all

FAMILIES_FILE = Path(__file__).parent / "data" / "families.toml"
DOMAINS = ("", "ai.onnx.ml")


@functools.lru_cache(maxsize=None)
def _families() -> dict[str, str]:
    with open(FAMILIES_FILE, "rb") as fh:
        table = tomllib.load(fh)
    return {op: family for family, ops in table["ai_onnx"].items() for op in ops}


def family_of(op: str, domain: str = "") -> str:
    if schema.canonical_domain(domain) == "ai.onnx.ml":
        return "ai.onnx.ml"
    return _families().get(op, "other")


@dataclass
class CoverageRow:
    domain: str
    op: str
    since: int
    family: str
    covered: bool
    module: str = ""

    @property
    def key(self) -> str:
        return f"{self.op}-{self.since}" if self.domain in ("", "ai.onnx") else f"{self.domain}.{self.op}-{self.since}"


def coverage() -> list[CoverageRow]:
    registry = load_all()
    rows = []
    for domain in DOMAINS:
        for op, since in schema.all_op_versions(domain):
            entry = registry.get((domain, op, since))
            rows.append(CoverageRow(schema.DOMAINS.get(domain, domain), op, since, family_of(op, domain),
                                    bool(entry and entry.complete), entry.module if entry else ""))
    return rows


def family_counts(rows: list[CoverageRow]) -> dict[str, tuple[int, int]]:
    """family -> (covered, total) op-versions."""
    total, covered = Counter(), Counter()
    for row in rows:
        total[row.family] += 1
        covered[row.family] += row.covered
    return {f: (covered[f], total[f]) for f in sorted(total, key=lambda f: (-covered[f], f))}
