"""The operator-case framework: registry completeness, schema-derived dtypes, deterministic
drawing, valid models, and a clean oracle (no system under test imported)."""

import subprocess
import sys

import numpy as np
import pytest

from harness import schema
from harness.coverage import coverage, family_counts
from harness.registry import load_all, missing_versions
from harness.suites import SuiteContext
from harness.suites.operators import check_case, dtypes_for, operator_cases


def test_every_version_of_a_covered_operator_is_registered():
    # fails when onnx adds an op-version of an operator we claim to cover
    assert missing_versions() == []


def test_dtypes_come_from_the_schema():
    relu14 = load_all()[("", "Relu", 14)]
    labels = dtypes_for(relu14, 14)
    allowed = schema.allowed_types(schema.schema_at("Relu", 14))["T"]
    assert len(labels) == len(allowed)
    assert {"float32", "float16", "bfloat16", "int8", "int32"} <= set(labels)
    assert "int8" not in dtypes_for(load_all()[("", "Relu", 13)], 13)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tmp_path_factory.mktemp("ops")


def _cases(corpus, pattern, **kw):
    ctx = SuiteContext(corpus=corpus, examples=kw.pop("examples", 5), seed=kw.pop("seed", None), extra={"ops": ["Clip"]}, **kw)
    return [c for c in operator_cases(ctx) if pattern in c.id]


def test_cases_are_frozen_so_every_reader_sees_the_same_inputs(corpus):
    a = _cases(corpus, "Clip-13/opset13/float32/")
    frozen = sorted((corpus / "operators").rglob("Clip-13-opset13.pickle"))
    assert len(frozen) == 1
    b = _cases(corpus, "Clip-13/opset13/float32/")
    assert [c.id for c in a] == [c.id for c in b]
    for x, y in zip(a, b):
        assert x.model_bytes == y.model_bytes
        for name in x.data[0].inputs:
            np.testing.assert_array_equal(x.data[0].inputs[name], y.data[0].inputs[name])
    c = _cases(corpus, "Clip-13/opset13/float32/", seed=7)
    assert any(not np.array_equal(x.data[0].inputs["x0"], y.data[0].inputs["x0"]) for x, y in zip(a, c) if x.id == y.id)


def test_a_stale_frozen_file_is_rebuilt(corpus):
    _cases(corpus, "Clip-11/")
    file = next((corpus / "operators").rglob("Clip-11-opset11.pickle"))
    import pickle

    pickle.dump(("stale", []), open(file, "wb"))
    assert len(_cases(corpus, "Clip-11/")) > 0


def test_case_ids_and_opset_sweep(corpus):
    ids = [c.id for c in _cases(corpus, "Clip-")]
    assert "operators/Clip-11/opset11/float32/edge_values" in ids
    at17 = [c.id for c in operator_cases(SuiteContext(corpus=corpus, examples=1, opset=17))]
    assert "operators/Clip-13/opset17/float32/0" in at17
    assert not any("Clip-11" in i for i in at17)


def test_every_case_is_a_valid_model_whose_outputs_match_the_schema(corpus):
    for case in operator_cases(SuiteContext(corpus=corpus, examples=2)):
        check_case(case)


def test_the_oracle_imports_no_system_under_test():
    code = ("import sys; from harness.registry import load_all; load_all()\n"
            "bad = [m for m in sys.modules if m.startswith(('harness.backends', 'onnx.reference', 'onnxruntime'))]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_coverage_lists_every_op_version():
    rows = coverage()
    ai = [r for r in rows if r.domain == "ai.onnx"]
    assert len(ai) == len(schema.all_op_versions(""))
    assert any(r.key == "Relu-14" and r.covered for r in rows)
    fams = family_counts(rows)
    assert sum(t for _, t in fams.values()) == len(rows)
