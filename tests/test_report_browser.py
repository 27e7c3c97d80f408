"""The HTML report in a real browser: headless Chromium opens index.html from disk, a filter
and a drill-down work, the numbers shown are the store's, and the page logs no error and
requests nothing but its own file.

Needs Debian's chromium and chromium-driver and selenium (the 'test' extra); skipped otherwise.
"""

from __future__ import annotations

import json
import time

import pytest

from harness.report.browser import BrowserUnavailable, chromium, find_chromium, wait_ready

try:
    find_chromium()
except BrowserUnavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no headless browser: {exc}", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from harness.report.matrix import build_report
from harness.report.sources import RunRef
from harness.report.html import HtmlWriter  # noqa: E402
from harness.store import Store  # noqa: E402

from .test_report_diff import cli  # noqa: E402
from .test_report_matrix import make_large_store, make_store  # noqa: E402

REGRESSED = "operators/Relu-14/opset14/float32/0"


def console_problems(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def requests(driver) -> list[tuple[str, str]]:
    """(url, document that asked) for every request the browser sent (DevTools performance log)."""
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            out.append((msg["params"]["request"]["url"], msg["params"].get("documentURL", "")))
    return out


def assert_no_network(driver, url: str) -> None:
    sent = requests(driver)
    # nothing left the machine, whoever asked (the browser's own new-tab page included)
    assert not [u for u, _ in sent if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")], sent
    # and the report asked for nothing but itself
    assert {u for u, doc in sent if doc == url and not u.startswith("data:")} == {url}, sent
    assert driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)") == []


def shown(driver) -> str:
    return driver.find_element(By.ID, "shown").text


def wait_for(driver, condition, timeout: float = 20):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def _float(text: str) -> float:
    return float(text.replace(",", "").split()[0])


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    store = make_store(tmp)
    out = tmp / "out"
    assert cli(["report", "--store", str(store), "-o", str(out)]) == 0
    return store, out


def test_filter_and_drill_down_show_the_store_numbers(report_dir):
    store_path, out = report_dir
    url = (out / "index.html").resolve().as_uri()
    stored = next(r for r in Store(store_path).results(2) if r["case_id"] == REGRESSED and r["backend"] == "onnxruntime")
    with chromium() as driver:
        driver.get(url)
        wait_ready(driver)
        assert shown(driver) == "16 of 16 results"

        # the unavailable backend: its reason, never a percentage
        card = driver.find_element(By.CSS_SELECTOR, 'article[data-backend="vendor"]').text
        assert "unavailable" in card and "vendor-sdk is not installed" in card and "%" not in card

        # the matrix cell (Relu, 14, onnxruntime) against the store
        rows = driver.find_elements(By.CSS_SELECTOR, "#matrix-table tbody tr")
        texts = [[td.get_attribute("textContent") for td in r.find_elements(By.TAG_NAME, "td")] for r in rows]
        relu14 = next(t for t in texts if t[:2] == ["Relu", "14"])  # op, version, reference, onnxruntime, vendor
        assert relu14[2:4] == ["2/2", "1/2"] and relu14[4] == "–"

        # filter: search, then drop the passes
        driver.find_element(By.ID, "q").send_keys("relu-14")
        wait_for(driver, lambda d: shown(d) == "4 of 16 results")
        driver.find_element(By.CSS_SELECTOR, "#f-outcome summary").click()
        driver.find_element(By.CSS_SELECTOR, "#f-outcome input[value='pass']").click()
        wait_for(driver, lambda d: shown(d) == "1 of 16 results")
        case_rows = driver.find_elements(By.CSS_SELECTOR, "#case-table tbody tr")
        assert len(case_rows) == 1 and REGRESSED in case_rows[0].text

        # drill down into the one result left
        driver.find_element(By.CSS_SELECTOR, "#case-table .badge:not(.dim)").click()
        wait_for(driver, lambda d: d.find_element(By.ID, "drill").is_displayed())
        field = lambda name: driver.find_element(By.CSS_SELECTOR, f"#drill-body [data-field='{name}']").text  # noqa: E731
        assert driver.find_element(By.ID, "drill-title").text == REGRESSED
        assert field("outcome") == stored["outcome"] == "mismatch"
        assert _float(field("max_abs")) == pytest.approx(stored["max_abs"], rel=1e-3)
        assert _float(field("max_rel")) == pytest.approx(stored["max_rel"], rel=1e-3)
        assert _float(field("max_ulp")) == stored["max_ulp"]
        assert field("bad_count") == f"{stored['bad_count']} of {stored['verdict']['total']}"
        assert field("first_bad") == stored["first_bad"]
        assert field("message") == stored["message"]
        # the bundle relative to the folder the run started in, never the machine's path
        assert field("command") == "python reports/bundles/run-2/onnxruntime/relu0/repro.py"
        assert stored["bundle"].endswith(field("bundle")) and not field("bundle").startswith("/")
        assert field("expected").startswith("pass")
        assert "case=" in driver.current_url.split("#", 1)[1]

        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        wait_for(driver, lambda d: not d.find_element(By.ID, "drill").is_displayed())

        # other views and the diff section render
        driver.find_element(By.CSS_SELECTOR, "#views button[data-view='dtype']").click()
        assert "dtype" in driver.find_element(By.CSS_SELECTOR, "#matrix-table thead").text
        assert "regressed 1" in driver.find_element(By.ID, "diff-kinds").text

        assert console_problems(driver) == []
        assert_no_network(driver, url)


def test_case_list_messages_and_group_by_cause(report_dir):
    _, out = report_dir
    url = (out / "index.html").resolve().as_uri()
    with chromium() as driver:
        driver.set_window_size(1200, 800)  # the filter bar wraps to two lines here
        driver.get(url)
        wait_ready(driver)
        # the message column: the first listed non-pass's message, with its backend
        rows = driver.find_elements(By.CSS_SELECTOR, "#case-table tbody tr")
        clip0 = next(r for r in rows if r.find_element(By.CSS_SELECTOR, "td.case").text == "operators/Clip-11/opset13/float32/0")
        assert clip0.find_element(By.CSS_SELECTOR, "td.msg").text == "reference: worker died (signal 11)"
        # group by cause: wrong answers first, each group once, counts of the listed results
        driver.execute_script("const s = document.getElementById('cases-groupby'); s.value = 'cause'; s.dispatchEvent(new Event('change'));")
        cells = lambda: [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in driver.find_elements(By.CSS_SELECTOR, "#case-table tbody tr")]  # noqa: E731
        groups = cells()
        assert [g[:5] for g in groups] == [["onnxruntime", "wrong answer", "Clip", "mismatch", "1"], ["onnxruntime", "wrong answer", "Relu", "mismatch", "1"],
                                           ["reference", "error", "Clip", "crash", "1"], ["onnxruntime", "refused", "Relu", "rejected", "1"],
                                           ["reference", "expected failure", "Clip", "xfail", "1"]]
        assert groups[2][6] == "worker died (signal N)"
        # a group's count lists its cases, back in the case view, with a chip that removes the filter
        link = driver.find_elements(By.CSS_SELECTOR, "#case-table a[data-g]")[2]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
        link.click()
        wait_for(driver, lambda d: d.find_element(By.ID, "groupfilter").is_displayed())
        assert driver.find_element(By.ID, "groupfilter").text == "reference: Clip crash for float32 ×"
        assert shown(driver) == "1 of 16 results"
        assert [r[0] for r in cells()] == ["operators/Clip-11/opset13/float32/0"]
        # the section above the case list links to the same groups
        assert len(driver.find_elements(By.CSS_SELECTOR, "#causes tbody tr")) == 5
        chip = driver.find_element(By.ID, "groupfilter")
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", chip)  # scrolled to the top: below the sticky bar
        covered = driver.execute_script("const r = arguments[0].getBoundingClientRect(); const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
                                        " return !(e === arguments[0] || arguments[0].contains(e));", chip)
        assert not covered, "the sticky filter bar covers the cause filter chip"
        chip.click()
        wait_for(driver, lambda d: shown(d) == "16 of 16 results")
        assert console_problems(driver) == []


def test_layout_sticky_bar_failures_only_and_single_backend_timings(report_dir):
    _, out = report_dir
    url = (out / "index.html").resolve().as_uri()
    with chromium() as driver:
        driver.set_window_size(1200, 800)
        driver.get(url)
        wait_ready(driver)
        # a jump to the matrix leaves its view tabs below the sticky filter bar, clickable
        driver.find_element(By.CSS_SELECTOR, "nav.toc a[href='#matrix']").click()
        wait_for(driver, lambda d: d.execute_script("return window.scrollY") > 0)
        tab = driver.find_element(By.CSS_SELECTOR, "#views button[data-view='dtype']")
        hit = driver.execute_script("const r = arguments[0].getBoundingClientRect(); const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
                                    " return e === arguments[0] || arguments[0].contains(e);", tab)
        assert hit, "the filter bar covers the view tabs"
        tab.click()
        assert "dtype" in driver.find_element(By.CSS_SELECTOR, "#matrix-table thead").text
        driver.find_element(By.CSS_SELECTOR, "#views button[data-view='op-version']").click()
        # a case timed on one backend only is not "fastest"
        perf = {r.find_element(By.CSS_SELECTOR, "td.case").get_attribute("textContent"): [td.get_attribute("textContent") for td in r.find_elements(By.TAG_NAME, "td")]
                for r in driver.find_elements(By.CSS_SELECTOR, "#perf-table tbody tr")}
        only = [cells for cells in perf.values() if "only" in cells]
        assert only and all("fastest" not in cells for cells in only)
        assert "fastest" in perf["onnx-light/test_tiny_net"]
        # one mark for a missing value in every table (reference timed Relu-6 float16, onnxruntime refused it: no ratio)
        cells = driver.execute_script("return [...document.querySelectorAll('td')].map(td => td.textContent.trim())")
        assert "–" in perf["operators/Relu-6/opset13/float16/0"] and "-" not in cells
        # "failures only": cells count the failures, never "0/N"
        driver.execute_script("const c = document.getElementById('f-fail'); c.checked = true; c.dispatchEvent(new Event('change'));")
        texts = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "#matrix-table .ctext")]
        assert texts and all(t.endswith(" failing") for t in texts), texts
        assert not any(t.startswith("0/") for t in texts)
        rows = driver.find_elements(By.CSS_SELECTOR, "#matrix-table tbody tr")
        relu14 = next(r for r in rows if [td.get_attribute("textContent") for td in r.find_elements(By.TAG_NAME, "td")][:2] == ["Relu", "14"])
        assert [td.get_attribute("textContent") for td in relu14.find_elements(By.TAG_NAME, "td")][2:4] == ["–", "1 failing"]
        assert console_problems(driver) == []


def test_screenshots_flag_writes_two_pngs(report_dir, capsys):
    store_path, out = report_dir
    assert cli(["report", "--store", str(store_path), "-o", str(out), "--screenshots"]) == 0
    for name in ("screenshot-first.png", "screenshot-drilldown.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert "screenshot-drilldown.png" in capsys.readouterr().out


def test_fifty_thousand_results_open_and_filter(tmp_path):
    path = make_large_store(tmp_path / "big.sqlite", 50_000)
    report = build_report([RunRef(path, 1)], history=False)
    index = HtmlWriter().write(report, tmp_path)
    expected = sum(1 for r in report.results if "relu" in r["case_id"].lower() and "float16" in r["case_id"])
    with chromium() as driver:
        driver.get(index.resolve().as_uri())
        loaded = wait_ready(driver)
        assert shown(driver) == "50,000 of 50,000 results"
        t0 = time.perf_counter()
        driver.find_element(By.ID, "q").send_keys("relu float16")
        wait_for(driver, lambda d: shown(d) == f"{expected:,} of 50,000 results")
        filtered = time.perf_counter() - t0
        driver.find_element(By.ID, "f-only").click()
        driver.find_elements(By.CSS_SELECTOR, "#case-table .badge:not(.dim)")[0].click()
        wait_for(driver, lambda d: d.find_element(By.ID, "drill").is_displayed())
        assert console_problems(driver) == []
    print(f"50,000 results: {index.stat().st_size / 1e6:.2f} MB, interactive after {loaded:.2f} s, search applied in {filtered:.2f} s")
    # no wall-clock bound: a frozen page never becomes ready, and wait_ready raises after 60 s


# -- "Done means": a vendor's four steps in the default report ---------------------------------
LOGSOFTMAX = "operators/LogSoftmax-13/opset13/float64/edge_rows"
ORT_ARGS = {"suites": ["operators"], "backends": [{"spec": "onnxruntime", "options": {"threads": 1}, "name": "onnxruntime"}],
            "restamp": True, "opset": None, "examples": None, "seed": None, "corpus": "corpus"}
WINDOW = {"start": 14, "shape": [9, 3], "expected": ["nan", "nan", "nan", "nan"], "actual": ["nan", "-inf", "-inf", "nan"], "bad": [1, 2]}
SPEC_SILENT = {"point": "LogSoftmax.nan_inf_row", "op_version": "LogSoftmax-13", "spec": "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))",
               "choice": "NaN throughout a row holding NaN, +inf or only -inf", "invariants": ["every value is NaN or <= 0"],
               "broken_invariant": "every value is NaN or <= 0", "expected": "nan", "actual": "-inf", "index": "[5,1]", "output": 0}
EVIDENCE = {"inputs": {"x0": {"shape": [9, 3], "dtype": "float64", "size": 27, "values": ["0.0", "-inf", "1.0"]}},
            "expected": [{"shape": [9, 3], "dtype": "float64", "size": 27, "values": []}],
            "actual": [{"shape": [9, 3], "dtype": "float64", "size": 27, "values": []}]}
TOLERANCE = {"rtol": 1e-12, "atol": 1e-15, "ulp": 4, "source": "dtype default", "dtype": "float64", "file": "harness/data/tolerances.toml"}


@pytest.fixture(scope="module")
def vendor_report(tmp_path_factory):
    """The issue's two runs, and a third: the official node suite on reference + onnxruntime (run 1),
    operators on onnxruntime (run 2) and again (run 3, where LogSoftmax now fails)."""
    from .test_report_matrix import add_run, res

    tmp = tmp_path_factory.mktemp("vendor")
    store = Store(tmp / "reports" / "results.sqlite")
    both = {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")}
    ort = {"onnxruntime": (True, "", "1.32.0")}
    node = lambda name, **kw: {"suite": "onnx-node", "op": name, "domain": "ai.onnx", "since_version": 13, "opset": 13, "dtypes": ["float"], **kw}  # noqa: E731
    add_run(store, [
        res("onnx-node/test_softmax_example", "reference", "pass", run_s=0.004, tags=node("Softmax")),
        res("onnx-node/test_softmax_example", "onnxruntime", "pass", run_s=0.001, tags=node("Softmax")),
        res("onnx-node/test_reduce_sum_keepdims", "reference", "pass", run_s=0.002, tags=node("ReduceSum")),
        res("onnx-node/test_reduce_sum_keepdims", "onnxruntime", "pass", run_s=0.001, tags=node("ReduceSum")),
        res("onnx-node/test_argmax_float16", "reference", "pass", run_s=0.003, tags=node("ArgMax", dtypes=["float16"])),
        res("onnx-node/test_argmax_float16", "onnxruntime", "unsupported", run_s=None, tags=node("ArgMax", dtypes=["float16"]),
            message="NOT_IMPLEMENTED : Could not find an implementation for ArgMax(13) node with name ''"),
    ], both, args={**ORT_ARGS, "suites": ["onnx-node"], "store": "reports/results.sqlite"})
    add_run(store, [res(LOGSOFTMAX, "onnxruntime", "pass"), res("operators/ReduceSum-13/opset13/float32/0", "onnxruntime", "pass")],
            ort, args={**ORT_ARGS, "store": "reports/results.sqlite"})
    verdict = {"outcome": "mismatch", "output": 0, "first_bad": "[5,1]", "bad_count": 7, "total": 27, "max_abs": float("inf"),
               "max_rel": float("inf"), "max_ulp": float("inf"), "nan_mismatch": 7, "window": WINDOW, "evidence": EVIDENCE,
               "tolerance": TOLERANCE, "spec_silent": SPEC_SILENT}
    add_run(store, [res(LOGSOFTMAX, "onnxruntime", "mismatch", verdict=verdict,
                        message="output 0: NaN in 7 different place(s): 7/27 bad, first at [5,1]: got -inf, expected nan"),
                    res("operators/ReduceSum-13/opset13/float32/0", "onnxruntime", "pass")],
            ort, args={**ORT_ARGS, "store": "reports/results.sqlite"})
    store.close()
    out = tmp / "out"
    assert cli(["report", "--store", str(tmp / "reports" / "results.sqlite"), "-o", str(out)]) == 0
    return out


def test_a_vendor_finds_failing_ops_evidence_speed_and_changes(vendor_report):
    url = (vendor_report / "index.html").resolve().as_uri()
    with chromium() as driver:
        driver.get(url)
        wait_ready(driver)
        # the default report: the newest run of every (suite, backend), so both backends are there
        assert [e.get_attribute("data-backend") for e in driver.find_elements(By.CSS_SELECTOR, "article.backend")] == ["reference", "onnxruntime"]
        assert shown(driver) == "8 of 8 results"

        # (a) failing ops: the causes table names them, wrong answers first
        causes = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in driver.find_elements(By.CSS_SELECTOR, "#causes tbody tr")]
        assert [c[:5] for c in causes] == [["onnxruntime", "wrong answer", "LogSoftmax", "mismatch", "1"],
                                           ["onnxruntime", "not implemented", "ArgMax", "unsupported", "1"]]
        # search narrows the list to one op; "failures only" counts failures in the matrix
        driver.find_element(By.ID, "q").send_keys("logsoftmax")
        wait_for(driver, lambda d: shown(d) == "1 of 8 results")
        driver.execute_script("const c = document.getElementById('f-fail'); c.checked = true; c.dispatchEvent(new Event('change'));")
        texts = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "#matrix-table .ctext")]
        assert texts == ["1 failing"]

        # (b) one failure: inputs, expected vs actual, tolerance source, spec reason, commands
        driver.find_element(By.CSS_SELECTOR, "#case-table .badge:not(.dim)").click()
        wait_for(driver, lambda d: d.find_element(By.ID, "drill").is_displayed())
        field = lambda name: driver.find_element(By.CSS_SELECTOR, f"#drill-body [data-field='{name}']")  # noqa: E731
        assert driver.find_element(By.ID, "drill-title").text == LOGSOFTMAX
        assert field("inputs").find_element(By.CSS_SELECTOR, "tbody tr").get_attribute("textContent") == "x0float64[9,3]0.0, -inf, 1.0, … (first 3 of 27)"
        assert [td.get_attribute("textContent") for td in field("outputs").find_elements(By.CSS_SELECTOR, "tbody td")] == ["output 0", "float64[9,3]", "float64[9,3]"]
        window = [[td.get_attribute("textContent") for td in r.find_elements(By.TAG_NAME, "td")] for r in field("window").find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert window == [["[4,2]", "nan", "nan"], ["[5,0]", "nan", "-inf"], ["[5,1]", "nan", "-inf"], ["[5,2]", "nan", "nan"]]
        bad = [r.find_element(By.TAG_NAME, "td").get_attribute("textContent") for r in field("window").find_elements(By.CSS_SELECTOR, "tbody tr.bad")]
        assert bad == ["[5,0]", "[5,1]"]
        assert field("max_abs").text == "inf" and field("bad_count").text == "7 of 27"  # the statistics agree with the message
        assert field("tolerance").text == "rtol 1e-12, atol 1e-15, ULP 4"
        assert field("tolerance_source").text == "the float64 default in harness/data/tolerances.toml"
        assert field("spec_text").text.strip("“”") == "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))"
        assert field("spec_reason").text == "NaN throughout a row holding NaN, +inf or only -inf"
        assert field("spec_broken").text == "every value is NaN or <= 0"
        assert "LogSoftmax-13 (the spec supports our expected value)" == field("note").text  # operator_cases/crosscheck.toml
        assert field("repro_command").text == f"onnx-harness repro {LOGSOFTMAX} --backend onnxruntime --option=onnxruntime.threads=1 -o repro"
        assert field("run_command").text == ("onnx-harness run --suite operators --backend onnxruntime --option=onnxruntime.threads=1 "
                                             "-k '^operators/LogSoftmax\\-13/opset13/float64/edge_rows$'")
        copy = driver.find_element(By.CSS_SELECTOR, "#drill-body button.copy[data-copy='run_command']")
        copy.click()
        wait_for(driver, lambda d: copy.text != "copy")
        assert copy.text == "copied"
        assert "/tmp/" not in driver.find_element(By.ID, "drill-body").text  # no machine path anywhere in the drill-down
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)

        # (c) speed against onnx.reference on the same cases: onnxruntime 1 ms vs 4 ms and 1 ms vs 2 ms
        row = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#vs-reference tbody tr td")]
        assert row == ["2", "×0.354", "2", "0"]  # geomean of 0.25 and 0.5
        doc = json.loads((vendor_report / "results.json").read_text())
        assert doc["against_reference"]["onnxruntime"]["geomean"] == pytest.approx(0.125 ** 0.5)

        # (d) what changed since the previous run of the same suite (run 2), nothing compared across suites
        kinds = driver.find_element(By.ID, "diff-kinds").text
        assert "regressed 1" in kinds and "new 0" in kinds and "removed 0" in kinds
        assert driver.find_element(By.CSS_SELECTOR, "#diff h2").text == "Changes against run 2"
        assert ("onnx-node on onnxruntime: 3 results of run 1 not compared (nothing earlier to compare with); "
                "onnx-node on reference: 3 results of run 1 not compared (nothing earlier to compare with)") in driver.find_element(By.ID, "diff-scope").text
        rows = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in driver.find_elements(By.CSS_SELECTOR, "#diff-table tbody tr")]
        assert rows == [["regressed", LOGSOFTMAX, "onnxruntime", "pass", "mismatch"]]
        assert console_problems(driver) == []
        assert_no_network(driver, url)


def test_int64_window_shows_exact_values_and_the_exact_comparison(tmp_path):
    from .test_report_evidence import int64_store

    out = tmp_path / "out"
    assert cli(["report", "--store", str(int64_store(tmp_path)), "-o", str(out)]) == 0
    with chromium() as driver:
        driver.get((out / "index.html").resolve().as_uri())
        wait_ready(driver)
        driver.execute_script("const h = window.harnessReport; h.openDrill(h.find(arguments[0], 'onnxruntime'))",
                              "onnx-node/test_reduce_sum_square_int64")
        wait_for(driver, lambda d: d.find_element(By.ID, "drill").is_displayed())
        rows = driver.find_elements(By.CSS_SELECTOR, "#drill-body table.window tbody tr")
        cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in rows]
        assert cells[0][1:] == ["144115188075855873", "144115188075855872"] and cells[2][1:] == ["9223372036854775807"] * 2
        assert [r.get_attribute("class") for r in rows] == ["bad", "", ""]
        tolerance = driver.find_element(By.CSS_SELECTOR, "#drill-body [data-field='tolerance']").text
        assert tolerance.startswith("exact: int64 values are compared for equality") and "rtol" not in tolerance.split("(")[0]
        assert console_problems(driver) == []


def test_filters_live_in_the_url_and_known_failures_can_be_included(report_dir):
    """A filtered view (search, outcomes, failures only with known ones included, a view) is in the
    URL: reloading it, or opening it in a new tab, shows the same results; the open result too."""
    _, out = report_dir
    url = (out / "index.html").resolve().as_uri()
    with chromium() as driver:
        driver.get(url)
        wait_ready(driver)
        driver.find_element(By.ID, "f-fail").click()
        wait_for(driver, lambda d: shown(d) == "4 of 16 results")  # run 2's failures; the known one (xfail) hidden
        driver.find_element(By.ID, "f-known").click()
        wait_for(driver, lambda d: shown(d) == "5 of 16 results")
        assert "Clip-11/opset13/float32/1" in driver.find_element(By.ID, "case-table").text
        driver.find_element(By.ID, "q").send_keys("clip")
        wait_for(driver, lambda d: shown(d) == "3 of 16 results")
        driver.find_element(By.CSS_SELECTOR, "#views button[data-view='dtype']").click()
        filtered = driver.current_url
        assert "q=clip" in filtered and "fail=1" in filtered and "known=1" in filtered and "view=dtype" in filtered
        driver.get("about:blank")
        driver.get(filtered)
        wait_ready(driver)
        assert shown(driver) == "3 of 16 results"
        assert driver.find_element(By.ID, "q").get_attribute("value") == "clip"
        assert driver.find_element(By.ID, "f-known").is_selected() and driver.find_element(By.ID, "f-fail").is_selected()
        assert "dtype" in driver.find_element(By.CSS_SELECTOR, "#matrix-table thead").text
        # an open result joins the filters in the URL, and comes back with them
        driver.execute_script("const h = window.harnessReport; h.openDrill(h.find(arguments[0], 'reference'))", "operators/Clip-11/opset13/float32/1")
        wait_for(driver, lambda d: "case=" in d.current_url)
        opened = driver.current_url
        driver.get("about:blank")
        driver.get(opened)
        wait_ready(driver)
        wait_for(driver, lambda d: d.find_element(By.ID, "drill").is_displayed())
        assert driver.find_element(By.ID, "drill-title").text == "operators/Clip-11/opset13/float32/1" and shown(driver) == "3 of 16 results"
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        wait_for(driver, lambda d: "case=" not in d.current_url and "q=clip" in d.current_url)
        assert console_problems(driver) == []
        assert not [u for u, _ in requests(driver) if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")]
