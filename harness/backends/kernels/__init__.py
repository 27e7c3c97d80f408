"""``kernels``: our own ONNX executor written with NumPy, a system under test.

The graph compiler lives in :mod:`.executor`; operators live in one module per family
(``ops_*.py``, ``nn_*.py``), each registering its kernels with :func:`.registry.register`.
Every module of this package is imported here, so a new kernel module needs no edit
anywhere else.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from typing import Any, ClassVar

import numpy as np
import onnx

from ..base import Backend, Session
from . import registry
from .executor import Plan, _as_output, compile_model

__all__ = ["KernelsBackend", "KernelsSession"]


def _import_kernel_modules() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("executor", "registry") and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_import_kernel_modules()


class KernelsSession(Session):
    def __init__(self, plan: Plan):
        self.plan = plan

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        with np.errstate(all="ignore"):
            outputs = self.plan.run(feeds, strict=True)
        return [_as_output(v) for v in outputs]


class KernelsBackend(Backend):
    """Options: ``threads`` (int): BLAS threads, set through threadpoolctl when installed."""

    name: ClassVar[str] = "kernels"
    packages: ClassVar[tuple[str, ...]] = ("numpy", "ml_dtypes", "onnx")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._limiter = None
        self._blas: list[dict[str, Any]] = []

    def load(self) -> None:
        threads = self.options.get("threads")
        try:
            import threadpoolctl
        except ImportError:
            return
        if threads:
            # kept for the backend's lifetime: the limit holds until it is garbage-collected
            self._limiter = threadpoolctl.threadpool_limits(limits=int(threads), user_api="blas")
        self._blas = [
            {"library": i.get("internal_api"), "version": i.get("version"), "threads": i.get("num_threads")}
            for i in threadpoolctl.threadpool_info()
            if i.get("user_api") == "blas"
        ]

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        if self._limiter is None and not self._blas:
            self.load()
        env["threads"] = self.options.get("threads") or os.cpu_count()
        env["blas"] = self._blas
        env["kernels"] = len(registry.KERNELS)
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        if self._limiter is None and self.options.get("threads"):
            self.load()
        return KernelsSession(compile_model(model))
