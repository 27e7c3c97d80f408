"""The operator benchmark in the HTML report, in a real browser: a latency plot with a line per
backend and its table for each op, and the roofline, for onnxruntime, kernels, reference and
pytorch. A backend not installed here is left out (pytorch runs within tox's pytorch
environment); one that is installed must be there.

Needs Debian's chromium and chromium-driver and selenium (the 'test' extra); skipped otherwise.
"""

from __future__ import annotations

import pytest

from harness.report.browser import BrowserUnavailable, chromium, find_chromium, wait_ready

try:
    find_chromium()
except BrowserUnavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no headless browser: {exc}", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402

from harness.backends import load_backend_class  # noqa: E402
from harness.bench import run_bench  # noqa: E402
from harness.cli import main  # noqa: E402

WANTED = ["onnxruntime", "kernels", "reference", "pytorch"]


def installed() -> list[str]:
    return [name for name in WANTED if load_backend_class(name).available()[0]]


@pytest.fixture(scope="module")
def bench_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    backends = installed()
    assert {"onnxruntime", "kernels", "reference"} <= set(backends)  # the test extra installs these
    outcome = run_bench(["MatMul", "Add"], ["float32"], backends, tmp / "bench.sqlite", sizes=2, budget=0.05, say=lambda m: None)
    assert outcome["unexpected"] == []
    out = tmp / "out"
    assert main(["report", "--store", str(tmp / "bench.sqlite"), "-o", str(out), "--format", "html", "--baseline", "none"]) == 0
    return out / "index.html", backends


def test_each_op_has_a_latency_plot_and_table_for_every_backend(bench_report):
    index, backends = bench_report
    with chromium() as driver:
        driver.get(index.resolve().as_uri())
        wait_ready(driver)
        for op in ("MatMul", "Add"):
            section = driver.find_element(By.ID, f"bench-{op}-float32")
            plotted = {g.get_attribute("data-backend") for g in section.find_elements(By.CSS_SELECTOR, "svg g.series")}
            assert plotted == set(backends)
            for g in section.find_elements(By.CSS_SELECTOR, "svg g.series"):
                assert len(g.find_elements(By.TAG_NAME, "circle")) == 2  # one point per size
                assert g.find_element(By.TAG_NAME, "polyline").size["width"] > 0
            headers = [th.text for th in section.find_elements(By.CSS_SELECTOR, "table thead th")]
            assert all(f"{b} latency" in headers for b in backends)
            assert len(section.find_elements(By.CSS_SELECTOR, "table tbody tr")) == 2
        roof = driver.find_element(By.ID, "bench-roofline")
        assert {g.get_attribute("data-backend") for g in roof.find_elements(By.CSS_SELECTOR, "svg g.series")} == set(backends)
        assert roof.find_element(By.CSS_SELECTOR, "polyline.roof").is_displayed()
        assert "GFLOP/s" in roof.text and "GB/s" in roof.text
