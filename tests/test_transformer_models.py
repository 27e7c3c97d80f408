"""The transformer families of the models suite (model_cases/transformer_models.py): what the
builder exports, and that its input sets reach what deployed models see (padding, a KV cache,
long sequences, float16). Runs where torch and transformers are installed (tox -e pytorch)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.case import Case  # noqa: E402
from harness.worker import execute_case  # noqa: E402
from harness.runner import BackendSpec, _build_backend  # noqa: E402
from model_cases import transformer_models as T  # noqa: E402


@pytest.fixture(scope="module")
def specs():
    return {s.name: s for s in T._specs(torch)}


def test_six_models_with_dynamic_axes(specs):
    assert list(specs) == ["bert_encoder", "bert_encoder_fp16", "gpt2_decoder", "gpt2_decoder_kv_cache", "t5_encoder_decoder", "vit_encoder"]
    assert specs["bert_encoder"].dynamic == ({0: "batch", 1: "seq"}, {0: "batch", 1: "seq"})
    # the long input set and the sample differ in batch and length: a size frozen at export shows
    assert {s[0].shape for s in specs["gpt2_decoder"].input_sets} >= {(1, 12), (2, 96)}


def test_the_padding_mask_changes_the_oracle(specs):
    """A padded row's output must depend on the mask: else the mask input is not exercised."""
    spec = specs["bert_encoder"]
    ids, mask = spec.input_sets[1]
    assert (mask == 0).any() and (mask[0] == 1).all()
    padded = T._outputs(torch, spec, (ids, mask))[0]
    unmasked = T._outputs(torch, spec, (ids, np.ones_like(mask)))[0]
    row = int(np.nonzero((mask == 0).any(axis=1))[0][0])
    assert np.abs(padded[row] - unmasked[row]).max() > 1e-3
    np.testing.assert_array_equal(padded[0], unmasked[0])  # the unpadded row is untouched


def test_the_kv_cache_step_returns_present_keys_one_longer(specs):
    spec = specs["gpt2_decoder_kv_cache"]
    for inputs in spec.input_sets:
        outs = T._outputs(torch, spec, inputs)
        batch, past = inputs[2].shape[0], inputs[2].shape[2]
        assert outs[0].shape == (batch, 1, T.VOCAB)
        assert [o.shape for o in outs[1:]] == [(batch, T.HEADS, past + 1, T.HIDDEN // T.HEADS)] * (2 * T.LAYERS)
        np.testing.assert_array_equal(outs[1][:, :, :past], inputs[2])  # the past keys come back first


def test_the_float16_model_keeps_its_float32_twin_within_tolerance_but_not_exactly(specs):
    half, full = specs["bert_encoder_fp16"], specs["bert_encoder"]
    inputs = half.input_sets[2]  # the long, padded one
    h = T._outputs(torch, half, inputs)[0]
    f = T._outputs(torch, full, inputs)[0]
    assert h.dtype == np.float16 and f.dtype == np.float32
    drift = np.abs(h.astype(np.float64) - f).max()
    assert 1e-4 < drift < T.FLOAT16_MODEL.atol  # half precision costs something, and less than the tolerance


def test_exports_run_on_onnxruntime_as_the_framework_computes(monkeypatch, specs):
    """A TorchScript export of the encoder and a dynamo export of the KV-cache decoder, every input
    set (batch and length other than the sample's) matching PyTorch on ONNX Runtime."""
    monkeypatch.setattr(T, "_specs", lambda torch: [specs["bert_encoder"], specs["gpt2_decoder_kv_cache"]])
    monkeypatch.setattr(T, "OPSETS", {"torchscript": (17,), "dynamo": (18,)})
    made = {m.name: m for m in T.build(lambda msg: None)}
    backend = _build_backend(BackendSpec("onnxruntime"))
    for name in ("bert_encoder/torchscript/opset17", "gpt2_decoder_kv_cache/dynamo/opset18"):
        m = made[name]
        assert m.export_error is None, m.export_error
        assert m.tags["framework"] == "transformers" and m.tags["framework_version"]
        case = Case(id=name, suite="models", model_bytes=m.model.SerializeToString(), data=m.data, tolerance=m.tolerance)
        result = execute_case(backend, case)
        assert result.outcome == "pass", (name, result.message)
    assert len(made["gpt2_decoder_kv_cache/dynamo/opset18"].model.graph.output) == 1 + 2 * T.LAYERS
