"""The interface every system under test implements.

A backend runs models; it never judges them. ``Backend.prepare`` turns an ONNX model into a
``Session``; ``Session.run`` maps input names to values and returns the graph outputs in
order. Values are what :mod:`harness.values` describes: numpy arrays (ml_dtypes arrays for
bfloat16, float8 and int4), Python lists for sequences, ``None`` for an empty optional.

A backend tells "I refuse this model" and "I lack this operator or type" apart from a wrong
run by raising :class:`Rejected` or :class:`Unsupported`, or by mapping its own exceptions in
``classify_error``. One rule decides, for every backend:

- a missing operator, op-version, type or IR version (at load or at run) is ``unsupported``;
- an invalid model is ``rejected``, and only when the ONNX checker agrees that it is invalid
  (:func:`refuse_if_invalid`): a backend's word alone does not make a model invalid;
- any other failure, a backend's own crash on a valid model included, is ``error``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any, ClassVar

import onnx


class BackendError(Exception):
    """Base of the errors a backend raises on purpose."""


class Rejected(BackendError):
    """The model was refused at load: IR/opset skew, invalid graph."""


class Unsupported(BackendError):
    """An operator, op-version, attribute or type is not implemented (binding included)."""


class Unavailable(BackendError):
    """The backend cannot be loaded on this machine; the message says why."""


def import_runtime(module: str, package: str | None = None) -> Any:
    """The runtime module a backend's ``load`` needs, imported; :class:`Unavailable` naming
    the package (default: the module) and the import error when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise Unavailable(f"{package or module} cannot be imported: {exc}") from exc


def invalid_model_reason(model: onnx.ModelProto) -> str:
    """Why the ONNX checker (full check: schemas, types, shape inference) finds ``model``
    invalid; "" when it finds it valid."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        return " ".join(str(exc).split())[:500]
    return ""


def refuse_if_invalid(model: onnx.ModelProto, exc: BaseException) -> None:
    """After a backend failed to load ``model`` with ``exc``: raise :class:`Rejected` (chained
    to ``exc``, both messages kept) when the ONNX checker finds the model invalid; return
    otherwise (the caller re-raises ``exc``: a missing op or type, or the backend's own error)."""
    problem = invalid_model_reason(model)
    if problem:
        text = " ".join(str(exc).split())
        raise Rejected(f"{type(exc).__name__}: {text} [the ONNX checker finds the model invalid too: {problem}]") from exc


class Session:
    """A prepared model. Subclasses implement ``run``."""

    #: seconds by the backend's own timer, for calibrated timings (``run --timing``): a backend
    #: that times on its device (a GPU's events, a simulator's cycle counter) sets it; None: the
    #: host's ``time.perf_counter``
    clock: Any = None

    def run(self, feeds: dict[str, Any]) -> list[Any]:  # pragma: no cover - interface
        raise NotImplementedError


class Backend:
    """A system under test.

    Subclasses set ``name`` and implement ``prepare``; ``load`` is where heavy imports
    belong (it is called once, in the worker process, before the first ``prepare``).
    """

    name: ClassVar[str] = ""
    #: the extra of this package that installs the backend (default: its name)
    extra: ClassVar[str] = ""
    #: distribution names whose versions go into the run's environment
    packages: ClassVar[tuple[str, ...]] = ()
    #: highest ai.onnx opset and IR version the backend accepts (None: no limit known)
    max_opset: ClassVar[int | None] = None
    #: a prepared session stays valid while others are prepared, so cases of one model may share it
    #: (``harness.worker.Sessions``); a runner in another process that holds one model at a time does not
    reusable_sessions: ClassVar[bool] = True
    max_ir_version: ClassVar[int | None] = None
    #: the runtime a repro bundle's script drives without the harness (a key of
    #: ``harness.findings.RUNTIMES``); None: the backend is the harness's own code (a lowering, the
    #: kernel engine), run through the harness. A subclass that changes what runs sets it back to None.
    repro_runtime: ClassVar[str | None] = None
    #: modules ``load`` imports that the workers' fork server may import once ahead of them
    #: (:func:`harness.forkserver.start`): only modules safe to fork after importing (no threads,
    #: no device handles at import)
    preload: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        self.options = options

    # -- availability -------------------------------------------------------------------
    @classmethod
    def available(cls) -> tuple[bool, str]:
        """(True, "") when the backend can load here, else (False, reason).

        The default checks that every distribution in ``packages`` is installed, without
        importing it.
        """
        for dist in cls.packages:
            try:
                importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                return False, f"{dist} is not installed (pip install 'onnx-harness[{cls.extra or cls.name}]')"
        return True, ""

    def version(self) -> str:
        versions = [_dist_version(d) for d in self.packages]
        return " ".join(v for v in versions if v) or "unknown"

    def environment(self) -> dict[str, Any]:
        """Versions and settings recorded with every run (threads are part of it)."""
        env: dict[str, Any] = {d: _dist_version(d) for d in self.packages}
        env.update({k: v for k, v in self.options.items() if isinstance(v, (str, int, float, bool))})
        return env

    # -- running ------------------------------------------------------------------------
    def load(self) -> None:
        """Import heavy libraries; raise :class:`Unavailable` when that fails."""

    def prepare(self, model: onnx.ModelProto) -> Session:  # pragma: no cover - interface
        raise NotImplementedError

    def classify_error(self, exc: BaseException, stage: str) -> str:
        """Map an exception from ``prepare`` (stage "prepare") or ``run`` to an outcome.

        Returns one of "rejected", "unsupported", "error".
        """
        if isinstance(exc, Rejected):
            return "rejected"
        if isinstance(exc, (Unsupported, NotImplementedError)):
            return "unsupported"
        return "error"


def _dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""
