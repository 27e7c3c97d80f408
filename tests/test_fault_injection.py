"""Every misbehaviour ends in the right outcome, names the limit it broke, and leaves every
other result of the run intact."""


from harness.runner import BackendSpec, Runner, WorkerLimits

from .util import relu_case


def _run(backend, limits, timeout=60.0):
    cases = [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2")]
    runner = Runner([BackendSpec(f"tests.fault_backends:{backend}", name=backend)], jobs=1, timeout=timeout, limits=limits)
    results = []
    runner.run([(c, backend) for c in cases], results.append)
    by_id = {r.case_id: r for r in results}
    assert by_id["t/ok1"].outcome == by_id["t/ok2"].outcome == "pass"
    return by_id["t/bad"]


def test_unbounded_allocation_is_an_out_of_memory_crash():
    bad = _run("Allocate", WorkerLimits(memory=1 << 30))
    assert bad.outcome == "crash" and "out of memory" in bad.message and "1.0 GiB" in bad.message


def test_printing_megabytes_breaks_the_output_limit():
    bad = _run("Chatty", WorkerLimits(output=8 << 20))
    assert bad.outcome == "crash" and "output limit of 8 MiB" in bad.message


def test_burning_cpu_breaks_the_cpu_limit():
    bad = _run("Spin", WorkerLimits(cpu=2))
    assert bad.outcome == "timeout" and "CPU time limit of 2 s" in bad.message


def test_a_crash_reports_what_the_worker_printed():
    bad = _run("Segfault", WorkerLimits())
    assert bad.outcome == "crash" and "SIGSEGV" in bad.message
