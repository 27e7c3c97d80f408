"""Apache TVM through its Relax ONNX frontend (``apache-tvm``), compiled for the CPU.

``prepare`` imports the model with ``tvm.relax.frontend.onnx.from_onnx`` (graph inputs with
their static shapes and dtypes), decomposes inference-only ops
(``DecomposeOpsForInference``), lowers every Relax op to TIR (``LegalizeOps``), compiles
(``tvm.compile``) and loads the result on the Relax virtual machine; ``run`` calls the VM's
``main``. The runner times ``prepare`` and ``run`` apart, so compile time and run time are
reported apart (``prepare_s``, ``run_s``). Compiled modules are cached per model hash (the
serialized model, target and opt level) for the life of the worker.

A frontend without a converter for an operator raises ``OpNotImplemented``, one without an
attribute ``OpAttributeUnImplemented``: both are ``unsupported``. Anything else that fails in
the frontend or the compiler on a valid model is TVM's ``error``.

Options: ``target`` (a TVM target string, default "llvm"), ``opt_level`` (0-3, default 3).
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

import numpy as np
import onnx

from ..values import describe, plain_value
from .base import Backend, Session, Unavailable, Unsupported

_UNSUPPORTED_ERRORS = ("OpNotImplemented", "OpAttributeUnImplemented")
# how the frontend and the VM refuse a form of an operator or a type (lower case)
_UNSUPPORTED_MARKS = (
    "are not supported for frontend onnx", "not supported", "not yet supported", "currently supported",
    "currently unsupported", "must be a constant", "cannot handle shapeexpr inputs",
    "unsupported input datatype", "unsupported output datatype",  # a type the op's converter lacks
    "dtype.bits % 8 == 0",  # the VM allocates no sub-byte (int4, int2, float4) tensor
)


_SUB_BYTE = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")


class TvmSession(Session):
    def __init__(self, tvm: Any, vm: Any, input_names: list[str], n_outputs: int) -> None:
        self.tvm = tvm
        self.vm = vm
        self.input_names = input_names
        self.n_outputs = n_outputs

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        args = []
        for name in self.input_names:
            value = feeds[name]
            if value is None or isinstance(value, list):
                raise Unsupported(f"tvm binding: input {name!r} is {describe(value)}; the Relax VM takes tensors only (no sequence or optional input)")
            if not isinstance(value, np.ndarray) or value.dtype.kind in "OUS":
                raise Unsupported(f"tvm binding: input {name!r} is a {type(value).__name__} of {getattr(value, 'dtype', '-')}; the Relax VM takes tensors only")
            if value.dtype.name in _SUB_BYTE:
                raise Unsupported(f"tvm binding: input {name!r} is {value.dtype.name}; the VM takes no sub-byte tensor")
            args.append(self.tvm.runtime.tensor(np.ascontiguousarray(value).reshape(value.shape)))
        out = self.vm["main"](*args)
        outputs = [out] if self.n_outputs == 1 else list(out)
        return [self._value(o) for o in outputs]

    def _value(self, out: Any) -> Any:
        if out is None:  # an empty optional
            return None
        if hasattr(out, "numpy"):
            return plain_value(out.numpy())
        if type(out).__name__ == "Shape":  # a Shape op's result stays a shape value in Relax
            return np.array(tuple(out), dtype=np.int64)
        return [self._value(o) for o in out]  # a sequence: an Array of tensors


class TvmBackend(Backend):
    name: ClassVar[str] = "tvm"
    packages = ("apache-tvm",)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._cache: dict[str, Any] = {}

    def load(self) -> None:
        try:
            import tvm
            from tvm import relax
            from tvm.relax.frontend.onnx import from_onnx
        except ImportError as exc:
            raise Unavailable(f"apache-tvm cannot be imported: {exc}") from exc
        self.tvm, self.relax, self.from_onnx = tvm, relax, from_onnx

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        env.setdefault("target", self.options.get("target", "llvm"))
        env.setdefault("opt_level", int(self.options.get("opt_level", 3)))
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        target = str(self.options.get("target", "llvm"))
        opt_level = int(self.options.get("opt_level", 3))
        data = model.SerializeToString()
        key = hashlib.sha256(data + f"\0{target}\0{opt_level}".encode()).hexdigest()
        initialized = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initialized]
        names = [i.name for i in inputs]
        if key not in self._cache:
            self._cache[key] = self._compile(model, inputs, target, opt_level)
        return TvmSession(self.tvm, self._cache[key], names, len(model.graph.output))

    def _compile(self, model: onnx.ModelProto, inputs: list[onnx.ValueInfoProto], target: str, opt_level: int) -> Any:
        tvm, relax = self.tvm, self.relax
        shapes, dtypes = {}, {}
        for info in inputs:
            if not info.type.HasField("tensor_type"):
                raise Unsupported(f"tvm: graph input {info.name!r} is a {info.type.WhichOneof('value')}; the Relax frontend takes tensor inputs only")
            tensor = info.type.tensor_type
            if tensor.elem_type == onnx.TensorProto.STRING:
                raise Unsupported(f"tvm: graph input {info.name!r} is a string tensor; TVM has no string type")
            try:
                dtypes[info.name] = str(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
            except (KeyError, ValueError) as exc:
                raise Unsupported(f"tvm: graph input {info.name!r} has ONNX element type {tensor.elem_type}, which has no numpy dtype") from exc
            if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
                shapes[info.name] = [d.dim_value for d in tensor.shape.dim]
        mod = self.from_onnx(model, shape_dict=shapes, dtype_dict=dtypes)
        with tvm.transform.PassContext(opt_level=opt_level):
            mod = relax.transform.DecomposeOpsForInference()(mod)
            mod = relax.transform.LegalizeOps()(mod)
            executable = tvm.compile(mod, target=target)
        return relax.VirtualMachine(executable, tvm.cpu())

    def classify_error(self, exc: BaseException, stage: str) -> str:
        if type(exc).__name__ in _UNSUPPORTED_ERRORS or any(mark in str(exc).lower() for mark in _UNSUPPORTED_MARKS):
            return "unsupported"
        return super().classify_error(exc, stage)
