"""ONNX Runtime (CPU execution provider by default).

Options: ``providers`` (list, default CPU only), ``optimization`` ("disable" or "disabled",
"basic", "extended", "all"; default "all"), ``threads`` (intra-op threads; 0 lets ORT choose).

Variants are backends of their own, so that one run compares them side by side:
``onnxruntime-noopt`` is graph optimization disabled, and ``onnxruntime:<Provider>`` runs on the
execution provider of that name (``onnxruntime:CUDAExecutionProvider``); a provider this
onnxruntime build does not have is ``unavailable`` with the providers it has, never a silent
fall-back to the CPU for the whole model. (Nodes the provider has no kernel for still run on
the CPU provider, ORT's own fall-back; ``session.get_providers()`` is recorded.)

The Python binding cannot take or give every ONNX type as numpy: bfloat16, float8 and 4-bit
types are passed through OrtValues with their ONNX element type and read back from the
tensor's memory, so a model is not failed for the binding alone.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
import onnx

from ..values import dtype_to_onnx, plain_value
from .base import Backend, Rejected, Session, Unsupported, _dist_version, import_runtime, refuse_if_invalid

_OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}
# sub-byte types: element type -> (dtype, bits per element); packed low bits first (onnx/IR.md)
_PACKED = {onnx.TensorProto.INT4: (ml_dtypes.int4, 4), onnx.TensorProto.UINT4: (ml_dtypes.uint4, 4),
           onnx.TensorProto.FLOAT4E2M1: (ml_dtypes.float4_e2m1fn, 4)}
if hasattr(onnx.TensorProto, "INT2") and hasattr(ml_dtypes, "int2"):
    _PACKED[onnx.TensorProto.INT2] = (ml_dtypes.int2, 2)
    _PACKED[onnx.TensorProto.UINT2] = (ml_dtypes.uint2, 2)
# ONNX element types numpy has no dtype for; carried as raw bits of the same width
_RAW = {
    onnx.TensorProto.BFLOAT16: (ml_dtypes.bfloat16, np.uint16),
    onnx.TensorProto.FLOAT8E4M3FN: (ml_dtypes.float8_e4m3fn, np.uint8),
    onnx.TensorProto.FLOAT8E4M3FNUZ: (ml_dtypes.float8_e4m3fnuz, np.uint8),
    onnx.TensorProto.FLOAT8E5M2: (ml_dtypes.float8_e5m2, np.uint8),
    onnx.TensorProto.FLOAT8E5M2FNUZ: (ml_dtypes.float8_e5m2fnuz, np.uint8),
}
_ORT_TYPE_TO_ONNX = {
    f"tensor({name})": code
    for code, name in ((onnx.TensorProto.BFLOAT16, "bfloat16"), (onnx.TensorProto.FLOAT8E4M3FN, "float8e4m3fn"),
                       (onnx.TensorProto.FLOAT8E4M3FNUZ, "float8e4m3fnuz"), (onnx.TensorProto.FLOAT8E5M2, "float8e5m2"),
                       (onnx.TensorProto.FLOAT8E5M2FNUZ, "float8e5m2fnuz"), (onnx.TensorProto.INT4, "int4"),
                       (onnx.TensorProto.UINT4, "uint4"), (onnx.TensorProto.FLOAT4E2M1, "float4e2m1"))
}
_ORT_TYPE_TO_ONNX.update({f"tensor({name})": getattr(onnx.TensorProto, name.upper()) for name in ("int2", "uint2") if hasattr(onnx.TensorProto, name.upper())})


class OrtSession(Session):
    def __init__(self, ort: Any, session: Any) -> None:
        self.ort = ort
        self.session = session
        self.output_names = [o.name for o in session.get_outputs()]
        self.special = any(_ORT_TYPE_TO_ONNX.get(o.type) for o in session.get_outputs())

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        bound = {name: self._bind(name, value) for name, value in feeds.items()}
        if self.special or any(isinstance(v, self.ort.OrtValue) for v in bound.values()):
            ort_feeds = {k: v if isinstance(v, self.ort.OrtValue) else self.ort.OrtValue.ortvalue_from_numpy(v) for k, v in bound.items()
                         if isinstance(v, self.ort.OrtValue) or (isinstance(v, np.ndarray) and v.dtype.kind not in "OUS")}
            if len(ort_feeds) != len(bound):
                # the only path that returns bfloat16/float8/int4 takes OrtValues, and the Python
                # binding builds none from strings, sequences or optionals
                raise Unsupported("onnxruntime binding: cannot pass strings, sequences or optionals together with bfloat16/float8/4-bit values")
            return [self._unbind(v) for v in self.session.run_with_ort_values(self.output_names, ort_feeds)]
        return [plain_value(v) for v in self.session.run(self.output_names, bound)]

    def _bind(self, name: str, value: Any) -> Any:
        if value is None:
            return None  # an empty optional: the binding passes None as one (OptionalHasElement gives false)
        if isinstance(value, list):
            return [self._bind(name, v) for v in value]
        if not isinstance(value, np.ndarray) or value.dtype.kind in "OUS":
            return value
        code = dtype_to_onnx(value.dtype)
        if code in _RAW:
            # ascontiguousarray makes a 0-d array 1-d: keep the tensor's own shape
            bits = np.ascontiguousarray(value).reshape(value.shape).view(_RAW[code][1])
            return self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, code)
        if code in _PACKED:
            # ORT reads sub-byte tensors packed into bytes, low bits first; the holder has the
            # tensor's shape (ORT takes the shape from it) and the packed bytes at its start
            bits = _PACKED[code][1]
            per_byte = 8 // bits
            flat = np.ascontiguousarray(value).reshape(-1).view(np.uint8) & ((1 << bits) - 1)
            flat = np.concatenate([flat, np.zeros(-flat.size % per_byte, np.uint8)])
            packed = np.zeros(flat.size // per_byte, np.uint8)
            for k in range(per_byte):
                packed |= flat[k::per_byte] << (k * bits)
            holder = np.zeros(value.shape, dtype=np.uint8)
            holder.reshape(-1)[: packed.size] = packed
            return self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(holder, code)
        return value

    def _unbind(self, ov: Any) -> Any:
        if not ov.is_tensor():
            return plain_value(ov.numpy())
        code = _ORT_TYPE_TO_ONNX.get(ov.data_type())
        if code is None:
            return plain_value(ov.numpy())
        shape = tuple(ov.shape())
        nbytes = ov.tensor_size_in_bytes()
        raw = np.frombuffer(bytes((ctypes.c_uint8 * nbytes).from_address(ov.data_ptr())), dtype=np.uint8) if nbytes else np.zeros(0, np.uint8)
        if code in _RAW:
            dtype, bits = _RAW[code]
            return raw.view(bits).view(dtype).reshape(shape)
        dtype, bits = _PACKED[code]
        per_byte = 8 // bits
        elements = np.empty(raw.size * per_byte, dtype=np.uint8)
        for k in range(per_byte):
            elements[k::per_byte] = (raw >> (k * bits)) & ((1 << bits) - 1)
        return elements[: int(np.prod(shape))].view(dtype).reshape(shape)


#: ORT's messages for something it does not implement (kernel, op, op-version)
_MISSING = re.compile(r"NOT_IMPLEMENTED|No Op registered for|is not a registered function/op|not supported|"
                      r"MLDataType for: .* is not currently registered or supported|"
                      # the Python binding without a numpy type for an element type (float8e8m0, 2- and 6-bit types)
                      r"No corresponding Numpy type for Tensor Type|Numpy_type \d+ can't be converted to MLDataType", re.I)
#: ORT refusing at load what its own schemas or versions do not cover: a missing type or version
#: when the ONNX checker accepts the model (else ``prepare`` raised ``Rejected``): "Type Error:
#: Type 'tensor(int32)' of input parameter (x) of operator (Det) ... is invalid", "Unsupported
#: model IR version: 12, max supported IR version: 11", "... only *guarantees* support for models
#: stamped with official released onnx opset versions"
_NOT_COVERED = re.compile(r"Type Error: Type '[^']*' of input parameter|Unsupported model IR version|only \*guarantees\* support")


def _installed_builds() -> tuple[str, ...]:
    """The distributions of ONNX Runtime installed here (each ships the ``onnxruntime`` module:
    the CPU build, or the GPU, OpenVINO or DirectML builds in their own environments)."""
    builds = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-directml")
    return tuple(b for b in builds if _dist_version(b)) or ("onnxruntime",)


class OnnxRuntimeBackend(Backend):
    name: ClassVar[str] = "onnxruntime"
    packages = _installed_builds()
    repro_runtime: ClassVar[str | None] = "onnxruntime"
    #: the runner fills ``threads`` from -j when the user left it unset
    takes_threads: ClassVar[bool] = True
    #: importing it starts no thread (its pools come with the first session)
    preload: ClassVar[tuple[str, ...]] = ("onnxruntime",)

    def load(self) -> None:
        onnxruntime = import_runtime("onnxruntime")
        self.ort = onnxruntime
        onnxruntime.set_default_logger_severity(4)

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        env.setdefault("providers", ",".join(self.options.get("providers") or ["CPUExecutionProvider"]))
        env.setdefault("optimization", self.options.get("optimization", "all"))
        env.setdefault("threads", int(self.options.get("threads", 0)))
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        ort = self.ort
        opts = ort.SessionOptions()
        level = self.options.get("optimization", "all")
        if level not in _OPT_LEVELS:
            raise ValueError(f"onnxruntime option optimization={level!r}: expected one of {', '.join(_OPT_LEVELS)}")
        opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, _OPT_LEVELS[level])
        threads = int(self.options.get("threads", 0))
        if threads:
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        providers = self.options.get("providers") or ["CPUExecutionProvider"]
        if isinstance(providers, str):
            providers = providers.split(",")
        try:
            session = ort.InferenceSession(model.SerializeToString(), sess_options=opts, providers=providers)
        except Exception as exc:
            if not _MISSING.search(str(exc)):
                refuse_if_invalid(model, exc)  # rejected only when the ONNX checker agrees
            raise
        if providers[0] not in session.get_providers():
            # ORT warns and falls back to the CPU when a requested provider fails to initialise
            raise RuntimeError(f"onnxruntime did not use {providers[0]} (session providers: {', '.join(session.get_providers())})")
        return OrtSession(ort, session)

    def classify_error(self, exc: BaseException, stage: str) -> str:
        """The rule of :mod:`harness.backends.base`: ORT's words for a missing op, op-version or
        kernel are ``unsupported``; at load, a type or IR/opset version ORT does not cover in a
        model the ONNX checker accepts is missing too (``unsupported``); a model both find
        invalid was raised as :class:`Rejected` by ``prepare``; the rest is ``error``."""
        text = str(exc)
        if isinstance(exc, Rejected):
            return "rejected"
        if _MISSING.search(text) or (stage == "prepare" and _NOT_COVERED.search(text)):
            return "unsupported"
        return super().classify_error(exc, stage)


class OnnxRuntimeNoOptBackend(OnnxRuntimeBackend):
    """ONNX Runtime with graph optimization disabled: every node runs as written."""

    name: ClassVar[str] = "onnxruntime-noopt"

    def __init__(self, **options: Any) -> None:
        super().__init__(**{"optimization": "disable", **options})


class OnnxRuntimeProviderBackend(OnnxRuntimeBackend):
    """ONNX Runtime on one execution provider, named by ``provider`` (set by :meth:`for_provider`)."""

    provider: ClassVar[str] = ""

    @classmethod
    def for_provider(cls, provider: str) -> type[OnnxRuntimeProviderBackend]:
        return type(f"OnnxRuntime_{provider}", (cls,), {"name": f"onnxruntime:{provider}", "provider": provider, "__module__": __name__})

    @classmethod
    def available(cls) -> tuple[bool, str]:
        ok, reason = super().available()
        if not ok:
            return ok, reason
        try:
            import onnxruntime
        except ImportError as exc:
            return False, f"onnxruntime cannot be imported: {exc}"
        have = onnxruntime.get_available_providers()
        if cls.provider not in have:
            return False, f"execution provider {cls.provider} is not in this onnxruntime build (available: {', '.join(have)})"
        return True, ""

    def __init__(self, **options: Any) -> None:
        # the CPU provider after it takes the nodes it has no kernel for (ORT's own fall-back)
        providers = list(dict.fromkeys([self.provider, "CPUExecutionProvider"]))
        super().__init__(**{"providers": providers, **options})
