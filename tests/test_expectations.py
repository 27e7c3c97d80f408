import pytest

from harness import expectations as X
from harness.execute import Result


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
reason = "stale entry"
''')
    entries = X.load(["onnxruntime"], [path])
    r = X.apply(Result("onnx-node/test_bitshift_left_int16", "onnxruntime", "rejected", "IR 14"), entries)
    assert r.outcome == "xfail" and r.raw_outcome == "rejected" and "opset 28" in r.reason and "example.org" in r.reason
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "onnxruntime", "pass"), entries)
    assert r.outcome == "xpass"
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "onnxruntime", "mismatch"), entries)
    assert r.outcome == "mismatch", "a different failure than the one expected stays visible"
    r = X.apply(Result("onnx-node/test_bitshift_right_int8", "reference", "rejected"), entries)
    assert r.outcome == "rejected", "entries apply to their own backend only"
    assert [e.case for e in X.unused(entries)] == ["onnx-node/test_never_matches"]


def test_outcome_fail_matches_any_failure(tmp_path):
    entries = X.load(["kernels"], [_write(tmp_path, '[[expect]]\ncase = "a/*"\nreason = "r"\n', "kernels.toml")])
    assert X.apply(Result("a/b", "kernels", "crash"), entries).outcome == "xfail"


@pytest.mark.parametrize("text, words", [
    ('[[expect]]\ncase = "x"\n', "needs both"),
    ('[[expect]]\ncase = "x"\nreason = "r"\noutcome = "broken"\n', "unknown outcome"),
    ('[[expect]\n', "expectations file"),
])
def test_bad_files_are_clear_errors(tmp_path, text, words):
    with pytest.raises(X.ExpectationError, match=words):
        X.load_file(_write(tmp_path, text))
