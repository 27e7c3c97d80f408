import numpy as np
import onnx
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
