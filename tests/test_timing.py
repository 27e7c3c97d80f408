"""Calibrated timings: warm-ups until settled, loops calibrated to a minimum sample time, a time
budget, the median's interval, peak memory per case, and what a timed run stores."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from harness.worker import ExecOptions, execute_case
from harness.timing import MIN_CI_SAMPLES, TimingPolicy, machine, measure, median_interval, peak_rss, reset_peak_rss, summarize

from .util import relu_case


class FakeClock:
    """A clock that advances only when the timed function runs: each call costs the next of
    ``costs`` (the last repeats)."""

    def __init__(self, costs: list[float]) -> None:
        self.now, self.costs, self.calls = 0.0, list(costs), 0

    def __call__(self) -> float:
        return self.now

    def fn(self) -> None:
        self.now += self.costs[min(self.calls, len(self.costs) - 1)]
        self.calls += 1


def test_warmups_stop_when_two_calls_agree_and_loops_reach_the_minimum_sample_time():
    clock = FakeClock([0.05, 0.02, 0.011, 0.0105, 0.001])  # a cold start settling, then 1 ms a call
    t = measure(clock.fn, TimingPolicy(min_sample_s=0.02, budget_s=0.5, min_samples=6, max_samples=1000, settle=0.1), clock)
    assert t.warmups == 4 and t.settled  # 0.0105 is within 10 % of 0.011
    assert t.loops == 2  # ceil(0.02 / 0.0105)
    assert t.median_s == pytest.approx(0.001)
    # the budget (0.5 s, warm-ups included) bounds the samples: 0.0915 s of warm-up, 2 ms a sample
    assert len(t.samples) == pytest.approx((0.5 - 0.0915) / 0.002, abs=1)


def test_warmups_are_capped_when_the_time_never_settles():
    clock = FakeClock([0.001 * (1 + (k % 2)) for k in range(100)])  # 1 ms, 2 ms, 1 ms ...
    t = measure(clock.fn, TimingPolicy(min_sample_s=0.0, budget_s=0.01, min_samples=3, max_warmups=5), clock)
    assert t.warmups == 5 and not t.settled


def test_min_samples_are_taken_even_past_the_budget_and_max_samples_bound_them():
    clock = FakeClock([0.1])
    t = measure(clock.fn, TimingPolicy(min_sample_s=0.0, budget_s=0.5, min_samples=8), clock)
    assert len(t.samples) == 8
    clock = FakeClock([0.0001])
    t = measure(clock.fn, TimingPolicy(min_sample_s=0.0, budget_s=100, min_samples=3, max_samples=20), clock)
    assert len(t.samples) == 20


def test_a_very_slow_case_stops_at_an_interval_worth_of_samples():
    clock = FakeClock([1.0])
    t = measure(clock.fn, TimingPolicy(min_sample_s=0.0, budget_s=0.1, min_samples=50), clock)
    assert len(t.samples) == MIN_CI_SAMPLES


def test_the_median_interval_holds_the_median_and_needs_enough_samples():
    rng = np.random.default_rng(1)
    samples = list(1.0 + 0.1 * rng.standard_normal(40))
    low, high = median_interval(samples)
    assert low < float(np.median(samples)) < high
    assert high - low < 0.2  # 40 samples of sd 0.1 pin the median far tighter than the spread
    assert median_interval(samples[:MIN_CI_SAMPLES - 1]) == (None, None)
    t = summarize(samples[:3])
    assert t.ci_low_s is None and t.ci_high_s is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-case peak memory needs /proc/self/clear_refs")
def test_peak_rss_is_reset_per_case():
    assert reset_peak_rss()
    base = peak_rss()
    block = np.ones(64 << 20, np.uint8)  # 64 MiB, touched
    high = peak_rss()
    del block
    assert high - base >= 60 << 20
    assert reset_peak_rss()
    assert peak_rss() < high - (32 << 20)


def _child_peak(conn):
    reset_peak_rss()
    before = peak_rss()
    block = np.ones(96 << 20, np.uint8)  # 96 MiB, touched, in the child only
    conn.send((before, peak_rss()))
    del block


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-case peak memory needs /proc/self/clear_refs")
def test_a_forked_worker_reads_its_own_peak_not_its_parents():
    import multiprocessing as mp

    reset_peak_rss()
    parent = peak_rss()  # the parent has its /proc files open now; a fork inherits them
    ctx = mp.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_child_peak, args=(there,))
    child.start()
    before, after = here.recv()
    child.join()
    assert after - before >= 90 << 20  # the child's own block, read from the child's own status
    assert peak_rss() < parent + (32 << 20)


def test_machine_names_cpu_cores_and_load():
    info = machine()
    assert info["cpu_model"] and info["cores"] >= 1 and len(info["load_average"]) == 3


def test_a_timed_case_keeps_samples_and_interval_and_an_untimed_one_has_none():
    from harness.backends.reference import ReferenceBackend

    backend = ReferenceBackend()
    backend.load()
    case = relu_case()
    untimed = execute_case(backend, case, ExecOptions())
    assert untimed.outcome == "pass" and untimed.run_median_s is None and "median_s" not in untimed.timing
    policy = TimingPolicy(min_sample_s=0.0005, budget_s=0.05, min_samples=8)
    timed = execute_case(backend, case, ExecOptions(timing=policy))
    t = timed.timing
    assert timed.outcome == "pass" and t["n"] >= 8 and len(t["samples"]) == t["n"]
    assert t["ci_low_s"] <= t["median_s"] == timed.run_median_s <= t["ci_high_s"]
    assert t["loops"] * t["median_s"] > 0.0002  # calibrated: one sample lasts about min_sample_s
    repeat = execute_case(backend, case, ExecOptions(repeat=12, timing=TimingPolicy(min_sample_s=0.0, budget_s=0.0)))
    assert repeat.timing["n"] == 12


def test_run_stores_timing_peak_memory_threads_and_machine(tmp_path):
    from harness.runner import BackendSpec, Runner, default_threads
    from harness.store import Store

    store = Store(tmp_path / "s.sqlite")
    run_id = store.start_run("test", {}, {})
    with Runner([BackendSpec("reference")], jobs=1, options=ExecOptions(timing=TimingPolicy(budget_s=0.05, min_samples=6))) as runner:
        result = runner.run_one(relu_case(), "reference")
    store.add_result(run_id, result)
    row = next(store.results(run_id))
    assert row["timing"]["n"] >= 6 and row["timing"]["peak_rss"] > 10 << 20
    assert row["timing"]["blas"] and all(b["threads"] == default_threads(1) for b in row["timing"]["blas"])
