"""Corruption fuzzing of model intake: byte-level and structural mutations of real models from
the official corpus never raise anything but ModelIntakeError, and never hang."""

import signal
from pathlib import Path

import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.case import ModelIntakeError, load_model_file
from harness.intake import Limits, check_model

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
SEEDS = sorted(DATA.glob("simple/*/model.onnx"))[:8] + sorted(DATA.glob("pytorch-converted/*/model.onnx"))[:8] + sorted(DATA.glob("light/*.onnx"))[:2]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _intake(path: Path) -> None:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        model = load_model_file(path)
        check_model(model, Limits(max_tensor_bytes=1 << 30), path.stat().st_size)
    except ModelIntakeError as exc:
        assert "\n" not in str(exc)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_byte_mutations(tmp_path_factory, seed, data):
    raw = bytearray(seed.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
        pos = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if kind == "flip" and raw:
            raw[pos] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "truncate":
            del raw[pos:]
        elif kind == "insert":
            raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=16))
        elif raw:
            del raw[pos:pos + data.draw(st.integers(1, 16))]
    path = tmp_path_factory.mktemp("m") / "model.onnx"
    path.write_bytes(bytes(raw))
    _intake(path)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_structural_mutations(tmp_path_factory, seed, data):
    model = onnx.load(seed)
    graph = model.graph
    kind = data.draw(st.sampled_from(["huge_dim", "swap_nodes", "drop_input", "dangling", "opset", "external", "self_loop"]))
    if kind == "huge_dim" and graph.input and graph.input[0].type.tensor_type.shape.dim:
        graph.input[0].type.tensor_type.shape.dim[0].dim_value = data.draw(st.integers(1 << 20, 1 << 40))
    elif kind == "swap_nodes" and len(graph.node) > 1:
        i, j = 0, len(graph.node) - 1
        a, b = onnx.NodeProto(), onnx.NodeProto()
        a.CopyFrom(graph.node[i]); b.CopyFrom(graph.node[j])
        graph.node[i].CopyFrom(b); graph.node[j].CopyFrom(a)
    elif kind == "drop_input" and graph.input:
        del graph.input[0]
    elif kind == "dangling" and graph.node:
        graph.node[0].input.append("nowhere")
    elif kind == "opset":
        model.opset_import[0].version = data.draw(st.integers(0, 1000))
    elif kind == "external" and graph.initializer:
        tensor = graph.initializer[0]
        tensor.data_location = onnx.TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", data.draw(st.sampled_from(["../../etc/passwd", "/etc/shadow", "missing.bin"]))
    elif kind == "self_loop" and graph.node:
        graph.node[0].input.append(graph.node[0].output[0])
    path = tmp_path_factory.mktemp("m") / "model.onnx"
    path.write_bytes(model.SerializeToString())
    _intake(path)
