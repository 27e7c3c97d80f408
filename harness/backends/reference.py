"""``onnx.reference.ReferenceEvaluator``: the onnx package's own Python runtime.

It is a second, independent opinion, never our oracle (that lives in ``operator_cases/``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import onnx

from ..values import plain_value
from .base import Backend, Session, refuse_if_invalid


class ReferenceSession(Session):
    def __init__(self, evaluator: Any) -> None:
        self.evaluator = evaluator

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        return [plain_value(v) for v in self.evaluator.run(None, feeds)]


class ReferenceBackend(Backend):
    name: ClassVar[str] = "reference"
    packages = ("onnx",)
    repro_runtime: ClassVar[str | None] = "onnx.reference"

    def prepare(self, model: onnx.ModelProto) -> Session:
        from onnx.reference import ReferenceEvaluator

        try:
            return ReferenceSession(ReferenceEvaluator(model))
        except Exception as exc:
            if self.classify_error(exc, "prepare") != "unsupported":
                refuse_if_invalid(model, exc)  # rejected only when the ONNX checker agrees
            raise

    def classify_error(self, exc: BaseException, stage: str) -> str:
        text = str(exc).lower()
        if isinstance(exc, NotImplementedError) or "no implementation" in text or "not implemented" in text or "is not implemented" in text:
            return "unsupported"
        return super().classify_error(exc, stage)
