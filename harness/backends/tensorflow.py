"""TensorFlow through onnx-tf 1.10.0, the last onnx-tf release (2022, unmaintained).

onnx-tf converts an ONNX graph into a ``tf.function`` built from one handler per operator;
each handler implements some op-versions (``version_<since>`` methods). We run its own handlers
unchanged on today's TensorFlow, with :mod:`._onnx_tf_compat` providing the two names onnx-tf
imports that no longer exist (``onnx.mapping``, ``tensorflow_addons.seq2seq.hardmax``), and
``TF_USE_LEGACY_KERAS=1`` so that ``tf.keras``, which some handlers call, is the Keras 2 that
onnx-tf was written for (the ``tf-keras`` distribution).

Coverage is reported honestly: before converting, every node of the model (subgraphs
included) is looked up in onnx-tf's handler registry at the model's opset; an operator without
a handler, or an op-version without a ``version_<since>`` method, is ``unsupported`` with the
op-version named. onnx-tf knows op-versions up to about opset 15 (Identity-16 is its newest);
the harness re-stamps each model at the lowest opset where its schemas are unchanged, so a
model whose op-versions are all old enough reaches onnx-tf at an opset it knows.

Options: ``device`` ("CPU" default, or "CUDA"), ``strict`` (onnx-tf's semantic-equivalence flag
for pooling, default True), ``auto_cast`` (let onnx-tf cast types TensorFlow lacks, default
False), ``threads`` (TensorFlow intra-op threads; 0 lets TF choose).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import keyword
import os
from typing import Any, ClassVar

import numpy as np
import onnx

from ..schema import canonical_domain, iter_nodes, opset_of
from .base import Backend, Session, Unavailable, Unsupported, refuse_if_invalid

# Messages by which onnx-tf or TensorFlow say "this op, op-version or type is not implemented".
_UNSUPPORTED_MARKS = (
    "is not implemented",  # onnx-tf OpUnimplementedException, BackendIsNotSupposedToImplementIt
    "is not supported in",  # onnx-tf OpUnsupportedException / DtypeNotCastException
    "no opkernel was registered",  # TensorFlow has no kernel for this op and dtype
    "not in the list of allowed values",  # TensorFlow op type constraint excludes the dtype
    "could not find device for node",
    "cannot convert onnx type",
)


class TensorFlowSession(Session):
    def __init__(self, rep: Any, renamed: dict[str, str]) -> None:
        self.rep = rep
        self.renamed = renamed

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        # onnx-tf's TensorflowRep.run builds tf.constant from each value (lists for sequences)
        # and calls the tf.function it traced for the graph; tf.constant(None) has no tensor,
        # so an empty optional cannot cross the binding
        for name, value in feeds.items():
            if value is None:
                raise Unsupported(f"onnx-tf binding: input {name!r} is an empty optional; TensorflowRep.run makes a tf.constant of every input, and None has none")
        outputs = self.rep.run({self.renamed.get(name, name): value for name, value in feeds.items()})
        return [_plain(v) for v in outputs]


def _keyword_safe_inputs(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, str]]:
    """Rename graph inputs that are not Python identifiers (``"0"``, ``"x.1"``).

    onnx-tf passes graph inputs as keyword arguments of a ``tf.function``; TensorFlow 2.21
    renames such keywords (``0`` -> ``arg_0``), and onnx-tf then looks the original name up and
    fails with a KeyError. The rename is a binding detail: no operator sees a different value.
    """
    initialized = {t.name for t in model.graph.initializer}  # not fed, so never a keyword
    bad = [i.name for i in model.graph.input
           if i.name not in initialized and (not i.name.isidentifier() or keyword.iskeyword(i.name))]
    if not bad:
        return model, {}
    taken = {i.name for i in model.graph.input} | {n for node in iter_nodes(model.graph) for n in node.output}
    renamed: dict[str, str] = {}
    for k, old in enumerate(bad):
        new = f"harness_input_{k}"
        while new in taken:
            new += "_"
        renamed[old] = new
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for info in out.graph.input:
        info.name = renamed.get(info.name, info.name)
    for info in out.graph.output:
        info.name = renamed.get(info.name, info.name)
    for node in iter_nodes(out.graph):
        for k, name in enumerate(node.input):
            if name in renamed:
                node.input[k] = renamed[name]
        for attr in node.attribute:  # subgraph outputs may name an outer input directly
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                for info in g.output:
                    info.name = renamed.get(info.name, info.name)
    return out, renamed


def _plain(value: Any) -> Any:
    """TensorFlow hands back numpy scalars for 0-d tensors and bytes for strings."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None:
        return None
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "S":
        flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in arr.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(arr.shape)
    return arr


class TensorFlowBackend(Backend):
    name: ClassVar[str] = "onnx-tf"
    extra: ClassVar[str] = "tensorflow"
    packages = ("onnx-tf", "tensorflow-probability", "tf-keras")
    #: onnx-tf 1.10's handlers stop at opset 15 (its one opset-16 handler is Identity-16)
    max_opset: ClassVar[int | None] = 15

    @classmethod
    def available(cls) -> tuple[bool, str]:
        ok, reason = super().available()
        if not ok:
            return ok, reason
        if not _tensorflow_dist():
            return False, "tensorflow is not installed (pip install 'onnx-harness[tensorflow]')"
        return True, ""

    def version(self) -> str:
        return f"onnx-tf {_dist_version('onnx-tf')} tensorflow {_dist_version(_tensorflow_dist())}"

    def load(self) -> None:
        # Before TensorFlow is imported: quiet C++ logging; tf.keras = Keras 2 (tf-keras), as
        # onnx-tf's handlers (Flatten, HardSigmoid, RNN activations) expect.
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        from . import _onnx_tf_compat

        try:
            self.compat = _onnx_tf_compat.install()
            import tensorflow as tf
            import onnx_tf.backend
            from onnx_tf.common.handler_helper import get_all_backend_handlers
        except Exception as exc:
            raise Unavailable(f"onnx-tf cannot be imported: {type(exc).__name__}: {exc}") from exc
        import logging

        logging.getLogger("onnx-tf").setLevel(logging.ERROR)
        tf.get_logger().setLevel(logging.ERROR)
        threads = int(self.options.get("threads", 0))
        if threads:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        self.tf = tf
        self.onnx_tf_backend = onnx_tf.backend.TensorflowBackend
        self.get_handlers = get_all_backend_handlers
        self._handlers: dict[tuple, dict] = {}

    def environment(self) -> dict[str, Any]:
        from . import _onnx_tf_compat

        env = super().environment()
        tf = getattr(self, "tf", None)
        env["tensorflow"] = tf.__version__ if tf is not None else _dist_version(_tensorflow_dist())
        env["tensorflow-distribution"] = _tensorflow_dist()
        env["keras"] = _dist_version("keras")
        if tf is not None:
            # which Keras tf.keras resolves to: tf-keras (Keras 2) under TF_USE_LEGACY_KERAS=1, as
            # onnx-tf's handlers need, or Keras 3 when TensorFlow was imported before we set it
            try:
                module = tf.keras.layers.Flatten.__module__.split(".", 1)[0]
                env["tf.keras"] = f"{module} {_dist_version('tf-keras' if module == 'tf_keras' else 'keras')}"
            except Exception as exc:
                env["tf.keras"] = f"unavailable ({type(exc).__name__})"
        # oneDNN reorders floating-point work in TensorFlow's CPU kernels; on unless set to 0
        env["TF_ENABLE_ONEDNN_OPTS"] = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default (on)")
        env["onnx-tf-compat"] = _onnx_tf_compat.COMPAT_VERSION
        env["onnx-tf-compat-provides"] = ",".join(f"{k}={v}" for k, v in sorted(getattr(self, "compat", {}).items())) or ",".join(_onnx_tf_compat.PROVIDED)
        env.setdefault("device", self.options.get("device", "CPU"))
        env.setdefault("strict", bool(self.options.get("strict", True)))
        env.setdefault("threads", int(self.options.get("threads", 0)))
        return env

    # -- coverage ---------------------------------------------------------------------------
    def check_coverage(self, model: onnx.ModelProto) -> None:
        """Raise :class:`Unsupported` naming the first op-version onnx-tf has no handler for."""
        opsets = {canonical_domain(i.domain): i.version for i in model.opset_import}
        key = tuple(sorted(opsets.items()))
        if key not in self._handlers:
            # op -> handler class; we only read each class's version_<since> methods
            self._handlers[key] = self.get_handlers(dict(opsets))
        handlers = self._handlers[key]
        local = {(f.domain, f.name) for f in model.functions}
        for node in iter_nodes(model.graph):
            domain = canonical_domain(node.domain)
            if (node.domain, node.op_type) in local:
                raise Unsupported(f"onnx-tf does not run model-local functions ({node.op_type})")
            handler = handlers.get(domain, {}).get(node.op_type)
            where = "" if domain == "" else f" in domain {domain}"
            if handler is None:
                raise Unsupported(f"onnx-tf has no handler for {node.op_type}{where}")
            opset = opsets.get(domain) or opset_of(model, domain)
            try:
                since = onnx.defs.get_schema(node.op_type, opset or 1, domain).since_version
            except onnx.defs.SchemaError:
                raise Unsupported(f"{node.op_type}{where} has no schema at opset {opset}") from None
            versions = sorted(handler.get_versions())
            if since not in versions:
                raise Unsupported(f"onnx-tf has no handler for {node.op_type}-{since}{where} (it has {', '.join(map(str, versions)) or 'none'})")

    def prepare(self, model: onnx.ModelProto) -> Session:
        self.check_coverage(model)
        safe, renamed = _keyword_safe_inputs(model)
        try:
            rep = self.onnx_tf_backend.prepare(
                safe, device=self.options.get("device", "CPU"), strict=bool(self.options.get("strict", True)),
                logging_level="ERROR", auto_cast=bool(self.options.get("auto_cast", False)),
            )
        except Exception as exc:
            if self.classify_error(exc, "prepare") != "unsupported":
                refuse_if_invalid(model, exc)  # rejected only when the ONNX checker agrees
            raise
        return TensorFlowSession(rep, renamed)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        text = str(exc).lower()
        if type(exc).__name__ == "BackendIsNotSupposedToImplementIt" or any(mark in text for mark in _UNSUPPORTED_MARKS):
            return "unsupported"
        return super().classify_error(exc, stage)


def _tensorflow_dist() -> str:
    """The distribution that provides ``tensorflow`` here (tensorflow-cpu or tensorflow)."""
    for dist in ("tensorflow-cpu", "tensorflow"):
        if _dist_version(dist):
            return dist
    return "tensorflow" if importlib.util.find_spec("tensorflow") is not None else ""


def _dist_version(dist: str) -> str:
    if not dist:
        return ""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""
