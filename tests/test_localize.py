"""``onnx-harness localize``: the first diverging node of a 50-node model on seeded faulty backends."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.case import Case, DataSet, Tolerance
from harness.cli import main
from harness.localize import localize
from harness.runner import BackendSpec

N = 50
MIDDLE = 25
OPS = ("Mul", "Add", "Neg", "Sin")  # the chain around the faulty node (a fault is not squashed away); no Add feeds a Relu


def _model(middle: list[str]) -> onnx.ModelProto:
    """A chain of N nodes on x[3,4] (float32); the ops ``middle`` sit at MIDDLE, MIDDLE+1, ..."""
    nodes, inits = [], []
    prev = "x"
    ops = [OPS[k % len(OPS)] for k in range(N)]
    ops[MIDDLE:MIDDLE + len(middle)] = middle
    rng = np.random.default_rng(0)
    for k, op in enumerate(ops):
        out = f"v{k}"
        if op in ("Mul", "Add", "Sub"):
            c = f"c{k}"
            inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32), c))
            nodes.append(helper.make_node(op, [prev, c], [out], name=f"n{k}_{op.lower()}"))
        else:
            nodes.append(helper.make_node(op, [prev], [out], name=f"n{k}_{op.lower()}"))
        prev = out
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [3, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


UNCOVERED = "test.localize.uncovered"  # a made-up domain: no module of ours will ever cover it


def _without_our_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """Node 3 becomes an operator our references do not cover (ScaleShift of a made-up domain,
    defined by a model-local function y = 2x - 1, so every backend runs it and the shape and dtype
    are kept): localize must take the oracle backend's value for it. The body has no Sub, the op
    the seeded faulty backends get wrong."""
    node = model.graph.node[3]
    node.op_type, node.domain = "ScaleShift", UNCOVERED
    del node.attribute[:]
    body = [helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.array(2.0, np.float32))),
            helper.make_node("Constant", [], ["minus_one"], value=numpy_helper.from_array(np.array(-1.0, np.float32))),
            helper.make_node("Mul", ["x", "two"], ["twice"]), helper.make_node("Add", ["twice", "minus_one"], ["y"])]
    model.functions.append(helper.make_function(UNCOVERED, "ScaleShift", ["x"], ["y"], body, [helper.make_opsetid("", 17)]))
    model.opset_import.append(helper.make_opsetid(UNCOVERED, 1))
    from harness.registry import load_all

    assert not any(domain == UNCOVERED for domain, _, _ in load_all()), "the made-up domain is covered: pick another"
    return model


def _case(model: onnx.ModelProto) -> Case:
    x = np.random.default_rng(1).uniform(-2, 2, (3, 4)).astype(np.float32)
    return Case(id="user/chain50", suite="user", model_bytes=model.SerializeToString(), data=[DataSet({"x": x}, None)],
                tolerance=Tolerance(1e-4, 1e-5))


def test_localize_names_the_one_wrong_node_in_the_middle(tmp_path):
    case = _case(_model(["Sub"]))
    loc = localize(case, BackendSpec("tests.seeded_faults:SwappedSub", name="swapped-sub"), bundle=tmp_path / "b")
    assert loc.status == "found"
    assert loc.oracle == "composed references"
    assert loc.method == "intermediates"
    assert (loc.node.index, loc.node.op, loc.node.name, loc.node.since) == (MIDDLE, "Sub", f"n{MIDDLE}_sub", 14)
    assert loc.node.input_shapes == ["float32[3,4]", "float32[3,4]"]
    # its inputs and both outputs: the oracle's a - b, the backend's b - a
    a, b = loc.inputs[f"v{MIDDLE - 1}"], loc.inputs[f"c{MIDDLE}"]
    np.testing.assert_allclose(loc.expected[0], a - b, rtol=1e-6)
    np.testing.assert_allclose(loc.actual[0], b - a, rtol=1e-6)
    # the node alone on those inputs is wrong too, and the bundle replays it
    assert loc.single_outcome == "mismatch"
    bundle = tmp_path / "b"
    model = onnx.load(bundle / "model.onnx")
    assert [n.op_type for n in model.graph.node] == ["Sub"]
    meta = json.loads((bundle / "meta.json").read_text())
    assert meta["outcome"] == "mismatch" and meta["backend_spec"] == "tests.seeded_faults:SwappedSub"
    assert json.loads((bundle / "localize.json").read_text())["node"]["name"] == f"n{MIDDLE}_sub"


def test_a_fusion_is_found_by_bisecting_prefix_models():
    # the fused Add+Relu forgets the bias only while the Add's output is internal: exposing every
    # intermediate removes the fusion, so only the prefix models show the divergence
    case = _case(_model(["Add", "Relu"]))
    loc = localize(case, BackendSpec("tests.seeded_faults:FusedAddRelu", name="fused-add-relu"))
    assert loc.status == "found"
    assert loc.method == "prefix"
    assert (loc.node.index, loc.node.op) == (MIDDLE + 1, "Relu")
    assert loc.single_outcome == "pass"  # right alone: the fault is the fusion with its producer
    assert loc.runs <= 12  # a bisection, not one run per node


def test_a_correct_backend_has_no_diverging_node():
    loc = localize(_case(_model(["Sub"])), BackendSpec("reference"))
    assert loc.status == "agrees" and loc.node is None
    assert loc.values_compared >= N


def test_a_crashing_backend_does_not_end_localize():
    loc = localize(_case(_model(["Sub"])), BackendSpec("tests.test_localize:SegfaultOnSub", name="segv-sub"))
    assert loc.status == "found" and loc.method == "prefix"
    assert (loc.node.index, loc.node.op) == (MIDDLE, "Sub")
    assert loc.actual is None and "crash" in loc.message
    assert loc.single_outcome == "crash"


def test_cli_localizes_a_stored_non_pass_with_the_oracle_backend(tmp_path, capsys):
    model = _without_our_reference(_model(["Sub"]))  # the oracle for that one node is the reference backend
    onnx.save(model, tmp_path / "chain50.onnx")
    store, spec = str(tmp_path / "s.sqlite"), "tests.seeded_faults:SwappedSub"
    assert main(["run", "--model", str(tmp_path / "chain50.onnx"), "--backend", spec, "--store", store, "--exit-zero", "-j", "1"]) == 0
    assert "mismatch" in capsys.readouterr().out
    code = main(["localize", "user/chain50", "--backend", spec, "--store", store, "--json", str(tmp_path / "l.json"),
                 "-o", str(tmp_path / "bundle")])
    text = capsys.readouterr().out
    assert code == 0, text
    assert f"first diverging: node {MIDDLE} Sub-14 'n{MIDDLE}_sub'" in text
    got = json.loads((tmp_path / "l.json").read_text())
    assert got["oracle"] == "composed references + reference" and got["confirmed"] is True
    assert "oracle: our references for 49 nodes, reference for 1 (1 of them run alone on our values)" in got["steps"]
    assert got["node"]["input_shapes"] == ["float32[3,4]", "float32[3,4]"]
    assert (tmp_path / "bundle" / "repro.py").is_file()


from tests.seeded_faults import _Kernels  # noqa: E402


class SegfaultOnSub(_Kernels):
    name = "segv-sub"

    def prepare(self, model):
        if any(n.op_type == "Sub" for n in model.graph.node):
            import ctypes

            ctypes.string_at(0)
        return super().prepare(model)


def test_run_localize_keeps_the_node_in_the_result_and_the_html_drill_down_shows_it(tmp_path, capsys):
    onnx.save(_model(["Sub"]), tmp_path / "chain50.onnx")
    store = tmp_path / "s.sqlite"
    assert main(["run", "--model", str(tmp_path / "chain50.onnx"), "--backend", "tests.seeded_faults:SwappedSub",
                 "--store", str(store), "--exit-zero", "-j", "1", "--localize", "120"]) == 0
    from harness.store import Store

    (row,) = list(Store(store).results(1))
    loc = row["verdict"]["localized"]
    assert row["outcome"] == "mismatch" and loc["status"] == "found"
    assert loc["node"]["label"] == f"node {MIDDLE} Sub-14 'n{MIDDLE}_sub'"
    assert (tmp_path / loc["bundle"] / "repro.py").is_file() and loc["bundle"].startswith(row["bundle"])
    assert main(["report", "--store", str(store), "-o", str(tmp_path / "out"), "--format", "html"]) == 0
    capsys.readouterr()
    try:
        from harness.report.browser import chromium, find_chromium, wait_ready

        find_chromium()
        from selenium.webdriver.common.by import By
    except Exception as exc:  # the browser half needs chromium and selenium (the 'test' extra)
        pytest.skip(f"no headless browser: {exc}")
    from urllib.parse import quote

    url = (tmp_path / "out" / "index.html").resolve().as_uri()
    with chromium() as driver:
        driver.get(url + f"#case={quote(row['case_id'])}&backend={quote(row['backend'])}")
        wait_ready(driver)
        field = lambda name: driver.find_element(By.CSS_SELECTOR, f"#drill-body [data-field='{name}']").text  # noqa: E731
        assert field("localized_node") == f"node {MIDDLE} Sub-14 'n{MIDDLE}_sub'"
        assert field("localized_shapes") == "float32[3,4], float32[3,4]"
        assert field("localized_single").startswith("mismatch: wrong on its own")


def test_where_the_oracle_backend_disagrees_with_our_reference_ours_is_taken_and_said():
    model = _without_our_reference(_model(["Sub"]))  # one node without a reference of ours: the oracle backend is used
    loc = localize(_case(model), BackendSpec("reference"), oracle=BackendSpec("tests.seeded_faults:SwappedSub", name="swapped-sub"))
    assert loc.status == "agrees"  # onnx.reference computes Sub right: nothing diverges from our Sub
    said = [s for s in loc.steps if "disagree" in s]
    assert len(said) == 1 and f"our reference and swapped-sub disagree at node {MIDDLE} Sub-14 'n{MIDDLE}_sub'" in said[0]


def test_an_oracle_that_fails_too_is_said_with_the_node_it_fails_at():
    from harness.localize import LocalizeError

    model = _without_our_reference(_model(["Sub"]))
    with pytest.raises(LocalizeError, match=f"fails too at node {MIDDLE} Sub-14 'n{MIDDLE}_sub' .*no Sub here"):
        localize(_case(model), BackendSpec("reference"), oracle=BackendSpec("tests.test_localize:RaiseOnSub", name="raise-sub"))


def test_the_tolerance_grows_with_depth_from_the_dtype_base():
    from harness.localize import value_tolerance

    x = np.zeros(3, np.float32)
    # float32 base (harness/data/tolerances.toml): rtol 1e-5, atol 1e-6, ulp 4, times the depth
    t = value_tolerance(x, 26, Tolerance(1e-7, 1e-9, None))
    assert (t.rtol, t.atol, t.ulp) == (pytest.approx(2.6e-4), pytest.approx(2.6e-5), 104)
    # the case's own tolerance where it is larger
    t = value_tolerance(x, 1, Tolerance(1e-3, 1e-4, None))
    assert (t.rtol, t.atol, t.ulp) == (1e-3, 1e-4, 4)


class RaiseOnSub(_Kernels):
    name = "raise-sub"

    def prepare(self, model):
        if any(n.op_type == "Sub" for n in model.graph.node):
            raise RuntimeError("no Sub here")
        return super().prepare(model)
