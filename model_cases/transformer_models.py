"""Transformer families from Hugging Face ``transformers``, exported by both PyTorch exporters.

Five architectures, each built from a tiny configuration (two layers, hidden size 32, four
heads) with seeded weights, so nothing is downloaded: a BERT encoder, a GPT-2 decoder without
and with a KV cache, a T5 encoder-decoder and a ViT image encoder; plus the BERT encoder in
float16, where softmax and layer norm drift. Each is exported by the TorchScript exporter
(``dynamo=False``, opsets 14 and 17; 14 is the first with scaled_dot_product_attention) and by
the dynamo exporter (opset 18 and the newest it writes); the model's own PyTorch outputs are
the oracle.

Weights. A freshly initialised model has every LayerNorm at weight 1, bias 0 and tiny
projection weights, which hides scaling and bias errors; each parameter is moved by seeded
noise (``std`` 0.05, from :data:`SEED`) so every weight matters.

Inputs exercise what deployed models see: a dynamic batch and sequence axis (the exporters get a
sample of batch 3 and length 7, as ``torch.export`` specializes sizes 0 and 1), padding through
the attention mask (rows of different true lengths), and a long sequence (96 tokens, 80 encoder
tokens for T5) where a softmax row sums many terms. The KV-cache decoder takes one new token
with past keys and values of 4, 20 and 90 positions and returns the logits and the present
keys and values.

Float16. ``bert_encoder_fp16`` is the float32 BERT cast to float16 and exported; its oracle is
PyTorch's own float16 output (CPU). The tag ``float32_max_abs`` is its largest distance to the
float32 model's output on the same inputs, so a reader sees what half precision costs. Tolerance
(:data:`FLOAT16_MODEL`): rtol and atol 1e-2. The outputs are layer-normed (magnitude about 1, where
a float16 ulp is 2**-10 ~ 1e-3); PyTorch accumulates float16 matmuls and softmax sums in float32
while a runtime may round each partial sum to float16, and two layers of attention, GELU and layer
norm put such differences at a few ulps, so 1e-2 (about ten ulps) is the margin; a wrong op
(a missing mask, a transposed weight) is off by 1e-1 or more.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.case import Tolerance

from ._common import BuiltModel, Say, built, check_export, data_set, dist_version, one_line, shape_tags
from ._torch_util import TORCH_PIN, TorchSpec, export

FRAMEWORK = "transformers"
DISTRIBUTIONS = ("transformers", "torch", "onnxscript")
SEED = 20261127
#: opsets per exporter; "newest" is the newest the dynamo exporter writes, read at build time
OPSETS = {"torchscript": (14, 17), "dynamo": (18, "newest")}
LAYERS, HIDDEN, HEADS, VOCAB = 2, 32, 4, 64
FLOAT16_MODEL = Tolerance(rtol=1e-2, atol=1e-2)


def missing() -> str | None:
    for dist in ("torch", "transformers"):
        if dist_version(dist) is None:
            pin = f" ({TORCH_PIN})" if dist == "torch" else ""
            return f"{dist} is not installed{pin}; pip install '.[transformers]'"
    return None


@dataclass
class _Spec(TorchSpec):
    #: the transformer models' first input is (batch, sequence, ...) unless said otherwise
    seq_axis: int | None = 1


def _ids_and_mask(rng: np.random.Generator, batch: int, length: int, pad: bool) -> tuple[np.ndarray, np.ndarray]:
    """Token ids in 1..VOCAB-1 and an attention mask; with ``pad`` every row but the first ends
    in padding (id 0, mask 0) after a true length drawn in 1..length-1."""
    ids = rng.integers(1, VOCAB, (batch, length), dtype=np.int64)
    mask = np.ones((batch, length), dtype=np.int64)
    if pad:
        for row in range(1, batch):
            keep = int(rng.integers(1, length))
            ids[row, keep:] = 0
            mask[row, keep:] = 0
    return ids, mask


def _text_sets(rng: np.random.Generator) -> tuple[tuple[np.ndarray, ...], list[tuple[np.ndarray, ...]]]:
    sample = _ids_and_mask(rng, 3, 7, pad=False)
    return sample, [_ids_and_mask(rng, 1, 12, pad=False), _ids_and_mask(rng, 4, 12, pad=True), _ids_and_mask(rng, 2, 96, pad=True)]


def _perturb(torch: Any, module: Any) -> Any:
    """Move every parameter by seeded noise (see the module docstring), then eval mode."""
    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.05)
    return module.eval()


def _specs(torch: Any) -> list[_Spec]:
    import transformers as tf
    from torch import nn

    rng = np.random.default_rng(SEED)
    text = {0: "batch", 1: "seq"}
    specs: list[_Spec] = []

    class LastHidden(nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            return self.model(input_ids=ids, attention_mask=mask).last_hidden_state

    class Logits(nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            return self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits

    class CachedStep(nn.Module):
        """One decoding step: the new token's logits and the present keys and values, the past
        ones passed as plain tensors (two per layer), as an ONNX decoder graph takes them."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids, mask, past_key_0, past_value_0, past_key_1, past_value_1):  # LAYERS = 2, named for torch.export
            past = (past_key_0, past_value_0, past_key_1, past_value_1)
            cache = tf.DynamicCache()
            for layer in range(LAYERS):
                cache.update(past[2 * layer], past[2 * layer + 1], layer)
            out = self.model(input_ids=ids, attention_mask=mask, cache=cache, use_cache=True)
            present = []
            for layer in out.cache.layers:
                present += [layer.keys, layer.values]
            return (out.logits, *present)

    class Seq2Seq(nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids, mask, decoder_ids):
            return self.model(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder_ids, use_cache=False).logits

    class Vision(nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, pixels):
            return self.model(pixel_values=pixels).last_hidden_state

    torch.manual_seed(SEED)
    bert = _perturb(torch, tf.BertModel(tf.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                                                      num_attention_heads=HEADS, intermediate_size=2 * HIDDEN,
                                                      max_position_embeddings=128)))
    sample, sets = _text_sets(rng)
    specs.append(_Spec("bert_encoder", LastHidden(bert).eval(), ("ids", "mask"), (text, text), sample, sets))
    half = LastHidden(copy.deepcopy(bert).half()).eval()
    specs.append(_Spec("bert_encoder_fp16", half, ("ids", "mask"), (text, text), sample, sets, tolerance=FLOAT16_MODEL,
                       tags={"float32_of": "bert_encoder"}))

    gpt2 = _perturb(torch, tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                                                           n_positions=128, bos_token_id=1, eos_token_id=2)))
    sample, sets = _text_sets(rng)
    specs.append(_Spec("gpt2_decoder", Logits(gpt2).eval(), ("ids", "mask"), (text, text), sample, sets))

    head_dim = HIDDEN // HEADS
    names = ("ids", "mask") + tuple(f"past_{kind}_{layer}" for layer in range(LAYERS) for kind in ("key", "value"))
    dynamic = ({0: "batch"}, {0: "batch", 1: "total"}) + tuple({0: "batch", 2: "past"} for _ in range(2 * LAYERS))

    def step(batch: int, past: int) -> tuple[np.ndarray, ...]:
        ids = rng.integers(1, VOCAB, (batch, 1), dtype=np.int64)
        kv = tuple(rng.standard_normal((batch, HEADS, past, head_dim)).astype(np.float32) for _ in range(2 * LAYERS))
        return (ids, np.ones((batch, past + 1), dtype=np.int64), *kv)

    outputs = ("logits",) + tuple(f"present_{kind}_{layer}" for layer in range(LAYERS) for kind in ("key", "value"))
    specs.append(_Spec("gpt2_decoder_kv_cache", CachedStep(gpt2).eval(), names, dynamic, step(3, 7),
                       [step(1, 4), step(3, 20), step(2, 90)], outputs, seq_axis=None))

    t5 = _perturb(torch, tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS,
                                                                   d_ff=2 * HIDDEN, num_layers=LAYERS, num_heads=HEADS,
                                                                   decoder_start_token_id=0, pad_token_id=0)))

    def seq2seq(batch: int, length: int, target: int, pad: bool) -> tuple[np.ndarray, ...]:
        ids, mask = _ids_and_mask(rng, batch, length, pad)
        return ids, mask, rng.integers(1, VOCAB, (batch, target), dtype=np.int64)

    specs.append(_Spec("t5_encoder_decoder", Seq2Seq(t5).eval(), ("ids", "mask", "decoder_ids"),
                       (text, text, {0: "batch", 1: "target"}), seq2seq(3, 7, 5, False),
                       [seq2seq(1, 12, 4, False), seq2seq(4, 12, 6, True), seq2seq(2, 80, 16, True)]))

    vit = _perturb(torch, tf.ViTModel(tf.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=HIDDEN,
                                                   num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                                   intermediate_size=2 * HIDDEN), add_pooling_layer=False))

    def images(batch: int) -> tuple[np.ndarray]:
        return (rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),)

    specs.append(_Spec("vit_encoder", Vision(vit).eval(), ("pixels",), ({0: "batch"},), images(3), [images(1), images(8)], seq_axis=None))
    return specs


def _outputs(torch: Any, spec: _Spec, inputs: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    with torch.no_grad():
        out = spec.module(*(torch.from_numpy(a) for a in inputs))
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def build(say: Say) -> Iterator[BuiltModel]:
    import torch
    from torch.onnx import _constants

    exporters = dict(OPSETS)
    if dist_version("onnxscript") is None:
        say("transformers: onnxscript is not installed, so the dynamo exporter cannot run; exporting with TorchScript only")
        exporters.pop("dynamo")
    newest = getattr(_constants, "ONNX_MAX_OPSET", 18)
    exporter_versions = {"dynamo": f"onnxscript {dist_version('onnxscript')}", "torchscript": f"torch {torch.__version__}"}
    specs = _specs(torch)
    expected = {spec.name: [_outputs(torch, spec, inputs) for inputs in spec.input_sets] for spec in specs}
    for spec in specs:
        tags = {"suite": "models", "framework": FRAMEWORK, "framework_version": dist_version("transformers"), "model": spec.name,
                "torch_version": torch.__version__, "dynamic_axes": {n: sorted(d.values()) for n, d in zip(spec.input_names, spec.dynamic)},
                **shape_tags(spec.input_sets, spec.seq_axis), "input_shapes": [[list(a.shape) for a in inputs] for inputs in spec.input_sets], **spec.tags}
        if "float32_of" in spec.tags:
            reference = expected[spec.tags["float32_of"]]
            tags["float32_max_abs"] = max(float(np.max(np.abs(h[0].astype(np.float64) - f[0]))) for h, f in zip(expected[spec.name], reference))
        for exporter, opsets in exporters.items():
            for opset in sorted({newest if o == "newest" else o for o in opsets}):
                name = f"{spec.name}/{exporter}/opset{opset}"
                case_tags = {**tags, "exporter": exporter, "exporter_version": exporter_versions[exporter], "opset": opset}
                try:
                    model = export(torch, spec, exporter, opset, ("transformers",))
                    check_export(model, opset, spec.input_sets)
                    data = [data_set(model, inputs, outputs) for inputs, outputs in zip(spec.input_sets, expected[spec.name])]
                except Exception as exc:  # the exporter's failure is this case's result: export-failed
                    say(f"transformers {name}: export failed: {one_line(exc, 200)}")
                    yield built(name, None, [], case_tags, spec.tolerance, export_error=one_line(exc))
                    continue
                yield built(name, model, data, case_tags, spec.tolerance)
