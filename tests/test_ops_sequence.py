"""Sequence and optional operators: hand-worked values from the spec's text against our references,
out-of-range positions (the spec's "accepted range") refused by the reference and the kernel engine,
and sequence/optional values through case building, case folders, evidence, repro bundles and the
bindings of onnxruntime, tensorflow and tvm (fakes for the last two)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from harness import values as V
from harness.case import Case, DataSet, Tolerance, read_data_sets, write_case_folder
from harness.registry import Example, load_all
from harness.suites import operators as O
from operator_cases._sequence_util import PositionError, seq
from operator_cases.sequence.concat_from_sequence import concat_from_sequence
from operator_cases.optional.optional import optional
from operator_cases.optional.optional_get_element import optional_get_element
from operator_cases.optional.optional_has_element import optional_has_element
from operator_cases.sequence.sequence_at import sequence_at
from operator_cases.sequence.sequence_construct import sequence_construct
from operator_cases.sequence.sequence_empty import sequence_empty
from operator_cases.sequence.sequence_erase import sequence_erase
from operator_cases.sequence.sequence_insert import sequence_insert
from operator_cases.sequence.sequence_length import sequence_length
from operator_cases.sequence.split_to_sequence import split_to_sequence

A, B, C = np.array([1.0, 2.0], np.float32), np.array([3.0], np.float32), np.array([[4.0]], np.float32)
I64 = np.int64


def _seq(*xs, elem=TP.FLOAT):
    return V.SeqList(list(xs), elem)


def _values(typed):
    assert isinstance(typed, V.Typed)
    return typed.value


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        np.testing.assert_array_equal(g, w)


# -- references: values worked by hand from the spec's text ---------------------------------------
def test_concat_from_sequence_is_numpy_concatenate_or_stack():
    np.testing.assert_array_equal(concat_from_sequence(_seq(A, B), axis=0), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(concat_from_sequence(_seq(A, A * 2), axis=-1, new_axis=1), [[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(concat_from_sequence(_seq(A, A * 2), axis=0, new_axis=1), [[1.0, 2.0], [2.0, 4.0]])
    m = np.arange(4, dtype=np.int32).reshape(2, 2)
    np.testing.assert_array_equal(concat_from_sequence(_seq(m, m[:, :1]), axis=-1), [[0, 1, 0], [2, 3, 2]])
    # new_axis=1: "accepted range is [-r - 1, r]": r = 0 scalars stack into a vector
    out = concat_from_sequence(_seq(np.array(5, I64), np.array(7, I64)), axis=-1, new_axis=1)
    assert out.dtype == I64 and out.shape == (2,) and list(out) == [5, 7]
    with pytest.raises(ValueError):
        concat_from_sequence(_seq(np.array(5, I64)), axis=0)  # new_axis 0: a scalar has no axis 0
    with pytest.raises(ValueError):
        concat_from_sequence(_seq(A, A), axis=2, new_axis=1)  # [-2, 1] for rank 1
    with pytest.raises(ValueError):
        concat_from_sequence(_seq(), axis=0)  # the spec names no result for an empty sequence


def test_sequence_at_counts_negative_positions_from_the_back():
    s = _seq(A, B, C)
    _same([sequence_at(s, np.array(-1, I64))], [C])
    _same([sequence_at(s, np.array(-3, np.int32))], [A])
    _same([sequence_at(s, np.array(1, I64))], [B])
    out = sequence_at(s, np.array(0, I64))
    out[0] = 99  # "a tensor copy"
    assert A[0] == 1.0


@pytest.mark.parametrize("pos", [3, -4, 100])
def test_sequence_at_outside_the_accepted_range_is_an_error(pos):
    with pytest.raises(PositionError):
        sequence_at(_seq(A, B, C), np.array(pos, I64))


def test_sequence_at_of_an_empty_sequence_is_an_error():
    with pytest.raises(PositionError):
        sequence_at(_seq(), np.array(0, I64))


def test_sequence_erase_defaults_to_the_last_and_keeps_the_element_type():
    _same(_values(sequence_erase(_seq(A, B, C))), [A, B])
    _same(_values(sequence_erase(_seq(A, B, C), np.array(-3, I64))), [B, C])
    out = sequence_erase(_seq(A, elem=TP.FLOAT))
    assert out.value == [] and V.type_text(out.type) == "seq(tensor(float))"
    for pos in (3, -4):
        with pytest.raises(PositionError):
            sequence_erase(_seq(A, B, C), np.array(pos, I64))
    with pytest.raises(PositionError):
        sequence_erase(_seq())  # no last tensor


def test_sequence_insert_positions():
    t = np.array([9.0], np.float32)
    _same(_values(sequence_insert(_seq(A, B), t)), [A, B, t])  # default: the back
    _same(_values(sequence_insert(_seq(A, B), t, np.array(2, I64))), [A, B, t])  # n is accepted: the back
    _same(_values(sequence_insert(_seq(A, B), t, np.array(-1, I64))), [A, t, B])  # -1 + 2 = 1
    _same(_values(sequence_insert(_seq(A, B), t, np.array(-2, np.int32))), [t, A, B])
    _same(_values(sequence_insert(_seq(), t, np.array(0, I64))), [t])
    for pos in (3, -3):
        with pytest.raises(PositionError):
            sequence_insert(_seq(A, B), t, np.array(pos, I64))


def test_sequence_length_construct_and_empty():
    n = sequence_length(_seq(A, B, C))
    assert n.dtype == I64 and n.shape == () and int(n) == 3
    assert int(sequence_length(_seq())) == 0
    built = sequence_construct(A, B, C)
    _same(built.value, [A, B, C])
    assert V.type_text(built.type) == "seq(tensor(float))"
    empty = sequence_empty()
    assert empty.value == [] and V.type_text(empty.type) == "seq(tensor(float))"  # "The default type is 'float'"
    assert V.type_text(sequence_empty(dtype=TP.INT8).type) == "seq(tensor(int8))"


def test_split_to_sequence_spec_rules():
    x = np.arange(10, dtype=np.int32).reshape(5, 2)
    # a scalar split: chunks of 2, "The last chunk alone may be smaller"
    _same(_values(split_to_sequence(x, np.array(2, I64))), [x[0:2], x[2:4], x[4:5]])
    # keepdims is ignored when split is given
    _same(_values(split_to_sequence(x, np.array(2, I64), keepdims=0)), [x[0:2], x[2:4], x[4:5]])
    _same(_values(split_to_sequence(x[:3], np.array(1, I64), keepdims=0)), [x[0:1], x[1:2], x[2:3]])
    _same(_values(split_to_sequence(x, np.array([1, 3, 1], np.int32), axis=-2)), [x[0:1], x[1:4], x[4:5]])
    # absent: a split of 1, and keepdims=0 drops the axis
    _same(_values(split_to_sequence(x, axis=1, keepdims=0)), [x[:, 0], x[:, 1]])
    _same(_values(split_to_sequence(x, axis=-1)), [x[:, 0:1], x[:, 1:2]])
    _same(_values(split_to_sequence(x, np.array(7, I64))), [x])
    empty = split_to_sequence(np.zeros((0, 3), np.float32))
    assert empty.value == [] and V.type_text(empty.type) == "seq(tensor(float))"
    with pytest.raises(ValueError):
        split_to_sequence(x, np.array([2, 2], I64))  # "sum of entries in 'split' must be equal to the dimension size"
    with pytest.raises(ValueError):
        split_to_sequence(x, np.array(0, I64))  # "'split' must contain only positive numbers"


def test_optional_construct_get_and_has():
    tensor_float = V.tensor_type(TP.FLOAT)
    empty = optional(type=tensor_float)
    assert empty.value is None and V.type_text(empty.type) == "optional(tensor(float))"
    full = optional(A)
    assert full.value is A and V.type_text(full.type) == "optional(tensor(float))"
    of_seq = optional(_seq(A, B))
    assert V.type_text(of_seq.type) == "optional(seq(tensor(float)))" and len(of_seq.value) == 2
    with pytest.raises(ValueError):
        optional()  # neither input nor type
    assert optional_has_element(None).dtype == bool and not optional_has_element(None)
    assert optional_has_element(np.zeros((0,), np.float32))  # an empty tensor is an element
    assert optional_has_element(_seq())  # so is an empty sequence
    assert optional_get_element(A) is A
    _same(_values(optional_get_element(_seq(A, B))), [A, B])
    with pytest.raises(ValueError):
        optional_get_element(None)  # "It is an error if the input value does not have an element"


# -- the kernel engine refuses what the spec does not accept --------------------------------------
def _kernels_run(model, feeds):
    from harness.backends.kernels import KernelsBackend

    return KernelsBackend().prepare(model).run(feeds)


def _seq_model(node, inputs, outputs, opset=18):
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


SEQ_F = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TP.FLOAT, None))


def test_kernels_refuse_positions_outside_the_range():
    model = _seq_model(helper.make_node("SequenceAt", ["s", "p"], ["y"]),
                       [helper.make_value_info("s", SEQ_F), helper.make_tensor_value_info("p", TP.INT64, [])],
                       [helper.make_tensor_value_info("y", TP.FLOAT, ["n"])])
    assert _kernels_run(model, {"s": [A, B], "p": np.array(-2, I64)})[0].tolist() == [1.0, 2.0]
    with pytest.raises(IndexError):
        _kernels_run(model, {"s": [A, B], "p": np.array(-3, I64)})
    ins = _seq_model(helper.make_node("SequenceInsert", ["s", "t", "p"], ["y"]),
                     [helper.make_value_info("s", SEQ_F), helper.make_tensor_value_info("t", TP.FLOAT, ["n"]),
                      helper.make_tensor_value_info("p", TP.INT64, [])], [helper.make_value_info("y", SEQ_F)])
    assert len(_kernels_run(ins, {"s": [A], "t": B, "p": np.array(1, I64)})[0]) == 2
    with pytest.raises(IndexError):
        _kernels_run(ins, {"s": [A], "t": B, "p": np.array(2, I64)})


# -- sequence and optional values through the harness ---------------------------------------------
def _opv(op, since):
    return load_all()[("", op, since)]


def test_a_case_declares_sequence_and_optional_types_and_feeds_plain_values():
    case = O.build_case(_opv("SequenceInsert", 11), Example([seq([], "int8"), np.array([1, 2], np.int8)]), "int8", 11, "t")
    O.check_case(case)
    model = case.load_model()
    assert V.type_text(model.graph.input[0].type) == "seq(tensor(int8))"
    assert V.type_text(model.graph.output[0].type) == "seq(tensor(int8))"
    assert case.data[0].inputs["x0"] == [] and type(case.data[0].inputs["x0"]) is list
    _same(case.data[0].expected[0], [np.array([1, 2], np.int8)])
    has = O.build_case(_opv("OptionalHasElement", 18), Example([V.Typed(None, V.optional_type(V.sequence_type(TP.FLOAT)))]),
                       "float32", 18, "t")
    O.check_case(has)
    assert V.type_text(has.load_model().graph.input[0].type) == "optional(seq(tensor(float)))"
    assert has.data[0].inputs == {"x0": None} and bool(has.data[0].expected[0]) is False
    empty = O.build_case(_opv("Optional", 15), Example([], {"type": V.tensor_type(TP.DOUBLE)}), "float64", 15, "t")
    O.check_case(empty)
    assert V.type_text(empty.load_model().graph.output[0].type) == "optional(tensor(double))" and empty.data[0].expected == [None]


def test_a_reference_whose_output_type_disagrees_with_the_schema_is_an_oracle_error():
    case = O.build_case(_opv("SequenceEmpty", 11), Example([], {"dtype": TP.INT8}), "int8", 11, "t")
    model = case.load_model()
    model.graph.output[0].type.CopyFrom(V.sequence_type(TP.INT16))  # what a wrong reference would declare
    bad = Case(id=case.id, suite=case.suite, model_bytes=model.SerializeToString(), data=case.data, tags=case.tags)
    with pytest.raises(O.OracleError):
        O.check_case(bad)


def test_sequence_and_optional_values_survive_a_case_folder(tmp_path):
    case = O.build_case(_opv("SequenceErase", 11), Example([seq([A, B], "float32")]), "float32", 11, "t")
    model = case.load_model()
    write_case_folder(tmp_path, model, case.data, {})
    (back,) = read_data_sets(tmp_path, model)
    _same(back.inputs["x0"], [A, B])
    _same(back.expected[0], [A])
    opt_case = O.build_case(_opv("OptionalGetElement", 18), Example([V.Typed(A, V.optional_type(V.tensor_type(TP.FLOAT)))]),
                            "float32", 18, "t")
    folder = tmp_path / "opt"
    write_case_folder(folder, opt_case.load_model(), opt_case.data, {})
    (back,) = read_data_sets(folder, opt_case.load_model())
    np.testing.assert_array_equal(back.inputs["x0"], A)


def test_evidence_describes_a_sequence_by_its_elements():
    from harness.evidence import summary

    ev = summary({"s": [A, np.zeros((0, 3), np.int8)], "o": None}, [[A]], [[]])
    assert ev["inputs"]["s"]["text"] == "sequence of 2: [float32[2], int8[0,3]]"
    assert ev["inputs"]["s"]["elements"][0]["values"] == ["1.0", "2.0"]
    assert ev["inputs"]["o"]["text"] == "optional(empty)"
    assert ev["actual"][0]["text"] == "sequence of 0: []"


def test_a_repro_bundle_holds_sequence_inputs_and_outputs(tmp_path):
    from harness.worker import Result
    from harness.repro import write_bundle

    case = O.build_case(_opv("SequenceConstruct", 11), Example([A, B]), "float32", 11, "t")
    result = Result(case_id=case.id, backend="kernels", outcome="mismatch")
    folder = write_bundle(tmp_path / "b", case, result, "kernels", {})
    (back,) = read_data_sets(folder, onnx.load(folder / "model.onnx"))
    _same(back.expected[0], [A, B])
    np.testing.assert_array_equal(back.inputs["x1"], B)


def test_onnxruntime_binds_an_empty_optional_input():
    pytest.importorskip("onnxruntime")
    from harness.backends.onnxruntime import OnnxRuntimeBackend

    opt_f = helper.make_optional_type_proto(helper.make_tensor_type_proto(TP.FLOAT, None))
    model = _seq_model(helper.make_node("OptionalHasElement", ["x"], ["y"]), [helper.make_value_info("x", opt_f)],
                       [helper.make_tensor_value_info("y", TP.BOOL, [])])
    backend = OnnxRuntimeBackend()
    backend.load()
    session = backend.prepare(model)
    assert bool(session.run({"x": None})[0]) is False
    assert bool(session.run({"x": A})[0]) is True


def test_onnx_tf_and_tvm_bindings_call_sequence_and_optional_inputs_unsupported():
    from harness.backends.base import Unsupported
    from harness.backends.tensorflow import TensorFlowBackend, TensorFlowSession
    from harness.backends.tvm import TvmSession

    class FakeRep:
        def run(self, feeds):
            raise AssertionError("the binding must refuse before running")

    with pytest.raises(Unsupported) as info:
        TensorFlowSession(FakeRep(), {}).run({"x": None})
    assert TensorFlowBackend().classify_error(info.value, "run") == "unsupported"

    class FakeTensor:
        def __init__(self, a):
            self.a = a

        def numpy(self):
            return self.a

    class FakeVM(dict):
        pass

    vm = FakeVM(main=lambda *args: [FakeTensor(A), None, [FakeTensor(B)]])
    session = TvmSession(None, vm, [], 3)
    out = session.run({})
    assert out[1] is None and len(out[2]) == 1  # an empty optional and a sequence come back as values
    for value in ([A], None):
        with pytest.raises(Unsupported, match="takes tensors only"):
            TvmSession(None, vm, ["x"], 1).run({"x": value})


def test_generated_graphs_keep_tensor_outputs():
    """The engine's pool holds tensors: only templates that build and consume their sequence in
    one plan (ConcatFromSequence, SequenceAt: helper steps) take part, the producers alone do not,
    and the graphs the fuzzer draws take and give tensors only, sequences inside them included."""
    from harness.fuzz_api import TEMPLATES
    from harness.generated.cases import draw_graphs
    from harness.generated.graph import build_model
    from harness.generated.spec import GenConfig

    load_all()
    assert not {"SequenceConstruct", "SplitToSequence", "SequenceEmpty", "Optional"} & set(TEMPLATES)
    graphs = draw_graphs(3, seed=11) + draw_graphs(3, seed=11, config=GenConfig(ops=("ConcatFromSequence", "SequenceAt")))
    assert graphs and any(n.steps for g in graphs for n in g.nodes)
    for g in graphs:
        model = build_model(g)
        kinds = {v.type.WhichOneof("value") for v in [*model.graph.input, *model.graph.output]}
        assert kinds == {"tensor_type"}


@pytest.mark.parametrize("op, pos", [("SequenceAt", 2), ("SequenceAt", -3), ("SequenceErase", -3), ("SequenceInsert", 3), ("SequenceInsert", -3)])
def test_onnxruntime_refuses_positions_outside_the_accepted_range(op, pos):
    """An out-of-range position has no result in the spec: ONNX Runtime's refusal is an `error`
    outcome, as our reference's and the kernel engine's."""
    pytest.importorskip("onnxruntime")
    from harness.backends.onnxruntime import OnnxRuntimeBackend
    from harness.case import Case
    from harness.worker import execute_case

    ins = ["s", "t", "p"] if op == "SequenceInsert" else ["s", "p"]
    infos = [helper.make_value_info("s", SEQ_F)] + ([helper.make_tensor_value_info("t", TP.FLOAT, [1])] if op == "SequenceInsert" else [])
    infos.append(helper.make_tensor_value_info("p", TP.INT64, []))
    out = helper.make_tensor_value_info("y", TP.FLOAT, [1]) if op == "SequenceAt" else helper.make_value_info("y", SEQ_F)
    model = _seq_model(helper.make_node(op, ins, ["y"]), infos, [out])
    feeds = {"s": [A[:1], B], "p": np.array(pos, I64), **({"t": B} if op == "SequenceInsert" else {})}
    backend = OnnxRuntimeBackend()
    backend.load()
    case = Case(id="test/sequence/out_of_range", suite="test", model_bytes=model.SerializeToString(), data=[DataSet(feeds, [A[:1]])],
                tolerance=Tolerance(0, 0), tags={})
    result = execute_case(backend, case)
    assert result.outcome == "error" and "Invalid sequence index" in result.message
