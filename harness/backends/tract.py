"""tract, the Rust inference engine of Sonos, through its Python binding (``tract``).

tract loads an ONNX file as an *inference model* (partial shapes and types), types it
(``into_model``: every operator must become a typed tract op; an operator tract has no
translation for fails here with ``Unimplemented(<Op>)``), optimizes it and runs it
(``into_runnable``, ``run``). Tensors cross the binding as numpy arrays of the types tract has:
bool, 8- to 64-bit integers, float16/32/64. Strings, bfloat16, float8, 4-bit and 2-bit types,
sequences and optionals are ``unsupported`` (tract's ONNX loader answers "Unknown DatumType"
for the first ones; the binding takes tensors only).

The binding loads models from a path only, so each model goes through a temporary file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import onnx

from ..values import plain_value
from .base import Backend, Session, Unsupported, import_runtime

# numpy kinds and sizes tract's binding converts (tract.tensor.dt_numpy_to_tract, minus complex)
_KINDS = {"b": (1,), "u": (1, 2, 4, 8), "i": (1, 2, 4, 8), "f": (2, 4, 8)}
# how tract says "I have no implementation of this op, this form of it, or this type"
_UNSUPPORTED_MARKS = (
    "unimplemented(", "not implemented", "unsupported", "not supported",
    "unknown datumtype", "unknown onnx tensorproto.datatype",  # bfloat16, float8, 4-bit, 2-bit, strings
    "has no type value",  # a sequence or optional graph input: tract has tensors only
    "wrong number of outputs",  # an optional output tract's op does not produce
    # tract types a graph only when some inputs are constants (axes, pads, shapes, splits,
    # scales); the official cases feed them as graph inputs
    "be a const", "be constant", "as a constant", "input is variable", "expect constant", "expected dim and value to be determined",
    "must be a known scalar", "are not const", "expects a constant", "is a const",
)
# how tract says "this file is not a valid ONNX model"
_REJECTED_MARKS = ("could not resolve inputs", "decodeerror", "failed to decode", "invalid wire type", "buffer underflow")


def tract_message(exc: BaseException) -> str:
    """tract's error text without the Rust stack backtrace (printed when RUST_BACKTRACE is set)."""
    return str(exc).split("\n\nStack backtrace:", 1)[0].strip()


@contextlib.contextmanager
def _short_errors(tract: Any) -> Iterator[None]:
    """Re-raise a TractError with tract's message alone (the backtrace stays on the chained cause)."""
    try:
        yield
    except tract.TractError as exc:
        short = tract_message(exc)
        if short == str(exc):
            raise
        raise tract.TractError(short) from exc


class TractSession(Session):
    def __init__(self, tract: Any, runnable: Any, input_names: list[str]) -> None:
        self.tract = tract
        self.runnable = runnable
        self.input_names = input_names

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        arrays = []
        for name in self.input_names:
            value = feeds[name]
            if not isinstance(value, np.ndarray):
                raise Unsupported(f"tract binding: input {name!r} is a {type(value).__name__}; the binding takes tensors only")
            if value.dtype.itemsize not in _KINDS.get(value.dtype.kind, ()) or value.dtype.names or str(value.dtype) == "bfloat16":
                raise Unsupported(f"tract binding: input {name!r} has dtype {value.dtype}, which tract has no type for")
            # tract reads the array's memory as C-contiguous; a 0-d array keeps its shape
            arrays.append(np.ascontiguousarray(value).reshape(value.shape))
        with _short_errors(self.tract):
            return [plain_value(t.to_numpy()) for t in self.runnable.run(arrays)]


class TractBackend(Backend):
    name: ClassVar[str] = "tract"
    packages = ("tract",)

    def load(self) -> None:
        self.tract = import_runtime("tract")

    def prepare(self, model: onnx.ModelProto) -> Session:
        fd, path = tempfile.mkstemp(suffix=".onnx", prefix="harness-tract-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(model.SerializeToString())
            with _short_errors(self.tract):
                inference = self.tract.onnx().load(path)
        finally:
            os.unlink(path)
        with _short_errors(self.tract):
            names = [inference.input_name(i) for i in range(inference.input_count())]
            typed = inference.into_model()  # type every node: refuses unimplemented operators
            runnable = typed.into_runnable()  # optimize and plan
        return TractSession(self.tract, runnable, names)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        text = tract_message(exc).lower()
        if isinstance(exc, Unsupported) or any(mark in text for mark in _UNSUPPORTED_MARKS):
            return "unsupported"
        if stage == "prepare" and any(mark in text for mark in _REJECTED_MARKS):
            return "rejected"
        return super().classify_error(exc, stage)
