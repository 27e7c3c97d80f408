"""The report writers: index.html (self-contained, escaped, compact), summary.md, results.json,
junit.xml; and a synthetic store of 50,000 results that must render under 10 MB."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET

import pytest

from harness.report import write_all, writers
from harness.report.html import page_data, render
from harness.report.markdown import MAX_CHARS
from harness.report.matrix import build_report
from harness.report.sources import RunRef
from harness.store import Store

from .test_report_matrix import MISMATCH, add_run, make_large_store, make_store, res

RELU1 = "operators/Relu-14/opset14/float32/1"


@pytest.fixture
def report(tmp_path):
    path = make_store(tmp_path)
    return build_report([RunRef(path, 2)], baseline=RunRef(path, 1))


def embedded(html: str) -> dict:
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "no embedded data"
    return json.loads(m.group(1))


def decode(data: dict) -> tuple[list[str], dict]:
    """The page's own decoding (report.js), in Python: front-coded ids, sparse columns, deltas."""
    ids, prev = [], ""
    for p, s in zip(data["cases"]["id"]["p"], data["cases"]["id"]["s"]):
        prev = prev[:p] + s
        ids.append(prev)
    res = data["res"]
    n = len(res["b"])
    cols = {}
    for key, col in res.items():
        if isinstance(col, dict):
            dense, p = [col["d"]] * n, 0
            for gap, v in zip(col["i"], col["v"]):
                p += gap
                dense[p] = v
            col = dense
        cols[key] = list(col)
    for k in range(1, n):
        cols["c"][k] += cols["c"][k - 1]
    return ids, cols


def test_every_writer_writes_its_file(report, tmp_path):
    out = tmp_path / "out"
    paths = write_all(report, out)
    assert sorted(p.name for p in paths) == ["index.html", "junit.xml", "results.json", "summary.md"]
    assert {w.name for w in writers()} == {"html", "markdown", "json", "junit"}
    assert [p.name for p in write_all(report, tmp_path / "only", only=["markdown"])] == ["summary.md"]


def test_html_is_one_self_contained_file(report):
    html = render(report)
    # no external resource of any kind: scripts, styles, images, fonts, frames
    assert not re.search(r'\b(src|href)\s*=\s*["\']?(https?:|//)', html, re.I)
    assert not re.search(r'<link[^>]+stylesheet|@import|url\((?!["\']?data:)', html, re.I)
    assert "<script src" not in html and "<iframe" not in html
    assert html.count("<svg") >= 2  # history and model charts are inline SVG
    assert '<link rel="icon" href="data:,">' in html  # no favicon request either


def test_html_escapes_what_the_store_holds(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    evil = "operators/Relu-14/opset14/float32/</script><img src=x onerror=alert(1)>"
    add_run(s, [res(evil, "reference", "error", message="<script>alert('x')</script> & more"),
                res(evil, "onnxruntime", "pass")],
            {"reference": (True, "", "<i>v1</i>"), "onnxruntime": (True, "", "1.31.1")})
    html = render(build_report([RunRef(s.path, 1)]))
    assert "<script>alert" not in html and "<img src=x" not in html and "<i>v1</i>" not in html
    assert "&lt;i&gt;v1&lt;/i&gt;" in html  # the version, escaped by autoescape
    ids, cols = decode(embedded(html))
    assert ids == [evil]  # and the data still carries the exact text
    assert "<script>alert('x')</script> & more" in embedded(html)["S"]


def test_embedded_data_round_trips_the_store(report):
    data = page_data(report)
    data = json.loads(json.dumps(data))
    ids, cols = decode(data)
    labels = [b["label"] for b in data["backends"]]
    S = data["S"]
    assert len(cols["b"]) == len(report.results) == 14
    by = {(ids[c], labels[b]): k for k, (c, b) in enumerate(zip(cols["c"], cols["b"]))}
    k = by[("operators/Relu-14/opset14/float32/0", "onnxruntime")]
    assert data["outcomes"][cols["o"][k]] == "mismatch"
    assert cols["ma"][k] == 0.5 and cols["mu"][k] == 4194304 and cols["bc"][k] == 2 and cols["tot"][k] == 3
    assert S[cols["fb"][k]] == "[1]" and S[cols["m"][k]] == "values differ now"
    assert S[cols["bd"][k]].endswith("run-2/onnxruntime") and S[cols["bn"][k]] == "relu0"
    x = by[("operators/Clip-11/opset13/float32/1", "reference")]
    assert data["outcomes"][cols["o"][x]] == "xfail" and data["outcomes"][cols["ro"][x]] == "mismatch"
    assert S[cols["rs"][x]].startswith("clip ties")
    assert cols["only"][by[(RELU1, "onnxruntime")]] == 0  # passes on onnxruntime in run 2
    assert cols["only"][k] == 1
    # timings travel in microseconds (3 significant digits)
    assert cols["rt"][by[("onnx-light/test_tiny_net", "reference")]] == 500000
    assert {k: n for k, n in data["diff"]["counts"].items() if n} == {"regressed": 1, "failure-changed": 1, "removed": 2, "improved": 1, "new": 2}


def test_unavailable_backend_shows_its_reason_never_zero_percent(report):
    html = render(report)
    card = re.search(r'<article class="backend unavailable" data-backend="vendor">(.*?)</article>', html, re.S).group(1)
    assert "unavailable" in card and "vendor-sdk is not installed" in card
    assert "%" not in card


def test_markdown_summary_regressions_first_with_bundle_links(report, tmp_path):
    out = tmp_path / "out"
    write_all(report, out, only=["markdown"])
    md = (out / "summary.md").read_text()
    assert md.startswith("## ONNX conformance: run 2 (against run 1)")
    # run 2, reference: 5 pass of 7 loadable (a crash and an xfail besides)
    assert re.search(r"^\| reference 1\.23\.2 +\| 71\.4 ?% of 7 ", md, re.M), md
    assert "vendor** unavailable: vendor-sdk is not installed" in md
    # each kind of regression in its own section, in the table's order
    assert (md.index("### Regressions: regressed, pass -> failure (1)") < md.index("### Regressions: failure-changed")
            < md.index("### Regressions: removed") < md.index("### Improvements (1)") < md.index("### Failures by cause"))
    assert "test_skip_me" in md[md.index("### Regressions: removed"):md.index("### Improvements")]
    regression = md[md.index("### Regressions: regressed"):md.index("### Regressions: failure-changed")]
    assert "operators/Relu-14/opset14/float32/0" in regression and "pass → mismatch" in regression
    assert "[repro](../reports/bundles/run-2/onnxruntime/relu0)" in regression
    # failures by cause: wrong answers first (two messages, two groups), then the crash, the refusal, the xfail
    causes = md[md.index("### Failures by cause"):md.index("### Speed")]
    rows = [line for line in causes.splitlines() if line.startswith("| ")][1:]
    assert [[c.strip() for c in row.strip("|").split("|")][:5] for row in rows] == [
        ["onnxruntime", "wrong answer", "Clip", "mismatch", "1"], ["onnxruntime", "wrong answer", "Relu", "mismatch", "1"],
        ["reference", "error", "Clip", "crash", "1"], ["onnxruntime", "refused", "Relu", "rejected", "1"],
        ["reference", "expected failure", "Clip", "xfail", "1"]]
    assert "worker died (signal N)" in rows[2] and "[repro](../reports/bundles/run-2/onnxruntime/relu0)" in rows[1]
    assert "None" not in md and "(not run) → " not in regression
    assert len(md) < MAX_CHARS


def test_markdown_links_work_from_the_summary_wherever_it_is_written(report, tmp_path):
    """summary.md written far from the bundles (no common parent but the root of the test
    folder): every link is relative and leads to the bundle; no ``None`` for a side without the case."""
    out = tmp_path / "elsewhere" / "deep" / "out"
    write_all(report, out, only=["markdown"])
    md = (out / "summary.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", md)
    bundles = {(out / link).resolve() for link in links if "bundles" in link}
    assert bundles == {tmp_path / "reports" / "bundles" / "run-2" / "onnxruntime" / "relu0"}
    assert {"index.html", "results.json", "junit.xml"} <= set(links) and not any(link.startswith("/") for link in links)
    assert "None" not in md and "test_skip_me` | onnxruntime | skip → (not run)" in md


def _tables(md: str) -> list[list[list[str]]]:
    """The GitHub tables of a Markdown text, split into cells the way GitHub splits them: at
    every pipe not escaped by a backslash; a table ends at the first line not starting with one."""
    tables, current = [], None
    for line in md.split("\n"):
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        else:
            current = None
    return tables


def test_markdown_cells_with_pipes_and_newlines_keep_the_table_intact(tmp_path):
    weird = "generated/a|b\nc|d/0"
    message = "expected | got\nrow 2 | x\n\n| not a row |"
    s = Store(tmp_path / "r.sqlite")
    backends = {"ref|erence": (True, "", "1.|2"), "vendor": (False, "needs a|b\n| c |", "")}
    add_run(s, [res(weird, "ref|erence", "pass"), res("generated/plain/0", "ref|erence", "pass")], backends)
    add_run(s, [res(weird, "ref|erence", "mismatch", message=message, verdict=MISMATCH, bundle=str(tmp_path / "b|1")),
                res("generated/plain/0", "ref|erence", "error", message="boom | bang")], backends)
    report = build_report([RunRef(tmp_path / "r.sqlite", 2)], baseline=RunRef(tmp_path / "r.sqlite", 1))
    out = tmp_path / "out"
    write_all(report, out, only=["markdown"])
    md = (out / "summary.md").read_text()
    tables = _tables(md)
    # totals, regressions, failures by op-version: each row as wide as its header
    assert len(tables) == 3, md
    for table in tables:
        assert {len(row) for row in table} == {len(table[0])}, table
    totals, regressions, groups = tables
    assert [row[0] for row in totals[2:]] == ["ref|erence 1.|2", "vendor"]
    assert len(regressions) == 2 + 2
    assert regressions[2][0] == "`generated/a|b c|d/0`"
    assert regressions[3][0] == "`generated/plain/0`" and regressions[3][3] == "boom | bang"
    assert regressions[2][3] == "expected | got row 2 | x | not a row |" and regressions[2][4] == "[repro](../b%7C1)"
    assert [row[0] for row in groups[2:]] == ["ref|erence", "ref|erence"]
    assert "- **vendor** unavailable: needs a\\|b \\| c \\|\n" in md


def test_results_json_holds_everything_and_no_invalid_numbers(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "reference", "mismatch",
                    verdict={"max_abs": float("inf"), "max_rel": float("nan"), "bad_count": 1, "total": 3})],
            {"reference": (True, "", "1.23.2")})
    report = build_report([RunRef(s.path, 1)])
    write_all(report, tmp_path, only=["json"])
    text = (tmp_path / "results.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    doc = json.loads(text)
    assert doc["format"] == "onnx-harness-report/1"
    assert doc["results"][0]["max_abs"] == "inf" and doc["results"][0]["column"] == "reference"
    assert doc["backends"][0]["pass_rate"] == 0.0 and doc["backends"][0]["counts"] == {"mismatch": 1}


def test_junit_counts_failures_errors_and_skips_per_backend(report, tmp_path):
    write_all(report, tmp_path, only=["junit"])
    root = ET.parse(tmp_path / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    ref, ort, vendor = suites["reference"], suites["onnxruntime"], suites["vendor"]
    # run 2: reference 5 pass, a crash (failure), an xfail (skipped); onnxruntime 2 mismatch, 1 rejected (skipped)
    assert (ref.get("tests"), ref.get("failures"), ref.get("errors"), ref.get("skipped")) == ("7", "1", "0", "1")
    assert (ort.get("tests"), ort.get("failures"), ort.get("errors"), ort.get("skipped")) == ("7", "2", "0", "1")
    assert vendor.get("tests") == "0"
    assert any(p.get("name") == "unavailable_reason" and "vendor-sdk" in p.get("value") for p in vendor.iter("property"))
    case = next(c for c in ort.iter("testcase") if c.get("name") == "operators/Relu-14/opset14/float32/0")
    failure = case.find("failure")
    assert failure.get("type") == "mismatch"
    # portable commands and the bundle relative to the folder the run started in; no machine path
    assert "\nreproduce: onnx-harness repro operators/Relu-14/opset14/float32/0 --backend onnxruntime -o repro\n" in failure.text
    assert "\nre-run: onnx-harness run --suite operators --backend onnxruntime -k '^operators/Relu\\-14/opset14/float32/0$'\n" in failure.text
    assert failure.text.rstrip().endswith("repro bundle: reports/bundles/run-2/onnxruntime/relu0 (python reports/bundles/run-2/onnxruntime/relu0/repro.py)")
    assert str(tmp_path) not in failure.text
    assert root.get("tests") == "14"


def test_junit_failures_are_wrong_answers_and_errors_never_missing_kernels(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    op = lambda n: f"operators/ArgMax-13/opset13/float16/{n}"  # noqa: E731
    results = [res(op(0), "onnxruntime", "mismatch", verdict=MISMATCH, message="values differ"),
               res(op(1), "onnxruntime", "wrong-shape", message="shape (2,) expected (3,)"),
               res(op(2), "onnxruntime", "error", message="RUNTIME_EXCEPTION boom"),
               res(op(3), "onnxruntime", "timeout", message="no answer in 60 s")]
    results += [res(op(10 + k), "onnxruntime", "unsupported", run_s=None,
                    message=f"NOT_IMPLEMENTED : Could not find an implementation for ArgMax(13) node {k}") for k in range(5)]
    results += [res(op(20), "onnxruntime", "xfail", raw="mismatch", reason="ties (https://example.org/2)"),
                res(op(21), "onnxruntime", "rejected", message="INVALID_GRAPH", run_s=None),
                res(op(22), "onnxruntime", "unspecified", message="spec-silent point ArgMax.nan"),
                res(op(23), "onnxruntime", "pass")]
    add_run(s, results, {"onnxruntime": (True, "", "1.32.0"), "reference": (True, "", "1.23.2")})
    add_run(s, [res(op(0), "reference", "pass"), res(op(1), "reference", "unsupported", message="no kernel")],
            {"reference": (True, "", "1.23.2")})
    report = build_report([RunRef(s.path, 1), RunRef(s.path, 2)])
    write_all(report, tmp_path, only=["junit"])
    root = ET.parse(tmp_path / "junit.xml").getroot()
    suites = {x.get("name"): x for x in root.findall("testsuite")}
    assert sorted(suites) == ["onnxruntime", "reference"]
    ort = suites["onnxruntime"]
    # 4 wrong answers and errors; 5 missing kernels, the xfail and the rejected model are skipped
    assert (ort.get("tests"), ort.get("failures"), ort.get("errors"), ort.get("skipped")) == ("13", "4", "0", "7")
    assert len(ort.findall("testcase/failure")) == 4 and not ort.findall("testcase/error")
    skipped = {c.get("name"): c.find("skipped").get("message") for c in ort.iter("testcase") if c.find("skipped") is not None}
    assert skipped[op(10)].startswith("unsupported: NOT_IMPLEMENTED") and skipped[op(20)] == "expected failure (mismatch): ties (https://example.org/2)"
    unspecified = next(c for c in ort.iter("testcase") if c.get("name") == op(22))
    assert unspecified.find("failure") is None and unspecified.find("skipped") is None and "not a failure" in unspecified.find("system-out").text
    assert (suites["reference"].get("failures"), suites["reference"].get("skipped")) == ("0", "1")
    assert (root.get("failures"), root.get("errors"), root.get("skipped")) == ("4", "0", "8")


def test_fifty_thousand_results_render_under_ten_megabytes(tmp_path):
    path = make_large_store(tmp_path / "big.sqlite", 50_000)
    t0 = time.perf_counter()
    report = build_report([RunRef(path, 1)])
    paths = {p.name: p for p in write_all(report, tmp_path / "out", only=["html", "markdown"])}
    seconds = time.perf_counter() - t0
    size = paths["index.html"].stat().st_size
    print(f"50,000 results: index.html {size / 1e6:.2f} MB, built and rendered in {seconds:.1f} s")
    assert len(report.results) == 50_000
    assert size < 10_000_000
    assert len(paths["summary.md"].read_text()) < MAX_CHARS
    data = embedded(paths["index.html"].read_text())
    ids, cols = decode(data)
    assert len(cols["b"]) == 50_000 and len(ids) == 25_000


def test_markdown_table_widths_are_bounded(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    long_id = "generated/" + "Add+Relu+" * 60 + "/0"
    add_run(s, [res(long_id, "reference", "mismatch", message="x" * 5000, verdict=MISMATCH, bundle=str(tmp_path / ("b" * 400))),
                res("operators/Relu-14/opset14/float32/0", "reference", "error", message="y " * 3000)],
            {"reference": (True, "", "1.23.2")})
    write_all(build_report([RunRef(s.path, 1)]), tmp_path / "out", only=["markdown"])
    md = (tmp_path / "out" / "summary.md").read_text()
    assert max(len(line) for line in md.splitlines()) < 700, max(md.splitlines(), key=len)
    assert "…" in md  # cut, not dropped


def test_single_unwarmed_timings_carry_a_warning(report, tmp_path):
    # run 2: every timing is one run of its data sets (the one median of run 1 belonged to a case that now fails)
    single, total = report.perf.unwarmed()
    assert (single, total) == (total, total) and total > 0
    write_all(report, tmp_path / "out", only=["markdown", "html"])
    md = (tmp_path / "out" / "summary.md").read_text()
    assert f"_Warning: {single:,} of {total:,} timings are a single unwarmed run (no `--repeat`)" in md
    assert f'<p class="warn" id="perf-warning">{single:,} of {total:,} timings' in (tmp_path / "out" / "index.html").read_text()
    path = make_store(tmp_path / "r1", runs=1)  # run 1 has one median of timed repeats
    assert build_report([RunRef(path, 1)]).perf.unwarmed()[0] == build_report([RunRef(path, 1)]).perf.unwarmed()[1] - 1


def test_a_failing_case_whose_expectation_names_a_finding_links_it(tmp_path):
    from harness import findings
    from harness.expectations import load

    case = "operators/NonZero-13/opset13/float32/scalar"
    (entry,) = [e for e in load(["onnxruntime"]) if e.case == "operators/NonZero-*/*/*/scalar"]
    reason = entry.reason + f" ({entry.link})"
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res(case, "onnxruntime", "xfail", raw="wrong-shape", reason=reason),
                res(case, "reference", "pass"),
                res("operators/NonZero-13/opset13/float32/scalar_zero", "onnxruntime", "xfail", raw="wrong-shape", reason="another reason")],
            {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")})
    data = json.loads(json.dumps(page_data(build_report([RunRef(s.path, 1)]))))
    ids, cols = decode(data)
    labels = [b["label"] for b in data["backends"]]
    by = {(ids[c], labels[b]): k for k, (c, b) in enumerate(zip(cols["c"], cols["b"]))}
    linked = json.loads(data["S"][cols["fd"][by[(case, "onnxruntime")]]])
    record = findings.load()["onnxruntime-nonzero-scalar-shape"]
    assert linked == {k: record[k] for k in ("id", "title", "upstream")}
    assert cols["fd"][by[(case, "reference")]] == -1  # a pass names no finding
    assert cols["fd"][by[("operators/NonZero-13/opset13/float32/scalar_zero", "onnxruntime")]] == -1  # another entry decided it
    assert "findingLink(i)" in render(build_report([RunRef(s.path, 1)]))


def test_known_failures_carry_their_reason_link_and_finding_in_groups_summary_and_junit(tmp_path):
    from harness.expectations import load

    (entry,) = [e for e in load(["onnxruntime"]) if e.case == "operators/NonZero-*/*/*/scalar"]
    reason = entry.reason + f" ({entry.link})"
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res("operators/NonZero-13/opset13/float32/scalar", "onnxruntime", "xfail", raw="wrong-shape", reason=reason, message="shape [] vs [1]"),
                res("operators/NonZero-13/opset13/float32/scalar", "reference", "pass")],
            {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")})
    report = build_report([RunRef(s.path, 1)])
    (group,) = report.failure_groups()
    assert group.known == {"reason": entry.reason, "link": entry.link, "finding": "onnxruntime-nonzero-scalar-shape", "others": ""}
    write_all(report, tmp_path / "out")
    md = (tmp_path / "out" / "summary.md").read_text()
    row = next(line for line in md.splitlines() if "| NonZero" in line)
    assert f"[link]({entry.link})" in row and "(finding `onnxruntime-nonzero-scalar-shape`)" in row and entry.reason[:40] in row
    html = (tmp_path / "out" / "index.html").read_text()
    assert f'<span class="link">{entry.link}</span>' in html and "finding <code>onnxruntime-nonzero-scalar-shape</code>" in html
    skipped = ET.parse(tmp_path / "out" / "junit.xml").getroot().find(".//testcase/skipped")
    assert skipped.get("message").endswith(f"{entry.link}) [finding onnxruntime-nonzero-scalar-shape]")
