"""Out-of-process backends (``exec:CMD``): the protocol's values, the Python runner serving a
harness backend with the same outcomes as in process, and a runner that crashes, hangs, refuses
an operator or writes garbage."""

import os
import shlex
import sys
import time
import uuid
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest

from harness.backends import load_backend_class
from harness.backends.base import Unavailable
from harness.backends.external import ExecBackend, ProtocolError, decode_value, encode_value
from harness.case import Case
from harness.runner import BackendSpec, Runner, WorkerLimits

from .util import relu_case

RUNNER = f"{shlex.quote(sys.executable)} -m harness.backends.external_runner --backend"
GARBAGE = f"{shlex.quote(sys.executable)} {Path(__file__).with_name('exec_garbage_runner.py')}"


OFFICIAL = ("test_relu", "test_add_bcast", "test_conv_with_strides_padding", "test_argmax_keepdims_example", "test_and_bcast3v1d",
            "test_string_concat_utf8", "test_cast_FLOAT_to_BFLOAT16", "test_sequence_insert_at_back", "test_sum_one_input")


@pytest.fixture(scope="module")
def official_cases() -> list[Case]:
    """A few official node cases, collected as the corpus collects them."""
    from harness.suites import onnx_official

    return [Case(id=f"{suite}/{name}", suite=suite, model_bytes=model.SerializeToString(), data=data, tolerance=tol)
            for suite, name, model, data, tol in onnx_official._collect_node() if name in OFFICIAL]


def _run(specs: list[BackendSpec], cases: list[Case], timeout: float = 120.0) -> dict[tuple[str, str], object]:
    results = []
    Runner(specs, jobs=1, timeout=timeout).run([(c, s.name) for s in specs for c in cases], results.append)
    return {(r.backend, r.case_id): r for r in results}


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array(3.5, np.float64),
    np.array([True, False]),
    np.array([-7, 7], ml_dtypes.int4),
    np.array([1.5, -2.0], ml_dtypes.bfloat16),
    np.zeros((0, 4), np.int64),
    np.array([["a", "bé"], ["", "x"]], dtype=object),
])
def test_a_tensor_comes_back_from_the_protocol_as_it_went(tmp_path, value):
    desc = encode_value(value, "x", str(tmp_path), "in-0")
    back = decode_value(desc)
    assert back.dtype == value.dtype and back.shape == value.shape
    assert (back == value).all()


def test_sequences_and_empty_optionals_cross_the_protocol(tmp_path):
    value = [np.array([1, 2], np.int32), np.array([[3.0]], np.float32)]
    back = decode_value(encode_value(value, "s", str(tmp_path), "in-0"))
    assert [b.tolist() for b in back] == [[1, 2], [[3.0]]]
    assert decode_value(encode_value(None, "o", str(tmp_path), "in-1")) is None


def test_a_tensor_file_of_the_wrong_size_is_a_protocol_error(tmp_path):
    (tmp_path / "t.bin").write_bytes(b"\0" * 7)
    with pytest.raises(ProtocolError, match=r"7 bytes .* \(8 expected\)"):
        decode_value({"name": "y", "dtype": "float32", "shape": [2], "file": str(tmp_path / "t.bin")})


def test_exec_names_a_backend_class_with_its_command():
    cls = load_backend_class("exec:some-runner --flag 'a b'")
    assert issubclass(cls, ExecBackend)
    assert cls.name == "exec:some-runner --flag 'a b'"
    assert cls.argv() == ["some-runner", "--flag", "a b"]
    assert cls.available() == (False, "runner command not found: some-runner")


def test_a_runner_of_another_protocol_version_is_unavailable():
    cls = load_backend_class(f"exec:{GARBAGE} 2")
    with pytest.raises(Unavailable, match="protocol 2"):
        cls().load()


def test_official_cases_have_the_same_outcomes_through_exec_as_in_process(official_cases):
    pytest.importorskip("onnxruntime")
    assert len(official_cases) == len(OFFICIAL)
    exec_spec = BackendSpec(f"exec:{RUNNER} onnxruntime")
    results = _run([BackendSpec("onnxruntime"), exec_spec], official_cases)

    def seen(backend):
        return {c.id: (results[(backend, c.id)].outcome, (results[(backend, c.id)].verdict or {}).get("max_abs")) for c in official_cases}

    assert seen(exec_spec.name) == seen("onnxruntime")
    assert {outcome for outcome, _ in seen(exec_spec.name).values()} == {"pass"}


class NamedRunner(ExecBackend):
    """A runner under its own name, as a plug-in declares one."""

    name = "py-reference"
    command = [sys.executable, "-m", "harness.backends.external_runner", "--backend", "reference"]


def test_a_plugin_class_names_its_runner_command():
    results = _run([BackendSpec("tests.test_exec_backend:NamedRunner", name="py-reference")], [relu_case("t/x")])
    assert results[("py-reference", "t/x")].outcome == "pass", results[("py-reference", "t/x")].message


def test_a_plugin_and_a_backend_spec_written_with_the_old_module_names_still_run():
    """``harness.backends.exec`` and ``exec_runner`` are the names external.py and
    external_runner.py had: a plug-in importing ExecBackend from there, and a spec running
    ``-m harness.backends.exec_runner``, keep working."""
    from harness.backends.exec import ExecBackend as Old

    assert Old is ExecBackend
    spec = BackendSpec(f"exec:{shlex.quote(sys.executable)} -m harness.backends.exec_runner --backend reference")
    results = _run([spec], [relu_case("t/old")])
    assert results[(spec.name, "t/old")].outcome == "pass", results[(spec.name, "t/old")].message


def test_the_runner_reports_its_backend_version_and_environment():
    pytest.importorskip("onnxruntime")
    import importlib.metadata

    cls = load_backend_class(f"exec:{RUNNER} onnxruntime")
    backend = cls(threads=1)
    backend.load()
    assert backend.version() == importlib.metadata.version("onnxruntime")
    env = backend.environment()
    assert env["runner"] == "onnxruntime" and env["threads"] == 1 and env["protocol"] == 1


@pytest.mark.parametrize("fault, outcome, words", [
    ("Exit", "crash", "runner exited with status 3 during run"),
    ("Unsupported", "unsupported", "no kernel for Fault-1"),
    ("Raise", "error", "deliberate failure"),
])
def test_a_misbehaving_runner_costs_only_its_own_case(fault, outcome, words):
    cases = [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2")]
    spec = BackendSpec(f"exec:{RUNNER} tests.fault_backends:{fault}")
    results = _run([spec], cases)
    assert results[(spec.name, "t/bad")].outcome == outcome
    assert words in results[(spec.name, "t/bad")].message
    assert [results[(spec.name, k)].outcome for k in ("t/ok1", "t/ok2")] == ["pass", "pass"]


def _processes_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the runner")
def test_a_hanging_runner_is_a_timeout_and_dies_with_its_worker():
    marker = f"marker={uuid.uuid4().hex}"
    spec = BackendSpec(f"exec:{RUNNER} tests.fault_backends:Hang --option {marker}")
    results = _run([spec], [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2")], timeout=10)
    assert results[(spec.name, "t/bad")].outcome == "timeout"
    assert [results[(spec.name, k)].outcome for k in ("t/ok1", "t/ok2")] == ["pass", "pass"]
    for _ in range(100):  # the killed worker's runner gets SIGKILL from the kernel; reaping may lag
        if not _processes_with(marker):
            break
        time.sleep(0.1)
    assert _processes_with(marker) == []


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="needs resource.prlimit (Linux)")
def test_the_cpu_limit_reaches_the_runner_on_every_case():
    # the runner serves two cases before the spinning one: its limit is re-armed per case
    spec = BackendSpec(f"exec:{RUNNER} tests.fault_backends:Spin")
    cases = [relu_case("t/ok1"), relu_case("t/ok2"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok3")]
    results = []
    Runner([spec], jobs=1, timeout=120, limits=WorkerLimits(cpu=2)).run([(c, spec.name) for c in cases], results.append)
    outcomes = {r.case_id: r for r in results}
    assert outcomes["t/bad"].outcome == "timeout"
    assert "killed by SIGXCPU" in outcomes["t/bad"].message
    assert [outcomes[k].outcome for k in ("t/ok1", "t/ok2", "t/ok3")] == ["pass"] * 3


def test_the_output_limit_reaches_the_runner():
    spec = BackendSpec(f"exec:{RUNNER} tests.fault_backends:Chatty")
    cases = [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2")]
    results = []
    Runner([spec], jobs=1, timeout=120, limits=WorkerLimits(output=8 << 20)).run([(c, spec.name) for c in cases], results.append)
    outcomes = {r.case_id: r for r in results}
    assert outcomes["t/bad"].outcome == "crash" and "runner killed by SIGXFSZ" in outcomes["t/bad"].message
    assert [outcomes[k].outcome for k in ("t/ok1", "t/ok2")] == ["pass"] * 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_folder_of_a_killed_worker_is_swept_at_the_next_load():
    import subprocess
    import tempfile

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = Path(tempfile.mkdtemp(prefix=f"onnx-harness-exec-{dead}-"))
    (stale / "model.onnx").write_bytes(b"x")
    backend = load_backend_class(f"exec:{RUNNER} reference")()
    backend.load()
    assert not stale.exists()
    assert Path(backend.folder).name.startswith(f"onnx-harness-exec-{os.getpid()}-")


def test_a_runner_writing_garbage_is_an_error_quoting_it_and_its_stderr():
    spec = BackendSpec(f"exec:{GARBAGE}")
    result = _run([spec], [relu_case("t/x")])[(spec.name, "t/x")]
    assert result.outcome == "error"
    assert "not a protocol reply" in result.message and "<<this is not a reply>>" in result.message
    assert "garbage runner: about to misbehave" in result.message


def test_a_runner_refusing_a_valid_model_is_an_error_and_an_invalid_one_rejected():
    spec = BackendSpec(f"exec:{GARBAGE} reject")
    invalid = relu_case("t/invalid")
    model = invalid.load_model()
    model.graph.node[0].attribute.append(onnx.helper.make_attribute("no_such_attribute", 1))  # Relu has none
    invalid.model_bytes = model.SerializeToString()
    results = _run([spec], [relu_case("t/valid"), invalid])
    valid, bad = results[(spec.name, "t/valid")], results[(spec.name, "t/invalid")]
    assert valid.outcome == "error" and "finds valid" in valid.message and "refuses every model" in valid.message
    assert bad.outcome == "rejected" and "refuses every model" in bad.message


def test_an_unknown_runner_command_is_an_unavailable_backend():
    spec = BackendSpec("exec:/no/such/runner")
    info = Runner([spec]).probe()[spec.name]
    assert not info.available and "runner command not found: /no/such/runner" in info.reason


def test_a_runner_that_dies_at_start_is_unavailable_with_its_stderr():
    cls = load_backend_class(f"exec:{shlex.quote(sys.executable)} -c \"import sys; sys.exit('no runtime here')\"")
    with pytest.raises(Unavailable, match="exited with status 1.*no runtime here"):
        cls().load()



# -- the C++ runner (examples/cpp-runner): built with g++ against the openvino wheel ---------------
CPP = Path(__file__).resolve().parents[1] / "examples" / "cpp-runner"


def _openvino_python() -> str | None:
    """An interpreter with the openvino wheel: this one, or $OPENVINO_PYTHON."""
    import importlib.util
    import os

    if importlib.util.find_spec("openvino") is not None:
        return sys.executable
    return os.environ.get("OPENVINO_PYTHON")


@pytest.fixture(scope="module")
def cpp_runner(tmp_path_factory) -> str:
    import shutil
    import subprocess

    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++) to build examples/cpp-runner")
    python = _openvino_python()
    if python is None:
        pytest.skip("the openvino wheel is not installed here (or set OPENVINO_PYTHON to an interpreter that has it)")
    out = tmp_path_factory.mktemp("cpp") / "ovrunner"
    build = subprocess.run(["sh", str(CPP / "build.sh"), python, str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    return str(out)


def test_the_cpp_runner_runs_official_cases_and_says_what_it_lacks(cpp_runner, official_cases):
    spec = BackendSpec(f"exec:{cpp_runner}")
    results = _run([spec], official_cases)
    outcomes = {c.id.split("/")[1]: results[(spec.name, c.id)].outcome for c in official_cases}
    # strings and sequences: this runner takes numeric and bool tensors only, and OpenVINO's ONNX
    # frontend converts neither StringConcat nor SequenceInsert
    assert outcomes == {name: "unsupported" if name in ("test_string_concat_utf8", "test_sequence_insert_at_back") else "pass"
                        for name in OFFICIAL}
    assert "StringConcat" in results[(spec.name, "onnx-node/test_string_concat_utf8")].message


def test_the_cpp_runner_reports_its_version_and_options(cpp_runner):
    cls = load_backend_class(f"exec:{cpp_runner}")
    backend = cls(precision="f32")
    backend.load()
    env = backend.environment()
    assert env["runner"] == "openvino-cpp" and env["precision"] == "f32" and env["device"] == "CPU"
    assert backend.version()[:4].isdigit()
