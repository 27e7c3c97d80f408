"""``kernels``: our own ONNX executor written with NumPy, a system under test.

The graph compiler lives in :mod:`.compiler`; operators live in one module per family
(``ops_*.py``, ``nn_*.py``), each registering its kernels with :func:`.registry.register`.
Every module of this package is imported here, so a new kernel module needs no edit
anywhere else.
"""

from __future__ import annotations

import ctypes
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


#: mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: what this process's allocator was told, once (None: not yet)
_ALLOCATOR: str | None = None


def _keep_freed_memory() -> str:
    """Ask glibc's malloc to serve blocks of up to 1 GiB from its heap and to keep what is
    freed there, as an arena would: by default a block of 32 MiB or more (an activation at
    batch 8) is a fresh mmap, and every page of it is faulted in and zeroed again on every
    run (ZFNet-512 b8's LRN: 208 to 44 ms). Process-wide and once; returns what was done,
    which the environment reports."""
    global _ALLOCATOR
    if _ALLOCATOR is None:
        try:
            libc = ctypes.CDLL("libc.so.6")
            done = libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30) == 1 and libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1
            _ALLOCATOR = "glibc malloc keeps freed blocks up to 1 GiB" if done else "glibc malloc's defaults (mallopt refused)"
        except (OSError, AttributeError) as exc:  # not glibc: the platform's allocator as it is
            _ALLOCATOR = f"the platform's allocator ({type(exc).__name__}: {exc})"
    return _ALLOCATOR


class KernelsSession(Session):
    def __init__(self, plan: Plan):
        self.plan = plan

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        with np.errstate(all="ignore"):
            outputs = self.plan.run(feeds, strict=True)
        return [_as_output(v) for v in outputs]


class KernelsBackend(Backend):
    """Options: ``threads`` (int): BLAS threads, set through threadpoolctl (0: leave BLAS's own);
    ``keep_memory`` (bool, default false): the process's malloc keeps freed blocks for the next
    run instead of handing large ones back to the OS (see :func:`_keep_freed_memory`). Opt-in:
    it changes the allocator of the whole worker process for good, so every later case's peak
    memory reading (and any other backend's in that process) includes blocks kept from before."""

    name: ClassVar[str] = "kernels"
    packages: ClassVar[tuple[str, ...]] = ("numpy", "ml_dtypes", "onnx")
    #: the runner fills ``threads`` from -j when the user left it unset
    takes_threads: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._limiter = None

    def load(self) -> None:
        """Apply the ``threads`` option to the BLAS thread pools and the ``keep_memory`` option
        to malloc (both kept for the process)."""
        if str(self.options.get("keep_memory", False)).lower() in ("1", "true", "yes"):
            _keep_freed_memory()
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
        env["allocator"] = _ALLOCATOR or "the platform's allocator as it is"
        env["blas"] = ", ".join(f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)" for p in pools) or "none"
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        self.load()
        return KernelsSession(compile_model(model))
