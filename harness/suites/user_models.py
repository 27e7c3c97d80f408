"""A user's own models as cases: ``onnx-harness run --model PATH`` (repeatable).

PATH is a model file, a folder in the ``onnx_test_runner`` layout (``model.onnx`` and
``test_data_set_N/`` with ``input_K.pb`` and, when known, ``output_K.pb``), or a folder holding
any number of either (searched recursively).

- Inputs: the stored data sets when there are any; otherwise one set drawn from the declared
  input types and shapes, deterministically (seeded by the case name). Dynamic dimensions are
  bound with ``--dim NAME=VALUE`` (a named ``dim_param``) or ``--dim 'INPUT[AXIS]=VALUE'`` (an
  unnamed one); one left unbound is an error that names it.
- Oracle: the stored outputs when present, else the backend named by ``--oracle`` (default
  ``reference``, i.e. ``onnx.reference``), run here in-process on the same (re-stamped) model.
  When the oracle itself cannot run the model, the case keeps no expected outputs and its tags
  carry ``oracle_error`` (every backend's result is then an error naming it). A backend under
  test that is the oracle itself is only compared with itself there: its results on such models
  are ``skip`` ("self-check"), said once at the start.
- A repro bundle (a folder with ``meta.json``, written by ``run`` or ``fuzz``) replays as it was
  judged: its tolerance and check, its model as stamped when it ran without re-stamping or at
  the run's ``--opset``, and its oracle (stored outputs a backend computed stay that backend's, for the self-check).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx

from ..case import Case, DataSet, ModelIntakeError, Tolerance, graph_inputs, load_model_file, read_data_sets
from ..schema import model_tags, stamp_at
from ..tolerances import default_for

SUITE = "user"
# A whole model, not one operator: the oracle and the system under test each round every
# intermediate, and differences of a few ulps per op add up through the layers. float32 and
# float64 outputs get the model-case tolerance of the models suite (model_cases/_common.py says
# why); other types keep the per-dtype default.
MODEL_TOLERANCE = Tolerance(rtol=1e-4, atol=1e-5)


class UnboundDimension(ModelIntakeError):
    """A dynamic input dimension with no ``--dim`` binding; the message names each one."""


# -- finding models --------------------------------------------------------------------------
def _discover(paths: Sequence[str | Path]) -> list[tuple[str, Path, Path | None]]:
    """(case name, model file, folder with data sets or None) for every model under ``paths``."""
    found: list[tuple[str, Path, Path | None]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if path.name == "model.onnx":  # a model in the onnx_test_runner layout: its folder names it
                found.append((path.resolve().parent.name, path, path.parent))
            else:
                found.append((path.stem, path, None))
        elif (path / "model.onnx").is_file():
            found.append((path.name, path / "model.onnx", path))
        elif path.is_dir():
            files = sorted(path.rglob("*.onnx"))
            if not files:
                raise ModelIntakeError(f"{path}: no .onnx model in this folder")
            for file in files:
                if file.name == "model.onnx":
                    found.append((file.parent.relative_to(path).as_posix() or path.name, file, file.parent))
                else:
                    found.append((file.relative_to(path).with_suffix("").as_posix(), file, None))
        else:
            raise ModelIntakeError(f"{path}: no such model file or folder")
    names: dict[str, int] = {}
    unique = []
    for name, file, folder in found:
        names[name] = names.get(name, 0) + 1
        unique.append((name if names[name] == 1 else f"{name}~{names[name]}", file, folder))
    return unique


# -- drawing inputs --------------------------------------------------------------------------
def bind_shape(info: onnx.ValueInfoProto, dims: Mapping[str, int], unbound: list[str]) -> list[int] | None:
    """The concrete shape of input ``info``; names of unbound dimensions go to ``unbound``."""
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        unbound.append(f"{info.name!r} has no declared shape (its rank is unknown; give a stored data set)")
        return None
    shape = []
    for axis, dim in enumerate(tensor.shape.dim):
        key = f"{info.name}[{axis}]"
        if dim.HasField("dim_value"):
            shape.append(dim.dim_value)
        elif dim.dim_param and dim.dim_param in dims:
            shape.append(int(dims[dim.dim_param]))
        elif key in dims:
            shape.append(int(dims[key]))
        else:
            unbound.append(f"'{dim.dim_param}' (input {info.name!r}, axis {axis})" if dim.dim_param
                           else f"'{key}' (input {info.name!r}, axis {axis}, unnamed)")
            shape.append(-1)
    return shape


def _draw(elem_type: int, shape: list[int], rng: np.random.Generator) -> np.ndarray:
    """Values every model can take: standard normal floats, small non-negative integers (valid
    indices into any table of four or more rows), random booleans, short strings."""
    if elem_type == onnx.TensorProto.STRING:
        return rng.choice(np.array(["a", "b", "c"], dtype=object), size=shape)
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def draw_inputs(model: onnx.ModelProto, dims: Mapping[str, int], seed: int, where: str = "model") -> dict[str, Any]:
    feeds: dict[str, Any] = {}
    unbound: list[str] = []
    shapes = []
    for info in graph_inputs(model):
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type":
            raise ModelIntakeError(f"{where}: input {info.name!r} is a {kind}; only tensor inputs can be drawn, give a stored data set")
        shapes.append((info, bind_shape(info, dims, unbound)))
    if unbound:
        raise UnboundDimension(f"{where}: unbound input dimension(s) {', '.join(unbound)}; "
                               f"bind each with --dim NAME=VALUE (e.g. --dim batch=1), an unnamed one with --dim 'INPUT[AXIS]=VALUE'")
    rng = np.random.default_rng(seed)
    for info, shape in shapes:
        feeds[info.name] = _draw(info.type.tensor_type.elem_type, shape, rng)  # type: ignore[arg-type]
    return feeds


# -- the oracle ------------------------------------------------------------------------------
class _Oracle:
    """The ``--oracle`` backend, built once, run in this process."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._backend: Any = None

    def outputs(self, model: onnx.ModelProto, data: list[DataSet]) -> str | None:
        """Fill in the expected outputs of ``data`` that are missing; the error, if any."""
        from ..runner import BackendSpec, _build_backend
        from ..schema import negotiate

        try:
            if self._backend is None:
                self._backend = _build_backend(BackendSpec(self.name))
            session = self._backend.prepare(negotiate(model)[0])
            for ds in data:
                if ds.expected is None:
                    ds.expected = [np.asarray(v) if not isinstance(v, (list, dict)) and v is not None else v
                                   for v in session.run(ds.inputs)]
        except Exception as exc:  # the oracle's failure is the case's verdict on every backend (execute_case)
            return (f"oracle {self.name} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:1000]} "
                    f"(compute expected outputs with another backend: --oracle BACKEND)")
        return None


def _bundle_meta(folder: Path | None) -> dict[str, Any] | None:
    """The ``meta.json`` of a repro bundle (see :mod:`harness.repro`), or None for a plain folder."""
    if folder is None or not (folder / "meta.json").is_file():
        return None
    meta = json.loads((folder / "meta.json").read_text())
    return meta if isinstance(meta, dict) and "case_id" in meta and "tolerance" in meta else None


def _tolerance(model: onnx.ModelProto, folder: Path | None) -> Tolerance:
    for meta_file in ("case.json", "data.json"):
        if folder is not None and (folder / meta_file).exists():
            meta = json.loads((folder / meta_file).read_text())
            spec = meta.get("tolerance", meta)
            if "rtol" in spec or "atol" in spec:
                return Tolerance.from_dict(spec)
    out = model.graph.output[0].type.tensor_type.elem_type if model.graph.output else 0
    if out in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE):
        return MODEL_TOLERANCE
    return default_for(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(out)).name) if out else MODEL_TOLERANCE


def user_model_cases(paths: Sequence[str | Path], dims: Mapping[str, int] | None = None, oracle_backend: str = "reference",
                     say: Callable[[str], None] = lambda msg: None, backends: Sequence[str] = ()) -> list[Case]:
    """Cases for the models at ``paths`` (see the module docstring); ``backends`` are the names
    of the backends under test (for the self-check warning). Raises
    :class:`~harness.case.ModelIntakeError` (one clear line) for a path that holds no model, a
    file that is not a model, or :class:`UnboundDimension` for a dimension left unbound."""
    dims = dict(dims or {})
    oracle = _Oracle(oracle_backend)
    cases = []
    for name, file, folder in _discover(paths):
        model = load_model_file(file)
        data = read_data_sets(folder, model) if folder is not None else []
        tags: dict[str, Any] = {"suite": SUITE, "source": str(file), **model_tags(model)}
        if not data:
            data = [DataSet(draw_inputs(model, dims, zlib.crc32(name.encode()), str(file)), None)]
            tags["inputs"] = "drawn"
            tags["dims"] = {k: v for k, v in dims.items()}
        else:
            tags["inputs"] = "stored"
        if all(ds.expected is not None for ds in data):
            tags["oracle"] = "stored"
        else:
            tags["oracle"] = oracle_backend
            error = oracle.outputs(model, data)
            if error:
                tags["oracle_error"] = error
                say(f"{file}: {error}")
        tolerance, check, stamped = _tolerance(model, folder), "values", False
        meta = _bundle_meta(folder)
        if meta is not None:  # a repro bundle: judged as its finding was
            tolerance, check = Tolerance.from_dict(meta["tolerance"]), meta.get("check", "values")
            tags["bundle_of"] = meta["case_id"]
            tags["recorded"] = {"backend": meta.get("backend"), "outcome": meta.get("outcome")}
            if meta.get("tags", {}).get("oracle") not in (None, "stored"):
                tags["oracle"] = meta["tags"]["oracle"]  # its stored outputs are that backend's
            if not meta.get("restamp_enabled", True):
                tags["keep_opset"] = True  # its backend ran the model as stamped
            if meta.get("opset"):  # its run stamped every model at --opset N
                model, why = stamp_at(model, meta["opset"])
                if model is None:
                    raise ModelIntakeError(f"{file}: the bundle ran at opset {meta['opset']}, but {why}")
                tags["keep_opset"], tags["opset"], stamped = True, meta["opset"], True
            if check == "random" and meta.get("tags", {}).get("random"):
                tags["random"] = meta["tags"]["random"]
        first = next(iter(data[0].inputs.values()), None)
        if first is not None and getattr(first, "ndim", 0):
            tags["batch"] = int(first.shape[0])
        if folder is not None and file.name == "model.onnx" and tags["oracle"] == "stored" and not stamped:
            # all on disk already: the worker reads the folder, nothing big is pickled
            case = Case(id=f"{SUITE}/{name}", suite=SUITE, path=folder, tolerance=tolerance, tags=tags, check=check)
        else:
            case = Case(id=f"{SUITE}/{name}", suite=SUITE, model_bytes=model.SerializeToString(), data=data,
                        tolerance=tolerance, tags=tags, check=check)
        cases.append(case)
    selfchecked = [c for c in cases if c.tags["oracle"] == oracle_backend and not c.tags.get("oracle_error")]
    if oracle_backend in backends and selfchecked:
        say(f"--oracle {oracle_backend} is also under test: its results on the {len(selfchecked)} model(s) whose expected "
            f"outputs it computed are self-checks, shown as skip (use --oracle OTHER to test it)")
    return cases
