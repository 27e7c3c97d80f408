import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.case import ModelIntakeError, load_model_file


def _model_with_external(tmp_path, location):
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("raw_data")
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[w])
    path = tmp_path / "m" / "model.onnx"
    path.parent.mkdir()
    path.write_bytes(helper.make_model(graph).SerializeToString())
    return path


@pytest.mark.parametrize("location", ["/etc/passwd", "../secret.bin", "sub/../../secret.bin"])
def test_external_data_outside_the_model_folder_is_refused(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(np.ones(4, np.float32).tobytes())
    with pytest.raises(ModelIntakeError, match="outside the model's folder"):
        load_model_file(_model_with_external(tmp_path, location))


def test_external_data_through_a_symlink_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(np.ones(4, np.float32).tobytes())
    path = _model_with_external(tmp_path, "link.bin")
    (path.parent / "link.bin").symlink_to(tmp_path / "secret.bin")
    with pytest.raises(ModelIntakeError, match="outside"):
        load_model_file(path)


def test_external_data_inside_the_folder_loads(tmp_path):
    path = _model_with_external(tmp_path, "w.bin")
    (path.parent / "w.bin").write_bytes(np.ones(4, np.float32).tobytes())
    model = load_model_file(path)
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), np.ones(4, np.float32))


@pytest.mark.parametrize("content", [b"", b"not a model at all \x00\xff", b"\x08\x07\x12"])
def test_files_that_are_not_models_are_refused_in_one_line(tmp_path, content):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelIntakeError) as info:
        load_model_file(path)
    assert "\n" not in str(info.value)


# -- graph checks -------------------------------------------------------------------------------
from harness.intake import Limits, check_model  # noqa: E402


def _graph_model(nodes, inputs=("x",), initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
                              [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)], initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_constant_of_shape_to_a_trillion_elements_is_refused():
    shape = numpy_helper.from_array(np.array([1_000_000, 1_000_000], np.int64), "shape")
    model = _graph_model([helper.make_node("ConstantOfShape", ["shape"], ["y"])], inputs=(), initializers=[shape])
    with pytest.raises(ModelIntakeError, match="asks for 1e\\+12 elements"):
        check_model(model)


def test_expand_beyond_the_memory_limit_is_refused():
    shape = numpy_helper.from_array(np.array([4096, 4096, 64], np.int64), "shape")
    model = _graph_model([helper.make_node("Expand", ["x", "shape"], ["y"])], initializers=[shape])
    with pytest.raises(ModelIntakeError, match="memory limit"):
        check_model(model, Limits(max_tensor_bytes=1 << 30))
    check_model(model, Limits(max_tensor_bytes=8 << 30))


def test_declared_tensors_over_the_limit_are_refused():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20, 1 << 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(ModelIntakeError, match="tensor 'x' would take 4096.0 GiB"):
        check_model(helper.make_model(graph))


def test_cycles_and_undefined_inputs_are_refused():
    a = helper.make_node("Relu", ["b"], ["a"], name="first")
    b = helper.make_node("Relu", ["a"], ["b"], name="second")
    with pytest.raises(ModelIntakeError, match="cycle"):
        check_model(_graph_model([a, b]))
    with pytest.raises(ModelIntakeError, match="nothing defines"):
        check_model(_graph_model([helper.make_node("Relu", ["nowhere"], ["y"])]))


def test_deep_subgraph_nesting_is_refused():
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "leaf", [], [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
    body = leaf
    for depth in range(20):
        node = helper.make_node("If", ["c"], ["o"], then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], f"level{depth}", [], [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(list(body.node), "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]), helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
    with pytest.raises(ModelIntakeError, match="nested deeper than 16"):
        check_model(helper.make_model(graph))


def test_an_opset_newer_than_onnx_knows_is_refused():
    with pytest.raises(ModelIntakeError, match="newer than the installed onnx knows"):
        check_model(_graph_model([helper.make_node("Relu", ["x"], ["y"])], opset=99))


def test_oversized_models_are_refused():
    with pytest.raises(ModelIntakeError, match="over the"):
        check_model(_graph_model([helper.make_node("Relu", ["x"], ["y"])]), Limits(max_model_bytes=10), size=11)
