"""Control flow (If, Loop, Scan): the spec's own Loop sample and hand-worked scans against our
references, which evaluate their bodies through our own composed references."""

import numpy as np
import pytest
from onnx import helper

from harness.registry import load_all
from harness.suites.operators import build_case
from operator_cases.control_flow import if_, loop, scan
from operator_cases._control_util import graph, init, node, run_graph, vi

load_all()
IF, LOOP, SCAN9, SCAN11 = if_.op._entry(16).reference, loop.op._entry(13).reference, scan.op._entry(9).reference, scan.op._entry(11).reference


def _const_branch(name, arr):
    return graph(name, [node("Identity", [f"{name}_c"], [f"{name}_y"])], [], [vi(f"{name}_y", "float32", arr.shape)],
                 [init(f"{name}_c", arr)])


def test_if_takes_the_branch_of_the_condition_and_shapes_may_differ():
    then_b, else_b = _const_branch("t", np.array([1.0, 2.0], np.float32)), _const_branch("e", np.array([[3.0]], np.float32))
    (y,) = IF(np.array(True), then_branch=then_b, else_branch=else_b)
    np.testing.assert_array_equal(y, [1.0, 2.0])
    (y,) = IF(np.array([False]), then_branch=then_b, else_branch=else_b)
    assert y.shape == (1, 1) and y[0, 0] == 3.0


def test_if_nested_reads_the_outer_condition_by_name():
    inner = graph("t", [node("If", ["x0"], ["t_y"], then_branch=_const_branch("tt", np.array([7.0], np.float32)),
                             else_branch=_const_branch("te", np.array([8.0], np.float32)))], [], [vi("t_y", "float32", (1,))])
    (y,) = IF(np.array(True), then_branch=inner, else_branch=_const_branch("e", np.array([9.0], np.float32)))
    assert y.tolist() == [7.0]  # x0 (true) read two scopes out


def _spec_sample_body():
    """The Loop spec's body-net: my_local = a + b_in; b_out = a - b_in; keepgoing_out = my_local > b_out; user_defined_val = b_in + b_in."""
    nodes = [node("Add", ["a", "b_in"], ["my_local"]), node("Sub", ["a", "b_in"], ["b_out"]),
             node("Greater", ["my_local", "b_out"], ["keepgoing_out"]), node("Add", ["b_in", "b_in"], ["user_defined_val"])]
    return graph("body", nodes, [vi("i", "int64", ()), vi("keepgoing_in", "bool", ()), vi("b_in", "int64", ())],
                 [vi("keepgoing_out", "bool", ()), vi("b_out", "int64", ()), vi("user_defined_val", "int64", ())])


def test_loop_spec_sample():
    # a = 3, b = 6, keepgoing = true, max_trip_count = 10. By hand: iteration 0: my_local = 9,
    # b_out = -3, 9 > -3 goes on, value 12; iteration 1: my_local = 0, b_out = 6, 0 > 6 stops, value -6
    b_final, vals = LOOP(np.array(10, np.int64), np.array(True), np.array(6, np.int64), body=_spec_sample_body(),
                         _outer={"a": np.array(3, np.int64)})
    assert int(b_final) == 6
    np.testing.assert_array_equal(vals, [12, -6])


def test_loop_without_cond_input_ignores_the_body_condition():
    # input (trip_count, ""): "cond = ...; // ignored": all 4 iterations run although the body says stop
    b_final, vals = LOOP(np.array(4, np.int64), None, np.array(6, np.int64), body=_spec_sample_body(), _outer={"a": np.array(3, np.int64)})
    np.testing.assert_array_equal(vals, [12, -6, 12, -6])
    assert int(b_final) == 6


def test_loop_zero_trips_gives_initial_values_and_empty_scans_of_the_declared_shape():
    g = loop.body("pass", "float32", (2,), 13)
    v = np.array([1.5, np.nan], np.float32)
    for M, cond in ((0, True), (-1, None), (3, False)):
        out_v, scan_v, iters = LOOP(None if M is None else np.array(M, np.int64), None if cond is None else np.array(cond), v, body=g)
        np.testing.assert_array_equal(out_v, v)
        assert scan_v.shape == (0, 2) and scan_v.dtype == np.float32 and iters.shape == (0,) and iters.dtype == np.int64


def test_loop_carried_value_grows_and_scan_stacks_on_a_new_axis():
    g = loop.body("grow", "int64", (2,), 13)
    x2 = np.array([1, 2], np.int64)
    out_v, scan_v, iters = LOOP(np.array(3, np.int64), None, x2, body=g)
    assert out_v.tolist() == [1, 2, 1, 2, 1, 2, 1, 2]  # x2 concatenated once per iteration
    assert scan_v.shape == (3, 2) and iters.tolist() == [0, 1, 2]


def test_loop_nested_if_reads_body_and_outer_values():
    g = loop.body("nested_if", "int64", (2,), 13, stop=1)
    x2 = np.array([5, 6], np.int64)
    # iterations 0 and 1 (i < 1 for i = 0 only): then keeps v_in, else takes x2: v stays x2
    out_v, scan_v, iters = LOOP(np.array(2, np.int64), np.array(True), x2, body=g)
    assert scan_v.tolist() == [[5, 6], [5, 6]] and iters.tolist() == [0, 1]


def test_scan_cumsum_and_directions():
    g = scan.body("cumsum", "float32", 1, 1, (2,))
    x = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    s, y = SCAN9(np.zeros(2, np.float32), x, body=g, num_scan_inputs=1)
    assert s.tolist() == [9, 12] and y.tolist() == [[1, 2], [4, 6], [9, 12]]
    s, y = SCAN9(np.zeros(2, np.float32), x, body=g, num_scan_inputs=1, scan_input_directions=[1])
    assert s.tolist() == [9, 12] and y.tolist() == [[5, 6], [8, 10], [9, 12]]
    s, y = SCAN9(np.zeros(2, np.float32), x, body=g, num_scan_inputs=1, scan_output_directions=[1])
    assert y.tolist() == [[9, 12], [4, 6], [1, 2]]  # prepended: the last iteration first


def test_scan_axes_and_negative_axes():
    g = scan.body("pass", "int64", 0, 1, (2,))
    x = np.array([[0, 1, 2], [3, 4, 5]], np.int64)  # scanned along axis 1: elements [0, 3], [1, 4], [2, 5]
    (y,) = SCAN9(x, body=g, num_scan_inputs=1, scan_input_axes=[1])
    assert y.tolist() == [[0, 3], [1, 4], [2, 5]]
    (y,) = SCAN11(x, body=g, num_scan_inputs=1, scan_input_axes=[-1], scan_output_axes=[-1])
    assert y.tolist() == x.tolist()
    with pytest.raises(ValueError):  # negative axes only from Scan-11
        SCAN9(x, body=g, num_scan_inputs=1, scan_input_axes=[-1])


def test_scan_zero_length():
    g = scan.body("cumsum", "float32", 1, 1, (2,))
    s, y = SCAN9(np.array([1, 2], np.float32), np.zeros((0, 2), np.float32), body=g, num_scan_inputs=1)
    assert s.tolist() == [1, 2] and y.shape == (0, 2)



def test_run_graph_refuses_a_name_defined_nowhere():
    g = graph("g", [node("Identity", ["nowhere"], ["y"])], [], [vi("y", "float32", (1,))])
    with pytest.raises(ValueError, match="nowhere"):
        run_graph(g, [], {}, 13)


def test_case_inputs_are_named_as_the_top_scope_expects():
    opv = load_all()[("", "Loop", 13)]
    ex = loop.example(2, None, np.array([1.0, 2.0], np.float32), "grow", "float32", 13)
    case = build_case(opv, ex, "float32", 13, "t")
    names = [i.name for i in case.load_model().graph.input]
    assert names == ["x0", "x2"]  # M is x0, the absent cond leaves x1 unnamed, v_initial is x2 (captured by the grow body)
    assert case.data[0].expected[0].tolist() == [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    assert helper.get_attribute_value(case.load_model().graph.node[0].attribute[0]).name == "loop_grow"


def test_scan_8_batches_sequence_lens_and_padding():
    SCAN8 = scan.op._entry(8).reference
    g = scan.body("cumsum", "int64", 1, 1, (2,))
    x = np.arange(12, dtype=np.int64).reshape(2, 3, 2)  # batch 2, length 3, elements (2,)
    z = np.zeros((2, 2), np.int64)
    # batch 0 takes 1 step ([0, 1]), batch 1 all 3 ([6, 7] + [8, 9] + [10, 11]); row 1 and 2 of batch 0 are padding
    s, y = SCAN8(np.array([1, 3], np.int64), z, x, body=g, num_scan_inputs=1)
    assert s.tolist() == [[0, 1], [24, 27]]
    assert y.shape == (2, 3, 2) and y[0, 0].tolist() == [0, 1] and y[1].tolist() == [[6, 7], [14, 16], [24, 27]]
    assert y[0, 1:].tolist() == [[0, 0], [0, 0]]  # our choice for "an undefined value"
    # reverse over the first N elements only: batch 0 scans [2, 3] then [0, 1]
    s, y = SCAN8(np.array([2, 0], np.int64), z, x, body=g, num_scan_inputs=1, directions=[1])
    assert s.tolist() == [[2, 4], [0, 0]] and y[0, :2].tolist() == [[2, 3], [2, 4]]
    # no sequence_lens: every batch entry runs the maximum length
    s, _ = SCAN8(None, z, x, body=g, num_scan_inputs=1)
    assert s.tolist() == [[6, 9], [24, 27]]
    with pytest.raises(ValueError):
        SCAN8(np.array([4, 1], np.int64), z, x, body=g, num_scan_inputs=1)


def test_scan_8_padding_is_a_spec_silent_point_with_the_meaningful_rows_fixed():
    from harness.registry import SPEC_SILENT, SilentCheck

    point = SPEC_SILENT["Scan.padding"]
    g = scan.body("pass", "int64", 0, 1, (1,))
    x = np.array([[[1], [2]], [[3], [4]]], np.int64)
    inputs, attrs = [np.array([1, 2], np.int64), x], {"body": g, "num_scan_inputs": 1}
    expected = list(scan.op._entry(8).reference(*inputs, **attrs))
    masks = point.masks(inputs, attrs, expected, 8)
    assert masks[0].tolist() == [[[False], [True]], [[False], [False]]]
    holds = point.invariants["the first sequence_lens[batch] rows of every scan output are the scan's"]
    other = expected[0].copy()
    other[0, 1] = 99  # another fill of the padded row keeps the invariant
    assert holds(SilentCheck(inputs, attrs, expected, [other], masks, 8))
    other[0, 0] = 98  # a changed meaningful row breaks it
    assert not holds(SilentCheck(inputs, attrs, expected, [other], masks, 8))
    assert not point.reached([None, x], attrs, expected, 8)


def test_if_1_integer_and_bool_branches_cast_a_double_constant():
    IF1 = if_.op._entry(1).reference
    then_b = if_.branch("then", "init", [np.array([3, -2], np.int32)], "int32", 1)
    else_b = if_.branch("else", "init", [np.array([7, 0], np.int32)], "int32", 1)
    assert [n.op_type for n in then_b.node] == ["Constant", "Cast"]  # Constant-1 holds no int32
    (y,) = IF1(np.array(False), then_branch=then_b, else_branch=else_b)
    assert y.dtype == np.int32 and y.tolist() == [7, 0]
    (y,) = IF1(np.array([True]), then_branch=if_.branch("t", "init", [np.array([0.0, 2.5])], "bool", 1), else_branch=else_b)
    assert y.dtype == bool and y.tolist() == [False, True]  # Cast to bool: "zero to False, nonzero to True"


def test_sequence_map_samples_tensors_and_sequences():
    from harness.values import SeqList
    from operator_cases.sequence import sequence_map as sm

    SM = sm.op._entry(17).reference
    a = SeqList([np.array([1, 2], np.int64), np.array(5, np.int64)])
    b = SeqList([np.array([10, 20], np.int64), np.array(-5, np.int64)])
    (y,) = SM(a, b, body=sm.body("add_seq", "int64"))  # sample i of both sequences: [11, 22], 0
    assert [v.tolist() for v in y.value] == [[11, 22], 0]
    (y,) = SM(a, np.array([1], np.int64), body=sm.body("add_tensor", "int64"))  # the tensor goes whole to every sample
    assert [v.tolist() for v in y.value] == [[2, 3], [6]]
    y0, y1 = SM(a, np.array([7], np.int64), body=sm.body("tensor", "int64"))
    assert [v.tolist() for v in y1.value] == [[7], [7]] and len(y0.value) == 2
    (y,) = SM(SeqList([]), body=sm.body("identity", "float32"))  # zero samples: an empty sequence of the body's type
    assert y.value == [] and y.type.sequence_type.elem_type.tensor_type.elem_type == 1
    with pytest.raises(ValueError):  # "Any other sequence inputs should have the same number of samples"
        SM(a, SeqList([np.array(1, np.int64)]), body=sm.body("zip", "int64"))


def test_if_sequence_and_optional_outputs_keep_the_branch_type():
    IF16 = if_.op._entry(16).reference
    a, b = np.array([1.0, np.nan], np.float32), np.zeros((2, 0), np.float32)
    then_b, else_b = if_.seq_branch("t", "seq", [a, b], "float32"), if_.seq_branch("e", "seq_empty", [], "float32")
    (y,) = IF16(np.array(True), then_branch=then_b, else_branch=else_b)
    assert len(y.value) == 2 and y.value[1].shape == (2, 0) and np.isnan(y.value[0][1])
    (y,) = IF16(np.array(False), then_branch=then_b, else_branch=else_b)
    assert y.value == [] and y.type.sequence_type.elem_type.tensor_type.elem_type == 1  # empty, still seq(tensor(float))
    (y,) = IF16(np.array(True), then_branch=if_.seq_branch("t", "opt", [a], "float32"),
                else_branch=if_.seq_branch("e", "opt_empty", [], "float32"))
    assert y.type.HasField("optional_type") and y.value.shape == (2,)  # the element itself, no extra axis
    (y,) = IF16(np.array(False), then_branch=if_.seq_branch("t", "opt", [a], "float32"),
                else_branch=if_.seq_branch("e", "opt_empty", [], "float32"))
    assert y.value is None and y.type.HasField("optional_type")
    (y,) = IF16(np.array(True), then_branch=if_.seq_branch("t", "opt_seq", [a, b, a], "float32"),
                else_branch=if_.seq_branch("e", "opt_seq", [a], "float32"))
    assert len(y.value) == 3 and y.type.optional_type.elem_type.HasField("sequence_type")
    assert not if_.seq_ok("float32", 11) and not if_.opt_ok("float32", 13) and if_.opt_ok("float32", 16)
