"""``kernels``: our own ONNX executor written with NumPy, a system under test.

The graph compiler lives in :mod:`.compiler`; operators live in one module per family
(``ops_*.py``, ``nn_*.py``), each registering its kernels with :func:`.registry.register`.
Every module of this package is imported here, so a new kernel module needs no edit
anywhere else.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, ClassVar

import numpy as np
import onnx

from ..base import Backend, Session
from . import registry  # noqa: F401  (re-exported: kernel modules register through it)
from .compiler import Plan, _as_output, compile_model

__all__ = ["KernelsBackend", "KernelsSession"]


def _import_kernel_modules() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("compiler", "registry") and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_import_kernel_modules()


def _blas_pools() -> list[dict[str, Any]]:
    """The BLAS libraries numpy loaded, with their thread counts, as threadpoolctl reads them."""
    import threadpoolctl

    return [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]


class KernelsSession(Session):
    def __init__(self, plan: Plan):
        self.plan = plan

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        with np.errstate(all="ignore"):
            outputs = self.plan.run(feeds, strict=True)
        return [_as_output(v) for v in outputs]


class KernelsBackend(Backend):
    """Options: ``threads`` (int): BLAS threads, set through threadpoolctl (0: leave BLAS's own)."""

    name: ClassVar[str] = "kernels"
    packages: ClassVar[tuple[str, ...]] = ("numpy", "ml_dtypes", "onnx")
    #: the runner fills ``threads`` from -j when the user left it unset
    takes_threads: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._limiter = None

    def load(self) -> None:
        """Apply the ``threads`` option to the BLAS thread pools (kept for the process)."""
        threads = self.options.get("threads")
        if threads and self._limiter is None:
            import threadpoolctl

            self._limiter = threadpoolctl.threadpool_limits(limits=int(threads), user_api="blas")

    def version(self) -> str:
        """Our engine's version is the harness's; numpy's is in the environment."""
        from harness import __version__

        return __version__

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        pools = _blas_pools()
        # read back: our own loops are NumPy's, single-threaded; only BLAS runs a pool
        env["threads"] = max((int(p.get("num_threads") or 1) for p in pools), default=1)
        env["blas"] = ", ".join(f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)" for p in pools) or "none"
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        self.load()
        return KernelsSession(compile_model(model))
