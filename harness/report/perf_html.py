"""The HTML report's performance additions, as data for ``perf_extra.html.j2``.

- the perf matrix (:class:`harness.report.perf.PerfMatrix`): ratios to a baseline backend
  (onnxruntime when present) with their interval, noise greyed, largest significant gap first,
  each backend's latency and peak memory;
- the operator benchmark (``onnx-harness bench`` runs): per op and dtype a log-log plot of
  latency against the analytic cost of each size, one line per backend, with its table; and a
  roofline of achieved GFLOP/s against arithmetic intensity under this machine's measured
  bandwidth and GEMM peak.

Plots are hand-built SVG (no plotting library, nothing fetched at view time).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from .perf import NOISE_FLOOR, PerfMatrix

MATRIX_ROWS = 100
COLOURS = ["#3366cc", "#dc6b19", "#2e9d4f", "#9b4dca", "#c2185b", "#00838f", "#7c6f00", "#5d4037"]


def _secs(s: float | None) -> str:
    if s is None:
        return "–"
    return f"{s * 1e6:.3g} µs" if s < 1e-3 else (f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s")


def _mib(n: int | None) -> str:
    return "–" if not n else f"{n / 2**20:,.0f} MiB"


def perf_matrix(report: Any) -> dict[str, Any] | None:
    labels = [b.label for b in report.backends if b.available]
    baseline = getattr(report, "perf_baseline", None) or next(
        (b.label for b in report.backends if b.name == "onnxruntime" and b.available), labels[0] if labels else None)
    matrix = PerfMatrix.build(report.results, labels, baseline)  # conformance cases only (bench is its own view)
    if matrix is None or not matrix.rows:
        return None
    rows = []
    for row in matrix.rows[:MATRIX_ROWS]:
        cells = []
        for b in matrix.backends:
            c = row.cells.get(b)
            if c is None:
                cells.append(None)
                continue
            interval = f"[{c.low:.2f}, {c.high:.2f}]" if c.low is not None and c.high is not None else ""
            cells.append({"latency": _secs(c.latency_s), "ratio": f"{c.ratio:.2f}×" if c.ratio is not None else "",
                          "interval": interval, "rss": _mib(c.peak_rss), "base": b == matrix.baseline,
                          "cls": "" if b == matrix.baseline else
                          ("sig-slower" if c.significant and c.ratio > 1 else ("sig-faster" if c.significant else "noise"))})
        rows.append({"case": row.case_id, "cells": cells})
    return {"baseline": matrix.baseline, "backends": matrix.backends, "rows": rows, "total": len(matrix.rows),
            "significant": matrix.significant(), "alpha": matrix.alpha, "noise_floor": NOISE_FLOOR}


# -- the operator benchmark ---------------------------------------------------------------------------
def _log_axis(lo: float, hi: float, a: float, b: float) -> tuple[Any, list[dict[str, Any]], int, int]:
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if e1 == e0:
        e1 += 1
    scale = lambda v: round(a + (b - a) * (math.log10(v) - e0) / (e1 - e0), 1)  # noqa: E731
    return scale, [{"at": scale(10.0 ** e), "exp": e} for e in range(e0, e1 + 1)], e0, e1


def _power(e: int) -> str:
    return f"{10.0 ** e:g}" if -2 <= e <= 4 else f"1e{e}"


def loglog(series: dict[str, list[tuple[float, float]]], colours: dict[str, str], xunit: str, yunit: str,
           width: int = 460, height: int = 280, lines: list[dict[str, Any]] | None = None, connect: bool = True) -> dict[str, Any] | None:
    """A log-log chart: one polyline with markers per series; ``lines`` are (x, y) point lists
    drawn dashed (a roofline's ceilings)."""
    pts = [p for ps in series.values() for p in ps if p[0] > 0 and p[1] > 0]
    extra = [p for line in lines or [] for p in line["points"]]
    if not pts:
        return None
    x0, x1, y0, y1 = 66, width - 12, 12, height - 36
    xs = [p[0] for p in pts + extra]
    ys = [p[1] for p in pts + extra]
    sx, xticks, *_ = _log_axis(min(xs), max(xs), x0, x1)
    sy, yticks, *_ = _log_axis(min(ys), max(ys), y1, y0)
    out_series = []
    for name, ps in series.items():
        ps = sorted(p for p in ps if p[0] > 0 and p[1] > 0)
        if ps:
            out_series.append({"name": name, "colour": colours[name], "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in ps) if connect else "",
                               "marks": [{"x": sx(x), "y": sy(y), "title": f"{name}: {x:.3g} {xunit}, {y:.3g} {yunit}"} for x, y in ps]})
    out_lines = []
    for line in lines or []:
        clipped = [(x, y) for x, y in line["points"] if x > 0 and y > 0]
        out_lines.append({"label": line["label"], "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in clipped),
                          "lx": sx(clipped[-1][0]) - 4, "ly": sy(clipped[-1][1]) - 4})
    return {"width": width, "height": height, "x0": x0, "x1": x1, "y0": y0, "y1": y1, "series": out_series, "lines": out_lines,
            "xticks": [{"at": t["at"], "label": _power(t["exp"])} for t in xticks],
            "yticks": [{"at": t["at"], "label": _secs(10.0 ** t["exp"]) if yunit == "s" else _power(t["exp"])} for t in yticks],
            "xunit": xunit, "yunit": yunit}


def bench_section(report: Any) -> dict[str, Any] | None:
    rows = report.bench
    if not rows:
        return None
    labels = list(dict.fromkeys(r["column"] for r in rows))
    colours = {label: COLOURS[n % len(COLOURS)] for n, label in enumerate(labels)}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["tags"]["op"], r["tags"]["dtype"])].append(r)
    probe = next((run.environment.get("bench_probe") for run in report.runs if run.environment.get("bench_probe")), None)
    plots = []
    roof_points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (op, dtype), items in sorted(groups.items()):
        bound = items[0]["tags"]["bound"]
        cost_key = "flops" if bound == "flops" else "bytes"
        best: dict[int, float] = {}
        for r in items:
            if r["outcome"] == "pass" and r.get("run_median_s"):
                best[r["tags"]["rung"]] = min(best.get(r["tags"]["rung"], math.inf), r["run_median_s"])
        series: dict[str, list[tuple[float, float]]] = defaultdict(list)
        table: dict[int, dict[str, Any]] = {}
        for r in sorted(items, key=lambda r: (r["tags"]["rung"], labels.index(r["column"]))):
            tags = r["tags"]
            entry = table.setdefault(tags["rung"], {"size": tags["size"], "cost": tags[cost_key], "cells": {}})
            median = r.get("run_median_s") if r["outcome"] == "pass" else None
            if not median:
                entry["cells"][r["column"]] = {"text": r["outcome"], "rate": "", "ratio": "", "best": False}
                continue
            rate = tags[cost_key] / median / 1e9
            series[r["column"]].append((tags[cost_key], median))
            roof_points[r["column"]].append((tags["flops"] / tags["bytes"], tags["flops"] / median / 1e9))
            timing = r.get("timing") or {}
            ci = f" [{_secs(timing['ci_low_s'])}, {_secs(timing['ci_high_s'])}]" if timing.get("ci_low_s") is not None else ""
            entry["cells"][r["column"]] = {"text": _secs(median) + ci, "rate": f"{rate:.3g}", "ratio": f"{median / best[tags['rung']]:.2f}×",
                                           "best": median == best[tags["rung"]], "rss": _mib(timing.get("peak_rss"))}
        unit = "GFLOP/s" if bound == "flops" else "GB/s"
        chart = loglog(dict(series), colours, "FLOP" if bound == "flops" else "bytes", "s")
        plots.append({"op": op, "dtype": dtype, "unit": unit, "chart": chart, "cost": "FLOP" if bound == "flops" else "bytes",
                      "backends": [b for b in labels if any(b in e["cells"] for e in table.values())],
                      "plotted": sorted(series), "rows": [table[k] for k in sorted(table)], "id": f"bench-{op}-{dtype}"})
    roofline = None
    if probe and roof_points:
        ai = [p[0] for ps in roof_points.values() for p in ps]
        lo, hi = min(ai) / 2, max(ai) * 2
        peak, bw = probe["gemm_gflops"], probe["stream_triad_gbs"]
        ridge = peak / bw
        ceiling = [(lo, bw * lo)] + ([(ridge, peak)] if lo < ridge < hi else []) + [(hi, min(peak, bw * hi))]
        roofline = {"chart": loglog(dict(roof_points), colours, "FLOP/byte", "GFLOP/s", width=560, height=320,
                                    lines=[{"label": f"min({peak:g} GFLOP/s, {bw:g} GB/s × intensity)", "points": ceiling}], connect=False),
                    "probe": probe, "ridge": ridge}
    return {"plots": plots, "roofline": roofline, "probe": probe, "legend": [{"label": b, "colour": colours[b]} for b in labels]}
