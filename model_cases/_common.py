"""What every framework builder shares: the built-model record, tolerances, feeding inputs by
position, making the framework's outputs look like the graph's declared outputs, and the tags
the reports group by.

A builder module has:

- ``FRAMEWORK``: the name used in case ids and the ``framework`` tag;
- ``DISTRIBUTIONS``: the installed distributions whose versions key the build cache (the
  framework first, then its exporter);
- ``missing() -> str | None``: why the builder cannot run here (None when it can), without
  importing the framework;
- ``build(say) -> Iterator[BuiltModel]``: the models, their input sets and the framework's own
  outputs, computed now.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import onnx

from harness.case import DataSet, Tolerance, graph_inputs
from harness.schema import model_tags

# Float32 models are compared with rtol 1e-4, atol 1e-5. The framework and the runtime both
# compute in float32 but with different kernels (im2col against direct convolution, fused
# against unfused GEMM and attention, other summation orders), which moves each dot product by
# a few ulps; through a handful of layers of these small models that adds up to relative
# differences of about 1e-6..1e-5. 1e-4 keeps an order of magnitude of margin, yet a wrong
# operator (a transposed weight, a missing bias, a wrong activation) is off by 1e-2 or more.
# atol 1e-5 covers outputs near zero (logits crossing zero, softmax tails), where a relative
# bound means nothing.
FLOAT32_MODEL = Tolerance(rtol=1e-4, atol=1e-5)

Say = Callable[[str], None]


@dataclass
class BuiltModel:
    #: relative name, also the cache folder: ``mlp/dynamo/opset17``
    name: str
    model: onnx.ModelProto | None
    data: list[DataSet]
    tags: dict[str, Any]
    tolerance: Tolerance = FLOAT32_MODEL
    #: set when the export itself failed (``model`` is then None): that is the result
    export_error: str | None = None


def dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing_distributions(dists: Sequence[str]) -> list[str]:
    return [d for d in dists if dist_version(d) is None]


def one_line(exc: BaseException, limit: int = 2000) -> str:
    text = " ".join(str(exc).split())
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:limit]


def feeds_for(model: onnx.ModelProto, arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Bind arrays to the graph's inputs by position: exporters rename inputs (``x``,
    ``x:0``, ``args_0``), the order is what they keep."""
    infos = graph_inputs(model)
    if len(infos) != len(arrays):
        raise ValueError(f"the exported graph takes {len(infos)} inputs ({', '.join(i.name for i in infos)}), the model {len(arrays)}")
    return {info.name: np.ascontiguousarray(a) for info, a in zip(infos, arrays)}


def conform_outputs(model: onnx.ModelProto, outputs: Sequence[Any]) -> list[np.ndarray]:
    """The framework's outputs in the graph's declared element types and ranks.

    scikit-learn computes in float64 and returns ``predict`` as ``[N]`` where the graph says
    float32 ``[N, 1]``: a float64 result rounded to float32 is the better oracle, and the
    extra axis is the converter's documented layout, not a runtime's error. Casts stay within
    a kind (float to float, int to int); anything else is left for the comparator to report.
    """
    declared = list(model.graph.output)
    if len(declared) != len(outputs):
        raise ValueError(f"the exported graph has {len(declared)} outputs, the framework gave {len(outputs)}")
    result = []
    for info, value in zip(declared, outputs):
        arr = np.asarray(value)
        tensor = info.type.tensor_type
        if info.type.HasField("tensor_type") and tensor.elem_type:
            want = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
            same_kind = want.kind == arr.dtype.kind or (want.kind in "iu" and arr.dtype.kind in "iu")
            if want != arr.dtype and same_kind:
                arr = arr.astype(want)
            if tensor.HasField("shape") and len(tensor.shape.dim) != arr.ndim:
                shape = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
                if shape.count(-1) <= 1 and (-1 in shape or int(np.prod(shape)) == arr.size):
                    arr = arr.reshape(shape)
        result.append(arr)
    return result


@contextlib.contextmanager
def quiet_output() -> Iterator[None]:
    """Silence an exporter while it works: the exporters narrate (progress, fallbacks, graph
    dumps on failure, C++ logging straight to file descriptors 1 and 2, which Python-level
    redirection does not reach). What matters ends up in the model or in the exception."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


class ExportDefect(ValueError):
    """The exporter returned a model, but not the one asked for: another opset, or a dynamic
    axis frozen to the sample's size. The export failed; no runtime is to blame."""


def check_export(model: onnx.ModelProto, opset: int | None, input_sets: Sequence[Sequence[np.ndarray]]) -> None:
    """Raise :class:`ExportDefect` when ``model`` is not what was asked: its ai.onnx opset is
    not ``opset``, or an input set does not fit an input's declared type (a fixed dimension
    where the export asked for a dynamic one, another element type)."""
    got = next((imp.version for imp in model.opset_import if imp.domain in ("", "ai.onnx")), None)
    if opset is not None and got is not None and got != opset:
        raise ExportDefect(f"asked for opset {opset}, the exporter produced opset {got}")
    for inputs in input_sets:
        for info, value in zip(graph_inputs(model), inputs):
            tensor = info.type.tensor_type
            want = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type) if tensor.elem_type else None
            if want is not None and np.dtype(want) != value.dtype:
                raise ExportDefect(f"input {info.name!r} is declared {np.dtype(want).name}, the model takes {value.dtype.name}")
            dims = list(tensor.shape.dim) if tensor.HasField("shape") else None
            if dims is None:
                continue
            fixed = [d.dim_value if d.HasField("dim_value") else None for d in dims]
            if len(fixed) != value.ndim or any(f is not None and f != n for f, n in zip(fixed, value.shape)):
                shown = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in dims]
                raise ExportDefect(f"input {info.name!r} is declared {shown}, which does not admit an input of shape "
                                   f"{list(value.shape)} (a dynamic axis exported as a fixed size)")


def data_set(model: onnx.ModelProto, inputs: Sequence[np.ndarray], outputs: Sequence[Any]) -> DataSet:
    return DataSet(feeds_for(model, inputs), conform_outputs(model, outputs))


def shape_tags(input_sets: Sequence[Sequence[np.ndarray]], seq_axis: int | None = None) -> dict[str, Any]:
    """``batch`` is the first data set's batch: the one ``--repeat`` times; ``batches`` all."""
    tags: dict[str, Any] = {
        "batch": int(input_sets[0][0].shape[0]),
        "batches": sorted({int(s[0].shape[0]) for s in input_sets}),
    }
    if seq_axis is not None:
        tags["seq_len"] = int(input_sets[0][0].shape[seq_axis])
        tags["seq_lens"] = sorted({int(s[0].shape[seq_axis]) for s in input_sets})
    return tags


def export_tags(model: onnx.ModelProto | None) -> dict[str, Any]:
    """What the exported model itself says: its ops, input dtypes, opset and producer."""
    if model is None:
        return {}
    tags = model_tags(model)
    for key in ("op", "domain", "since_version", "opset"):  # operator-case tags: a one-node model is still a model
        tags.pop(key, None)
    imports = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
    tags["opset_exported"] = imports.get("ai.onnx")
    if "ai.onnx.ml" in imports:
        tags["ml_opset"] = imports["ai.onnx.ml"]
    tags["producer"] = f"{model.producer_name} {model.producer_version}".strip()
    return tags


def built(name: str, model: onnx.ModelProto | None, data: list[DataSet], tags: dict[str, Any],
          tolerance: Tolerance = FLOAT32_MODEL, export_error: str | None = None) -> BuiltModel:
    return BuiltModel(name, model, data, {**export_tags(model), **tags}, tolerance, export_error)
