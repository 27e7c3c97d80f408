import sqlite3

from harness.execute import Result
from harness.store import Store


def test_runs_add_history_and_never_overwrite(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    first = store.start_run("cmd", {"suites": ["x"]}, {"onnx": "1"})
    store.add_result(first, Result("c1", "b", "pass", verdict={"max_abs": 0.0}))
    store.add_result(first, Result("c2", "b", "mismatch", "values differ", verdict={"max_abs": 0.5, "bad_count": 1}))
    store.finish_run(first)
    second = store.start_run("cmd", {"suites": ["x"]}, {"onnx": "1"})
    store.add_result(second, Result("c1", "b", "error", "boom"))
    store.finish_run(second, "interrupted")

    assert [r["status"] for r in store.runs()] == ["complete", "interrupted"]
    assert [r["outcome"] for r in store.results(first)] == ["pass", "mismatch"]
    assert [r["outcome"] for r in store.results(second)] == ["error"]
    row = [r for r in store.results(first) if r["case_id"] == "c2"][0]
    assert row["max_abs"] == 0.5 and row["bad_count"] == 1 and row["verdict"]["max_abs"] == 0.5
    assert [h["run_id"] for h in store.case_history("c1")] == [second, first]
    assert store.latest_run("interrupted")["id"] == second
    assert store.done_pairs(first) == {("c1", "b"), ("c2", "b")}


def test_a_result_is_stored_once_per_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("cmd", {}, {})
    store.add_result(run, Result("c1", "b", "pass"))
    store.add_result(run, Result("c1", "b", "pass"))
    assert len(list(store.results(run))) == 1


def test_results_are_visible_to_another_connection_at_once(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("cmd", {}, {})
    store.add_result(run, Result("c1", "b", "pass"))
    other = sqlite3.connect(tmp_path / "r.sqlite")
    assert other.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
