"""Headless Chromium through Selenium: screenshots of the report, and the browser test's driver.

Only ``onnx-harness report --screenshots`` and the browser test import this module (selenium
is a test extra). Chromium is started with the background-networking switches off and a fresh
profile, and chromedriver is given by path, so nothing is fetched from the network.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
DRIVER_NAMES = ("chromedriver",)
CHROMIUM_SWITCHES = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                     "--disable-default-apps", "--disable-extensions", "--hide-scrollbars")


class BrowserUnavailable(Exception):
    pass


def find_chromium() -> tuple[str, str]:
    """(browser, driver) executables, or BrowserUnavailable saying what to install."""
    browser = next((p for n in CHROMIUM_NAMES if (p := shutil.which(n))), None)
    driver = next((p for n in DRIVER_NAMES if (p := shutil.which(n))), None)
    missing = [what for what, path in (("chromium", browser), ("chromium-driver", driver)) if not path]
    if missing:
        raise BrowserUnavailable(f"{' and '.join(missing)} not found (Debian: apt-get install -y chromium chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError as exc:
        raise BrowserUnavailable("selenium is not installed (pip install selenium, or the 'test' extra)") from exc
    return browser, driver  # type: ignore[return-value]


@contextmanager
def chromium(width: int = 1400, height: int = 1000, logs: bool = True) -> Iterator["object"]:
    """A headless Chromium WebDriver with a fresh profile; browser and performance logs on."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = find_chromium()
    profile = tempfile.mkdtemp(prefix="harness-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for switch in CHROMIUM_SWITCHES:
        options.add_argument(switch)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        driver.set_page_load_timeout(120)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_ready(driver, timeout: float = 60.0) -> float:
    """Wait until the report's script has rendered; returns the seconds since navigation start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.execute_script("return document.body && document.body.dataset.ready === '1'"):
            return driver.execute_script("return performance.now() / 1000")
        time.sleep(0.05)
    raise TimeoutError("the report did not finish rendering")


def pick_drilldown(driver) -> int:
    """A result worth showing: the first regression, else a wrong value, else any failure."""
    return driver.execute_script("""
        const H = window.harnessReport, X = H.data, R = X.R;
        const o = (name) => X.OUT.indexOf(name), fails = new Set(X.failures.map(o));
        if (X.diff) for (let n = 0; n < X.diff.k.length; n++) {
            if (X.kinds[X.diff.k[n]] !== 'regressed') continue;
            const b = X.B.find((x) => x.name === X.S[X.diff.b[n]]);
            const i = b ? H.find(X.S[X.diff.c[n]], b.label) : -1;
            if (i >= 0) return i;
        }
        for (let i = 0; i < R.c.length; i++) if (R.o[i] === o('mismatch') && R.ma[i] !== null && R.bd[i] >= 0) return i;
        for (let i = 0; i < R.c.length; i++) if (fails.has(R.o[i])) return i;
        return 0;""")


def screenshots(index: Path, folder: Path) -> list[Path]:
    """PNGs of the first screen and of one drill-down, written to ``folder``."""
    folder = Path(folder)
    first, drill = folder / "screenshot-first.png", folder / "screenshot-drilldown.png"
    with chromium(1400, 1000, logs=False) as driver:
        driver.get(Path(index).resolve().as_uri())
        wait_ready(driver)
        driver.save_screenshot(str(first))
        i = pick_drilldown(driver)
        driver.execute_script("window.harnessReport.openDrill(arguments[0])", i)
        time.sleep(0.2)
        driver.save_screenshot(str(drill))
    return [first, drill]
