"""PyTorch models exported with both exporters: the dynamo one (``torch.onnx.export(...,
dynamo=True)``, onnxscript's torchlib) and the TorchScript one (``dynamo=False``), each at opsets
13, 17 and the newest it supports.

Six small models cover the layer families real networks use: a two-layer MLP, a CNN with
residual blocks and batch norm, an LSTM and a GRU sequence model, a Transformer encoder layer
(multi-head attention, layer norm, GELU) and an embedding model with a padding mask. Each is
trained a few deterministic steps on generated data (``torch.manual_seed``) so its weights, and
batch norm's running statistics, are not just their initial values; then it is put in eval
mode and its own outputs on every input set become the oracle.

The batch axis is dynamic everywhere, the sequence axis too for sequence models; input sets
cover batch 1, a larger batch and, for sequence models, a second sequence length. The sample
input handed to the exporter has batch 3 and length 7: ``torch.export`` specializes dimensions
of size 0 or 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import BuiltModel, Say, built, check_export, data_set, dist_version, one_line, shape_tags
from ._torch_util import TORCH_PIN, TorchSpec, export

FRAMEWORK = "torch"
DISTRIBUTIONS = ("torch", "onnxscript")
#: opsets asked of every exporter; the newest each exporter supports is added at build time
OPSETS = (13, 17)
EXPORTERS = ("dynamo", "torchscript")
TRAIN_STEPS = 6
SEED = 20261122


def missing() -> str | None:
    if dist_version("torch") is None:
        return f"torch is not installed ({TORCH_PIN})"
    return None


def _float(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _tokens(rng: np.random.Generator, batch: int, length: int, vocab: int) -> np.ndarray:
    """Token ids in 1..vocab-1 with 0 (padding) after a random length per row, at least 1."""
    ids = rng.integers(1, vocab, (batch, length), dtype=np.int64)
    keep = rng.integers(1, length + 1, batch)
    ids[np.arange(length)[None, :] >= keep[:, None]] = 0
    return ids


def _specs(torch: Any) -> list[TorchSpec]:
    from torch import nn

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

        def forward(self, x):
            return self.net(x)

    class ResidualBlock(nn.Module):
        def __init__(self, channels: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(channels)
            self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(channels)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(x + self.bn2(self.conv2(y)))

    class ResidualCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
            self.blocks = nn.Sequential(ResidualBlock(8), ResidualBlock(8))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            return self.head(self.pool(self.blocks(self.stem(x))).flatten(1))

    class Recurrent(nn.Module):
        def __init__(self, cell: str) -> None:
            super().__init__()
            layer = nn.LSTM if cell == "lstm" else nn.GRU
            self.rnn = layer(8, 16, num_layers=2, batch_first=True)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, activation="gelu", batch_first=True)
            self.head = nn.Linear(32, 5)

        def forward(self, x):
            return self.head(self.layer(x))

    class MaskedEmbedding(nn.Module):
        def __init__(self, vocab: int) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, 16, padding_idx=0)
            self.head = nn.Linear(16, 2)

        def forward(self, ids):
            mask = (ids != 0).unsqueeze(-1).to(torch.float32)
            pooled = (self.embed(ids) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled)

    rng = np.random.default_rng(SEED)
    vocab = 50
    batch = {0: "batch"}
    batch_seq = {0: "batch", 1: "seq"}
    specs: list[TorchSpec] = []

    def add(name, make, feature, dynamic, train_batch, seq_axis=None, sets=None):
        torch.manual_seed(SEED)
        module = make()
        x = torch.from_numpy(feature(train_batch))
        with torch.no_grad():
            out_shape = tuple(module(x).shape)
        _train(torch, module, x, torch.from_numpy(rng.standard_normal(out_shape).astype(np.float32)))
        specs.append(TorchSpec(name, module, ("x",), (dynamic,), (feature(3) if seq_axis is None else sets["sample"],),
                           [(s,) for s in sets["sets"]] if sets else [(feature(n),) for n in (1, 16)], seq_axis=seq_axis))

    add("mlp", MLP, lambda n: _float(rng, n, 16), batch, 64)
    add("cnn_residual", ResidualCNN, lambda n: _float(rng, n, 3, 16, 16), batch, 32)
    for cell in ("lstm", "gru"):
        add(cell, lambda: Recurrent(cell), lambda n: _float(rng, n, 10, 8), batch_seq, 32, 1,
            {"sample": _float(rng, 3, 7, 8), "sets": [_float(rng, 1, 10, 8), _float(rng, 8, 10, 8), _float(rng, 8, 4, 8)]})
    add("transformer_encoder", Encoder, lambda n: _float(rng, n, 12, 32), batch_seq, 16, 1,
        {"sample": _float(rng, 3, 7, 32), "sets": [_float(rng, 1, 12, 32), _float(rng, 8, 12, 32), _float(rng, 8, 5, 32)]})
    add("embedding_masked", lambda: MaskedEmbedding(vocab), lambda n: _tokens(rng, n, 12, vocab), batch_seq, 64, 1,
        {"sample": _tokens(rng, 3, 7, vocab), "sets": [_tokens(rng, 1, 12, vocab), _tokens(rng, 16, 12, vocab), _tokens(rng, 16, 5, vocab)]})
    return specs


def _train(torch: Any, module: Any, x: Any, target: Any) -> None:
    """A few Adam steps towards fixed random targets: deterministic, moves every weight (and
    batch norm's running statistics) away from its initial value."""
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
    module.train()
    for _ in range(TRAIN_STEPS):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(module(x), target)
        loss.backward()
        optimizer.step()
    module.eval()


def _opsets(torch: Any) -> dict[str, list[int]]:
    from torch.onnx import _constants

    newest = {"dynamo": getattr(_constants, "ONNX_MAX_OPSET", 18), "torchscript": getattr(_constants, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET", 17)}
    return {exporter: sorted(set(OPSETS) | {newest[exporter]}) for exporter in EXPORTERS}


def build(say: Say) -> Iterator[BuiltModel]:
    import torch

    exporters = list(EXPORTERS)
    if "dynamo" in exporters and dist_version("onnxscript") is None:
        say("torch: onnxscript is not installed, so the dynamo exporter cannot run; exporting with TorchScript only (pip install onnxscript)")
        exporters.remove("dynamo")
    opsets = _opsets(torch)
    exporter_versions = {"dynamo": f"onnxscript {dist_version('onnxscript')}", "torchscript": f"torch {torch.__version__}"}
    for spec in _specs(torch):
        with torch.no_grad():
            expected = [[spec.module(*(torch.from_numpy(a) for a in inputs)).numpy()] for inputs in spec.input_sets]
        for exporter in exporters:
            for opset in opsets[exporter]:
                name = f"{spec.name}/{exporter}/opset{opset}"
                tags = {"suite": "models", "framework": FRAMEWORK, "framework_version": torch.__version__, "model": spec.name,
                        "exporter": exporter, "exporter_version": exporter_versions[exporter], "opset": opset,
                        "dynamic_axes": {n: sorted(d.values()) for n, d in zip(spec.input_names, spec.dynamic)},
                        **shape_tags(spec.input_sets, spec.seq_axis)}
                try:
                    model = export(torch, spec, exporter, opset)
                    check_export(model, opset, spec.input_sets)
                    data = [data_set(model, inputs, outputs) for inputs, outputs in zip(spec.input_sets, expected)]
                except Exception as exc:
                    say(f"torch {name}: export failed: {one_line(exc, 200)}")
                    yield built(name, None, [], tags, export_error=one_line(exc))
                    continue
                yield built(name, model, data, tags)
