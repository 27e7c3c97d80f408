"""A pass must be earned: no oracle is an error, random outputs are judged by their spec (values
where the spec makes them deterministic, support and distribution where it does not)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.backends.base import Backend, Session
from harness.backends.reference import ReferenceBackend
from harness.case import Case, DataSet, Tolerance, graph_inputs
from harness.worker import execute_case, random_outputs
from harness.schema import model_tags
from harness.suites.onnx_official import _normalize


class _Session(Session):
    def __init__(self, fn: Callable[[dict[str, Any]], list[Any]]) -> None:
        self.fn = fn

    def run(self, feeds):
        return self.fn(feeds)


class Rewrite(ReferenceBackend):
    """The reference's outputs passed through ``change`` (a backend that gets values wrong)."""

    name = "rewrite"

    def __init__(self, change: Callable[[list[Any]], list[Any]]) -> None:
        super().__init__()
        self.change = change

    def prepare(self, model):
        session = super().prepare(model)
        return _Session(lambda feeds: self.change(session.run(feeds)))


class Returns(Backend):
    """Returns whatever ``fn(model, feeds)`` makes, without running the model."""

    name = "returns"

    def __init__(self, fn: Callable[[onnx.ModelProto, dict[str, Any]], list[Any]]) -> None:
        super().__init__()
        self.fn = fn

    def prepare(self, model):
        return _Session(lambda feeds: self.fn(model, feeds))


def garbage(model, feeds):
    return [np.full((2, 2), 7.0, np.float32)]


def _wrong(outs: list[Any]) -> list[Any]:
    """+1 on float outputs, negation of a boolean mask."""
    return [o + 1 if o.dtype.kind == "f" else ~o if o.dtype == np.bool_ else o for o in outs]


def _case(model: onnx.ModelProto, data: list[DataSet], tol: Tolerance | None = None, case_id: str = "test/case", **tags) -> Case:
    tags = {**model_tags(model), **tags}  # tagged as the suites tag them
    return Case(id=case_id, suite="test", model_bytes=model.SerializeToString(), data=data,
                tolerance=tol or Tolerance(), tags=tags, check="random" if tags.get("random") else "values")


def _model(nodes, inputs, outputs, opset: int = 22) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _relu() -> onnx.ModelProto:
    return _model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])


X = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)


# -- no oracle, no pass -----------------------------------------------------------------------
def test_zero_data_sets_is_an_error_not_a_pass():
    r = execute_case(Returns(garbage), _case(_relu(), []))
    assert r.outcome == "error" and "no data sets" in r.message


def test_expected_none_without_an_oracle_error_is_an_error():
    r = execute_case(Returns(garbage), _case(_relu(), [DataSet({"x": X}, None)]))
    assert r.outcome == "error" and "no oracle" in r.message and "data set 0" in r.message


def test_an_empty_expected_list_for_a_model_with_outputs_is_an_error():
    r = execute_case(Returns(lambda m, f: []), _case(_relu(), [DataSet({"x": X}, [])]))
    assert r.outcome == "error" and "no expected outputs" in r.message


@pytest.mark.parametrize("data", [[], [DataSet({"x": X}, None)]], ids=["zero-data-sets", "expected-none"])
def test_an_oracle_failure_is_an_error_attributed_to_the_oracle(data):
    case = _case(_relu(), data, oracle_error="RuntimeError: reference kernel blew up")
    r = execute_case(Returns(garbage), case)
    assert r.outcome == "error"
    assert r.message == "oracle error: RuntimeError: reference kernel blew up"


def test_a_case_with_an_oracle_still_passes_and_fails_on_values():
    case = _case(_relu(), [DataSet({"x": X}, [np.maximum(X, 0)])])
    assert execute_case(ReferenceBackend(), case).outcome == "pass"
    assert execute_case(Returns(garbage), case).outcome == "mismatch"


# -- the official Dropout cases -----------------------------------------------------------------
@pytest.fixture(scope="module")
def dropout_cases() -> dict[str, Case]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        testcases = collect_testcases("Dropout")
    cases = {}
    for tc in testcases:
        if "Dropout" not in {n.op_type for n in tc.model.graph.node}:
            continue
        inputs = graph_inputs(tc.model)
        data = [DataSet({i.name: _normalize(v) for i, v in zip(inputs, ins)}, [_normalize(v) for v in outs]) for ins, outs in tc.data_sets]
        tags = model_tags(tc.model)
        cases[tc.name] = Case(id=f"onnx-node/{tc.name}", suite="onnx-node", model_bytes=tc.model.SerializeToString(), data=data,
                              tolerance=Tolerance(tc.rtol, tc.atol), tags=tags, check="random" if tags.get("random") else "values")
    return cases


DETERMINISTIC_DROPOUT = ["test_training_dropout_zero_ratio", "test_training_dropout_zero_ratio_mask", "test_dropout_default",
                         "test_dropout_default_mask", "test_dropout_default_ratio", "test_dropout_default_mask_ratio",
                         "test_dropout_default_old", "test_dropout_random_old"]


@pytest.mark.parametrize("name", DETERMINISTIC_DROPOUT)
def test_dropout_that_the_spec_makes_the_identity_is_compared_by_value(dropout_cases, name):
    case = dropout_cases[name]
    assert execute_case(ReferenceBackend(), case).outcome == "pass"
    r = execute_case(Rewrite(_wrong), case)
    assert r.outcome == "mismatch" and "values differ" in r.message


@pytest.mark.parametrize("name", ["test_training_dropout_zero_ratio_mask", "test_dropout_default_mask"])
def test_an_identity_dropout_mask_must_be_all_true(dropout_cases, name):
    r = execute_case(Rewrite(lambda outs: [outs[0], ~outs[1]]), dropout_cases[name])
    assert r.outcome == "mismatch" and r.message.startswith("output 1")


@pytest.mark.parametrize("name", ["test_training_dropout", "test_training_dropout_mask", "test_training_dropout_default",
                                  "test_training_dropout_default_mask"])
def test_training_dropout_is_checked_by_its_relation_to_the_input(dropout_cases, name):
    case = dropout_cases[name]
    assert execute_case(ReferenceBackend(), case).outcome == "pass"
    r = execute_case(Rewrite(_wrong), case)
    assert r.outcome == "mismatch" and "x / (1 - ratio)" in r.message


def test_training_dropout_that_keeps_everything_fails_the_keep_rate(dropout_cases):
    # test_training_dropout: ratio 0.75 on 60 values; returning x / 0.25 everywhere with an
    # all-true mask satisfies the relation but keeps 60 of 60 where 15 are expected
    case = dropout_cases["test_training_dropout_mask"]
    x = case.data[0].inputs["x"]
    r = execute_case(Returns(lambda m, f: [(x / np.float32(0.25)).astype(np.float32), np.ones(x.shape, bool)]), case)
    assert r.outcome == "mismatch" and "binomial" in r.message and "60 kept of 60" in r.message


def test_training_dropout_mask_must_match_the_output(dropout_cases):
    case = dropout_cases["test_training_dropout_mask"]
    r = execute_case(Rewrite(lambda outs: [outs[0], ~outs[1]]), case)
    assert r.outcome == "mismatch" and "where the mask is true" in r.message


# -- random ops -----------------------------------------------------------------------------
def _random_uniform(shape=(40, 50), low=-2.0, high=3.0) -> onnx.ModelProto:
    node = helper.make_node("RandomUniform", [], ["y"], shape=list(shape), low=low, high=high, seed=1.0)
    return _model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])


def _uniform_case() -> Case:
    return _case(_random_uniform(), [DataSet({}, [np.zeros((40, 50), np.float32)])])


def test_random_uniform_passes_on_real_draws():
    r = execute_case(Returns(lambda m, f: [np.random.default_rng(3).uniform(-2, 3, (40, 50)).astype(np.float32)]), _uniform_case())
    assert r.outcome == "pass", r.message


def test_constant_random_uniform_fails_the_distribution_test():
    r = execute_case(Returns(lambda m, f: [np.full((40, 50), 0.5, np.float32)]), _uniform_case())
    assert r.outcome == "mismatch" and "Kolmogorov-Smirnov" in r.message and "< 1e-06" in r.message


def test_random_uniform_outside_its_range_fails_on_support():
    vals = np.random.default_rng(3).uniform(-2, 3, (40, 50)).astype(np.float32)
    vals[5, 5] = 3.5
    r = execute_case(Returns(lambda m, f: [vals]), _uniform_case())
    assert r.outcome == "mismatch" and "outside [-2, 3]" in r.message and r.verdict["first_bad"] == "[5,5]"


def test_random_normal_with_the_wrong_mean_fails():
    # 12,000 values: the smallest sample the comparator checks RandomNormal on (its power asks for 1.05 times the scale)
    node = helper.make_node("RandomNormal", [], ["y"], shape=[12000], mean=2.0, scale=0.5)
    case = _case(_model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [12000])]), [DataSet({}, [np.zeros(12000, np.float32)])])
    rng = np.random.default_rng(5)
    assert execute_case(Returns(lambda m, f: [rng.normal(2.0, 0.5, 12000).astype(np.float32)]), case).outcome == "pass"
    r = execute_case(Returns(lambda m, f: [rng.normal(0.0, 0.5, 12000).astype(np.float32)]), case)
    assert r.outcome == "mismatch" and "RandomNormal" in r.message


def _multinomial_case(classes: int = 4, samples: int = 400) -> Case:
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=samples, dtype=TensorProto.INT64)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, classes])],
                   [helper.make_tensor_value_info("y", TensorProto.INT64, [2, samples])])
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]], np.float32))[:, :classes]
    return _case(model, [DataSet({"x": logits}, [np.zeros((2, samples), np.int64)])])


def _draw_multinomial(model, feeds):
    x = feeds["x"].astype(np.float64)
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    rng = np.random.default_rng(11)
    return [np.stack([rng.choice(x.shape[1], 400, p=row) for row in p]).astype(np.int64)]


def test_multinomial_passes_on_real_draws_and_fails_at_the_class_count():
    case = _multinomial_case()
    assert execute_case(Returns(_draw_multinomial), case).outcome == "pass"
    samples = _draw_multinomial(None, case.data[0].inputs)[0]
    samples[1, 7] = 4  # == class count: no such class
    r = execute_case(Returns(lambda m, f: [samples]), case)
    assert r.outcome == "mismatch" and "[0, 4)" in r.message and r.verdict["first_bad"] == "[1,7]"


def test_multinomial_with_the_wrong_probabilities_fails():
    case = _multinomial_case()
    r = execute_case(Returns(lambda m, f: [np.tile(np.arange(400) % 4, (2, 1)).astype(np.int64)]), case)
    assert r.outcome == "mismatch" and "binomial tests of the class counts" in r.message


def test_bernoulli_is_zero_or_one_and_certain_where_p_is():
    node = helper.make_node("Bernoulli", ["p"], ["y"])
    model = _model([node], [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1000])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1000])])
    p = np.linspace(0, 1, 1000).astype(np.float32)
    case = _case(model, [DataSet({"p": p}, [np.zeros(1000, np.float32)])])
    draws = (np.random.default_rng(2).random(1000) < p).astype(np.float32)
    assert execute_case(Returns(lambda m, f: [draws]), case).outcome == "pass"
    flipped = draws.copy()
    flipped[0] = 1.0  # p = 0 there
    assert "certain outcome" in execute_case(Returns(lambda m, f: [flipped]), case).message
    r = execute_case(Returns(lambda m, f: [np.ones(1000, np.float32) - (p == 0)]), case)
    assert r.outcome == "mismatch" and "exact test of the ones" in r.message


def test_few_samples_are_not_checked_and_say_so():
    node = helper.make_node("RandomUniform", [], ["y"], shape=[4])
    case = _case(_model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]), [DataSet({}, [np.zeros(4, np.float32)])])
    r = execute_case(Returns(lambda m, f: [np.array([0.1, 0.2, 0.3, 0.4], np.float32)]), case)
    assert r.outcome == "skip" and "not checked: 4 values, too few for the power 0.99" in r.message


def test_each_random_output_is_judged_by_its_own_op():
    # RandomUniform in [10, 20] first, then Bernoulli: the old "first random op" rule judged both
    # outputs by [10, 20], so a correct Bernoulli output failed and a wrong one could pass
    nodes = [helper.make_node("RandomUniform", [], ["u"], shape=[300], low=10.0, high=20.0),
             helper.make_node("Bernoulli", ["p"], ["b"])]
    model = _model(nodes, [helper.make_tensor_value_info("p", TensorProto.FLOAT, [300])],
                   [helper.make_tensor_value_info("u", TensorProto.FLOAT, [300]), helper.make_tensor_value_info("b", TensorProto.FLOAT, [300])])
    p = np.full(300, 0.5, np.float32)
    case = _case(model, [DataSet({"p": p}, [np.zeros(300, np.float32), np.zeros(300, np.float32)])])
    rng = np.random.default_rng(4)
    u, b = rng.uniform(10, 20, 300).astype(np.float32), (rng.random(300) < 0.5).astype(np.float32)
    assert execute_case(Returns(lambda m, f: [u, b]), case).outcome == "pass"
    r = execute_case(Returns(lambda m, f: [u, u]), case)
    assert r.outcome == "mismatch" and r.message.startswith("output 1: Bernoulli")
    specs = random_outputs(model, {"p": p})
    assert [s.op for s in specs] == ["RandomUniform", "Bernoulli"]


def test_an_output_that_depends_on_a_random_op_is_checked_by_shape_and_dtype_and_says_so():
    nodes = [helper.make_node("RandomNormal", [], ["r"], shape=[3]), helper.make_node("Add", ["r", "x"], ["y"]),
             helper.make_node("Relu", ["x"], ["z"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]), helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])])
    x = np.array([1.0, -2.0, 3.0], np.float32)
    case = _case(model, [DataSet({"x": x}, [x, np.maximum(x, 0)])])
    r = execute_case(Returns(lambda m, f: [x + 5, np.maximum(x, 0)]), case)
    assert r.outcome == "pass" and "depends on RandomNormal through other nodes" in r.message
    r = execute_case(Returns(lambda m, f: [x + 5, x]), case)  # the deterministic output is still compared by value
    assert r.outcome == "mismatch" and r.message.startswith("output 1: values differ")
    assert execute_case(Returns(lambda m, f: [np.zeros(4, np.float32), np.maximum(x, 0)]), case).outcome == "wrong-shape"


def test_random_outputs_in_a_sequence_are_checked_by_shape_and_dtype():
    nodes = [helper.make_node("RandomUniform", [], ["a"], shape=[2]), helper.make_node("SequenceConstruct", ["a", "a"], ["s"])]
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])
    model = _model(nodes, [], [seq])
    expected = [[np.zeros(2, np.float32), np.zeros(2, np.float32)]]
    case = _case(model, [DataSet({}, expected)])
    vals = np.array([0.3, 0.7], np.float32)
    assert execute_case(Returns(lambda m, f: [[vals, vals]]), case).outcome == "pass"
    assert execute_case(Returns(lambda m, f: [[vals]]), case).outcome == "wrong-shape"
    assert execute_case(Returns(lambda m, f: [[vals, vals.astype(np.float64)]]), case).outcome == "wrong-dtype"


def test_random_ops_inside_a_subgraph_make_the_outputs_random_but_an_inference_dropout_does_not():
    def if_model(inner: onnx.NodeProto) -> onnx.ModelProto:
        out = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])
        branch = helper.make_graph([inner], "branch", [], [out])
        node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
        return _model([node], [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])

    feeds = {"c": np.array(True), "x": np.ones(3, np.float32)}
    specs = random_outputs(if_model(helper.make_node("RandomNormal", [], ["b"], shape=[3])), feeds)
    assert specs is not None and specs[0].op == "" and specs[0].via == "RandomNormal"
    assert random_outputs(if_model(helper.make_node("Dropout", ["x"], ["b"])), feeds) is None
