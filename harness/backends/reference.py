"""``onnx.reference.ReferenceEvaluator``: the onnx package's own Python runtime.

It is a second, independent opinion, never our oracle (that lives in ``operator_cases/``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import onnx

from .base import Backend, Session


class ReferenceSession(Session):
    def __init__(self, evaluator: Any) -> None:
        self.evaluator = evaluator

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        return [_plain(v) for v in self.evaluator.run(None, feeds)]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class ReferenceBackend(Backend):
    name: ClassVar[str] = "reference"
    packages = ("onnx",)

    def prepare(self, model: onnx.ModelProto) -> Session:
        from onnx.reference import ReferenceEvaluator

        return ReferenceSession(ReferenceEvaluator(model))

    def classify_error(self, exc: BaseException, stage: str) -> str:
        text = str(exc).lower()
        if isinstance(exc, NotImplementedError) or "no implementation" in text or "not implemented" in text or "is not implemented" in text:
            return "unsupported"
        return super().classify_error(exc, stage)
