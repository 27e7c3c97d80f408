"""`onnx-harness site`: like-for-like conformance per runtime release, broken runs flagged rather
than scored, relative paths only, and the pages in a real browser (cell -> op-version -> finding,
a filter kept in the URL across a reload, no console error, no request leaving the page)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness import findings as findings_mod
from harness.worker import Result
from harness.site import build_site
from harness.store import Store

FINDING = sorted(findings_mod.load())[0]
KNOWN_REASON = "Add-14 int8 wraps wrongly (https://example.invalid/issue/1)"


def case(op: str, dtype: str, k: int) -> str:
    return f"operators/{op}/opset{op.split('-')[1]}/{dtype}/{k}"


def tags(case_id: str) -> dict:
    _, opv, _, dtype, _ = case_id.split("/")
    op, since = opv.rsplit("-", 1)
    return {"op": op, "since_version": int(since), "dtype": dtype, "suite": "operators"}


def add_run(store: Store, backends: dict[str, str], outcomes: dict[tuple[str, str], str], args: dict | None = None,
            unavailable: dict[str, str] | None = None, bundles: dict[tuple[str, str], Path] | None = None) -> int:
    run_id = store.start_run("run", {"suites": ["operators"], **(args or {})}, {})
    for name, version in backends.items():
        store.record_backend(run_id, name, True, "", version, {})
    for name, why in (unavailable or {}).items():
        store.record_backend(run_id, name, False, why, "", {})
    for (backend, case_id), outcome in outcomes.items():
        r = Result(case_id, backend, outcome, tags=tags(case_id))
        if outcome == "xfail":
            r.raw_outcome, r.reason, r.message = "mismatch", KNOWN_REASON, "output 0: values differ"
        elif outcome != "pass":  # a traceback names a file of the machine that ran it
            r.message = f"{outcome} on purpose at {Path(store.path).parent / 'harness' / 'runner.py'}"
        r.bundle = str((bundles or {}).get((backend, case_id), ""))
        store.add_result(run_id, r)
    store.finish_run(run_id)
    return run_id


def add_bundle(folder: Path, case_id: str) -> Path:
    """The repro bundle of an int8 Add whose runtime saturated where the sum wraps (ONNX Runtime wraps: its repro passes here)."""
    import numpy as np
    from onnx import TensorProto, helper

    from harness.case import Case, DataSet
    from harness.repro import write_bundle

    graph = helper.make_graph([helper.make_node("Add", ["x0", "x1"], ["y"])], "add",
                              [helper.make_tensor_value_info(n, TensorProto.INT8, [3]) for n in ("x0", "x1")],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    x = np.array([100, -100, 5], np.int8)
    data = [DataSet({"x0": x, "x1": x}, [np.array([-56, 56, 10], np.int8)])]
    result = Result(case_id, "onnxruntime", "mismatch", "output 0: values differ", actual=[np.array([127, -128, 10], np.int8)])
    return write_bundle(folder, Case(case_id, "operators", model_bytes=model.SerializeToString(), data=data, tags=tags(case_id)),
                        result, "onnxruntime", {})


ABS = [case("Abs-13", "float32", k) for k in range(10)]
ADD = [case("Add-14", "int8", k) for k in range(10)]
ONLY_NEW = case("Add-14", "int16", 0)  # a case only the newest release ran: outside the common set


@pytest.fixture
def stores(tmp_path):
    a = Store(tmp_path / "a" / "results.sqlite")
    outcomes = {("reference", c): "pass" for c in ABS + ADD}
    outcomes.update({("onnxruntime", c): "pass" for c in ABS + ADD[2:]})
    outcomes.update({("onnxruntime", ADD[0]): "xfail", ("onnxruntime", ADD[1]): "mismatch", ("onnxruntime", ONLY_NEW): "pass"})
    add_run(a, {"reference": "1.23.2", "onnxruntime": "1.32.0"}, outcomes, unavailable={"tvm": "No module named 'tvm'"},
            bundles={("onnxruntime", ADD[1]): add_bundle(tmp_path / "a" / "bundles" / "add", ADD[1])})
    # a newer -k subset of onnxruntime: it must not hide the full run above
    add_run(a, {"onnxruntime": "1.32.0"}, {("onnxruntime", c): "mismatch" for c in ABS[:2]}, args={"pattern": "Abs"})
    a.close()
    b = Store(tmp_path / "b" / "results.sqlite")
    older = {("onnxruntime@1.28", c): "pass" for c in ABS + ADD}
    older.update({("tract", c): "unsupported" for c in ABS + ADD})
    add_run(b, {"onnxruntime@1.28": "1.28.0", "tract": "0.21.0"}, older)
    c = Store(tmp_path / "c" / "results.sqlite")
    collapsed = {("onnxruntime@1.30", k): ("pass" if k in ABS[:3] else "mismatch") for k in ABS + ADD}
    add_run(c, {"onnxruntime@1.30": "1.30.0"}, collapsed)
    b.close()
    c.close()
    return [tmp_path / "a" / "results.sqlite", tmp_path / "b" / "results.sqlite", tmp_path / "c" / "results.sqlite"]


@pytest.fixture
def site(stores, tmp_path, monkeypatch):
    monkeypatch.setattr(findings_mod, "named_by_expectations", lambda folder=None: [("onnxruntime", "operators/Add-14/*", KNOWN_REASON, FINDING)])
    out = tmp_path / "site"
    build_site(stores, out)
    return out


def page(site: Path, name: str) -> dict:
    return json.loads((site / name).read_text())


def column(front: dict, key: str) -> dict:
    return next(c for c in front["columns"] if c["key"] == key)["suites"]["operators"]


def test_conformance_is_like_for_like_and_a_subset_never_hides_the_full_run(site):
    front = page(site, "index.json")
    ort = column(front, "onnxruntime 1.32.0")
    # the full run (18 of 20 pass), not the newer two-case subset; over the 20 cases every scored release ran
    assert (ort["common_pass"], ort["common_attempted"], ort["total"]) == (18, 20, 21)
    assert ort["conformance"] == pytest.approx(90.0)
    assert ort["wrong"] == 2 and ort["known"] == 1
    assert column(front, "reference 1.23.2")["conformance"] == pytest.approx(100.0)
    assert column(front, "onnxruntime 1.28.0")["conformance"] == pytest.approx(100.0)


def test_broken_runs_are_flagged_not_scored(site):
    front = page(site, "index.json")
    tract = column(front, "tract 0.21.0")
    assert "unsupported" in tract["flag"]
    collapse = column(front, "onnxruntime 1.30.0")
    assert collapse["flag"].startswith("collapse: 15.0 % against 100.0 % for 1.28.0")
    assert "flagged: collapse" in (site / "index.html").read_text()
    tvm = next(c for c in front["columns"] if c["runtime"] == "tvm")
    assert not tvm["available"] and "No module named" in tvm["reason"]


def test_op_version_page_explains_each_non_pass_and_links_the_finding(site):
    add = page(site, "op/Add-14.json")
    assert add["spec_link"].endswith("onnx__Add.html") and add["module"] == "operator_cases/math/add.py"
    assert [p["id"] for p in add["spec_silent"]] == ["Add.int_overflow"]
    ort = next(c for c in add["columns"] if c["key"] == "onnxruntime 1.32.0")
    causes = {(g["outcome"], g["finding"]): g["count"] for g in ort["causes"]}
    assert causes == {("mismatch", FINDING): 1, ("mismatch", None): 1}
    assert any(f["id"] == FINDING for f in add["findings"])
    runtime = page(site, "runtime/onnxruntime.json")
    assert [r["release"] for r in runtime["releases"]] == ["1.28.0", "1.30.0", "1.32.0"]
    hit = next(f for f in runtime["findings"] if f["id"] == FINDING)
    assert (hit["first"], hit["last"]) == ("1.32.0", "1.32.0")


def test_a_cause_links_its_cases_and_its_example_page_holds_the_download_and_the_commands(site, tmp_path):
    import re
    import subprocess
    import sys
    import zipfile

    html = (site / "op" / "Add-14.html").read_text()
    ort = next(c for c in page(site, "op/Add-14.json")["columns"] if c["key"] == "onnxruntime 1.32.0")
    for g in ort["causes"]:
        assert f'href="#{g["anchor"]}"' in html and f'id="{g["anchor"]}"' in html  # the count opens the group's cases
        assert [f["case"] for f in g["cases"]] == [g["example"]["case"]]
    assert '<a href="https://example.invalid/issue/1" rel="noreferrer">' in html  # the expectation's link is a link
    unexpected = next(g for g in ort["causes"] if not g["finding"])
    assert unexpected["example"] == {"case": ADD[1], "href": "../case/onnxruntime-1.32.0/operators__Add-14__opset14__int8__1.html"}
    case_page = site / "case" / "onnxruntime-1.32.0" / "operators__Add-14__opset14__int8__1.html"
    text = case_page.read_text()
    assert '<a href="operators__Add-14__opset14__int8__1.zip" download>' in text
    assert "unzip operators__Add-14__opset14__int8__1.zip &amp;&amp; cd add\npip install numpy onnx onnxruntime\npython repro.py" in text
    assert re.search(r'href="../../op/Add-14.html#c-operators-onnxruntime-1.32.0-g\d"', text)
    front = (site / "index.html").read_text()
    assert "Reproduce a failure on a machine without the harness" in front and 'href="case/onnxruntime-1.32.0/operators__Add-14' in front
    known = next(g for g in ort["causes"] if g["finding"])  # no bundle stored: the harness's command only
    known_page = (site / known["example"]["href"].removeprefix("../")).read_text()
    assert "No repro bundle was stored" in known_page and "onnx-harness repro" in known_page
    with zipfile.ZipFile(case_page.with_suffix(".zip")) as zf:
        zf.extractall(tmp_path / "unzipped")
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path / "unzipped" / "add", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "fixed" in done.stdout, (done.stdout, done.stderr)  # ONNX Runtime wraps, as the expected outputs do


def test_a_cell_compares_one_suite_so_a_release_that_ran_fewer_suites_is_not_mixed(stores, tmp_path, monkeypatch):
    node = Store(tmp_path / "d" / "results.sqlite")
    run_id = node.start_run("run", {"suites": ["onnx-node"]}, {})
    node.record_backend(run_id, "onnxruntime@1.24", True, "", "1.24.0", {})
    node.add_result(run_id, Result("onnx-node/test_abs", "onnxruntime@1.24", "pass",
                                   tags={"op": "Abs", "since_version": 13, "dtype": "float32", "suite": "onnx-node"}))
    node.finish_run(run_id)
    node.close()
    out = tmp_path / "site2"
    build_site(stores + [tmp_path / "d" / "results.sqlite"], out)
    rows = page(out, "ops.json")["rows"]
    abs_rows = {r["suite"]: r for r in rows if r["key"] == "Abs-13"}
    assert set(abs_rows) == {"operators", "onnx-node"}
    columns = page(out, "ops.json")["columns"]
    old = columns.index("onnxruntime 1.24.0")
    assert abs_rows["operators"]["cells"][old] is None and abs_rows["onnx-node"]["cells"][old]["pass"] == 100.0
    assert abs_rows["onnx-node"]["cells"][columns.index("onnxruntime 1.32.0")] is None


def test_every_artifact_holds_relative_paths_only(site, tmp_path):
    for path in site.rglob("*"):
        if path.is_file() and path.suffix != ".zip":  # a download: a repro bundle (its own test: test_repro_bundle.py)
            text = path.read_text()
            assert str(tmp_path) not in text and os.sep + "tmp" + os.sep not in text, path
            for href in __import__("re").findall(r'href="([^"#?]+)', text):
                assert not href.startswith("/") and (href.startswith("https://") or (path.parent / href).resolve().is_file()), (path, href)


# -- in a real browser ----------------------------------------------------------------------
def test_a_vendor_follows_a_cell_to_an_op_version_and_a_finding_and_a_filter_survives_a_reload(site):
    from harness.report.browser import BrowserUnavailable, chromium, find_chromium

    try:
        find_chromium()
    except BrowserUnavailable as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no headless browser: {exc}")
    from selenium.webdriver.common.by import By

    from .test_report_browser import assert_no_network, console_problems, wait_for

    with chromium() as driver:
        front = (site / "index.html").as_uri()
        driver.get(front)
        assert "flagged: collapse" in driver.find_element(By.TAG_NAME, "body").text
        assert_no_network(driver, front)
        driver.find_element(By.LINK_TEXT, "Operators").click()
        cell = driver.find_element(By.CSS_SELECTOR, "a.cell[href*='Add-14.html#c-operators-onnxruntime-1.32.0']")
        cell.click()
        assert driver.current_url.endswith("op/Add-14.html#c-operators-onnxruntime-1.32.0")
        driver.find_element(By.CSS_SELECTOR, f"a[href='../finding/{FINDING}.html']").click()
        assert driver.current_url.endswith(f"finding/{FINDING}.html")
        assert "Repro script" in driver.find_element(By.TAG_NAME, "body").text
        assert not console_problems(driver)

        driver.get((site / "ops.html").as_uri())
        select = driver.find_element(By.NAME, "dtype")
        driver.execute_script("arguments[0].value = 'int8'; arguments[0].dispatchEvent(new Event('change', {bubbles: true}))", select)
        shown = driver.find_element(By.ID, "shown").text
        assert shown == "1 of 2 op-versions of operators", shown
        assert "dtype=int8" in driver.current_url
        driver.refresh()
        assert driver.find_element(By.ID, "shown").text == shown
        assert driver.find_element(By.NAME, "dtype").get_attribute("value") == "int8"
        rows = driver.find_elements(By.CSS_SELECTOR, "#ops tr[data-family]")
        assert [r.is_displayed() for r in rows] == [False, True]  # Abs-13 hidden, Add-14 shown
        assert not console_problems(driver)

        # a cause's count opens its cases; its example case page has the download and the commands
        driver.get((site / "op" / "Add-14.html").as_uri())
        cause = next(g for g in page(site, "op/Add-14.json")["columns"] if g["key"] == "onnxruntime 1.32.0")["causes"][0]
        group = driver.find_element(By.ID, cause["anchor"])
        assert group.get_attribute("open") is None
        driver.find_element(By.CSS_SELECTOR, f"a[href='#{cause['anchor']}']").click()
        wait_for(driver, lambda d: group.get_attribute("open") is not None)  # hashchange fires after the click returns
        assert cause["cases"][0]["case"] in group.text
        driver.find_element(By.LINK_TEXT, ADD[1]).click()
        assert driver.current_url.endswith("case/onnxruntime-1.32.0/operators__Add-14__opset14__int8__1.html")
        body = driver.find_element(By.TAG_NAME, "body").text
        assert "Reproduce on a machine without the harness" in body and "python repro.py" in body
        assert driver.find_element(By.LINK_TEXT, "operators__Add-14__opset14__int8__1.zip").get_attribute("download") is not None
        assert not console_problems(driver)
