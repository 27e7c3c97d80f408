import onnx
from onnx import TensorProto, helper

from harness import schema


def _model(nodes, opset, ir=10, dtype=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", dtype, [2])], [helper.make_tensor_value_info("y", dtype, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def test_negotiate_lowers_to_the_newest_op_version_in_use():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], opset=21)  # Relu-14 is in force at 21
    new, changes = schema.negotiate(model)
    assert changes["opset"] == [21, 14]
    assert schema.opset_of(new) == 14 and new.ir_version == 7
    assert schema.opset_of(model) == 21, "the original is untouched"
    onnx.checker.check_model(new, full_check=True)


def test_negotiate_keeps_the_ir_a_type_needs():
    # Relu alone would go down to opset 14 and IR 7; the float8 input needs IR 9
    model = _model([helper.make_node("Relu", ["x"], ["y"])], opset=21)
    model.graph.input.append(helper.make_tensor_value_info("scale", TensorProto.FLOAT8E4M3FN, [2]))
    new, changes = schema.negotiate(model)
    assert changes == {"opset": [21, 14], "ir_version": [10, 9]}
    assert schema.opset_of(new) == 14 and new.ir_version == 9
    onnx.checker.check_model(new, full_check=True)


def test_negotiate_leaves_alone_what_cannot_be_lowered():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], opset=14, ir=7)
    new, changes = schema.negotiate(model)
    assert changes == {} and new is model


def test_stamp_at_applies_only_where_the_schema_is_the_same():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], opset=14, ir=7)
    stamped, why = schema.stamp_at(model, 17)
    assert why == "" and schema.opset_of(stamped) == 17 and stamped.ir_version == 8
    none, why = schema.stamp_at(model, 13)
    assert none is None and "Relu-14 is not the op-version in force at opset 13" in why


def test_versions_and_ranges():
    assert schema.since_versions("Clip") == (1, 6, 11, 12, 13)
    assert list(schema.opsets_in_force("Clip", 11)) == [11]
    assert schema.opsets_in_force("Clip", 13).start == 13
    assert ("Relu", 14) in schema.all_op_versions("")
    assert "tensor(float)" in schema.allowed_types(schema.schema_at("Relu", 14))["T"]
