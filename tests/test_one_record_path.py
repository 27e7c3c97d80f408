"""One recording step: the same case run by `onnx-harness run`, by the pytest plugin (and
stamped at the same opset) and found by a fuzz campaign is stored as the same result with the
same repro bundle."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harness.suites import onnx_official as official

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parent.parent
BACKEND = "tests.fault_backends:AlwaysWrong"
CASE = "expand_shape_model1"
#: what a result is, without where and when it was stored (ids, clock times, the store's path)
COLUMNS = ("case_id", "backend", "outcome", "raw_outcome", "reason", "message", "max_abs", "max_rel", "max_ulp", "bad_count",
           "first_bad", "verdict", "restamp", "tags")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("onepath") / "corpus"
    official.build_corpus(root, ["onnx-simple"])
    return root


def stored(store: Path, case_id: str | None = None) -> tuple[dict, dict[str, bytes]]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        where = " where case_id = ?" if case_id else ""
        rows = db.execute(f"select {', '.join(COLUMNS)}, bundle from results{where}", (case_id,) if case_id else ()).fetchall()
    assert len(rows) == 1, [dict(r) for r in rows]
    row = dict(rows[0])
    bundle = Path(row.pop("bundle"))
    if not bundle.is_absolute():
        bundle = store.parent / bundle
    files = {str(p.relative_to(bundle)): p.read_bytes() for p in sorted(bundle.rglob("*")) if p.is_file()}
    return row, files


def by_run(corpus: Path, out: Path, *opset: str, suite: str = "onnx-simple", case: str = CASE, more: tuple = ()) -> Path:
    store = out / "r.sqlite"
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", suite, "--corpus", str(corpus), "--backend", BACKEND,
           "-k", case, "--store", str(store), "-j", "1", *more]
    done = subprocess.run(cmd + (["--opset", *opset] if opset else []), cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr  # one unexpected mismatch
    return store


def by_plugin(pytester, corpus: Path, *opset: str, suite: str = "onnx-simple", case: str = CASE, more: tuple = ()) -> Path:
    store = pytester.path / "p" / "r.sqlite"
    pytester.makepyfile(test_nothing="")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-suite", suite, "--harness-corpus", str(corpus),
                                           "--harness-store", str(store), "--harness-backend", BACKEND, "--harness-k", case,
                                           *(["--harness-opset", *opset] if opset else []), *more)
    result.assert_outcomes(failed=1)
    return store


@pytest.mark.parametrize("opset", [(), ("12",)], ids=["as-frozen", "stamped-at-12"])
def test_run_and_the_plugin_store_the_same_result_and_bundle(pytester, monkeypatch, corpus, tmp_path, opset):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    ran, ran_bundle = stored(by_run(corpus, tmp_path / "run", *opset))
    plugged, plugged_bundle = stored(by_plugin(pytester, corpus, *opset))
    assert ran["outcome"] == "mismatch"
    if opset:
        assert '"opset": 12' in (ran["tags"] or "") or ran["restamp"], ran
    assert plugged == ran
    assert sorted(plugged_bundle) == sorted(ran_bundle)
    differing = [name for name in ran_bundle if ran_bundle[name] != plugged_bundle[name]]
    assert not differing, differing


def test_a_fuzz_finding_is_stored_as_run_and_the_plugin_store_its_regression_case(pytester, monkeypatch, tmp_path):
    """A campaign's finding is recorded as its regression case, run and judged by the runner's
    worker code: replaying that case with `run --regressions` and the plugin gives the same row
    and the same bundle, byte for byte."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    regressions, fuzz_store = tmp_path / "regressions", tmp_path / "fuzz" / "f.sqlite"
    cmd = [sys.executable, "-m", "harness.cli", "fuzz", "--backend", BACKEND, "--budget", "8s", "--seed", "1", "--ops", "Relu",
           "--patterns", "none", "--max-nodes", "1", "--dtypes", "float32", "--regressions", str(regressions), "--store", str(fuzz_store)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr  # a finding
    [folder] = [p for p in regressions.iterdir() if p.name.startswith("Relu.")]
    case = f"generated/regression/{folder.name}"
    found, found_bundle = stored(fuzz_store, case)
    assert found["outcome"] == "mismatch" and "graph.txt" in found_bundle and "actual/output_0.pb" in found_bundle, (found, sorted(found_bundle))
    more = ("--regressions", str(regressions))
    ran, ran_bundle = stored(by_run(tmp_path / "corpus", tmp_path / "run", suite="generated", case=f"^{case}$", more=more))
    plugged, plugged_bundle = stored(by_plugin(pytester, tmp_path / "corpus", suite="generated", case=f"^{case}$",
                                               more=("--harness-regressions", str(regressions))))
    assert ran == found and plugged == found
    assert sorted(ran_bundle) == sorted(found_bundle) == sorted(plugged_bundle)
    differing = [name for name in found_bundle if not found_bundle[name] == ran_bundle[name] == plugged_bundle[name]]
    assert not differing, differing
