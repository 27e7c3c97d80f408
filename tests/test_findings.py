"""The findings catalogue: every record complete, its expected values our reference's, its repro
script failing on the buggy runtime and passing on a fixed one (seeded stand-ins), ``findings
show`` printing the issue, ``findings check`` finding each counted bug still there."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from harness import findings as F
from harness.cli import main

RECORDS = F.load()
IDS = sorted(RECORDS)
UPSTREAM = re.compile(r"^https://github\.com/(microsoft/onnxruntime|onnx/onnx|pytorch/pytorch)/(issues|pull)/\d+$")


def _array(spec: dict, value) -> np.ndarray:
    dtype = object if spec["dtype"] == "string" else spec["dtype"]
    a = np.array(value, dtype=dtype)
    return a.reshape(spec["shape"]) if "shape" in spec else a


def _value(spec: dict, key: str):
    if spec.get("kind") == "sequence":
        return [_array(spec, v) for v in spec[key]]
    return _array(spec, spec[key])


def _equal(want, got, rtol: float, atol: float) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(want) == len(got) and all(_equal(w, g, rtol, atol) for w, g in zip(want, got))
    got = np.asarray(got)
    if want.shape != got.shape:
        return False
    if want.dtype.kind != "f":
        return bool(np.array_equal(want, got.astype(want.dtype)))
    return bool(np.allclose(want.astype(np.float64), got.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))


def test_at_least_25_counted_findings_with_distinct_ids():
    counted = [r for r in RECORDS.values() if F.counted(r)]
    assert len(counted) >= 25
    assert len({(r["runtime"], r["title"]) for r in counted}) == len(counted)


@pytest.mark.parametrize("finding", IDS)
def test_every_record_is_complete(finding):
    r = RECORDS[finding]
    missing = [k for k in F.REQUIRED if k not in r or r[k] in ("", [], None)]
    assert not missing, f"{finding} lacks {missing}"
    assert r["runtime"] in F.RUNTIMES
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", finding) and finding.startswith(r["runtime"].replace(".", "-"))
    assert r["upstream"] == "unreported" or UPSTREAM.match(r["upstream"]), r["upstream"]
    assert F.spec_source(r), f"{finding}: the spec quote is not in {F.op_version(r)}'s schema text"
    assert any(n["op"] == r["op"] for n in r["nodes"])
    assert ("call" in r) == (r["runtime"] == "torch"), f"{finding}: a torch finding names its torch call, no other does"
    for out in r["outputs"]:
        assert "expected" in out and ("actual" in out or r.get("actual_error")), f"{finding}: {out['name']} lacks expected or actual"
    for spec in r["inputs"]:
        _value(spec, "value")  # every input is a literal array of its dtype


def _our_reference(record: dict):
    """Our reference of the record's op-version (only the operator's own module is imported)."""
    from harness.registry import REGISTRY, load_all, operator_modules

    key = (record.get("domain", ""), record["op"], record["version"])
    if key not in REGISTRY:
        pattern = f'Operator("{record["op"]}"'
        for name in operator_modules():
            if pattern in Path(importlib.util.find_spec(name).origin).read_text():
                importlib.import_module(name)
        if key not in REGISTRY:
            load_all()
    return REGISTRY[key].reference


@pytest.mark.parametrize("finding", [i for i in IDS if len(RECORDS[i]["nodes"]) == 1])
def test_expected_values_are_our_references(finding):
    r = RECORDS[finding]
    (node,) = r["nodes"]
    feeds = {spec["name"]: _value(spec, "value") for spec in r["inputs"]}
    got = _our_reference(r)(*[feeds[n] if n else None for n in node["inputs"]], **node.get("attributes", {}))
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for out in r["outputs"]:
        ours = got[node["outputs"].index(out["name"])]
        ours = getattr(ours, "value", ours)
        assert _equal(_value(out, "expected"), ours, r.get("rtol", 0.0) or 1e-7, r.get("atol", 0.0)), f"{finding}: {out['name']}"


def test_the_relu_clip_record_composes_our_references():
    from harness.registry import REGISTRY

    r = RECORDS["onnxruntime-relu-clip-fusion-float64"]
    _our_reference({"op": "Relu", "version": 14}), _our_reference(r)
    x = _value(r["inputs"][0], "value")
    lo, hi = (_value(spec, "value") for spec in r["inputs"][1:])
    ours = REGISTRY[("", "Clip", 13)].reference(REGISTRY[("", "Relu", 14)].reference(x), lo, hi)
    assert _equal(_value(r["outputs"][0], "expected"), ours, 0.0, 0.0)


# -- the repro script, run against seeded stand-ins of the runtime -------------------------------------
class _Tensor:
    """A stand-in torch tensor: a method such as .bfloat16() or .float() gives it back unchanged,
    .numpy() its value."""

    def __init__(self, value):
        self.value = value

    def numpy(self):
        return self.value

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def _stand_in(monkeypatch, runtime: str, outputs):
    """The runtime replaced by one that gives ``outputs`` (a list, or an exception to raise)."""
    def result():
        if isinstance(outputs, Exception):
            raise outputs
        return outputs

    if runtime == "onnxruntime":
        class Session:
            def __init__(self, model, options=None, providers=None):
                assert isinstance(model, bytes)

            def run(self, names, feeds):
                return result()

        ort = types.ModuleType("onnxruntime")
        ort.__version__ = "stand-in"
        ort.SessionOptions = types.SimpleNamespace
        ort.GraphOptimizationLevel = types.SimpleNamespace(ORT_DISABLE_ALL=0, ORT_ENABLE_BASIC=1, ORT_ENABLE_EXTENDED=2, ORT_ENABLE_ALL=99)
        ort.InferenceSession = Session
        monkeypatch.setitem(sys.modules, "onnxruntime", ort)
    elif runtime == "torch":  # every torch function gives the outputs, as tensors (with .numpy())
        def call(*args, **kwargs):
            got = tuple(_Tensor(v) for v in result())
            return got if len(got) > 1 else got[0]

        fake = types.ModuleType("torch")
        fake.__version__ = "stand-in"
        fake.from_numpy = _Tensor
        fake.__getattr__ = lambda name: call
        monkeypatch.setitem(sys.modules, "torch", fake)
    else:
        import onnx.reference

        class Evaluator:
            def __init__(self, model):
                pass

            def run(self, names, feeds):
                return result()

        monkeypatch.setattr(onnx.reference, "ReferenceEvaluator", Evaluator)


def _actual_spec(out: dict) -> dict:
    """The output's spec for its actual value: its own shape where it has one (scalars, empty or wrong shapes)."""
    spec = {k: v for k, v in out.items() if k != "shape"}
    return {**spec, "shape": out["actual_shape"]} if "actual_shape" in out else spec


def _exit_code(record: dict) -> int:
    return F.run_here(F.script(record))[0]


@pytest.mark.parametrize("finding", IDS)
def test_repro_fails_on_the_buggy_runtime_and_passes_on_a_fixed_one(monkeypatch, finding):
    r = RECORDS[finding]
    fixed = [_value(out, "expected") for out in r["outputs"]]
    _stand_in(monkeypatch, r["runtime"], fixed)
    assert _exit_code(r) == 0
    if r.get("actual_error"):
        buggy = RuntimeError(r["actual_error"])
    else:
        buggy = [_value(_actual_spec(out), "actual") for out in r["outputs"]]
    _stand_in(monkeypatch, r["runtime"], buggy)
    assert _exit_code(r) == 1
    if not r.get("actual_error"):  # a failure is then another problem, never this bug
        _stand_in(monkeypatch, r["runtime"], RuntimeError("Unsupported model IR version"))
        assert _exit_code(r) == 3


def test_repro_accepts_each_named_reading_and_nothing_else(monkeypatch):
    r = RECORDS["onnxruntime-reducemin-nan-zero"]
    (out,) = r["outputs"]
    for value, code in [(-np.inf, 0), (np.nan, 0), (0.0, 1), (1.0, 1)]:
        _stand_in(monkeypatch, "onnxruntime", [np.array(value, dtype=np.float32)])
        assert _exit_code(r) == code, value
    _stand_in(monkeypatch, "onnxruntime", [np.array(-np.inf, dtype=np.float64)])  # right value, wrong dtype
    assert _exit_code(r) == 1


def test_a_runtime_that_is_not_installed_is_unavailable_never_fixed(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    assert F.check(RECORDS["onnxruntime-gather-string-slices"], isolated=False)[0] == F.UNAVAILABLE


def test_repro_script_is_portable():
    for r in RECORDS.values():
        imports = set(re.findall(r"^\s*(?:import|from) ([\w.]+)", F.script(r), re.M))
        assert imports <= {"sys", "numpy", "onnx", "onnxruntime", "onnx.reference", "torch"}, imports
        assert ("torch" in imports) == (r["runtime"] == "torch"), r["id"]


# -- the command ----------------------------------------------------------------------------------------
def test_findings_lists_every_record(capsys):
    assert main(["findings"]) == 0
    out = capsys.readouterr().out
    assert all(i in out for i in IDS)
    assert f"{len(IDS)} findings" in out


def test_show_prints_the_issue_with_spec_quote_and_script(capsys):
    r = RECORDS["onnxruntime-pow-int64-through-double"]
    assert main(["findings", "show", r["id"]]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {r['title']}\n")
    assert all(f"> {line}" in out for line in r["spec"].strip().splitlines())
    assert "```python\n" + F.script(r).rstrip() + "\n```" in out
    assert "9223372036854775807" in out and "-9223372036854775808" in out  # expected and actual
    assert main(["findings", "show", "no-such-finding"]) == 2


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed")
def test_check_finds_every_counted_finding_still_reproducing():
    here = {r for r, spec in F.RUNTIMES.items() if importlib.util.find_spec(spec["module"].split(".")[0])}
    stale = {i: F.check(RECORDS[i], isolated=False) for i in IDS if F.counted(RECORDS[i]) and RECORDS[i]["runtime"] in here}
    assert {i: v for i, v in stale.items() if v[0] != F.REPRODUCES} == {}


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed")
def test_check_command_runs_the_script_in_a_fresh_interpreter(capsys):
    assert main(["findings", "check", "onnxruntime-sign-float16-nan-zero"]) == 0
    out = capsys.readouterr().out
    assert "| onnxruntime-sign-float16-nan-zero" in out and "reproduces" in out and "1 reproduces" in out


def test_expectation_entries_name_existing_findings():
    import tomllib

    from harness.expectations import BUILTIN_DIR

    named = {e["finding"] for path in BUILTIN_DIR.glob("*.toml") for e in tomllib.loads(path.read_text()).get("expect", []) if "finding" in e}
    assert named and named <= set(RECORDS), named - set(RECORDS)


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed")
def test_the_fusion_finding_passes_without_graph_optimizations():
    r = RECORDS["onnxruntime-relu-clip-fusion-float64"]
    assert F.check({**r, "optimization": "disable"}, isolated=False)[0] == F.FIXED
    assert F.check(r, isolated=False)[0] == F.REPRODUCES
