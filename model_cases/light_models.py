"""The nine light models that ship in the onnx wheel (``onnx/backend/test/data/light``: AlexNet,
DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512 with small
weights) and their stored outputs.

Their input is onnx's documented dummy input: float32 ``arange(n) / n`` in the declared shape,
unbound dimensions set to 1. Reading them is the official suite's job
(:func:`harness.suites.onnx_official._collect_light`, the same files that make the
``onnx-light`` suite); here they become model cases with model tags and the stored
tolerance (rtol 1e-3, atol 1e-7 as the wheel's ``data.json`` says).
"""

from __future__ import annotations

from collections.abc import Iterator

from ._common import BuiltModel, Say, built

FRAMEWORK = "light"
DISTRIBUTIONS = ("onnx",)


def missing() -> str | None:
    return None  # the harness itself depends on onnx


def build(say: Say) -> Iterator[BuiltModel]:
    import onnx

    from harness.suites.onnx_official import _collect_light

    for _, folder_name, model, data, tolerance in _collect_light():
        name = folder_name.removeprefix("test_")
        first = next(iter(data[0].inputs.values()))
        tags = {"suite": "models", "framework": FRAMEWORK, "framework_version": onnx.__version__, "model": name,
                "exporter": "shipped", "exporter_version": onnx.__version__, "opset": _opset(model),
                "batch": int(first.shape[0]), "batches": [int(first.shape[0])]}
        yield built(name, model, data, tags, tolerance)


def _opset(model) -> int | None:
    return next((imp.version for imp in model.opset_import if imp.domain in ("", "ai.onnx")), None)
