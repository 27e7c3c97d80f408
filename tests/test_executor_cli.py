"""``--executor`` and its options on the command line, where ray is not installed too."""

import sys

from harness.cli import main
from harness.store import Store
from harness.suites import onnx_official as official


def test_executor_ray_without_ray_says_which_extra_to_install(monkeypatch, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError, installed or not
    monkeypatch.delitem(sys.modules, "harness.executors.ray", raising=False)
    code = main(["run", "--suite", "onnx-simple", "--corpus", str(corpus), "--store", str(tmp_path / "r.sqlite"), "--executor", "ray"])
    assert code == 2
    assert "onnx-harness[ray]" in capsys.readouterr().err
    assert not (tmp_path / "r.sqlite").exists() or not Store(tmp_path / "r.sqlite").runs()  # no run left behind


def test_a_ray_resource_must_name_a_backend_of_the_run_and_a_positive_amount(tmp_path, capsys):
    base = ["run", "--store", str(tmp_path / "r.sqlite"), "--backend", "reference", "--executor", "ray"]
    assert main(base + ["--ray-resource", "openvino.GPU=1"]) == 2
    assert "openvino" in capsys.readouterr().err
    assert main(base + ["--ray-resource", "reference.GPU=0"]) == 2
    assert "positive" in capsys.readouterr().err
