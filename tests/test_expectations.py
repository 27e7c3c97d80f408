import pytest

from harness import expectations as X
from harness.worker import Result


def _write(tmp_path, text, name="onnxruntime.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_expected_failures_become_xfail_and_passes_xpass(tmp_path):
    path = _write(tmp_path, '''
[[expect]]
case = "onnx-node/test_bitshift_*"
outcome = "rejected"
reason = "opset 28 is not released in this runtime"
link = "https://example.org/issue/1"

[[expect]]
case = "onnx-node/test_never_matches"
outcome = "mismatch"
reason = "stale entry"
''')
    entries = X.load_file(path)
    r = X.apply(Result("onnx-node/test_bitshift_left_int16", "onnxruntime", "rejected", "IR 14"), entries)
    assert r.outcome == "xfail" and r.raw_outcome == "rejected" and "opset 28" in r.reason and "example.org" in r.reason
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "onnxruntime", "pass"), entries)
    assert r.outcome == "xpass"
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "onnxruntime", "mismatch"), entries)
    assert r.outcome == "mismatch", "a different failure than the one expected stays visible"
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "reference", "rejected"), entries)
    assert r.outcome == "rejected", "entries apply to their own backend only"
    ran = [("onnxruntime", "onnx-node/test_bitshift_left_int16", "xfail")]
    assert [e.case for e in X.stale(entries, ran, {"onnx-node"}, narrowed=False)] == ["onnx-node/test_never_matches"]


def test_one_entry_can_name_several_cases_and_skips_are_left_alone(tmp_path):
    entries = X.load_file(_write(tmp_path, '[[expect]]\ncases = ["a/b", "a/c*"]\noutcome = "crash"\nreason = "r"\n', "kernels.toml"))
    assert [e.case for e in entries] == ["a/b", "a/c*"]
    assert X.apply(Result("a/cd", "kernels", "crash"), entries).outcome == "xfail"
    skipped = X.apply(Result("a/b", "kernels", "skip"), entries)
    assert skipped.outcome == "skip" and not skipped.reason


def test_the_shipped_files_load_and_every_entry_has_a_reason_and_a_link():
    files = sorted(X.BUILTIN_DIR.glob("*.toml"))
    assert {f.stem for f in files} >= {"reference", "onnxruntime", "kernels", "pytorch", "tensorflow", "onnx-tf", "openvino"}
    for f in files:
        entries = X.load_file(f)
        assert entries and all(e.link.startswith("https://") and len(e.reason) > 20 for e in entries), f


@pytest.mark.parametrize("outcome", ['', 'outcome = "fail"\n'])
def test_an_entry_without_its_exact_outcome_is_refused(tmp_path, outcome):
    # "any failure" would hide a new failure, a harness error included
    with pytest.raises(X.ExpectationError, match="exact outcome"):
        X.load_file(_write(tmp_path, f'[[expect]]\ncase = "a/*"\nreason = "r"\n{outcome}', "kernels.toml"))


@pytest.mark.parametrize("text, words", [
    ('[[expect]]\ncase = "x"\n', "needs both"),
    ('[[expect]]\ncase = "x"\nreason = "r"\noutcome = "broken"\n', "unknown outcome"),
    ('[[expect]\n', "expectations file"),
])
def test_bad_files_are_clear_errors(tmp_path, text, words):
    with pytest.raises(X.ExpectationError, match=words):
        X.load_file(_write(tmp_path, text))


def test_a_variant_takes_its_base_backends_entries_unless_an_entry_names_its_variants(tmp_path, monkeypatch):
    monkeypatch.setattr(X, "BUILTIN_DIR", tmp_path)
    _write(tmp_path, '''
[[expect]]
case = "onnx-node/test_dft_*"
outcome = "mismatch"
reason = "every session"

[[expect]]
case = "generated/not_where"
outcome = "rejected"
reason = "the optimizer's rewrite only"
variants = ["onnxruntime"]
''')
    _write(tmp_path, '[[expect]]\ncase = "onnx-node/test_own"\noutcome = "mismatch"\nreason = "its own"\n', "onnxruntime-noopt.toml")
    by_backend = {}
    for e in X.load(["onnxruntime", "onnxruntime-noopt", "onnxruntime:CUDAExecutionProvider", "kernels"]):
        by_backend.setdefault(e.backend, []).append(e.case)
    assert by_backend == {
        "onnxruntime": ["onnx-node/test_dft_*", "generated/not_where"],
        "onnxruntime-noopt": ["onnx-node/test_own", "onnx-node/test_dft_*"],
        "onnxruntime:CUDAExecutionProvider": ["onnx-node/test_dft_*"],
    }
    r = X.apply(Result("onnx-node/test_dft_axis", "onnxruntime:CUDAExecutionProvider", "mismatch"), X.load(["onnxruntime:CUDAExecutionProvider"]))
    assert r.outcome == "xfail" and r.reason == "every session"
    assert X.base_of("exec:python runner.py") is None and X.base_of("pytorch-compile") is None


def test_the_index_finds_the_same_entries_in_the_same_order_as_trying_every_glob():
    backends = [p.stem for p in X.BUILTIN_DIR.glob("*.toml")]
    entries = X.load(backends)
    checked = 0
    for backend in backends:
        own = [e for e in entries if e.backend == backend]
        # ids built from every third pattern (globs filled in two ways, and cut short: an id shorter
        # than a pattern's suite and op-version), and one that matches nothing
        ids = {e.case.replace("*", fill).replace("?", "q") for e in own[::3] for fill in ("", "x/y")} | {"operators/Nope-1/opset1/float32/0"}
        ids |= {e.case[:len(e.case) // 3] for e in own[::3]}
        for case_id in sorted(ids):
            slow = [e for e in own if X.fnmatchcase(case_id, e.case)]
            assert entries.matching(backend, case_id) == slow, (backend, case_id)
            checked += bool(slow)
    assert checked > 500  # the ids really hit entries


def test_a_nondeterministic_entry_lets_a_lucky_pass_be_a_pass(tmp_path):
    entries = X.load_file(_write(tmp_path, '[[expect]]\ncase = "a/*"\noutcome = "mismatch"\nnondeterministic = true\nreason = "stale buffer"\n',
                                 "kernels.toml"))
    assert X.apply(Result("a/b", "kernels", "pass"), entries).outcome == "pass"
    assert X.apply(Result("a/b", "kernels", "mismatch"), entries).outcome == "xfail"
    assert X.apply(Result("a/b", "kernels", "error"), entries).outcome == "error", "another failure stays visible"


def test_several_entries_may_name_one_case_each_for_its_outcome(tmp_path):
    # a drawn case's outcome can depend on its inputs: the entry expecting that outcome decides
    entries = X.load_file(_write(tmp_path, '[[expect]]\ncase = "a/*"\noutcome = "unsupported"\nreason = "no kernel"\n\n'
                                           '[[expect]]\ncase = "a/b"\noutcome = "error"\nreason = "an invalid inserted cast"\n', "kernels.toml"))
    assert X.apply(Result("a/b", "kernels", "error"), entries).reason == "an invalid inserted cast"
    assert X.apply(Result("a/b", "kernels", "unsupported"), entries).outcome == "xfail"
    assert X.apply(Result("a/b", "kernels", "mismatch"), entries).outcome == "mismatch"
    ran = [("kernels", "a/b", "error"), ("kernels", "a/c", "unsupported")]
    assert X.stale(entries, ran, {"a"}, narrowed=False) == [], "each entry decided a result"
    assert [e.case for e in X.stale(entries, ran[:1], {"a"}, narrowed=False)] == ["a/*"], "the glob decided nothing"


def _relu_model(path, graph_name: str):
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], graph_name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_a_module_class_backend_takes_a_file_that_names_it_and_a_file_for_no_backend_is_reported(tmp_path, capsys):
    """--expectations openvino.toml for a module:Class backend: without a backend key its entries
    are openvino's and apply to nothing (said on stderr); with backend = "<the run's name for it>"
    they apply."""
    from harness.cli import main
    from harness.store import Store

    spec = "tests.fault_backends:WrongValue"
    _relu_model(tmp_path / "wrong.onnx", "FAULT")
    entry = '[[expect]]\ncase = "user/wrong"\noutcome = "mismatch"\nreason = "adds one"\nlink = "https://example.org/1"\n'
    file = tmp_path / "openvino.toml"
    file.write_text(entry)
    where = ["--model", str(tmp_path / "wrong.onnx"), "--backend", spec, "--expectations", str(file), "-j", "1", "--exit-zero"]
    assert main(["run", *where, "--store", str(tmp_path / "a.sqlite")]) == 0
    err = capsys.readouterr().err
    assert (f"warning: expectations file {file}: its 1 entries are for openvino, not a backend of this run ({spec}): they apply to nothing; "
            f"name the backend at the top of the file, e.g. backend = \"{spec}\"") in err
    assert [r["outcome"] for r in Store(tmp_path / "a.sqlite").results(1)] == ["mismatch"]
    file.write_text(f'backend = "{spec}"\n\n' + entry)
    assert main(["run", *where, "--store", str(tmp_path / "b.sqlite")]) == 0
    assert "warning: expectations file" not in capsys.readouterr().err
    ((outcome, reason),) = [(r["outcome"], r["reason"]) for r in Store(tmp_path / "b.sqlite").results(1)]
    assert outcome == "xfail" and reason == "adds one (https://example.org/1)"
    assert [e.backend for e in X.load_file(file)] == [spec]
