"""``onnx-harness diff`` (a CI gate) and ``onnx-harness report``, through their argparse wiring."""

from __future__ import annotations

import argparse
import json

import pytest

from harness.report.commands import register
from harness.worker import OUTCOMES
from harness.report.diff import KINDS, REGRESSION_KINDS, classify_change, diff_results
from harness.store import Store

from .test_report_matrix import MISMATCH, add_run, make_store, res

REGRESSED = "operators/Relu-14/opset14/float32/0"


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="onnx-harness")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def store(tmp_path):
    return str(make_store(tmp_path))


@pytest.mark.parametrize("before, after, kind", [
    ("pass", "mismatch", "regressed"), ("xpass", "error", "regressed"), ("pass", "xfail", "pass-to-xfail"),
    ("xfail", "crash", "xfail-to-failure"), ("error", "crash", "failure-changed"), ("mismatch", "crash", "failure-changed"),
    ("pass", "skip", "skipped"), ("mismatch", "skip", "skipped"), ("skip", "mismatch", "skip-to-failure"),
    ("skip", "xfail", "skip-to-failure"), (None, "mismatch", "new-failing"), (None, "xfail", "new-failing"),
    ("pass", None, "removed"), ("mismatch", None, "removed"),
    ("mismatch", "pass", "improved"), ("xfail", "xpass", "improved"), ("crash", "pass", "improved"), ("skip", "pass", "improved"),
    ("mismatch", "xfail", "changed"), ("pass", "xpass", "changed"), (None, "pass", "new"),
    ("pass", "pass", None), ("mismatch", "mismatch", None),
])
def test_classify_change(before, after, kind):
    assert classify_change(before, after) == kind


def test_the_transition_table_covers_every_pair_of_outcomes():
    every = [*OUTCOMES, None]
    kinds = {classify_change(b, a) for b in every for a in every if b != a}
    assert kinds == set(KINDS)
    # the regressions named by the issue, each its own kind; improvements and passing new cases are not
    assert set(REGRESSION_KINDS) >= {"regressed", "pass-to-xfail", "skip-to-failure", "new-failing", "removed"}
    assert not {"improved", "changed", "new"} & set(REGRESSION_KINDS)


#: one case per kind of change, on one backend: (case, outcome in run 1, outcome in run 2)
EACH_KIND = {
    "regressed": ("suite/pass-mismatch", "pass", "mismatch"),
    "pass-to-xfail": ("suite/pass-xfail", "pass", "xfail"),
    "xfail-to-failure": ("suite/xfail-crash", "xfail", "crash"),
    "failure-changed": ("suite/mismatch-crash", "mismatch", "crash"),
    "skipped": ("suite/pass-skip", "pass", "skip"),
    "skip-to-failure": ("suite/skip-mismatch", "skip", "mismatch"),
    "new-failing": ("suite/new-error", None, "error"),
    "removed": ("suite/gone", "pass", None),
    "improved": ("suite/mismatch-pass", "mismatch", "pass"),
    "changed": ("suite/mismatch-xfail", "mismatch", "xfail"),
    "new": ("suite/new-pass", None, "pass"),
}


def _two_runs(tmp_path, kinds) -> str:
    store = Store(tmp_path / "results.sqlite")
    for side in (1, 2):
        results = [res(case, "reference", outcomes[side - 1], tags={"suite": "suite"})
                   for case, *outcomes in (EACH_KIND[k] for k in kinds) if outcomes[side - 1]]
        add_run(store, results, backends={"reference": (True, "", "1")}, args={"suites": ["suite"]})
    store.close()
    return str(tmp_path / "results.sqlite")


def test_diff_lists_every_kind_in_its_own_section_and_fails_on_each_regression(tmp_path, capsys):
    store = _two_runs(tmp_path, list(EACH_KIND))
    assert cli(["diff", "1", "2", "--store", store]) == 1
    out, err = capsys.readouterr()
    sections = {}
    for block in out.split("\n## ")[1:]:
        head, _, body = block.partition("\n")
        sections[head.split(" ", 1)[0]] = (head, body)
    assert list(sections) == list(EACH_KIND)  # regressions first, in the table's order
    for kind, (case, before, after) in EACH_KIND.items():
        head, body = sections[kind]
        assert head.endswith("(regression)") == (kind in REGRESSION_KINDS), head
        row = next(line for line in body.splitlines() if case in line)
        assert f"| {before or '-'} " in row and f"| {after or '-'} " in row
    assert "FAIL: 8 regression(s) not allowed" in err
    # every regression accepted: exit 0, and the sections still show them as allowed
    allow = [arg for k in REGRESSION_KINDS for arg in ("--allow", EACH_KIND[k][0])]
    assert cli(["diff", "1", "2", "--store", store, *allow]) == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert all(f"1 {k} (1 allowed)" in last for k in REGRESSION_KINDS), last
    assert "suite/gone (allowed)" in out


@pytest.mark.parametrize("kind", REGRESSION_KINDS)
def test_each_kind_of_regression_alone_fails_the_gate(tmp_path, kind, capsys):
    store = _two_runs(tmp_path, [kind, "improved", "new"])
    assert cli(["diff", "1", "2", "--store", store]) == 1
    assert f"1 {kind}" in capsys.readouterr().err
    assert cli(["diff", "1", "2", "--store", store, "--allow", f"reference:{EACH_KIND[kind][0]}"]) == 0


@pytest.mark.parametrize("kind", ["improved", "changed", "new"])
def test_improvements_and_passing_new_cases_do_not_fail(tmp_path, kind, capsys):
    store = _two_runs(tmp_path, [kind])
    assert cli(["diff", "1", "2", "--store", store]) == 0
    assert f"run 1 -> run 2: 1 {kind}" in capsys.readouterr().out


def test_diff_lists_each_kind(store, capsys):
    assert cli(["diff", "1", "2", "--store", store]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    row = next(line for line in lines if REGRESSED in line)
    assert "onnxruntime" in row and "| pass" in row and "mismatch" in row
    assert any("Relu-14/opset14/float32/1" in line for line in out.split("## improved")[1].splitlines()[:5])
    assert "Clip-11/opset13/float32/0" in out.split("## failure-changed")[1].split("##")[0]
    assert "Add-14" in out.split("## new ")[1]
    assert "test_skip_me" in out.split("## removed")[1].split("##")[0]
    assert "run 1 -> run 2: 1 regressed, 1 failure-changed, 2 removed, 1 improved, 2 new" in out
    assert "4 regression(s) not allowed" in err
    # regressions come first
    assert out.lstrip().startswith("## regressed")


def test_allow_accepts_known_changes(store, capsys):
    others = ["--allow", "*Clip-11*", "--allow", "*test_skip_me"]  # the other regressions of the store
    assert cli(["diff", "1", "2", "--store", store, "--allow", "operators/Relu-14/*", *others]) == 0
    out, _ = capsys.readouterr()
    assert "float32/0 (allowed)" in out
    assert "run 1 -> run 2: 1 regressed (1 allowed), 1 failure-changed (1 allowed), 2 removed (2 allowed), 1 improved, 2 new" in out
    # a backend-qualified pattern only accepts that backend
    assert cli(["diff", "1", "2", "--store", store, "--allow", "reference:operators/Relu-14/*", *others]) == 1
    assert cli(["diff", "1", "2", "--store", store, "--allow", "onnxruntime:operators/Relu-14/opset14/float32/0", *others]) == 0
    capsys.readouterr()
    assert cli(["diff", "1", "2", "--store", store, "--allow", "nothing/*", "--allow", "*Relu-14*", *others]) == 0
    assert "--allow 'nothing/*' matched no change" in capsys.readouterr().err


def test_no_regression_is_exit_zero_and_new_defaults_to_latest(store, capsys):
    assert cli(["diff", "2", "--store", store]) == 0  # latest against itself
    assert "run 2 -> run 2: no change" in capsys.readouterr().out
    assert cli(["diff", "2", "1", "--store", store]) == 1  # backwards, the improvement is a regression


def test_diff_reads_results_json_from_a_report(store, tmp_path, capsys):
    out = tmp_path / "base-report"
    assert cli(["report", "1", "--store", store, "-o", str(out), "--format", "json"]) == 0
    assert cli(["diff", str(out / "results.json"), "2", "--store", store]) == 1
    assert "results.json -> run 2: 1 regressed, 1 failure-changed" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"results": [{"case": 1}]}))
    assert cli(["diff", str(bad), "2", "--store", store]) == 2
    assert "not a results file" in capsys.readouterr().err


def test_bad_runs_are_one_clear_line(store, tmp_path, capsys):
    assert cli(["diff", "7", "2", "--store", store]) == 2
    assert "no run 7" in capsys.readouterr().err
    assert cli(["report", "--store", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "o")]) == 2
    assert "no results store" in capsys.readouterr().err


def test_report_command_writes_everything_with_the_previous_run_as_baseline(store, tmp_path, capsys):
    out = tmp_path / "rep"
    assert cli(["report", "--store", store, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    # the default: the newest run of every (suite, backend): run 2, and run 1 for onnx-node (which
    # run 2 did not run), each against the previous run of the same suite and backend
    assert "against run 1: 1 regressed, 1 failure-changed, 1 improved, 2 new\n" in printed
    assert ("onnx-node on onnxruntime: 1 result of run 1 not compared (nothing earlier to compare with); "
            "onnx-node on reference: 1 result of run 1 not compared (nothing earlier to compare with)") in printed
    assert "vendor: unavailable: vendor-sdk is not installed" in printed
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "junit.xml", "results.json", "summary.md"]
    assert ("**Changes:** 1 regressed, 1 failure-changed, 1 improved, 2 new (compared: onnx-light on onnxruntime over onnx-light; "
            "onnx-light on reference over onnx-light; operators on onnxruntime over operators; operators on reference over operators; "
            "onnx-node on onnxruntime: 1 result of run 1 not compared") in (out / "summary.md").read_text()
    doc = json.loads((out / "results.json").read_text())
    assert doc["baseline"]["id"] == 1 and doc["diff"]["counts"]["regressed"] == 1 and "removed" not in doc["diff"]["counts"]
    assert [r["id"] for r in doc["runs"]] == [1, 2]
    assert cli(["report", "2", "--baseline", "1", "--store", store, "-o", str(out), "--format", "json"]) == 0
    doc = json.loads((out / "results.json").read_text())  # run 2 ran onnx-node too: its vanished case is removed
    assert doc["diff"]["counts"]["removed"] == 2 and doc["diff"]["not_compared"] == []
    assert cli(["report", "1", "2", "--store", store, "-o", str(out), "--baseline", "none", "--format", "json"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["diff"] is None and [r["id"] for r in doc["runs"]] == [1, 2]


def test_diff_results_keys_on_backend_name():
    base = [{"case_id": "a", "backend": "x", "outcome": "pass"}]
    new = [{"case_id": "a", "backend": "x", "outcome": "mismatch", "message": "m", "bundle_path": "/b"}]
    d = diff_results(base, new)
    assert [(c.kind, c.message, c.bundle) for c in d.changes] == [("regressed", "m", "/b")]
    assert d.allow(["x:a"]) == [] and d.regressions == []


def test_a_case_an_expectation_marks_nondeterministic_may_change_between_allowed_outcomes_only():
    from harness.expectations import Entries, Expectation

    varying = Expectation("ort", "op/LSTM-14/*/seq_length_0", "mismatch", "output uninitialized where no step runs", nondeterministic=True)
    steady = Expectation("ort", "op/Gather-13/*", "mismatch", "a real bug")
    entries = Entries([varying, steady])
    rows = lambda *outcomes: [{"case_id": c, "backend": "ort", "outcome": o} for c, o in zip(CASES, outcomes)]  # noqa: E731
    CASES = ["op/LSTM-14/f16/seq_length_0", "op/LSTM-14/f32/seq_length_0", "op/LSTM-14/f64/seq_length_0", "op/Gather-13/f32/1"]
    d = diff_results(rows("unspecified", "pass", "xfail", "pass"), rows("xfail", "xfail", "crash", "xfail"))
    assert [c.kind for c in d.changes] == ["pass-to-xfail", "pass-to-xfail", "pass-to-xfail", "xfail-to-failure"]
    assert d.allow_varying(entries) == 2
    allowed = {c.case_id: c.allowed for c in d.changes}
    # unspecified -> expected mismatch and pass -> expected mismatch: what the entry says varies
    assert allowed == {CASES[0]: True, CASES[1]: True, CASES[2]: False, CASES[3]: False}, "a crash or another op's change stays a regression"
    assert sorted(c.case_id for c in d.regressions) == sorted([CASES[2], CASES[3]])
    assert "varies from run to run" in next(c for c in d.changes if c.case_id == CASES[0]).allowed_by


def test_diff_of_different_suites_says_so_instead_of_listing_every_case(tmp_path, capsys):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    ort = {"onnxruntime": (True, "", "1.31.1")}
    add_run(s, [res("onnx-node/test_abs", "onnxruntime", "pass"), res("onnx-node/test_add", "onnxruntime", "pass")], ort)
    add_run(s, [res("operators/ReduceSum-13/opset13/float32/0", "onnxruntime", "mismatch", verdict=MISMATCH)], ort)
    assert cli(["diff", "1", "2", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ran no suite on the same backend (run 1: onnx-node on onnxruntime; run 2: operators on onnxruntime): nothing to compare" in err
    # the report of both: no diff of one against the other (each suite ran once), history per suite
    assert cli(["report", "--store", str(path), "-o", str(tmp_path / "o"), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "against" not in out and "new" not in out
    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [r["id"] for r in doc["runs"]] == [1, 2] and doc["diff"] is None


def test_a_report_against_a_baseline_shows_a_nondeterministic_cases_change_as_allowed_as_diff_does(tmp_path, capsys):
    # ONNX Runtime's LSTM with sequence length 0 leaves Y_c uninitialized: the shipped expectation
    # marks it nondeterministic, so pass -> expected mismatch is allowed, another op's is not
    path = tmp_path / "r.sqlite"
    s = Store(path)
    lstm, gather = "operators/LSTM-14/opset14/float32/seq_length_0", "operators/Gather-13/opset13/float32/1"
    add_run(s, [res(lstm, "onnxruntime", "pass"), res(gather, "onnxruntime", "pass")])
    add_run(s, [res(lstm, "onnxruntime", "xfail", raw="mismatch", verdict=MISMATCH), res(gather, "onnxruntime", "mismatch", verdict=MISMATCH)])
    assert cli(["diff", "1", "2", "--store", str(path)]) == 1
    assert "run 1 -> run 2: 1 regressed, 1 pass-to-xfail (1 allowed)" in capsys.readouterr().out
    out = tmp_path / "rep"
    assert cli(["report", "2", "--store", str(path), "--baseline", "1", "-o", str(out), "--format", "markdown", "--format", "html"]) == 0
    assert "against run 1: 1 regressed, 1 pass-to-xfail (1 allowed)" in capsys.readouterr().out
    md = (out / "summary.md").read_text()
    assert "**Changes:** 1 regressed, 1 pass-to-xfail (1 allowed)" in md
    assert "### Regressions: pass-to-xfail" not in md  # its one change is allowed
    regressed, allowed = md.split("### Regressions: regressed")[1].split("### Regressions allowed (1)")
    assert gather in regressed and lstm not in regressed
    assert lstm in allowed.split("###")[0] and "varies from run to run (nondeterministic in harness/expectations/onnxruntime.toml)" in allowed
    html = (out / "index.html").read_text()
    assert '"allowed": [[' in html or '"allowed":[[' in html
