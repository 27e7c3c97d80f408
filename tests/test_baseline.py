"""The baseline workflow: `expectations update` writes honest globs by cause, keeps what a person
wrote, prunes what matched nothing; `expectations check` and `run --strict` refuse undecided entries."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from harness import baseline, expectations
from harness.run import RunConfig, unexpected_results

MSG = "Could not find an implementation for Add(14) node with name ''"


def row(case_id, outcome, message=MSG):
    return {"case_id": case_id, "backend": "rt", "outcome": outcome, "raw_outcome": outcome, "message": message}


ROWS = ([row(f"operators/Add-14/opset14/float32/{k}", "unsupported") for k in range(4)]
        + [row("operators/Add-14/opset14/float16/0", "unsupported"), row("operators/Add-14/opset14/float16/1", "pass"),
           row("operators/Mul-14/opset14/float32/0", "mismatch", "output 0: values differ: 1/4 bad, first at [2]: got 3.5, expected 3.0"),
           row("operators/Mul-14/opset14/float32/1", "mismatch", "output 0: values differ: 2/4 bad, first at [0]: got 1.5, expected 1.0")])

HAND = '''# written by a person: kept as it is
[[expect]]
case = "operators/Relu-14/*"
outcome = "mismatch"
reason = "a decided cause, with its link"
link = "https://example.org/1"

[[expect]]
case = "operators/Mul-14/opset14/float32/0"
outcome = "mismatch"
reason = "decided by hand"
'''


def test_update_writes_globs_that_name_their_cases_and_no_others(tmp_path):
    path = tmp_path / "rt.toml"
    counts = baseline.update(path, "rt", ROWS)
    entries = expectations.load_file(path, "rt")
    by_outcome = {e.outcome: [] for e in entries}
    for e in entries:
        by_outcome[e.outcome].append(e.case)
    # every float32 Add case fails alike: one glob; float16 has a passing case: its failing id alone
    assert sorted(by_outcome["unsupported"]) == ["operators/Add-14/*/float32/*", "operators/Add-14/opset14/float16/0"]
    assert not any(fnmatchcase("operators/Add-14/opset14/float16/1", p) for p in by_outcome["unsupported"])
    # two mismatches with one message signature: one cause, every float32 Mul case of the run, to decide
    assert by_outcome["mismatch"] == ["operators/Mul-14/*/float32/*"]
    triage = {e.outcome: e.triage for e in entries}
    assert triage == {"unsupported": "missing-kernel", "mismatch": "todo"}
    assert counts == {"entries": 2, "todo": 1, "results": 7, "pruned": 0}


def test_hand_written_entries_survive_and_explain_their_cases(tmp_path):
    path = tmp_path / "rt.toml"
    path.write_text(HAND)
    baseline.update(path, "rt", ROWS)
    baseline.update(path, "rt", ROWS)  # a second update rewrites only the generated section
    text = path.read_text()
    assert text.startswith(HAND) and text.count(baseline.MARKER) == 1
    generated = [e for e in expectations.load_file(path, "rt") if e.triage]
    assert [e.case for e in generated if e.outcome == "mismatch"] == ["operators/Mul-14/opset14/float32/1"]


def test_prune_removes_exactly_the_entry_that_matched_nothing(tmp_path):
    path = tmp_path / "rt.toml"
    path.write_text(HAND)
    counts = baseline.update(path, "rt", ROWS, prune=True, suites={"operators"})
    cases = [e.case for e in expectations.load_file(path, "rt") if not e.triage]
    assert cases == ["operators/Mul-14/opset14/float32/0"] and counts["pruned"] == 1
    assert "# written by a person" in path.read_text()


def test_check_fails_while_an_entry_is_undecided(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(expectations, "BUILTIN_DIR", tmp_path)
    path = tmp_path / "rt.toml"
    baseline.update(path, "rt", ROWS)
    args = type("Args", (), {"backend": None})
    assert baseline.cmd_check(args) == 1
    assert "rt: 1 entries to decide" in capsys.readouterr().out
    path.write_text(path.read_text().replace('triage = "todo"', 'triage = "decided"'))
    assert baseline.cmd_check(args) == 0


@pytest.mark.parametrize("strict, counted", [(False, 0), (True, 1)])
def test_strict_counts_a_result_expected_only_by_a_todo_entry(tmp_path, strict, counted):
    path = tmp_path / "rt.toml"
    baseline.update(path, "rt", ROWS)
    entries = expectations.Entries(expectations.load_file(path, "rt"))
    result = expectations.apply(expectations.Result("operators/Mul-14/opset14/float32/0", "rt", "mismatch", "x"), entries)
    assert result.outcome == "xfail" and result.reason.startswith("todo: ")
    rows = [{"backend": "rt", "case_id": result.case_id, "outcome": result.outcome, "message": "x", "reason": result.reason}]
    found = unexpected_results(RunConfig(suites=[], backends=[], strict=strict), {}, rows, [])
    assert len(found) == counted
