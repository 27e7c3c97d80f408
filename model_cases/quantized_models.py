"""Quantized models: ONNX Runtime's quantization tools applied to the PyTorch CNN and
Transformer encoder of :mod:`.torch_models`.

Each float model (trained as in :mod:`.torch_models`, exported, converted to opset 21) is
quantized three ways with ``onnxruntime.quantization``:

- ``dynamic``: ``quantize_dynamic`` (int8 weights; activations quantized at run time by
  DynamicQuantizeLinear, ConvInteger and MatMulInteger);
- ``static-qdq``: ``quantize_static`` in the QDQ format (QuantizeLinear/DequantizeLinear pairs
  around float ops), calibrated with MinMax on a small reader of the model's own input sets;
- ``static-qoperator``: ``quantize_static`` in the QOperator format, its op types limited to
  Conv and MatMul so that the model keeps to the standard domain (QLinearConv, QLinearMatMul;
  ONNX Runtime's QGemm and QLinearAdd live in ``com.microsoft``).

A quantizer that fails is an ``export-failed`` case carrying its message.

Oracles. A quantized model computes something else than the float model: its expected outputs
are the quantized model's own, computed by our per-op references (``operator_cases``: Q/DQ,
DynamicQuantizeLinear, QLinearMatMul, QLinearConv, ConvInteger, MatMulInteger and the float ops)
composed node by node over the graph, as ``harness.localize`` composes them; a node without a
reference of ours makes the case an oracle error. The case is tagged ``oracle: ours``, so
``onnx.reference`` is one more backend under test. The float model's framework output is
reported beside it: the tag ``float_max_abs`` is the largest difference between the quantized oracle and the
float PyTorch output over the input sets, and ``float_range`` the largest magnitude of the float
output (so a reader sees what quantization costs).

Tolerance (rtol of :data:`FLOAT32_MODEL`, and an atol of one quantization step at the output):

- an output that is DequantizeLinear's (QDQ): values lie on the grid of the output scale ``s``;
  integer accumulation is exact, but a value a runtime computes a few ulps off before rounding
  can land on the neighbouring level: atol = ``s``, one step;
- an output that is a quantized tensor's dequantized value plus a constant (QOperator's
  QLinearMatMul head, DequantizeLinear, then the bias Add): atol = that tensor's scale, one step;
- an output computed in float from a quantized tensor by a last MatMul/Gemm (dynamic, and
  QOperator whose head stays float): one element of the head's input one step off (scale ``s``,
  the last quantization scale before the head: a DequantizeLinear's, or the largest of
  DynamicQuantizeLinear's computed scales over the input sets) moves an output by at most
  ``s * max|W|``, ``W`` the head's float weight: atol = that.

The step is read from the quantized model (and the oracle's intermediate values), not guessed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from harness.case import Tolerance

from ._common import FLOAT32_MODEL, BuiltModel, Say, built, check_export, data_set, dist_version, one_line, quiet_output, shape_tags

FRAMEWORK = "quantized"
DISTRIBUTIONS = ("onnxruntime", "torch", "onnxscript")
OPSET = 21
MODELS = {"cnn_residual": "torchscript", "transformer_encoder": "dynamo"}
#: the builder modules whose source decides what this one builds (part of the cache key)
DEPENDS = ("torch_models.py",)
METHODS = ("dynamic", "static-qdq", "static-qoperator")


def missing() -> str | None:
    absent = [d for d in ("torch", "onnxruntime") if dist_version(d) is None]
    return f"{' and '.join(absent)} not installed (pip install torch onnxruntime)" if absent else None


def _quantize(float_path: str, out_path: str, method: str, input_name: str, calibration: list[np.ndarray]) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

    if method == "dynamic":
        quantize_dynamic(float_path, out_path, weight_type=QuantType.QInt8)
        return

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter([{input_name: x} for x in calibration])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.items, None)

    qdq = method == "static-qdq"
    quantize_static(float_path, out_path, Reader(), quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=None if qdq else ["Conv", "MatMul"])


def _head_weight_max(float_model: Any) -> float:
    """max |W| of the float model's last MatMul or Gemm weight (an initializer)."""
    from onnx import numpy_helper

    inits = {t.name: t for t in float_model.graph.initializer}
    for node in reversed(float_model.graph.node):
        if node.op_type in ("MatMul", "Gemm"):
            for name in node.input[1:2]:
                if name in inits:
                    return float(np.abs(numpy_helper.to_array(inits[name])).max())
    raise ValueError("no MatMul or Gemm with a constant weight: the head of the model is not where expected")


def output_step(model: Any, float_model: Any, intermediates: list[dict[str, Any]]) -> tuple[float, str]:
    """(atol, how it was found): one quantization step at the output (see the module's doc)."""
    from onnx import numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    out = producer.get(model.graph.output[0].name)
    if out is not None and out.op_type == "DequantizeLinear":
        s = float(np.max(inits[out.input[1]]))
        return s, f"one step of the output's DequantizeLinear scale ({s:.3g})"
    last = next((n for n in reversed(model.graph.node) if n.op_type in ("DequantizeLinear", "DynamicQuantizeLinear")), None)
    if last is None:
        raise ValueError("the quantized model has no quantized tensor")
    if last.op_type == "DequantizeLinear":
        s = float(np.max(inits[last.input[1]]))
    else:
        s = max(float(np.max(values[last.output[1]])) for values in intermediates)
    nodes = list(model.graph.node)
    tail = nodes[nodes.index(last) + 1:]
    if not any(n.op_type in ("MatMul", "Gemm", "MatMulInteger") for n in tail):  # e.g. DequantizeLinear, then the bias Add
        ops = ", ".join(n.op_type for n in tail) or "nothing"
        return s, f"one step of the last quantized tensor's scale ({s:.3g}, {last.op_type} {last.name!r}; after it only {ops})"
    w = _head_weight_max(float_model)
    return s * w, f"one step ({s:.3g}, {last.op_type} {last.name!r}) of the float head's input times max|W| of the head ({w:.3g})"


#: the oracle: our per-op references composed over the graph (harness.localize's composer)
ORACLE = "ours"


def _oracle(model: Any, feeds: list[dict[str, np.ndarray]]) -> tuple[list[list[np.ndarray]], list[dict[str, Any]]]:
    """The quantized model's outputs by our references composed node by node (every value
    computed from the values before it, as harness.localize does), and every intermediate value.
    A node without a reference of ours is an oracle failure, said so (the case becomes an oracle
    error, never a pass)."""
    from harness.localize import _apply, _graph, reference_steps

    g = _graph(model)
    steps = reference_steps(g)
    missing = [s for s in steps if isinstance(s, str)]
    if missing:
        raise ValueError(f"the composed oracle has no reference for {len(missing)} node(s): {missing[0]}")
    outs, inter = [], []
    names = [o.name for o in model.graph.output]
    for f in feeds:
        values: dict[str, Any] = {**g.initializers, **f}
        for node, step in zip(g.nodes, steps):
            values.update((o, y) for o, y in zip(node.output, _apply(step, node, values)) if o)
        inter.append(values)
        outs.append([np.asarray(values[n]) for n in names])
    return outs, inter


def _float_models(torch: Any, say: Say) -> Iterator[tuple[Any, Any, str]]:
    """(spec, float ONNX model at OPSET, exporter) for each model of MODELS."""
    import onnx

    from . import torch_models as T

    specs = {s.name: s for s in T._specs(torch)}
    for name, exporter in MODELS.items():
        spec = specs[name]
        model = T._export(torch, spec, exporter, 18 if exporter == "dynamo" else 17)
        yield spec, onnx.version_converter.convert_version(model, OPSET), exporter


def build(say: Say) -> Iterator[BuiltModel]:
    import onnx
    import onnxruntime
    import torch

    versions = {"framework_version": torch.__version__, "quantizer": f"onnxruntime.quantization {onnxruntime.__version__}"}
    for spec, float_model, exporter in _float_models(torch, say):
        with torch.no_grad():
            float_out = [spec.module(*(torch.from_numpy(a) for a in inputs)).numpy() for inputs in spec.input_sets]
        input_name = float_model.graph.input[0].name
        calibration = [spec.sample[0]] + [s[0] for s in spec.input_sets]
        for method in METHODS:
            name = f"{spec.name}/{method}/opset{OPSET}"
            tags = {"suite": "models", "framework": FRAMEWORK, "model": f"{spec.name}-int8", "exporter": f"{exporter} + {method}",
                    "opset": OPSET, "quantization": method, "oracle": ORACLE, **versions, **shape_tags(spec.input_sets, spec.seq_axis)}
            try:  # the quantizer's failure is this model's export failure
                with tempfile.TemporaryDirectory() as tmp, quiet_output():
                    float_path, out_path = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "quantized.onnx")
                    onnx.save(float_model, float_path)
                    _quantize(float_path, out_path, method, input_name, calibration)
                    model = onnx.load(out_path)
                check_export(model, OPSET, spec.input_sets)
            except Exception as exc:
                say(f"quantized {name}: failed: {one_line(exc, 200)}")
                yield built(name, None, [], tags, export_error=one_line(exc))
                continue
            feeds = [{input_name: s[0]} for s in spec.input_sets]
            try:  # the oracle's failure is an oracle error of the case, never a pass or an export failure
                expected, intermediates = _oracle(model, feeds)
            except Exception as exc:
                say(f"quantized {name}: oracle failed: {one_line(exc, 200)}")
                yield built(name, model, [], {**tags, "oracle_error": one_line(exc)})
                continue
            atol, why = output_step(model, float_model, intermediates)
            data = [data_set(model, inputs, outs) for inputs, outs in zip(spec.input_sets, expected)]
            tags["float_max_abs"] = float(max(np.abs(e[0] - f).max() for e, f in zip(expected, float_out)))
            tags["float_range"] = float(max(np.abs(f).max() for f in float_out))
            tags["tolerance_reason"] = why
            yield built(name, model, data, tags, Tolerance(rtol=FLOAT32_MODEL.rtol, atol=atol))
