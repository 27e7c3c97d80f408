"""Backend discovery: a built-in table, the ``harness.backends`` entry-point group,
``module:Class`` specs and ``exec:CMD`` (an out-of-process runner, :mod:`harness.backends.external`). Nothing heavy is imported here; a backend class is imported only when
it is asked for by name."""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

from .base import Backend, Rejected, Session, Unavailable, Unsupported

__all__ = ["Backend", "Rejected", "Session", "Unavailable", "Unsupported", "known_backends", "load_backend_class"]

BUILTIN: dict[str, str] = {
    "reference": "harness.backends.reference:ReferenceBackend",
    "onnxruntime": "harness.backends.onnxruntime:OnnxRuntimeBackend",
    "onnxruntime-noopt": "harness.backends.onnxruntime:OnnxRuntimeNoOptBackend",
    "kernels": "harness.backends.kernels:KernelsBackend",
    "tensorflow": "harness.backends.tf:TensorFlowBackend",
    "tensorflow-eager": "harness.backends.tf:TensorFlowEagerBackend",
    "tensorflow-xla": "harness.backends.tf:TensorFlowXlaBackend",
    "onnx-tf": "harness.backends.tensorflow:TensorFlowBackend",
    "pytorch": "harness.backends.pytorch:PyTorchBackend",
    "pytorch-compile": "harness.backends.pytorch:PyTorchCompileBackend",
    "onnx2tf": "harness.backends.onnx2tf:Onnx2TfBackend",
    "onnx2tf-litert": "harness.backends.onnx2tf:Onnx2TfLiteRtBackend",
    "tract": "harness.backends.tract:TractBackend",
    "tvm": "harness.backends.tvm:TvmBackend",
    # listed for `list backends`; run one as exec:CMD
    "exec": "harness.backends.external:ExecBackend",
}
EXEC_PREFIX = "exec:"

ENTRY_POINT_GROUP = "harness.backends"


def known_backends() -> dict[str, str]:
    """Name -> "module:attr" for the built-in backends and every installed plug-in."""
    return {name: target for name, target in _targets().items() if _module_exists(target)}


def _targets() -> dict[str, str]:
    """Every backend name, built-in or a plug-in's entry point, whether its module is there or not."""
    table = dict(BUILTIN)
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        table.setdefault(ep.name, ep.value)
    return table


def _module_exists(target: str) -> bool:
    module = target.split(":", 1)[0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class UnknownBackend(ValueError):
    pass


def load_backend_class(spec: str) -> type[Backend]:
    """Resolve a backend name, a variant ``onnxruntime:<ExecutionProvider>``, a release
    ``NAME@VERSION`` (:mod:`harness.backends.releases`), a ``module:Class`` spec or ``exec:CMD``
    to its class."""
    if spec.startswith(EXEC_PREFIX):
        from .external import exec_backend_class

        return exec_backend_class(spec[len(EXEC_PREFIX):], name=spec)
    if "@" in spec and ":" not in spec:  # another release of a runtime, in its own environment
        from .releases import release_backend_class

        try:
            return release_backend_class(spec)
        except ValueError as exc:
            raise UnknownBackend(str(exc)) from exc
    if spec.startswith("onnxruntime:") and spec.partition(":")[2].isidentifier():
        from .onnxruntime import OnnxRuntimeProviderBackend

        return OnnxRuntimeProviderBackend.for_provider(spec.partition(":")[2])
    target = _targets().get(spec)  # a plug-in whose module is gone fails to import below, saying so
    if target is None:
        if ":" not in spec:
            names = ", ".join(sorted(known_backends()))
            raise UnknownBackend(f"unknown backend {spec!r}; known: {names} (or give module:Class)")
        target = spec
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls: Any = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise UnknownBackend(f"cannot load backend {spec!r} from {target}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise UnknownBackend(f"{target} is not a harness Backend class")
    if ":" in spec and not cls.name:
        cls.name = spec
    return cls
