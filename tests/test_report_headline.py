"""Headline numbers that hide nothing: conformance over what was attempted, with wrong answers,
missing kernels and errors as their own shares (expected failures counted as what they were),
refused invalid models and unspecified results shown apart; the terminal, the run's JSON,
results.json, summary.md and the HTML report agree."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import pytest

from harness.cli import backend_counts, print_summary, write_run_json
from harness.report import write_all
from harness.report.matrix import build_report
from harness.report.sources import RunRef
from harness.store import Store

from .test_report_matrix import MISMATCH, add_run, res

# 16 results of one backend: 4 passes (one an xpass), 3 wrong answers (one expected), 3 missing
# kernels (one expected), 2 errors, 2 refused models (one expected), 1 unspecified, 1 skip
OUTCOMES = [("pass", "pass"), ("pass", "pass"), ("pass", "pass"), ("xpass", "pass"), ("mismatch", "mismatch"), ("wrong-shape", "wrong-shape"),
            ("xfail", "mismatch"), ("unsupported", "unsupported"), ("unsupported", "unsupported"), ("xfail", "unsupported"),
            ("error", "error"), ("crash", "crash"), ("rejected", "rejected"), ("xfail", "rejected"), ("unspecified", "unspecified"),
            ("skip", "skip")]
EXPECTED = {"attempted": 12, "passed": 4, "conformance": 4 / 12, "wrong_answers": 3, "wrong_answer_share": 3 / 12,
            "not_implemented": 3, "not_implemented_share": 3 / 12, "errors": 2, "error_share": 2 / 12, "refused": 2, "unspecified": 1,
            "unchecked": 0}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "reports" / "results.sqlite")
    add_run(s, [res(f"operators/Relu-14/opset14/float32/{n}", "onnxruntime", outcome, raw=raw, message=f"{raw} {n}",
                    verdict=MISMATCH if raw == "mismatch" else None) for n, (outcome, raw) in enumerate(OUTCOMES)],
            {"onnxruntime": (True, "", "1.32.0")})
    return s


def test_headline_numbers_agree_everywhere(store, tmp_path):
    terminal = backend_counts(store, 1)["onnxruntime"]["headline"]
    assert terminal == pytest.approx(EXPECTED)
    assert json.loads(write_run_json(store, 1).read_text())["summary"]["onnxruntime"]["headline"] == pytest.approx(EXPECTED)
    report = build_report([RunRef(store.path, 1)])
    backend = report.backend("onnxruntime")
    assert backend.headline == pytest.approx(EXPECTED)
    assert backend.pass_rate == pytest.approx(4 / 12) and backend.loadable == 12  # the pass rate is the conformance
    out = tmp_path / "out"
    write_all(report, out)
    assert json.loads((out / "results.json").read_text())["backends"][0]["headline"] == pytest.approx(EXPECTED)

    html = (out / "index.html").read_text()
    card = re.search(r'<article class="backend" data-backend="onnxruntime">(.*?)</article>', html, re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", " ", card).split())
    assert "33.3 % conformance: passes of 12 attempted" in text
    for words in ("wrong answers 3 (25.0 %)", "not implemented 3 (25.0 %)", "errors 2 (16.7 %)", "2 refused (invalid model)", "unspecified 1 (apart)"):
        assert words in text, (words, text)

    md = (out / "summary.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| onnxruntime"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:6] == ["33.3 % of 12", "3 (25.0 %)", "3 (25.0 %)", "2 (16.7 %)", "2"]

    buf = io.StringIO()
    with redirect_stdout(buf):
        print_summary(store, 1)
    row = next(line for line in buf.getvalue().splitlines() if line.startswith("| onnxruntime"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:7] == ["33.3% of 12", "3 (25.0%)", "3 (25.0%)", "2 (16.7%)", "2", "1"]


def test_the_runs_json_holds_every_stored_result_as_the_store_reads_it(store, tmp_path):
    """The run's JSON writes each result from the store's JSON columns as stored: parsed back, it
    is what ``Store.results`` parses (a verdict, timing, restamp and tags as objects, an empty one
    as {}, NaN kept), with the machine's paths in messages and bundles made portable."""
    import math

    from harness.report.sources import _run_root, portable_bundle, portable_text

    add_run(store, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "mismatch", verdict=MISMATCH, timing={"peak_rss": 7},
                        restamp={"opset": [14, 13]}, message=f"see {tmp_path}/reports/x.txt", bundle=str(tmp_path / "reports" / "bundle-1")),
                    res("operators/Relu-14/opset14/float32/1", "onnxruntime", "pass", verdict={"max_abs": float("nan")})],
            {"onnxruntime": (True, "", "1.32.0")})
    doc = json.loads(write_run_json(store, 2).read_text())
    root = _run_root(store.path, store.run(2)["args"]["store"])
    stored = [{**r, "bundle": portable_bundle(r["bundle"], root) or None, "message": portable_text(r["message"], root)} for r in store.results(2)]
    assert doc["results"][0]["restamp"] == {"opset": [14, 13]} and doc["results"][0]["timing"] == {"peak_rss": 7}
    assert doc["results"][1]["restamp"] == {} and math.isnan(doc["results"][1]["verdict"].pop("max_abs"))
    assert math.isnan(stored[1]["verdict"].pop("max_abs"))
    assert doc["results"] == stored and str(tmp_path) not in doc["results"][0]["message"] + doc["results"][0]["bundle"]
