"""ONNX element types as torch carries them, and the exact conversions at the interface.

torch has native dtypes for most ONNX types. For the rest a *carrier* dtype holds the exact
values and the ONNX type (known from the graph, ``Cast``'s ``to`` and shape inference) is
restored at the graph outputs:

- uint16 -> int32, uint32 -> int64 (torch's unsigned 16/32-bit dtypes have almost no CPU
  kernels); results are wrapped modulo 2**16 / 2**32 after every node that produces them;
- uint64 -> int64 holding the same bits (add, sub, mul and bitwise ops are exact; ordering
  and division differ above 2**63);
- float8 (all four), float4e2m1, float8e8m0, float6 (both) -> float32 holding the exactly
  representable value;
- int4 / uint4 / int2 / uint2 -> int8 / uint8, wrapped after every node that produces them.

Strings have no torch tensor: models with string values are ``unsupported``.
"""

from __future__ import annotations


import ml_dtypes
import numpy as np
import torch
from onnx import TensorProto as TP

from ..base import Unsupported

#: ONNX element type -> torch dtype of the tensor that carries it
CARRIER: dict[int, torch.dtype] = {
    TP.FLOAT: torch.float32,
    TP.DOUBLE: torch.float64,
    TP.FLOAT16: torch.float16,
    TP.BFLOAT16: torch.bfloat16,
    TP.INT8: torch.int8,
    TP.INT16: torch.int16,
    TP.INT32: torch.int32,
    TP.INT64: torch.int64,
    TP.UINT8: torch.uint8,
    TP.UINT16: torch.int32,
    TP.UINT32: torch.int64,
    TP.UINT64: torch.int64,
    TP.BOOL: torch.bool,
    TP.COMPLEX64: torch.complex64,
    TP.COMPLEX128: torch.complex128,
    TP.FLOAT8E4M3FN: torch.float32,
    TP.FLOAT8E4M3FNUZ: torch.float32,
    TP.FLOAT8E5M2: torch.float32,
    TP.FLOAT8E5M2FNUZ: torch.float32,
    TP.FLOAT4E2M1: torch.float32,
    TP.INT4: torch.int8,
    TP.UINT4: torch.uint8,
}
for _name, _carrier in (("FLOAT8E8M0", torch.float32), ("INT2", torch.int8), ("UINT2", torch.uint8),
                        ("FLOAT6E2M3", torch.float32), ("FLOAT6E3M2", torch.float32)):
    if hasattr(TP, _name):
        CARRIER[getattr(TP, _name)] = _carrier

#: ONNX element type -> numpy dtype of values at the interface
NUMPY: dict[int, np.dtype] = {
    TP.FLOAT: np.dtype(np.float32), TP.DOUBLE: np.dtype(np.float64), TP.FLOAT16: np.dtype(np.float16),
    TP.BFLOAT16: np.dtype(ml_dtypes.bfloat16), TP.INT8: np.dtype(np.int8), TP.INT16: np.dtype(np.int16),
    TP.INT32: np.dtype(np.int32), TP.INT64: np.dtype(np.int64), TP.UINT8: np.dtype(np.uint8),
    TP.UINT16: np.dtype(np.uint16), TP.UINT32: np.dtype(np.uint32), TP.UINT64: np.dtype(np.uint64),
    TP.BOOL: np.dtype(np.bool_), TP.COMPLEX64: np.dtype(np.complex64), TP.COMPLEX128: np.dtype(np.complex128),
    TP.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn), TP.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    TP.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2), TP.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    TP.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn), TP.INT4: np.dtype(ml_dtypes.int4), TP.UINT4: np.dtype(ml_dtypes.uint4),
}
if hasattr(TP, "FLOAT8E8M0") and hasattr(ml_dtypes, "float8_e8m0fnu"):
    NUMPY[TP.FLOAT8E8M0] = np.dtype(ml_dtypes.float8_e8m0fnu)
if hasattr(TP, "FLOAT6E2M3") and hasattr(ml_dtypes, "float6_e2m3fn"):
    NUMPY[TP.FLOAT6E2M3] = np.dtype(ml_dtypes.float6_e2m3fn)
    NUMPY[TP.FLOAT6E3M2] = np.dtype(ml_dtypes.float6_e3m2fn)
if hasattr(TP, "INT2") and hasattr(ml_dtypes, "int2"):
    NUMPY[TP.INT2] = np.dtype(ml_dtypes.int2)
    NUMPY[TP.UINT2] = np.dtype(ml_dtypes.uint2)

_FROM_NUMPY = {dtype: code for code, dtype in NUMPY.items()}

#: ONNX types whose carrier holds a wider range: (bits, signed)
WRAPPED: dict[int, tuple[int, bool]] = {TP.UINT16: (16, False), TP.UINT32: (32, False), TP.INT4: (4, True), TP.UINT4: (4, False)}
if hasattr(TP, "INT2"):
    WRAPPED[TP.INT2] = (2, True)
    WRAPPED[TP.UINT2] = (2, False)

#: float types narrower than their carrier: code -> (torch dtype to round through or None, max finite)
FLOAT8 = {TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ}
#: float6 values are carried exactly, but nothing rounds to them: Cast into them is unsupported
FLOAT6 = {getattr(TP, n) for n in ("FLOAT6E2M3", "FLOAT6E3M2") if hasattr(TP, n)}
NARROW_FLOATS = FLOAT8 | {TP.FLOAT4E2M1} | ({TP.FLOAT8E8M0} if hasattr(TP, "FLOAT8E8M0") else set()) | FLOAT6

FLOATING = {TP.FLOAT, TP.DOUBLE, TP.FLOAT16, TP.BFLOAT16} | NARROW_FLOATS
INTEGER = {TP.INT8, TP.INT16, TP.INT32, TP.INT64, TP.UINT8, TP.UINT16, TP.UINT32, TP.UINT64} | set(WRAPPED)
UNSIGNED = {TP.UINT8, TP.UINT16, TP.UINT32, TP.UINT64, TP.UINT4} | ({TP.UINT2} if hasattr(TP, "UINT2") else set())

_TORCH_TO_ONNX = {
    torch.float32: TP.FLOAT, torch.float64: TP.DOUBLE, torch.float16: TP.FLOAT16, torch.bfloat16: TP.BFLOAT16,
    torch.int8: TP.INT8, torch.int16: TP.INT16, torch.int32: TP.INT32, torch.int64: TP.INT64, torch.uint8: TP.UINT8,
    torch.bool: TP.BOOL, torch.complex64: TP.COMPLEX64, torch.complex128: TP.COMPLEX128,
}


def carrier(code: int) -> torch.dtype:
    try:
        return CARRIER[code]
    except KeyError:
        raise Unsupported(f"torch cannot carry ONNX type {type_name(code)}") from None


def type_name(code: int) -> str:
    try:
        return TP.DataType.Name(code).lower()
    except ValueError:
        return str(code)


def onnx_type_of(t: torch.Tensor) -> int:
    """The ONNX type a tensor's own dtype stands for (its logical type when not carried)."""
    return _TORCH_TO_ONNX.get(t.dtype, TP.UNDEFINED)


def code_of_numpy(dtype: np.dtype) -> int:
    if dtype == object or dtype.kind in "US":
        return TP.STRING
    code = _FROM_NUMPY.get(np.dtype(dtype))
    if code is None:
        raise Unsupported(f"no ONNX type for numpy dtype {dtype}")
    return code


# -- numpy <-> torch ------------------------------------------------------------------------
def to_torch(value: np.ndarray, device: torch.device) -> torch.Tensor:
    """A numpy (or ml_dtypes) array as the torch tensor that carries its ONNX type."""
    arr = np.asarray(value)
    code = code_of_numpy(arr.dtype)
    if code == TP.STRING:
        raise Unsupported("torch has no string tensors")
    arr = np.array(arr, copy=True, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)
    if code == TP.BFLOAT16:
        t = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    elif code == TP.UINT64:
        t = torch.from_numpy(arr.view(np.int64))
    elif code in (TP.UINT16, TP.UINT32):
        t = torch.from_numpy(arr.astype(np.int64)).to(CARRIER[code])
    elif code in NARROW_FLOATS:
        t = torch.from_numpy(arr.astype(np.float32))
    elif code in WRAPPED:
        t = torch.from_numpy(arr.astype(np.int8 if WRAPPED[code][1] else np.uint8))
    else:
        t = torch.from_numpy(arr)
    return t.to(device) if device.type != "cpu" else t


def to_numpy(t: torch.Tensor, code: int | None) -> np.ndarray:
    """A result tensor as numpy in ONNX type ``code``.

    The carrier is converted only when the tensor *is* in the carrier of ``code``; a tensor of
    any other dtype comes back in its own dtype, so a lowering that produced the wrong type
    is seen as ``wrong-dtype`` and not silently fixed.
    """
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if code is None or code not in CARRIER or CARRIER[code] != t.dtype:
        return _natural(t)
    if code == TP.BFLOAT16:
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    if code == TP.UINT64:
        return t.contiguous().numpy().view(np.uint64)
    if code in (TP.UINT16, TP.UINT32) or code in NARROW_FLOATS or code in WRAPPED:
        return t.numpy().astype(NUMPY[code])
    return t.numpy()


def _natural(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return t.to(torch.int64).numpy().astype({torch.uint16: np.uint16, torch.uint32: np.uint32, torch.uint64: np.uint64}[t.dtype])
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz):
        return t.to(torch.float32).numpy()
    return t.numpy()


def ordered(t: torch.Tensor) -> torch.Tensor:
    """uint64 bits in an int64 carrier as an int64 in the same order as the uint64 values (the
    sign bit flipped); its own inverse. Orderings, maxima and minima of uint64 go through it."""
    return t ^ (-(1 << 63))


def wrap(t: torch.Tensor, code: int) -> torch.Tensor:
    """Reduce a carrier holding a narrow integer type to that type's range (two's complement)."""
    bits, signed = WRAPPED[code]
    if t.dtype.is_floating_point or t.dtype == torch.bool:
        return t
    mask = (1 << bits) - 1
    out = t & mask
    if signed:
        half = 1 << (bits - 1)
        out = ((out + half) & mask) - half
    return out
