"""What the PyTorch and the Hugging Face Transformers builders share: a model's spec, and its
export with either exporter (the dynamo one, ``dynamo=True``, or the TorchScript one)."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.case import Tolerance

from ._common import FLOAT32_MODEL, quiet_output

TORCH_PIN = "pip install torch==2.13.0: the CPU build; an unpinned torch pulls a CUDA build"
_LOGGERS = ("torch.onnx", "torch.export", "torch._dynamo", "onnxscript")


@dataclass
class TorchSpec:
    name: str
    module: Any
    input_names: tuple[str, ...]
    #: per input, {axis: dimension name} for its dynamic axes
    dynamic: tuple[dict[int, str], ...]
    sample: tuple[np.ndarray, ...]
    input_sets: list[tuple[np.ndarray, ...]]
    output_names: tuple[str, ...] = ("y",)
    tolerance: Tolerance = FLOAT32_MODEL
    tags: dict[str, Any] = field(default_factory=dict)
    #: the sequence axis of the first input, for the seq_len tags (None: no sequence)
    seq_axis: int | None = None


def export(torch: Any, spec: TorchSpec, exporter: str, opset: int, loggers: tuple[str, ...] = ()) -> Any:
    """``spec.module`` exported by ``exporter`` ("dynamo" or "torchscript") at ``opset``; the
    exporters' own loggers and ``loggers`` are silenced."""
    import onnx

    sample = tuple(torch.from_numpy(a) for a in spec.sample)
    for logger in _LOGGERS + loggers:
        logging.getLogger(logger).setLevel(logging.CRITICAL)
    # Exports run with gradients on: in eval mode without them, TransformerEncoderLayer takes
    # its fused fast path, which is an inference kernel and not what an exporter should trace.
    with quiet_output():
        if exporter == "torchscript":
            buffer = io.BytesIO()
            torch.onnx.export(spec.module, sample, buffer, dynamo=False, opset_version=opset, input_names=list(spec.input_names),
                              output_names=list(spec.output_names),
                              dynamic_axes={n: dict(d) for n, d in zip(spec.input_names, spec.dynamic) if d})
            model = onnx.load_model_from_string(buffer.getvalue())
        else:
            dims: dict[str, Any] = {}
            shapes = tuple({axis: dims.setdefault(label, torch.export.Dim(label)) for axis, label in d.items()} or None
                           for d in spec.dynamic)
            model = torch.onnx.export(spec.module, sample, dynamo=True, opset_version=opset, input_names=list(spec.input_names),
                                      output_names=list(spec.output_names), dynamic_shapes=shapes, verbose=False).model_proto
    # torch.onnx.export puts the module back in the mode it found it in; the oracle needs eval
    spec.module.eval()
    return model
