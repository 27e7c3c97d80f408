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


def operator_cases_of(corpus, pattern, **kw):
    return operator_cases(SuiteContext(corpus=corpus, examples=1, pattern=pattern, **kw))


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


def _clip13_with(reference=None, strategy=None):
    """Clip-13 with a broken oracle, unregistered (the registry stays intact)."""
    import dataclasses

    clip = load_all()[("", "Clip", 13)]
    return dataclasses.replace(clip, reference=reference or clip.reference, strategy=strategy or clip.strategy,
                               edges=None, dtypes=("float32",))


def test_a_reference_that_raises_gives_oracle_error_cases_that_never_pass():
    from harness.backends.reference import ReferenceBackend
    from harness.worker import execute_case
    from harness.suites.operators import build_op_version

    def broken(x, min=None, max=None):
        raise ZeroDivisionError("reference bug")

    cases = build_op_version(_clip13_with(reference=broken), 13, 2, seed=1)
    assert [c.id for c in cases] == ["operators/Clip-13/opset13/float32/0", "operators/Clip-13/opset13/float32/1"]
    for case in cases:
        assert case.tags["oracle_error"] == "ZeroDivisionError: reference bug"
        assert len(case.data) == 1 and case.data[0].expected is None and case.data[0].inputs  # the drawn inputs kept
        result = execute_case(ReferenceBackend(), case)
        assert result.outcome == "error" and "ZeroDivisionError: reference bug" in result.message


def test_a_strategy_that_cannot_draw_gives_one_oracle_error_case_per_dtype():
    from hypothesis import strategies as st

    from harness.backends.reference import ReferenceBackend
    from harness.worker import execute_case
    from harness.suites.operators import build_op_version

    def cannot_draw(draw, dtype, opset):
        return draw(st.integers().filter(lambda v: False))

    [case] = build_op_version(_clip13_with(strategy=cannot_draw), 13, 2, seed=1)
    assert case.id == "operators/Clip-13/opset13/float32/oracle-error"
    assert case.tags["oracle_error"].startswith("Unsatisfiable") and case.data[0].expected is None
    result = execute_case(ReferenceBackend(), case)  # the model is a stand-in: the result is the oracle's error
    assert result.outcome == "error" and "Unsatisfiable" in result.message


def test_an_operator_module_that_fails_to_import_is_a_result(tmp_path, monkeypatch):
    import re

    import operator_cases

    from harness import registry

    (tmp_path / "zz_broken_op.py").write_text("raise ImportError('needs a library that is not here')\n")
    monkeypatch.setattr(operator_cases, "__path__", [*operator_cases.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_LOADED", False)
    monkeypatch.setattr(registry, "BROKEN", {})
    monkeypatch.delitem(sys.modules, "operator_cases.zz_broken_op", raising=False)
    with pytest.raises(registry.BrokenOperatorModules, match="operator_cases.zz_broken_op: ImportError"):
        registry.load_all()  # elsewhere (generated suite, fuzz, coverage) a broken module ends the caller
    assert ("", "Clip", 13) in registry.load_all(allow_broken=True)  # the others still load
    cases = list(operator_cases_of(tmp_path, re.compile("zz_broken")))
    assert [c.id for c in cases] == ["operators/operator_cases.zz_broken_op/oracle-error"]
    assert cases[0].tags["oracle_error"] == "ImportError: needs a library that is not here"
    assert not list(tmp_path.glob("operators/seed*/*"))  # -k matched no op-version: nothing drawn (edge names only)
    from harness.backends.reference import ReferenceBackend
    from harness.worker import execute_case

    result = execute_case(ReferenceBackend(), cases[0])
    assert result.outcome == "error" and "ImportError: needs a library that is not here" in result.message


def test_k_draws_only_the_op_versions_it_can_match(tmp_path):
    import re

    clips = sorted(f"{opv.key}-opset{opv.since}.pickle" for (d, op, _), opv in load_all().items() if op == "Clip")
    assert len(clips) == 5
    cases = list(operator_cases_of(tmp_path, re.compile("Clip-")))
    assert {c.id.split("/")[1] for c in cases} == {"Clip-1", "Clip-6", "Clip-11", "Clip-12", "Clip-13"}
    assert sorted(p.name for p in tmp_path.rglob("*.pickle")) == clips
    # a pattern over later parts of the id: the dtype, an edge example's name
    list(operator_cases_of(tmp_path / "int8", re.compile(r"^operators/(Relu|Clip)-\d+/opset\d+/int8/")))
    assert sorted(p.name for p in (tmp_path / "int8").rglob("*.pickle")) == [
        "Clip-12-opset12.pickle", "Clip-13-opset13.pickle", "Relu-14-opset14.pickle"]
    list(operator_cases_of(tmp_path / "edge", re.compile(r"/opset11/float64/edge_values$")))
    drawn = sorted(p.name for p in (tmp_path / "edge").rglob("*.pickle"))
    assert "Clip-11-opset11.pickle" in drawn and all(n.endswith("-opset11.pickle") for n in drawn)


def test_a_partial_draw_leaves_the_rest_to_a_later_run_unchanged(tmp_path):
    import re

    list(operator_cases_of(tmp_path, re.compile("Clip-13/")))
    [file] = tmp_path.rglob("*.pickle")
    before = file.read_bytes()
    full = [c.id for c in operator_cases(SuiteContext(corpus=tmp_path, examples=1, extra={"ops": ["Clip"]}))]
    assert len(list(tmp_path.rglob("*.pickle"))) == 5 and file.read_bytes() == before
    fresh = [c.id for c in operator_cases(SuiteContext(corpus=tmp_path / "fresh", examples=1, extra={"ops": ["Clip"]}))]
    assert full == fresh


def test_run_k_draws_only_the_matching_op_versions(tmp_path):
    from harness.cli import main

    code = main(["run", "--suite", "operators", "-k", "Clip-13/opset13/float32/", "--backend", "reference", "--examples", "1", "--exit-zero",
                 "--corpus", str(tmp_path / "corpus"), "--store", str(tmp_path / "r.sqlite")])
    assert code == 0
    assert [p.name for p in (tmp_path / "corpus").rglob("*.pickle")] == ["Clip-13-opset13.pickle"]


# -- the edge examples whose results runtimes get wrong (values worked out by hand) ----------------
def _edge_case(op, since, dtype, name):
    from harness.suites.operators import build_case

    opv = load_all()[("", op, since)]
    ex = next(e for e in opv.edges(dtype, since) if e.name == name)
    case = build_case(opv, ex, dtype, since, name)
    check_case(case)  # a valid model whose output dtypes and shapes shape inference agrees with
    return case.data[0].inputs, case.data[0].expected


def test_edge_empty_batches_keep_their_shape():
    _, (y,) = _edge_case("GlobalAveragePool", 22, "float32", "empty_batch")
    assert y.shape == (0, 2, 1, 1)
    ins, (y,) = _edge_case("Conv", 22, "float32", "empty_batch")
    assert ins["x0"].shape[0] == 0 and y.shape[:2] == (0, 3)


def test_edge_overflow_and_subnormal_values():
    ins, (y,) = _edge_case("Conv", 22, "float16", "overflow")  # every output sums >= 2 cells of 65504
    assert np.all(ins["x0"] == np.float16(65504)) and np.all(np.isposinf(y))
    ins, (y,) = _edge_case("MaxPool", 12, "float32", "subnormal_signed_zero")
    x = ins["x0"]
    assert np.any((x == 0) & np.signbit(x)) and np.all(np.abs(x[x != 0]) < np.finfo(np.float32).tiny)
    assert np.all(np.abs(y[y != 0]) < np.finfo(np.float32).tiny)


def test_edge_log_softmax_of_the_largest_values_is_finite():
    # [hi, hi, 0] -> [-ln 2, -ln 2, -hi - ln 2]; -hi - ln 2 rounds to -hi in float32 (its ulp there is 2^104)
    _, (y,) = _edge_case("LogSoftmax", 13, "float32", "overflow_extremes")
    hi = np.finfo(np.float32).max
    assert y.dtype == np.float32
    np.testing.assert_allclose(y[0], [-np.log(2), -np.log(2), -hi], rtol=1e-6)
    assert np.all(np.isfinite(y))


def test_edge_pad_with_nan_keeps_nan():
    ins, (y,) = _edge_case("Pad", 18, "float32", "nan_value_and_data")
    assert np.isnan(ins["x0"]).sum() == 1 and y.shape == (4, 6)
    assert np.isnan(y[0]).all() and np.isnan(y[:, -1]).all() and np.isnan(y).sum() == 6 + 3 + 1


def test_the_newest_element_types_are_swept_with_values_they_hold():
    from harness import strategies as S
    from harness.registry import REGISTRY

    reg = load_all()
    assert {"float8e8m0", "int2", "uint2"} <= set(dtypes_for(reg[("", "Identity", 25)], 25))
    assert {"float6e2m3", "float6e3m2"} <= set(dtypes_for(reg[("", "DequantizeLinear", 28)], 28))
    assert {"float8e8m0", "int2", "uint2", "float6e2m3", "float6e3m2"} <= set(dtypes_for(REGISTRY[("", "Cast", 28)], 28))
    e8m0 = S.edge_values("float8e8m0").astype(np.float64)  # powers of two and NaN: no zero, no sign, no infinity
    finite = e8m0[~np.isnan(e8m0)]
    assert np.isnan(e8m0).sum() == 1 and np.all(finite > 0) and np.all(np.log2(finite) == np.round(np.log2(finite)))
    assert {2.0**-127, 2.0**127, 1.0} <= set(finite)
    for label, top in (("float6e2m3", 7.5), ("float6e3m2", 28.0)):  # finite types: NaN or inf would turn into other values
        v = S.edge_values(label).astype(np.float64)
        assert np.all(np.isfinite(v)) and v.max() == top and v.min() == -top and np.any((v == 0) & np.signbit(v))
    assert S.edge_values("int2").astype(np.int64).tolist() == [-2, -1, 0, 1]
    assert S.edge_values("uint2").astype(np.int64).tolist() == [0, 1, 2, 3]


def test_bit_cast_pairs_types_of_the_same_width_only():
    from operator_cases.tensor.bit_cast import targets, width

    assert sorted(targets("int2", 26)) == ["int2", "uint2"]
    assert "float8e8m0" in targets("uint8", 26) and "int2" not in targets("uint8", 26)
    assert width("uint2") == 2 and width("float8e8m0") == 8 and width("int4") == 4


@pytest.mark.parametrize("pattern", [
    r"^operators/(Add-14|Clip-13)/", r"Clip-11/opset11/float32/edge_values$", r"/float16/3$", r"^operators/Relu-14/opset14/int8/",
    r"Clip-13/.*oracle", r"edge_values\Z", r"^operators/Clip-13/opset13/float32/0(?!\s)", r"(?<!\n)operators/Relu-6/", r"\Aoperators/Add-7/",
    r"nothing-matches-this", r"(?i)CLIP-12/",
])
def test_a_k_pattern_selects_an_op_version_exactly_when_it_matches_one_of_its_ids(pattern):
    # the selection searches an op-version's ids all at once; it must agree with id-by-id search
    import re

    from harness.suites.operators import case_ids, may_match

    regex = re.compile(pattern)
    for opv in [v for k, v in load_all().items() if k[1] in ("Add", "Clip", "Relu")]:
        for opset in (opv.since, opv.since + 1):
            one_by_one = any(regex.search(i) for i in case_ids(opv, opset, 5))
            assert may_match(regex, opv, opset, 5) == one_by_one, (pattern, opv.key, opset)


def test_edge_names_are_kept_under_the_op_versions_fingerprint_and_worked_out_again_when_it_changes(tmp_path, monkeypatch):
    from dataclasses import replace

    from harness.suites import operators as O

    opv = next(v for k, v in load_all().items() if k[1] == "Clip" and k[2] == 13)
    calls = []

    def edges(dtype, opset):
        calls.append((dtype, opset))
        return opv.edges(dtype, opset)

    counted = replace(opv, edges=edges)
    file = tmp_path / "edge-names.json"
    built = tuple(ex.name or f"edge{k}" for k, ex in enumerate(opv.edges("float32", 13)))

    def names_in_a_new_process():  # what another run reads: the file, not this process's cache
        O._edge_names.cache_clear()
        return O.EdgeNames(file)

    first = names_in_a_new_process()
    assert first.names(counted, "float32", 13) == built and len(calls) == 1
    assert names_in_a_new_process().names(counted, "float32", 13) == built and len(calls) == 2, "not kept before save()"
    first.save()
    assert names_in_a_new_process().names(counted, "float32", 13) == built and len(calls) == 2, "kept: the edges are not built"
    monkeypatch.setattr(O, "_fingerprint", lambda v: "another fingerprint")  # its module or a helper changed
    changed = names_in_a_new_process()
    assert changed.names(counted, "float32", 13) == built and len(calls) == 3
    file.write_text("{ cut sho")  # a garbled file is worked out again, then rewritten whole
    again = names_in_a_new_process()
    assert again.names(counted, "float32", 13) == built and len(calls) == 4
    again.save()
    assert names_in_a_new_process().names(counted, "float32", 13) == built and len(calls) == 4
    (tmp_path / "a file").write_text("")
    unwritable = O.EdgeNames(tmp_path / "a file" / "edge-names.json")  # its folder cannot be made
    unwritable.names(counted, "float32", 13)
    said = []
    unwritable.save(said.append)
    assert len(said) == 1 and said[0].startswith("edge example names not kept in ") and "works them out again" in said[0]


def test_edge_examples_that_fail_to_build_are_not_kept(tmp_path):
    from dataclasses import replace

    from harness.suites import operators as O

    opv = next(v for k, v in load_all().items() if k[1] == "Clip" and k[2] == 13)

    def broken(dtype, opset):
        raise ValueError("a bug in the edge examples")

    O._edge_names.cache_clear()
    names = O.EdgeNames(tmp_path / "edge-names.json")
    assert names.names(replace(opv, edges=broken), "float32", 13) is None and names.added == {}
    ids = list(O.case_ids(replace(opv, edges=broken), 13, 2, names))
    assert ids and all(i.rsplit("/", 1)[1] in ("0", "1", O.ORACLE_ERROR_INDEX) for i in ids), "no edge ids, the drawn ones stay"


def _frozen_files(root):
    import pickle

    return {f.name: pickle.loads(f.read_bytes())[:2] for f in sorted(root.rglob("*.pickle"))}  # (key, sha256 of the cases)


def test_op_versions_drawn_in_several_processes_are_frozen_as_one_process_draws_them(tmp_path, monkeypatch):
    """A first run draws the op-versions it has not frozen in -j processes: each file holds the
    very cases (same key, same sha256) one process draws, and the run says how far it got."""
    import re

    from harness.suites import operators

    monkeypatch.setattr(operators, "PARALLEL_FROM", 2)
    pattern = re.compile(r"^operators/(Abs|Neg|Relu|Floor)-")
    said = []
    serial = [c.id for c in operator_cases(SuiteContext(corpus=tmp_path / "one", examples=2, pattern=pattern, jobs=1, say=said.append))]
    assert said == []  # one process: drawn in the selection itself
    parallel = [c.id for c in operator_cases(SuiteContext(corpus=tmp_path / "two", examples=2, pattern=pattern, jobs=2, say=said.append))]
    assert parallel == serial
    one, two = _frozen_files(tmp_path / "one"), _frozen_files(tmp_path / "two")
    assert len(one) >= 8 and one == two
    assert said[0].startswith(f"drawing the cases of {len(one)} op-versions in 2 processes")
    assert said[-1].startswith(f"drew {len(serial):,} cases of {len(one)} op-versions")
    again = [c.id for c in operator_cases(SuiteContext(corpus=tmp_path / "two", examples=2, pattern=pattern, jobs=2, say=said.append))]
    assert again == serial and len(said) == 2  # frozen now: read back, nothing drawn


def test_a_draw_failing_in_a_drawing_process_ends_the_selection_with_its_error(tmp_path, monkeypatch):
    import re

    from harness.suites import operators

    monkeypatch.setattr(operators, "PARALLEL_FROM", 2)
    (tmp_path / "operators").mkdir()
    (tmp_path / "operators" / "seed7-examples1").write_text("a file where the frozen cases' folder goes")
    with pytest.raises(OSError, match="seed7-examples1") as raised:
        list(operator_cases(SuiteContext(corpus=tmp_path, examples=1, seed=7, pattern=re.compile(r"^operators/(Abs|Neg)-"), jobs=2)))
    assert "_draw_one" in str(raised.value.__cause__)  # raised in a drawing process, its traceback kept
