"""``junit.xml``: one ``<testsuite>`` per backend, one ``<testcase>`` per case.

What a CI test tab shows red is what a vendor must fix: wrong answers (values, shapes, dtypes)
and the backend's own errors, crashes and timeouts on a valid model are ``<failure>`` (``type`` is
the outcome), so ``failures`` counts exactly those. What is not a wrong answer is ``<skipped>`` with
its reason: a missing kernel (``unsupported``), a model the backend refused as invalid
(``rejected``), an exporter's failure (``export-failed``), an expected failure (with the
expectation's reason) and a skip. ``unspecified`` (the backend differs from our choice only where
the spec is silent, every invariant kept) is not a failure: the test case passes and carries the
point in ``<system-out>``; so does an ``xpass``. No ``<error>`` is written (``errors`` is 0): JUnit
readers count errors as red too, and "error" here is the backend's own failure. Every failure's
text ends with the command that re-runs it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from .matrix import Report
from .reproduce import repro_command, run_command

#: wrong answers and the backend's own errors: ``<failure>``
FAILURE = ("mismatch", "wrong-shape", "wrong-dtype", "error", "crash", "timeout")
#: not a wrong answer: ``<skipped>`` with the reason
SKIPPED = ("unsupported", "rejected", "export-failed", "xfail", "skip")


def _clean(text: str) -> str:
    # XML 1.0 cannot carry most control characters, which error messages sometimes hold
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in text or "")


def build(report: Report) -> ET.ElementTree:
    from .. import findings

    named = findings.named_by_expectations()
    root = ET.Element("testsuites", name="onnx-harness " + report.title)
    stamp = datetime.fromtimestamp(report.generated, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    totals: Counter = Counter()
    runs = {run.label: run for run in report.runs}
    for b in report.backends:
        rows = [r for r in report.results if r["column"] == b.label]
        suite = ET.SubElement(root, "testsuite", name=b.label, timestamp=stamp)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="version", value=b.version or "")
        ET.SubElement(props, "property", name="available", value="true" if b.available else "false")
        if not b.available:
            ET.SubElement(props, "property", name="unavailable_reason", value=_clean(b.reason))
        for k, v in b.environment.items():
            ET.SubElement(props, "property", name=f"env.{k}", value=_clean(str(v)))
        counts: Counter = Counter()
        seconds = 0.0
        for r in rows:
            t = (r.get("prepare_s") or 0) + (r.get("run_s") or 0)
            seconds += t
            case = ET.SubElement(suite, "testcase", classname=f"{b.label}.{(r.get('tags') or {}).get('suite') or r['case_id'].split('/', 1)[0]}",
                                 name=r["case_id"], time=f"{t:.6f}")
            outcome = r["outcome"]
            message = _clean(r.get("message") or "")
            detail = message
            if outcome in FAILURE or outcome == "unspecified":  # portable: no path of the machine that ran it
                args = runs[r.get("run")].args if r.get("run") in runs else {}
                detail += f"\nreproduce: {repro_command(args, r['case_id'], r['backend'])}\nre-run: {run_command(args, r['case_id'], r['backend'])}"
            if r.get("bundle_rel"):
                detail += f"\nrepro bundle: {r['bundle_rel']} (python {r['bundle_rel']}/repro.py)"
            finding = findings.finding_of(named, r["backend"], r["case_id"], r["reason"]) if r.get("reason") else None
            known = f"{r.get('reason') or ''}" + (f" [finding {finding}]" if finding else "")
            if outcome in FAILURE:
                if r.get("reason"):  # an expectation names the case, for another outcome
                    detail += f"\nexpectation (for another outcome): {known}"
                ET.SubElement(case, "failure", type=outcome, message=f"{outcome}: {message}"[:1000]).text = detail
                counts["failures"] += 1
            elif outcome in SKIPPED:
                if outcome == "xfail":
                    why = f"expected failure ({r.get('raw_outcome') or 'fail'}): {known}"
                else:
                    why = f"{outcome}: {message}" if outcome != "skip" else message
                ET.SubElement(case, "skipped", message=_clean(why)[:1000])
                counts["skipped"] += 1
            elif outcome == "unspecified":  # not a failure: differs from our choice only where the spec is silent
                ET.SubElement(case, "system-out").text = f"unspecified (the spec is silent here, every invariant kept; not a failure): {detail}"
            elif outcome == "xpass":
                ET.SubElement(case, "system-out").text = _clean(f"passed although expected to fail: {r.get('reason') or ''}")
        suite.set("tests", str(len(rows)))
        for k in ("failures", "errors", "skipped"):
            suite.set(k, str(counts[k]))
        suite.set("time", f"{seconds:.3f}")
        totals.update(counts)
        totals["tests"] += len(rows)
    for k in ("tests", "failures", "errors", "skipped"):
        root.set(k, str(totals[k]))
    ET.indent(root, space=" ")
    return ET.ElementTree(root)


class JUnitWriter:
    name = "junit"
    filename = "junit.xml"

    def write(self, report: Report, folder: Path) -> Path:
        path = Path(folder) / self.filename
        build(report).write(path, encoding="utf-8", xml_declaration=True)
        return path
