"""Calibrated timings, as pyperf and asv take them, and a case's peak memory.

:func:`measure` warms a callable up until two consecutive calls agree (or a cap), picks a loop
count so that one sample lasts at least ``min_sample_s``, then takes samples until it has
``min_samples`` and the case's time budget is spent (or ``max_samples``). A :class:`Timing`
holds the samples, their median and a distribution-free confidence interval of the median
(order statistics of a binomial, ``scipy.stats.quantile_test``): no interval below
:data:`MIN_CI_SAMPLES` samples, so such a timing is never called significantly different.

:func:`reset_peak_rss` / :func:`peak_rss` give the worker's resident-set high-water mark over
one case (Linux ``/proc/self/clear_refs``; elsewhere the process's lifetime peak, said so).

Also the machine's description a run stores beside its timings (:func:`machine`).
"""

from __future__ import annotations

import math
import os
import platform
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

#: fewer samples than this give no confidence interval (the order-statistic interval of a median
#: at 95 % needs 6)
MIN_CI_SAMPLES = 6


@dataclass(frozen=True)
class TimingPolicy:
    """How a case is timed (``onnx-harness run --timing`` / ``--repeat N``)."""

    #: one sample runs the model this many seconds at least (loops are calibrated to it)
    min_sample_s: float = 0.002
    #: seconds per case and backend for warm-ups and samples, once ``min_samples`` are taken
    budget_s: float = 1.0
    min_samples: int = 10
    max_samples: int = 200
    max_warmups: int = 10
    #: warm-ups stop when a call's time is within this fraction of the previous call's
    settle: float = 0.1
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Timing:
    samples: list[float]
    loops: int
    warmups: int
    settled: bool
    median_s: float
    ci_low_s: float | None
    ci_high_s: float | None
    p90_s: float
    confidence: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(d.pop("extra"))
        d["n"] = len(self.samples)
        return d


def measure(fn: Callable[[], Any], policy: TimingPolicy | None = None, clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Time ``fn()`` by ``policy``; exceptions of ``fn`` propagate (the caller says why there is
    no timing)."""
    policy = policy or TimingPolicy()
    start = clock()
    previous, warmups, settled = None, 0, False
    while warmups < policy.max_warmups:
        t0 = clock()
        fn()
        took = clock() - t0
        warmups += 1
        if previous is not None and abs(took - previous) <= policy.settle * previous:
            settled = True
            break
        previous = took
    loops = max(1, math.ceil(policy.min_sample_s / max(took, 1e-9)))
    samples: list[float] = []
    while len(samples) < policy.max_samples:
        t0 = clock()
        for _ in range(loops):
            fn()
        samples.append((clock() - t0) / loops)
        spent = clock() - start
        if len(samples) >= policy.min_samples and spent >= policy.budget_s:
            break
        if spent >= 10 * policy.budget_s > 0 and len(samples) >= min(policy.min_samples, MIN_CI_SAMPLES):
            break  # a slow case: enough for an interval, not the whole minimum
    return summarize(samples, loops, warmups, settled, policy.confidence)


def summarize(samples: list[float], loops: int = 1, warmups: int = 0, settled: bool = False, confidence: float = 0.95) -> Timing:
    import numpy as np

    arr = np.asarray(samples, dtype=float)
    low, high = median_interval(samples, confidence)
    return Timing(list(map(float, samples)), loops, warmups, settled, float(np.median(arr)), low, high,
                  float(np.percentile(arr, 90)), confidence)


def median_interval(samples: list[float], confidence: float = 0.95) -> tuple[float | None, float | None]:
    """The distribution-free confidence interval of the median (order statistics), or
    (None, None) with too few samples."""
    if len(samples) < MIN_CI_SAMPLES:
        return None, None
    import numpy as np
    from scipy.stats import quantile_test

    arr = np.asarray(samples, dtype=float)
    ci = quantile_test(arr, q=float(np.median(arr)), p=0.5).confidence_interval(confidence)
    if math.isnan(ci.low) or math.isnan(ci.high):
        return None, None
    return float(ci.low), float(ci.high)


# -- peak memory ------------------------------------------------------------------------------
_HWM = re.compile(rb"^VmHWM:\s+(\d+)\s*kB", re.M)
#: (pid, clear_refs fd, status fd) of this process, opened once: a worker asks for every case.
#: "self" is resolved at open, so a forked child opens its own.
_PROC_FDS: tuple[int, int | None, int | None] | None = None


def _proc_fds() -> tuple[int | None, int | None]:
    global _PROC_FDS
    if _PROC_FDS is None or _PROC_FDS[0] != os.getpid():
        fds = []
        for name, mode in (("clear_refs", os.O_WRONLY), ("status", os.O_RDONLY)):
            try:
                fds.append(os.open(f"/proc/self/{name}", mode | os.O_CLOEXEC))
            except OSError:
                fds.append(None)
        _PROC_FDS = (os.getpid(), *fds)
    return _PROC_FDS[1], _PROC_FDS[2]


def reset_peak_rss() -> bool:
    """Start a new high-water mark of this process's resident set; False where the OS cannot."""
    clear_refs, _ = _proc_fds()
    if clear_refs is None:
        return False
    try:
        os.write(clear_refs, b"5")
        return True
    except OSError:
        return False


def peak_rss() -> int | None:
    """This process's resident-set high-water mark in bytes (since :func:`reset_peak_rss`)."""
    _, status = _proc_fds()
    if status is not None:
        try:
            match = _HWM.search(os.pread(status, 8192, 0))
            if match:
                return int(match.group(1)) * 1024
        except OSError:
            pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if platform.system() == "Darwin" else peak * 1024
    except (ImportError, OSError):
        return None


# -- threads and machine ----------------------------------------------------------------------
def limit_blas_threads(threads: int) -> list[dict[str, Any]]:
    """Hold the BLAS / OpenMP pools numpy and native libraries use in this process to
    ``threads``; returns what threadpoolctl reports afterwards (the threads really used)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    threadpool_limits(limits=threads)
    return [{"api": i.get("internal_api"), "threads": i.get("num_threads")} for i in threadpool_info()]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def machine() -> dict[str, Any]:
    """CPU model, cores this process may use, and the load average (1, 5, 15 min) right now."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpu_model": cpu_model(), "cores": cores(), "cpu_count": os.cpu_count(), "load_average": load}
