"""A second TensorFlow path: onnx2tf converts the model, TensorFlow or LiteRT runs it.

``onnx2tf`` (the converter behind most ONNX -> TensorFlow Lite deployments) writes a
SavedModel and a float32 ``.tflite`` file; ``onnx2tf`` runs the SavedModel through TensorFlow,
``onnx2tf-litert`` runs the ``.tflite`` through LiteRT (``ai-edge-litert``). Unlike onnx-tf it
follows every opset, so TensorFlow is judged past opset 15.

Layout: onnx2tf computes in TensorFlow's channel-last layout and hands back an image output
channel-last (an NCHW output comes out NHWC), with no option to keep ONNX's layout. The binding
takes the output shapes from ONNX shape inference (outputs need static shapes: a model whose
output shapes inference cannot fix is ``unsupported``) and gives each output back its ONNX
layout: an output of the ONNX shape is taken as it is, one of the channel-last shape (N, spatial,
C) is transposed back. Where the two shapes are the same (a [1, 2, 2, 2] output) shapes cannot
tell; the binding then follows onnx2tf's rule as documented: outputs of a model with
channel-first operators (``LAYOUT_OPS``) come out channel-last, others as they are. (Flattening
every output with an appended ``Reshape(y, [-1])`` instead is not neutral: onnx2tf's layout
guesses move the elements of a flattened rank-3 reshape.) Graph inputs keep their ONNX layout: a
rank 3 to 5 input that feeds a channel-first operator is declared channel-first
(``keep_ncw_or_nchw_or_ncdhw_input_names``: ``keep_shape_absolutely_input_names`` lets onnx2tf read
a [1, 2, 2, 2] image as channel-last), every other input is kept as it is (declaring a plain
[3, 4, 5] tensor channel-first makes onnx2tf move its reduction axes).

Outcomes: an operator or form onnx2tf has no conversion for is ``unsupported`` with its words;
anything else the conversion raises (or an exit of the converter) is ``error``, with the tail of
what onnx2tf printed. Each model is converted once per session, in a temporary folder.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tempfile
from typing import Any, ClassVar

import numpy as np
import onnx

from ..values import plain_value
from .base import Backend, Session, Unavailable, Unsupported, refuse_if_invalid

# how onnx2tf says "no conversion for this operator or this form of it"
_UNSUPPORTED_MARKS = ("not supported", "not implemented", "unsupported", "no module named 'onnx2tf.ops.")
# operators whose first input is channel-first data (N, C, spatial...) in ONNX
LAYOUT_OPS = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "AveragePool", "MaxPool", "LpPool", "MaxUnpool",
              "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "BatchNormalization", "InstanceNormalization", "GroupNormalization",
              "LRN", "DepthToSpace", "SpaceToDepth", "Resize", "Upsample", "RoiAlign", "MaxRoiPool", "GridSample", "Col2Im"}
_TF_DTYPES = {"b": (1,), "u": (1, 2, 4, 8), "i": (1, 2, 4, 8), "f": (2, 4, 8)}


class ConversionFailed(Exception):
    """onnx2tf failed (raised, or exited); the message carries the tail of its output."""


def output_shapes(model: onnx.ModelProto) -> list[tuple[str, list[int]]]:
    """Each graph output's (name, static shape), from ONNX shape inference."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:  # inference refusing the model: the converter's own checks would too
        raise Unsupported(f"onnx2tf binding: ONNX shape inference fails on the model: {exc}") from exc
    shapes = []
    for out in inferred.graph.output:
        tensor = out.type.tensor_type if out.type.HasField("tensor_type") else None
        if tensor is None or not tensor.HasField("shape") or any(not d.HasField("dim_value") for d in tensor.shape.dim):
            raise Unsupported(f"onnx2tf binding: output {out.name!r} has no static shape (needed to undo onnx2tf's channel-last layout)")
        shapes.append((out.name, [d.dim_value for d in tensor.shape.dim]))
    return shapes


def to_onnx_layout(value: np.ndarray, shape: list[int], channel_last_if_unsure: bool) -> np.ndarray:
    """``value`` (an onnx2tf output) in the ONNX layout of ``shape``."""
    if len(shape) < 3:
        return value.reshape(shape) if value.size == int(np.prod(shape)) else value
    last = [shape[0], *shape[2:], shape[1]]
    if list(value.shape) == last and (last != shape or channel_last_if_unsure):
        return np.moveaxis(value, -1, 1)
    return value


class Onnx2TfSession(Session):
    def __init__(self, runner: Any, input_names: list[str], shapes: list[tuple[str, list[int]]], folder: str, channel_last: bool) -> None:
        self.runner = runner
        self.channel_last = channel_last
        self.input_names = input_names
        self.shapes = shapes
        self.folder = folder

    def __del__(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        for name, value in feeds.items():
            if not isinstance(value, np.ndarray) or value.dtype.itemsize not in _TF_DTYPES.get(value.dtype.kind, ()) \
                    or str(value.dtype) == "bfloat16":
                kind = type(value).__name__ if not isinstance(value, np.ndarray) else value.dtype
                raise Unsupported(f"onnx2tf binding: input {name!r} is {kind}; the binding takes numeric and bool tensors")
        outputs = self.runner({n: feeds[n] for n in self.input_names})
        if len(outputs) != len(self.shapes):
            raise RuntimeError(f"onnx2tf's model gave {len(outputs)} outputs, the ONNX model has {len(self.shapes)}")
        result = []
        for (name, shape), value in zip(self.shapes, outputs):
            result.append(plain_value(to_onnx_layout(np.asarray(value), shape, self.channel_last)))
        return result


class Onnx2TfBackend(Backend):
    """The SavedModel onnx2tf writes, run by TensorFlow."""

    name: ClassVar[str] = "onnx2tf"
    packages = ("onnx2tf", "tensorflow-cpu", "tf-keras")

    def load(self) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        try:
            import onnx2tf
            import tensorflow as tf
        except ImportError as exc:
            raise Unavailable(f"onnx2tf cannot be imported: {exc}") from exc
        self.onnx2tf, self.tf = onnx2tf, tf

    def version(self) -> str:
        from .base import _dist_version

        return f"onnx2tf {_dist_version('onnx2tf')} tensorflow {_dist_version('tensorflow-cpu')}"

    def convert(self, model: onnx.ModelProto) -> tuple[str, list[str], list[tuple[str, list[int]]], bool]:
        shapes = output_shapes(model)
        initialized = {t.name for t in model.graph.initializer}
        graph_inputs = [i for i in model.graph.input if i.name not in initialized]
        inputs = [i.name for i in graph_inputs]
        rank = {i.name: len(i.type.tensor_type.shape.dim) for i in graph_inputs if i.type.HasField("tensor_type")}
        feeds_layout_op = {i for node in model.graph.node if node.op_type in LAYOUT_OPS for i in node.input[:1]}
        # "keep NCW/NCHW/NCDHW": onnx2tf transposes inside; only for images, where it helps
        channel_first = [n for n in inputs if 3 <= rank.get(n, 0) <= 5 and n in feeds_layout_op]
        folder = tempfile.mkdtemp(prefix="harness-onnx2tf-")
        path = os.path.join(folder, "model.onnx")
        onnx.save(model, path)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                self.onnx2tf.convert(input_onnx_file_path=path, output_folder_path=os.path.join(folder, "out"), non_verbose=True,
                                     keep_ncw_or_nchw_or_ncdhw_input_names=channel_first or None,
                                     keep_shape_absolutely_input_names=[n for n in inputs if n not in channel_first] or None,
                                     output_signaturedefs=True)
        except (Exception, SystemExit) as exc:
            shutil.rmtree(folder, ignore_errors=True)
            tail = " | ".join(line.strip() for line in printed.getvalue().strip().splitlines()[-6:] if line.strip())
            text = f"onnx2tf conversion failed: {type(exc).__name__}: {exc} {('[' + tail + ']') if tail else ''}".strip()
            failure = ConversionFailed(re.sub(r"\x1b\[[0-9;]*m", "", text).replace(path, "<model>"))  # no colours, no temporary paths
            refuse_if_invalid(model, failure)
            raise failure from exc
        return folder, inputs, shapes, bool(feeds_layout_op)

    def prepare(self, model: onnx.ModelProto) -> Session:
        folder, inputs, shapes, channel_last = self.convert(model)
        signature = self.tf.saved_model.load(os.path.join(folder, "out")).signatures["serving_default"]

        def run(feeds: dict[str, Any]) -> list[Any]:  # the signature names its outputs output_0, output_1, ...
            outputs = signature(**{k: self.tf.constant(v) for k, v in feeds.items()})
            return [outputs[f"output_{k}"].numpy() for k in range(len(outputs))]

        return Onnx2TfSession(run, inputs, shapes, folder, channel_last)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        if stage == "prepare" and isinstance(exc, ConversionFailed) and any(m in str(exc).lower() for m in _UNSUPPORTED_MARKS):
            return "unsupported"
        return super().classify_error(exc, stage)


class Onnx2TfLiteRtBackend(Onnx2TfBackend):
    """The float32 ``.tflite`` file onnx2tf writes, run by LiteRT's interpreter."""

    name: ClassVar[str] = "onnx2tf-litert"
    packages = ("onnx2tf", "tensorflow-cpu", "tf-keras", "ai-edge-litert")

    def load(self) -> None:
        super().load()
        try:
            from ai_edge_litert.interpreter import Interpreter
        except ImportError as exc:
            raise Unavailable(f"LiteRT cannot be imported: {exc}") from exc
        self.interpreter = Interpreter

    def version(self) -> str:
        from .base import _dist_version

        return f"onnx2tf {_dist_version('onnx2tf')} ai-edge-litert {_dist_version('ai-edge-litert')}"

    def prepare(self, model: onnx.ModelProto) -> Session:
        folder, inputs, shapes, channel_last = self.convert(model)
        tflite = [f for f in os.listdir(os.path.join(folder, "out")) if f.endswith("_float32.tflite")]
        if not tflite:
            raise ConversionFailed("onnx2tf wrote no float32 .tflite file")
        interpreter = self.interpreter(model_path=os.path.join(folder, "out", tflite[0]))
        interpreter.allocate_tensors()
        by_name = {d["name"]: d["index"] for d in interpreter.get_input_details()}
        missing = [n for n in inputs if n not in by_name]
        if missing:
            raise ConversionFailed(f"the .tflite file has no inputs named {missing} (it has {sorted(by_name)})")

        def run(feeds: dict[str, Any]) -> list[Any]:  # the file has no signature: tensors by input name, outputs in order
            for name, value in feeds.items():
                interpreter.set_tensor(by_name[name], value)
            interpreter.invoke()
            return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]

        return Onnx2TfSession(run, inputs, shapes, folder, channel_last)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        if "select tensorflow op(s)" in str(exc).lower():  # needs the Flex delegate, which the LiteRT wheel does not link
            return "unsupported"
        return super().classify_error(exc, stage)
