"""Coverage counts only what is checked (issue 31): an op-version is covered when it builds
value-checked cases; a deprecated op-version builds none and is listed apart, with what is
checked of it (coverage used to say 629/629 and 25/25 while five built no case at all)."""

from __future__ import annotations

import numpy as np
import pytest

from harness import cli
from harness.coverage import coverage
from harness.registry import REGISTRY, load_all
from harness.suites.operators import DEFAULT_SEED, build_case, draw_examples, dtypes_for

DEPRECATED = {"GroupNormalization-18", "Scatter-11", "Upsample-10", "ai.onnx.ml.TreeEnsembleClassifier-5",
              "ai.onnx.ml.TreeEnsembleRegressor-5"}


@pytest.fixture(scope="module")
def rows():
    return coverage()


def test_the_deprecated_op_versions_are_not_covered_and_say_what_is_checked(rows):
    old = {r.key: r for r in rows if r.deprecated}
    assert set(old) == DEPRECATED
    for r in old.values():
        assert not r.covered
        assert r.checked.startswith("no case, no backend checked: onnx.checker refuses a model holding it")
        assert "deprecated in domain_version" in r.checked


def test_every_op_version_counted_covered_builds_a_value_checked_case(rows):
    # independently of how coverage decides: one drawn case of the first swept dtype, with an oracle
    load_all()
    missing = []
    for r in rows:
        if not r.covered:
            continue
        opv = REGISTRY[("" if r.domain == "ai.onnx" else r.domain, r.op, r.since)]
        dtype = (dtypes_for(opv, r.since) or [None])[0]
        examples = draw_examples(opv, dtype, r.since, 1, DEFAULT_SEED) if dtype else []
        case = build_case(opv, examples[0], dtype, r.since, "0") if examples else None
        if case is None or case.tags.get("oracle_error") or not case.data or case.data[0].expected is None:
            missing.append(r.key)
    assert not missing, missing
    assert sum(r.covered for r in rows) == len(rows) - len(DEPRECATED)


def test_the_summary_counts_only_covered_op_versions_and_lists_the_deprecated_apart(rows, capsys):
    assert cli.main(["coverage", "--summary"]) == 0
    out = capsys.readouterr().out
    for domain, n_old in (("ai.onnx", 3), ("ai.onnx.ml", 2)):
        dom = [r for r in rows if r.domain == domain]
        covered = int(np.sum([r.covered for r in dom]))
        assert covered == len(dom) - n_old
        assert f"{domain}: {covered} of {len(dom)} op-versions covered (they build value-checked cases); {n_old} deprecated, listed apart" in out
    listed = out.split("deprecated op-versions")[1]
    assert all(key in listed for key in DEPRECATED)
