"""`onnx-harness run` gates: it exits 1 on an unexpected result (a non-pass no expectation
covers, an xpass, an unavailable backend, with --strict an expectation that matched nothing),
names why in its last line, and prints the expectations files it used."""

import pytest

from harness import expectations as X
from harness.cli import main
from harness.store import Store
from harness.suites import onnx_official as official

WRONG = "tests.fault_backends:AlwaysWrong"  # every float output + 1: each expand_shape case is a mismatch
CASES = [f"onnx-simple/test_expand_shape_model{i}" for i in (1, 2, 3, 4)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("gates") / "corpus"
    official.build_corpus(root, ["onnx-simple"])
    return root


def _expect(path, cases, backend=WRONG, outcome="mismatch"):
    path.write_text("".join(f'[[expect]]\nbackend = "{backend}"\ncase = "{c}"\noutcome = "{outcome}"\nreason = "adds one on purpose"\n\n'
                            for c in cases))
    return path


def _run(corpus, tmp_path, capsys, *args):
    code = main(["run", "--suite", "onnx-simple", "-k", "expand_shape", "-j", "1", "--corpus", str(corpus),
                 "--store", str(tmp_path / "r.sqlite"), *args])
    return code, capsys.readouterr().out.splitlines()


def test_known_failures_exit_0_and_removing_one_expectation_exits_1_naming_that_case(corpus, tmp_path, capsys):
    known = _expect(tmp_path / "known.toml", CASES)
    code, lines = _run(corpus, tmp_path, capsys, "--backend", WRONG, "--backend", "reference", "--expectations", str(known))
    assert code == 0, lines
    assert [l for l in lines if l.startswith("expectations: ")] == [l for l in lines if "known.toml (4 entries)" in l]
    assert lines[-1] == "exit 0: no unexpected results (4 expected failures)"

    _expect(known, [c for c in CASES if not c.endswith("model2")])
    code, lines = _run(corpus, tmp_path, capsys, "--backend", WRONG, "--backend", "reference", "--expectations", str(known))
    assert code == 1
    assert lines[-1].startswith(f"exit 1: 1 unexpected result: {WRONG} onnx-simple/test_expand_shape_model2 mismatch; see ")
    assert any(l.startswith(f"unexpected: {WRONG} onnx-simple/test_expand_shape_model2 mismatch: output 0: values differ") for l in lines)


def test_without_expectations_every_failure_is_unexpected_and_exit_zero_only_reports(corpus, tmp_path, capsys):
    code, lines = _run(corpus, tmp_path, capsys, "--backend", WRONG)
    assert code == 1 and lines[-1].startswith("exit 1: 4 unexpected results: ") and "expectations: none" in lines
    code, lines = _run(corpus, tmp_path, capsys, "--backend", WRONG, "--exit-zero")
    assert code == 0 and lines[-1].startswith("exit 0 (--exit-zero): 4 unexpected results: ")


def test_an_xpass_is_unexpected(corpus, tmp_path, capsys):
    known = _expect(tmp_path / "known.toml", CASES[:1], backend="reference")
    code, lines = _run(corpus, tmp_path, capsys, "--backend", "reference", "--expectations", str(known))
    assert code == 1 and lines[-1].startswith("exit 1: 1 unexpected result: reference onnx-simple/test_expand_shape_model1 xpass")


def test_a_different_failure_than_expected_is_unexpected(corpus, tmp_path, capsys):
    known = _expect(tmp_path / "known.toml", CASES, outcome="crash")
    code, lines = _run(corpus, tmp_path, capsys, "--backend", WRONG, "--expectations", str(known))
    assert code == 1 and lines[-1].startswith("exit 1: 4 unexpected results: ")


def test_an_unavailable_backend_exits_1_with_its_reason(corpus, tmp_path, capsys):
    code, lines = _run(corpus, tmp_path, capsys, "--backend", "reference", "--backend", "tests.fault_backends:NotInstalled")
    assert code == 1
    assert lines[-1].startswith("exit 1: 1 unexpected result: tests.fault_backends:NotInstalled unavailable (vendor-sdk is not installed")


def test_a_stale_expectation_is_reported_and_unexpected_with_strict(corpus, tmp_path, capsys):
    known = _expect(tmp_path / "known.toml", CASES + ["onnx-simple/test_no_such_case"])
    args = ["--backend", WRONG, "--expectations", str(known)]
    code = main(["run", "--suite", "onnx-simple", "-j", "1", "--corpus", str(corpus), "--store", str(tmp_path / "r.sqlite"),
                 "--exit-zero", *args])
    out = capsys.readouterr().out
    assert code == 0 and f"expectation matched nothing: {WRONG} onnx-simple/test_no_such_case" in out
    # -k narrows the run: an entry whose case was not selected is not stale
    code, lines = _run(corpus, tmp_path, capsys, "--strict", *args)
    assert code == 0 and not any("matched nothing" in l for l in lines), lines
    code, lines = _run(corpus, tmp_path, capsys, "--strict", *args[:-1], str(_expect(tmp_path / "k2.toml", CASES + ["onnx-simple/test_expand_shape_*"])))
    assert code == 1 and lines[-1].startswith(f"exit 1: 1 unexpected result: {WRONG} onnx-simple/test_expand_shape_* stale expectation")


def test_a_resumed_run_counts_what_its_earlier_part_matched(corpus, tmp_path, capsys):
    """An entry whose cases all finished before the interruption decided them: it is not stale
    after --resume, whose own part never meets those cases."""
    known = _expect(tmp_path / "known.toml", CASES)
    store_path = tmp_path / "r.sqlite"
    code = main(["run", "--suite", "onnx-simple", "--backend", WRONG, "--expectations", str(known), "-j", "1", "--corpus", str(corpus),
                 "--store", str(store_path), "--exit-zero"])
    assert code == 0
    capsys.readouterr()
    store = Store(store_path)
    # as if interrupted when only the expand_shape cases had finished
    store.db.execute("DELETE FROM results WHERE run_id = 1 AND case_id NOT LIKE 'onnx-simple/test_expand_shape_%'")
    store.finish_run(1, "interrupted")
    code = main(["run", "--resume", "1", "--store", str(store_path), "--strict", "--exit-zero"])
    out = capsys.readouterr().out
    assert code == 0 and "resuming run 1: 4 results already stored" in out
    assert "matched nothing" not in out and "stale expectation" not in out, out


def _e(case, backend="b"):
    return X.Expectation(backend, case, "fail", "r")


def test_stale_entries_respect_the_selection():
    entries = [_e("s/test_a"), _e("s/test_gone"), _e("s/test_a*"), _e("s/test_skipped"), _e("other/test_x"), _e("s/test_c", "b2")]
    results = [("b", "s/test_a", "mismatch"), ("b", "s/test_b", "pass"), ("b", "s/test_skipped", "skip")]
    full = X.stale(entries, results, {"s"}, narrowed=False)
    # gone: names no case of a whole suite; test_a*: shadowed by test_a; b2's entry: its backend ran nothing of suite s
    assert [e.case for e in full] == ["s/test_gone", "s/test_a*", "s/test_c"]
    assert [e.case for e in X.stale(entries, results, {"s"}, narrowed=True)] == ["s/test_a*"]


def test_a_known_rejection_stays_out_of_the_pass_rate_denominator(tmp_path):
    """An expectation turns a rejection into xfail; the backend still could not load that case, so
    the terminal summary and the report agree on the cases it could load: 1 pass of 2 loadable."""
    from harness.cli import backend_counts
    from harness.worker import Result
    from harness.report.matrix import build_report
    from harness.report.sources import RunRef
    from harness.store import Store

    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("test", {}, {})
    store.record_backend(run, "b", True, "", "1", {})
    for case, outcome, raw in [("s/a", "pass", ""), ("s/b", "mismatch", ""), ("s/c", "xfail", "rejected"), ("s/d", "rejected", "")]:
        store.add_result(run, Result(case, "b", outcome, raw_outcome=raw))
    store.finish_run(run, "complete")
    entry = backend_counts(store, run)["b"]
    assert (entry["total"], entry["loadable"], entry["pass_rate"]) == (4, 2, 0.5)
    summary = build_report([RunRef(tmp_path / "r.sqlite", run)], history=False).backends[0]
    assert (summary.total, summary.loadable, summary.pass_rate) == (4, 2, 0.5)


def test_a_malformed_expectations_file_ends_the_run_naming_it_and_how_to_resume(corpus, tmp_path, capsys):
    # the file is read on the first result (the workers start on the first cases meanwhile): the
    # run it ended is stored as interrupted, with no result, and resumes once the file is mended
    known = tmp_path / "known.toml"
    known.write_text(f'[[expect]]\nbackend = "{WRONG}"\ncase = "{CASES[0]}"\noutcome = "mismatch"\n')  # no reason
    code = main(["run", "--suite", "onnx-simple", "-k", "expand_shape", "-j", "1", "--corpus", str(corpus),
                 "--store", str(tmp_path / "r.sqlite"), "--backend", WRONG, "--expectations", str(known)])
    err = capsys.readouterr().err
    assert code == 2 and "reason" in err and "--resume 1" in err and "stored no result" in err
    store = Store(tmp_path / "r.sqlite")
    assert store.run(1)["status"] == "interrupted" and list(store.summary_rows(1)) == []
    _expect(known, CASES)
    code, lines = _run(corpus, tmp_path, capsys, "--resume", "1")
    assert code == 0 and len(list(store.summary_rows(1))) == 4
