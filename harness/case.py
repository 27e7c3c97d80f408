"""Cases: a model, one or more input sets, an oracle and a tolerance.

A case describes; it never runs anything. Cases are cheap to pickle: an on-disk case carries
only its folder, an in-memory case carries serialized bytes, so the runner can send either to a
worker process.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from . import values as V


def _max(a: Any) -> float:
    import numpy as np

    return float(np.max(np.asarray(a, dtype=np.float64), initial=0.0))


@dataclass(frozen=True)
class Tolerance:
    """Floats pass when ``|a - e| <= atol + rtol * |e|`` or when they are within ``ulp`` units
    in the last place (``None`` disables the ULP criterion)."""

    rtol: float = 1e-3
    atol: float = 1e-7
    ulp: int | None = None
    #: per output, an array of absolute allowances per element added to ``atol`` (a rounding
    #: bound derived from the case's own inputs, :mod:`harness.tolerances`), or None
    bound: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rtol": self.rtol, "atol": self.atol, "ulp": self.ulp}
        if self.bound is not None:  # the largest allowance per output (the arrays stay with the case)
            out["bound_max"] = [None if b is None else float(_max(b)) for b in self.bound]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tolerance:
        return cls(float(data.get("rtol", 1e-3)), float(data.get("atol", 1e-7)), data.get("ulp"))


@dataclass
class DataSet:
    inputs: dict[str, Any]
    #: expected outputs in graph output order; None when the oracle computes them
    expected: list[Any] | None


@dataclass
class Case:
    id: str
    suite: str
    #: folder in the onnx_test_runner layout (model.onnx, test_data_set_N/), or None
    path: Path | None = None
    #: serialized model for in-memory cases
    model_bytes: bytes | None = None
    data: list[DataSet] | None = None
    tolerance: Tolerance = field(default_factory=Tolerance)
    #: domain, op, since_version, opset, dtypes, source ... (JSON-serializable)
    tags: dict[str, Any] = field(default_factory=dict)
    #: "exact" values, or "random": shape, dtype and range only (ops random by definition)
    check: str = "values"
    #: the sha256 its folder must have (:func:`folder_sha256`), checked where the case is loaded
    #: (:func:`verify_folder`); "" for a folder no manifest records; None: nothing to check
    sha256: str | None = None

    # -- loading --------------------------------------------------------------------------
    def load_model(self) -> onnx.ModelProto:
        if self.model_bytes is not None:
            return onnx.load_model_from_string(self.model_bytes)
        if self.path is None:
            raise ValueError(f"case {self.id} has neither a model nor a folder")
        return load_model_file(self.path / "model.onnx")

    def load_data(self, model: onnx.ModelProto | None = None) -> list[DataSet]:
        if self.data is not None:
            return self.data
        if self.path is None:
            return []
        return read_data_sets(self.path, model or self.load_model())

    def model_size(self) -> int:
        if self.model_bytes is not None:
            return len(self.model_bytes)
        return (self.path / "model.onnx").stat().st_size if self.path else 0


def folder_sha256(folder: Path) -> str:
    """sha256 over the folder's files, each as its relative path, a NUL and its bytes, in path
    order (component by component): the digest a corpus manifest records per case."""
    digest = hashlib.sha256()
    files = []
    for top, _, names in os.walk(folder):
        rel = os.path.relpath(top, folder)
        files += [(name,) if rel == "." else (*rel.split(os.sep), name) for name in names]
    for parts in sorted(files):
        digest.update("/".join(parts).encode())
        digest.update(b"\0")
        with open(os.path.join(folder, *parts), "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


class CorpusError(RuntimeError):
    """A corpus that cannot be trusted: missing, unreadable, or a case whose folder is not the one
    its manifest records (changed, half-written or not recorded). A run that meets one stops,
    naming it."""


def verify_folder(case: Case) -> None:
    """Raise :class:`CorpusError` when the case's folder does not have its recorded digest."""
    if case.sha256 is None or case.path is None:
        return
    if folder_sha256(case.path) != case.sha256:
        why = "is not recorded in" if not case.sha256 else "does not match the sha256 recorded in"
        root = case.path.parent.parent
        raise CorpusError(
            f"corpus case {case.path} {why} {root / 'manifest.json'} (changed or half-written); "
            f"'onnx-harness corpus verify --corpus {root}' lists every difference, 'onnx-harness corpus build --corpus {root}' rebuilds"
        )


class ModelIntakeError(ValueError):
    """A model file that cannot or must not be loaded; the message is one clear line."""


def load_model_file(path: Path) -> onnx.ModelProto:
    """Load a model, refusing what is not an ONNX model and external data that escapes the
    model's folder (absolute locations, ``..``, symlinks pointing outside)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelIntakeError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf raises DecodeError and friends
        raise ModelIntakeError(f"{path} is not an ONNX model ({type(exc).__name__}: {exc})") from exc
    if not model.HasField("graph") and not model.functions:
        raise ModelIntakeError(f"{path} is not an ONNX model (no graph)")
    if _uses_external_data(model):
        base = path.parent.resolve()
        for tensor in _external_tensors(model):
            location = next((e.value for e in tensor.external_data if e.key == "location"), "")
            target = (base / location).resolve()
            if Path(location).is_absolute() or not target.is_relative_to(base):
                raise ModelIntakeError(
                    f"{path}: external data location {location!r} of tensor {tensor.name!r} is outside the model's folder; refused"
                )
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(model, str(base))
        except Exception as exc:
            raise ModelIntakeError(f"{path}: cannot load external data: {exc}") from exc
    return model


def _external_tensors(model: onnx.ModelProto):
    from onnx.external_data_helper import _get_all_tensors

    for tensor in _get_all_tensors(model):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            yield tensor


def _uses_external_data(model: onnx.ModelProto) -> bool:
    return any(True for _ in _external_tensors(model))


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The inputs a caller feeds: declared inputs that are not initializers."""
    inits = {t.name for t in model.graph.initializer} | {t.name for t in model.graph.sparse_initializer}
    return [i for i in model.graph.input if i.name not in inits]


def read_data_sets(folder: Path, model: onnx.ModelProto) -> list[DataSet]:
    inputs = graph_inputs(model)
    all_inputs = list(model.graph.input)
    outputs = list(model.graph.output)
    sets = []
    for ds in sorted(folder.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        feeds: dict[str, Any] = {}
        for k, file in enumerate(_numbered(ds, "input")):
            info = inputs[k] if k < len(inputs) else all_inputs[k]
            feeds[info.name] = V.read_value(file, info.type)
        expected = [
            V.read_value(file, outputs[k].type if k < len(outputs) else None)
            for k, file in enumerate(_numbered(ds, "output"))
        ]
        sets.append(DataSet(feeds, expected if expected else None))
    return sets


def _numbered(folder: Path, stem: str) -> list[Path]:
    files = list(folder.glob(f"{stem}_*.pb"))
    return sorted(files, key=lambda p: int(p.stem.rsplit("_", 1)[1]))


def write_case_folder(folder: Path, model: onnx.ModelProto, data: list[DataSet], meta: dict[str, Any]) -> None:
    """Write a case in the onnx_test_runner layout plus ``case.json`` (tolerance, tags)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    inputs = graph_inputs(model)
    outputs = list(model.graph.output)
    for n, ds in enumerate(data):
        sub = folder / f"test_data_set_{n}"
        sub.mkdir(exist_ok=True)
        for k, info in enumerate(inputs):
            if info.name in ds.inputs:
                V.write_value(sub / f"input_{k}.pb", ds.inputs[info.name], info.name, info.type)
        for k, value in enumerate(ds.expected or []):
            info = outputs[k] if k < len(outputs) else None
            V.write_value(sub / f"output_{k}.pb", value, info.name if info else f"output_{k}", info.type if info else None)
    (folder / "case.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
