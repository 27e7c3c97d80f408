"""Cases that differ only in their inputs share one model and one session in a worker; a model
with a random op never does (its generator's state would carry over)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from harness.backends.reference import ReferenceBackend
from harness.case import Case, DataSet
from harness import worker
from harness.worker import ExecOptions, Prepared, Sessions, execute_case
from harness.runner import BackendSpec, Runner

from .util import relu_case


class Counting(ReferenceBackend):
    """Counts the models it prepares."""

    prepared = 0

    def prepare(self, model):
        self.prepared += 1
        return super().prepare(model)


def test_cases_of_one_model_are_prepared_once_and_each_judged_on_its_own_inputs(monkeypatch):
    same = [relu_case(f"t/same{k}", x=np.array([k - 1.5, 0.5, -k], np.float32)) for k in range(3)]
    wrong = relu_case("t/wrong", x=np.array([1.0, 2.0, 3.0], np.float32))
    wrong.data = [DataSet(wrong.data[0].inputs, [np.array([1.0, 2.0, 4.0], np.float32)])]  # a wrong oracle: the shared session still judges it
    other = relu_case("t/other", graph_name="another graph")
    results = {}
    runner = Runner([BackendSpec("reference", name="log")], jobs=1)
    runner.run([(c, "log") for c in [*same, wrong, other]], lambda r: results.setdefault(r.case_id, r))
    counting = Counting()
    counting.load()
    sessions = Sessions()
    checked = []
    monkeypatch.setattr(worker, "check_model", lambda model, *a: checked.append(model.graph.name))
    in_process = [execute_case(counting, c, ExecOptions(), sessions) for c in [*same, wrong, other]]
    assert counting.prepared == 2  # one model of five cases, and the other
    assert checked == [same[0].load_model().graph.name, "another graph"], "the intake checks each model once"
    assert [r.restamp for r in in_process[1:4]] == [in_process[0].restamp] * 3, "a shared model is stamped as its first case's"
    assert [r.outcome for r in in_process] == [results[c.id].outcome for c in [*same, wrong, other]]
    assert [results[c.id].outcome for c in same] == ["pass"] * 3 and results["t/wrong"].outcome == "mismatch"
    assert [results[c.id].timing.get("session") for c in [*same, wrong, other]] == [None, "shared", "shared", "shared", None]
    assert results["t/same1"].prepare_s is None and results["t/same0"].prepare_s > 0


def test_a_model_with_a_random_op_or_a_folder_is_not_shared():
    backend = ReferenceBackend()
    sessions = Sessions()
    graph = helper.make_graph([helper.make_node("RandomUniformLike", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    random_case = Case("t/random", "test", model_bytes=model.SerializeToString())
    options = _options()
    sessions.put(sessions.key(backend, random_case, options), Prepared(model, model, {}, "session"))
    assert sessions.get(sessions.key(backend, random_case, options)) is None
    plain = relu_case()
    sessions.put(sessions.key(backend, plain, options), Prepared(plain.load_model(), plain.load_model(), {}, "session"))
    assert sessions.get(sessions.key(backend, plain, options)).session == "session"
    on_disk = Case("t/disk", "test", path=None)
    assert sessions.key(backend, on_disk, options) is None


def test_only_the_most_recent_sessions_are_kept():
    sessions = Sessions(size=2)
    model = relu_case().load_model()
    for k in range(3):
        sessions.put(("b", bytes([k])), Prepared(model, model, {}, f"session {k}"))
    sessions.get(("b", bytes([1])))
    sessions.put(("b", b"\x09"), Prepared(model, model, {}, "session 9"))
    assert list(sessions.held) == [("b", bytes([1])), ("b", b"\x09")]


def _options():
    from harness.worker import ExecOptions

    return ExecOptions()
