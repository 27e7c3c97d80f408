"""A repro bundle stands alone: its ``repro.py``, run by a fresh interpreter in which neither
``harness`` nor ``operator_cases`` can be imported (only the installed numpy, onnx and runtime),
reports the failure on the seeded buggy runtime it was recorded on (exit 1), passes on the correct
one (exit 0), shows a runtime's failure as the bug when the recorded outcome was one, and says
when the backend is the harness's own code (exit 2, with the outputs recorded in ``actual/``)."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.backends.onnxruntime import OnnxRuntimeBackend
from harness.cli import main
from harness.repro import zip_bundle

HERE = "tests.test_repro_bundle"
STUB = Path(__file__).parent / "repro_stub"
BUGGY = f"{HERE}:SeededOnnxRuntime"
OURS = "tests.seeded_faults:SwappedSub"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed")


class SeededOnnxRuntime(OnnxRuntimeBackend):
    """The ONNX Runtime backend on the seeded stand-in of ``tests/repro_stub/onnxruntime``."""

    def load(self) -> None:
        spec = importlib.util.spec_from_file_location("seeded_onnxruntime", STUB / "onnxruntime" / "__init__.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.ort = module


#: runs ./repro.py with the folders it is given first on the path: the seeded runtime's (when given)
#: and this environment's site-packages, whose .pth files stay unread (the editable install of this
#: project is one); exits as the script does
ISOLATED = """
import importlib.util, runpy, sys
sys.path[:0] = sys.argv[1:]
for name in ("harness", "operator_cases", "tests"):
    assert importlib.util.find_spec(name) is None, f"{name} is importable"
sys.argv = ["repro.py"]
runpy.run_path("repro.py", run_name="__main__")
"""


def _isolated(bundle: Path, *first: str) -> subprocess.CompletedProcess:
    site = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    return subprocess.run([sys.executable, "-I", "-S", "-c", ISOLATED, *first, *site], cwd=bundle, capture_output=True, text=True,
                          timeout=120)


def _model(path: Path, op: str, inputs: int = 1) -> Path:
    names = [f"x{k}" for k in range(inputs)]
    graph = helper.make_graph([helper.make_node(op, names, ["y"])], op.lower(),
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[tuple[str, str], Path]:
    tmp = tmp_path_factory.mktemp("bundles")
    models = [_model(tmp / "relu.onnx", "Relu"), _model(tmp / "abs.onnx", "Abs"), _model(tmp / "sub.onnx", "Sub", 2)]
    store = tmp / "r.sqlite"
    code = main(["run", *[a for m in models for a in ("--model", str(m))], "--backend", BUGGY, "--backend", OURS, "--store", str(store),
                 "-j", "1"])
    assert code == 1
    rows = sqlite3.connect(store).execute("SELECT case_id, backend, outcome, bundle FROM results").fetchall()
    outcomes = {(c.rsplit("/", 1)[1], b): o for c, b, o, _ in rows}
    assert outcomes == {("relu", BUGGY): "mismatch", ("abs", BUGGY): "unsupported", ("sub", BUGGY): "mismatch",
                        ("relu", OURS): "pass", ("abs", OURS): "pass", ("sub", OURS): "mismatch"}
    return {(c.rsplit("/", 1)[1], b): store.parent / bundle if not Path(bundle).is_absolute() else Path(bundle)
            for c, b, o, bundle in rows if o != "pass"}


def test_a_bundle_holds_the_model_inputs_expected_and_actual_outputs(bundles):
    bundle = bundles[("relu", BUGGY)]
    for name in ("model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb", "actual/output_0.pb", "meta.json", "repro.py"):
        assert (bundle / name).is_file(), name
    meta = json.loads((bundle / "meta.json").read_text())
    assert meta["actual"] == {"data_set": 0, "outputs": [{"name": "y", "kind": "tensor_type"}]}
    expected, actual = (onnx.numpy_helper.to_array(onnx.load_tensor(str(bundle / p))) for p in ("test_data_set_0/output_0.pb", "actual/output_0.pb"))
    np.testing.assert_array_equal(actual, expected + np.float32(1))  # the seeded bug, as the backend gave it
    assert not (bundles[("abs", BUGGY)] / "actual").exists()  # it failed before giving outputs


def test_the_script_imports_no_harness(bundles):
    text = (bundles[("relu", BUGGY)] / "repro.py").read_text()
    assert set(re.findall(r"^\s*(?:import|from) ([\w.]+)", text, re.M)) == {"pathlib", "sys", "numpy", "onnx", "onnxruntime"}
    assert "pip install numpy onnx onnxruntime\n" in text and "python repro.py" in text


def test_the_script_reports_the_bug_on_the_buggy_runtime_and_passes_on_the_correct_one(bundles):
    bundle = bundles[("relu", BUGGY)]
    buggy = _isolated(bundle, str(STUB))
    assert buggy.returncode == 1, (buggy.stdout, buggy.stderr)
    assert "ONNX Runtime 0.0+seeded" in buggy.stdout and "y: expected float32[2, 3]" in buggy.stdout and "BUG REPRODUCES" in buggy.stdout
    correct = _isolated(bundle)
    assert correct.returncode == 0, (correct.stdout, correct.stderr)
    assert "fixed: the outputs match the spec" in correct.stdout and "0.0+seeded" not in correct.stdout


def test_an_unsupported_outcome_gives_a_repro_that_shows_the_error(bundles):
    bundle = bundles[("abs", BUGGY)]
    buggy = _isolated(bundle, str(STUB))
    assert buggy.returncode == 1, (buggy.stdout, buggy.stderr)
    assert "BUG REPRODUCES: the runtime fails: RuntimeError: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED" in buggy.stdout
    correct = _isolated(bundle)
    assert correct.returncode == 0 and "fixed" in correct.stdout, (correct.stdout, correct.stderr)


def test_the_harness_own_backend_says_so_and_compares_the_recorded_outputs(bundles):
    bundle = bundles[("sub", OURS)]
    alone = _isolated(bundle)
    assert alone.returncode == 2, (alone.stdout, alone.stderr)
    assert "unavailable: No module named 'harness'" in alone.stdout
    assert "they differ from the expected ones" in alone.stdout and "y: expected" in alone.stdout
    assert f"the harness's own backend {OURS}" in (bundle / "repro.py").read_text()


def test_a_zip_of_a_stored_bundle_unpacks_to_a_folder_that_runs(bundles, tmp_path):
    bundle = tmp_path / "stored" / bundles[("relu", BUGGY)].name
    shutil.copytree(bundles[("relu", BUGGY)], bundle)
    (bundle / "repro.py").write_text("raise SystemExit('a script from before the bundle stood alone')\n")
    with zipfile.ZipFile(io.BytesIO(zip_bundle(bundle))) as zf:
        zf.extractall(tmp_path / "unzipped")
    unpacked = tmp_path / "unzipped" / bundle.name
    assert sorted(p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()) == [
        "actual/output_0.pb", "meta.json", "model.onnx", "repro.py", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"]
    assert _isolated(unpacked, str(STUB)).returncode == 1
    source = json.loads((bundles[("relu", BUGGY)] / "meta.json").read_text())["tags"]["source"]
    assert Path(source).is_absolute()  # the stored bundle names the model file's path on this machine
    shared = "".join(p.read_text() for p in unpacked.rglob("*") if p.suffix in (".json", ".py"))
    assert str(Path(source).parent) not in shared and '"source": "relu.onnx"' in shared  # the shared one does not


def test_repro_command_takes_the_failing_backend_from_the_store(bundles, tmp_path, capsys):
    store = next(iter(bundles.values())).parents[4] / "r.sqlite"  # <store>/bundles/r/run-1/<backend>/<case>
    assert main(["repro", "user/relu", "--store", str(store), "-o", str(tmp_path / "relu")]) == 0
    assert f"user/relu on {BUGGY}: mismatch" in capsys.readouterr().out
    assert _isolated(tmp_path / "relu", str(STUB)).returncode == 1 and _isolated(tmp_path / "relu").returncode == 0
    assert main(["repro", "user/relu", "--store", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "x")]) == 2


def test_an_unspecified_result_accepts_the_outputs_the_harness_found_a_reading(bundles, tmp_path):
    """Recorded ``unspecified`` (the spec silent, the outputs one of the accepted readings): the same outputs pass."""
    meta = json.loads((bundles[("relu", BUGGY)] / "meta.json").read_text())
    folder = tmp_path / "silent"
    shutil.copytree(bundles[("relu", BUGGY)], folder)
    (folder / "meta.json").write_text(json.dumps({**meta, "raw_outcome": "unspecified", "outcome": "unspecified"}))
    with zipfile.ZipFile(io.BytesIO(zip_bundle(folder))) as zf:
        zf.extractall(tmp_path / "z")
    done = _isolated(tmp_path / "z" / "silent", str(STUB))
    assert done.returncode == 0 and "fixed" in done.stdout, (done.stdout, done.stderr)
    assert _isolated(bundles[("relu", BUGGY)], str(STUB)).returncode == 1  # recorded as a mismatch: the same outputs are the bug


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
@pytest.mark.parametrize("tolerance", [(0.0, 0.0, None), (1e-3, 1e-7, None), (0.0, 0.0, 2), (1e-4, 0.0, 1)])
def test_the_script_judges_values_as_the_harness_comparator_does(dtype, tolerance):
    import ml_dtypes

    from harness.case import Tolerance
    from harness.compare import Comparator
    from harness.findings import compose

    space: dict = {"__name__": "judge"}
    exec(compose(["judge"], ["FEEDS = {}", "EXPECTED = {}", "READINGS = {}", "BUG_IS_A_FAILURE = False"], ["    return None"],
                 "def run(model):\n    return {}\n", "numpy", "numpy"), space)
    rtol, atol, ulp = tolerance
    space.update(RTOL=rtol, ATOL=atol, ULP=ulp)
    kind = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 65504.0, -1.0])
    agree = 0
    for _ in range(300):
        want = np.concatenate([rng.standard_normal(5) * 10.0 ** rng.integers(-3, 4), rng.choice(specials, 3)]).astype(kind)
        got = want.copy()
        k = rng.integers(0, 8)
        step = int(rng.integers(-3, 4))
        bits = got.view({2: np.int16, 4: np.int32, 8: np.int64}[kind.itemsize])
        bits[k] += step  # a few units in the last place away (or into another special value)
        if rng.random() < 0.2:
            got[k] = rng.choice(specials).astype(kind)
        harness = Comparator().compare([want], [got], Tolerance(rtol, atol, ulp)).outcome == "pass"
        assert space["same"](want, got) == harness, (want, got, tolerance)
        agree += harness
    assert 0 < agree < 300  # both verdicts were met


def test_the_report_offers_each_shown_cause_s_example_bundle_as_a_zip(bundles, tmp_path):
    from harness.report import write_all
    from harness.report.matrix import build_report
    from harness.report.sources import RunRef

    store = next(iter(bundles.values())).parents[4] / "r.sqlite"
    report = build_report([RunRef(store, 1)])
    write_all(report, tmp_path / "out", only=["html"])
    html = (tmp_path / "out" / "index.html").read_text()
    hrefs = re.findall(r'<a class="dl" href="(repro/[^"]+\.zip)" download', html)
    assert len(hrefs) == len(report.failure_groups()) == 4  # relu, abs, sub on the seeded runtime; sub on our own backend
    relu = next(h for h in hrefs if h.endswith("user__relu.zip"))
    with zipfile.ZipFile(tmp_path / "out" / relu) as zf:
        zf.extractall(tmp_path / "unzipped")
    assert _isolated(tmp_path / "unzipped" / "user__relu", str(STUB)).returncode == 1


def test_an_output_no_bundle_can_hold_is_recorded_as_none_and_the_result_still_travels():
    # ONNX Runtime hands a sparse Constant back as its own SparseTensor, which cannot be pickled to
    # the controller: the worker records it as None instead of dying (a crash of every such case)
    import pickle
    import threading

    from harness.worker import _recordable

    lock = threading.Lock()  # stands for any object pickle refuses
    with pytest.raises(TypeError):
        pickle.dumps(lock)
    outputs = [np.arange(3), lock, [np.zeros(2), lock], {"a": np.ones(1)}, None]
    kept = [_recordable(o) for o in outputs]
    assert kept[1] is None and kept[2] is None and kept[4] is None
    assert kept[0] is outputs[0] and list(kept[3]) == ["a"]
    pickle.dumps(kept)
