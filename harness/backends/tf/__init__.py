"""TensorFlow: ONNX graphs lowered node by node to TensorFlow ops, by us (not a converter).

Every lowering is written from the ONNX spec, one registration per behavioural op-version
(``registry.lowers``), one module per operator family (``ops_*.py``); an op-version without a
lowering, or a type TensorFlow cannot hold exactly, makes the model ``unsupported``, named.
Three backends share the lowering, so one run compares them:

- ``tensorflow``: the lowered graph traced once per input signature into a ``tf.function``
  (graph mode: Grappler's rewrites, TensorFlow's graph kernels);
- ``tensorflow-eager``: op by op, eagerly;
- ``tensorflow-xla``: the same ``tf.function`` with ``jit_compile=True`` (XLA's compiler, its
  fusions and its own kernels).

Option: ``threads`` (TensorFlow intra-op threads; the runner sets cores // jobs when unset).
Nothing here imports TensorFlow at module import; ``load`` does.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, ClassVar

import onnx

import onnx.shape_inference

from ..base import Backend, Session, Unsupported, import_runtime

#: the operator-family modules; importing them fills registry.LOWERINGS
OP_MODULES = ("ops_elementwise", "ops_tensor", "ops_reduce", "ops_nn", "ops_attention", "ops_control", "ops_resize", "ops_grid", "ops_quant", "ops_rnn", "ops_signal", "ops_misc", "ops_extra")

#: TensorFlow's words for "no kernel for this op or dtype" (an unsupported type, not a failure)
_UNSUPPORTED_MARKS = ("could not find device for node", "no registered", "not in the list of allowed values",
                      "no opkernel was registered", "unsupported operations when trying to compile",
                      "is not supported", "cannot compute", "unimplemented",
                      "must be a compile-time constant",  # XLA: a shape that depends on data
                      "unknown image file format")  # tf.io.decode_image: a format it has no decoder for


class TensorFlowSession(Session):
    def __init__(self, graph: Any, mode: str) -> None:
        import tensorflow as tf

        self.graph = graph
        names = list(graph.inputs)

        def call(*args: Any) -> list[Any]:
            return graph.run(dict(zip(names, args)))

        self.names = names
        self.call = call if mode == "eager" else tf.function(call, jit_compile=mode == "xla", reduce_retracing=True)

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        from .lowering import to_numpy, to_tensor

        missing = [n for n in self.names if n not in feeds]
        if missing:
            raise ValueError(f"no value for graph input(s) {', '.join(missing)}")
        return [to_numpy(v) for v in self.call(*[to_tensor(feeds[n]) for n in self.names])]


class TensorFlowBackend(Backend):
    name: ClassVar[str] = "tensorflow"
    packages = ("tensorflow-cpu",)
    takes_threads: ClassVar[bool] = True
    mode: ClassVar[str] = "graph"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if importlib.util.find_spec("tensorflow") is None:  # tensorflow-cpu or tensorflow
            return False, "tensorflow is not installed (pip install 'onnx-harness[tensorflow]')"
        return True, ""

    def version(self) -> str:
        import tensorflow as tf

        return tf.__version__

    def load(self) -> None:
        tf = import_runtime("tensorflow")
        threads = int(self.options.get("threads", 0))
        if threads:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        for module in OP_MODULES:
            importlib.import_module(f"{__name__}.{module}")

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        from .registry import LOWERINGS

        env.update({"mode": self.mode, "lowered_op_versions": len(LOWERINGS)})
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        from .lowering import lower_model

        return TensorFlowSession(lower_model(model), self.mode)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        import tensorflow as tf

        text = str(exc).lower()
        if isinstance(exc, (tf.errors.NotFoundError, tf.errors.UnimplementedError)) or (
                isinstance(exc, (tf.errors.InvalidArgumentError, TypeError)) and any(m in text for m in _UNSUPPORTED_MARKS)):
            return "unsupported"
        return super().classify_error(exc, stage)


class TensorFlowEagerBackend(TensorFlowBackend):
    name: ClassVar[str] = "tensorflow-eager"
    mode: ClassVar[str] = "eager"


class TensorFlowXlaBackend(TensorFlowBackend):
    name: ClassVar[str] = "tensorflow-xla"
    mode: ClassVar[str] = "xla"

    def prepare(self, model: onnx.ModelProto) -> Session:
        """XLA has no string type. Compiling tf.strings.split or regex_full_match aborts the
        process (SIGABRT, sometimes only at the next compilation, so another case takes the
        crash) where tf.strings.join is refused cleanly: a model holding strings is refused here."""
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        graph = inferred.graph
        infos = [*graph.input, *graph.output, *graph.value_info]
        if any(i.type.tensor_type.elem_type == onnx.TensorProto.STRING for i in infos) or any(
                t.data_type == onnx.TensorProto.STRING for t in graph.initializer):
            raise Unsupported("XLA has no string type (a model holding strings is not compiled)")
        return super().prepare(model)
