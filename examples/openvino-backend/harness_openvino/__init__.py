"""OpenVINO as an onnx-harness backend.

This package is the template a vendor copies: one class, one entry point. The harness calls
``available()`` without importing the runtime, ``load()`` once per worker process, then
``prepare(model)`` per case and ``Session.run(feeds)`` per input set. Errors are sorted into
outcomes by ``classify_error``: the model refused at load is ``rejected``, an operator the
runtime lacks is ``unsupported``, anything else while running is ``error``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import onnx

from harness.backends.base import Backend, Session, Unsupported, import_runtime


class OpenVinoSession(Session):
    def __init__(self, compiled: Any, input_names: list[str]) -> None:
        self.compiled = compiled
        self.input_names = input_names
        self.outputs = list(compiled.outputs)

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        for name, value in feeds.items():
            if not isinstance(value, np.ndarray) or value.dtype.kind in "VO":
                raise Unsupported(f"openvino binding: input {name!r} of type {type(value).__name__}/{getattr(value, 'dtype', '')} is not supported")
        request = self.compiled.create_infer_request()
        results = request.infer({name: feeds[name] for name in self.input_names if name in feeds})
        return [np.asarray(results[out]) for out in self.outputs]


class OpenVinoBackend(Backend):
    name: ClassVar[str] = "openvino"
    packages = ("openvino",)
    # Options: device ("CPU" by default; GPU, NPU by --option openvino.device=GPU) and
    # precision ("f32" by default: on CPUs with bf16 units OpenVINO would otherwise compute
    # float32 models in bfloat16, which is a performance setting, not what the model says).

    def load(self) -> None:
        self.ov = import_runtime("openvino")
        self.core = self.ov.Core()

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        env["device"] = self.options.get("device", "CPU")
        env["precision"] = self.options.get("precision", "f32")
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        ov_model = self.core.read_model(model.SerializeToString())
        config = {"INFERENCE_PRECISION_HINT": self.options.get("precision", "f32")}
        compiled = self.core.compile_model(ov_model, self.options.get("device", "CPU"), config)
        inits = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        return OpenVinoSession(compiled, names)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        text = str(exc)
        if "not supported" in text.lower() or "No conversion rule" in text or "OpConversionFailure" in text or "is not implemented" in text:
            return "unsupported"
        if stage == "prepare":
            return "rejected"
        return super().classify_error(exc, stage)
