"""Shared Hypothesis strategies and dtype helpers for operator cases.

Dtypes are named by labels (``float32``, ``bfloat16``, ``float8e4m3fn``, ``int4``, ``bool``,
``string``) mapped to ONNX element types and numpy/ml_dtypes dtypes. Arrays are kept small
(at most ``MAX_ELEMENTS`` elements) so that generation stays fast and health checks pass.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import ml_dtypes
import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto

MAX_ELEMENTS = 64

_LABELS = {
    TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64", TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16", TensorProto.INT8: "int8", TensorProto.INT16: "int16",
    TensorProto.INT32: "int32", TensorProto.INT64: "int64", TensorProto.UINT8: "uint8",
    TensorProto.UINT16: "uint16", TensorProto.UINT32: "uint32", TensorProto.UINT64: "uint64",
    TensorProto.BOOL: "bool", TensorProto.STRING: "string",
    TensorProto.FLOAT8E4M3FN: "float8e4m3fn", TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz",
    TensorProto.FLOAT8E5M2: "float8e5m2", TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
    TensorProto.INT4: "int4", TensorProto.UINT4: "uint4", TensorProto.FLOAT4E2M1: "float4e2m1",
    TensorProto.INT2: "int2", TensorProto.UINT2: "uint2", TensorProto.FLOAT8E8M0: "float8e8m0",
    TensorProto.FLOAT6E2M3: "float6e2m3", TensorProto.FLOAT6E3M2: "float6e3m2",
}
_CODES = {label: code for code, label in _LABELS.items()}
#: every dtype label the harness knows
LABELS = tuple(_LABELS.values())
_ONNX_TYPE_STR = {f"tensor({onnx.helper.tensor_dtype_to_string(c).split('.')[-1].lower()})": l for c, l in _LABELS.items()}
_ONNX_TYPE_STR.update({"tensor(float)": "float32", "tensor(double)": "float64"})

FLOATS = ("float32", "float64", "float16", "bfloat16")
FLOAT8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED


def onnx_code(label: str) -> int:
    return _CODES[label]


def label_of(code_or_dtype: Any) -> str:
    if isinstance(code_or_dtype, (int, np.integer)):
        return _LABELS[int(code_or_dtype)]
    dtype = np.dtype(code_or_dtype)
    if dtype == object or dtype.kind in "US":
        return "string"
    return _LABELS[onnx.helper.np_dtype_to_tensor_dtype(dtype)]


def label_from_type_str(type_str: str) -> str | None:
    """``tensor(float)`` -> ``float32``; None for non-tensor or unknown types."""
    return _ONNX_TYPE_STR.get(type_str)


@functools.lru_cache(maxsize=None)
def np_dtype(label: str) -> np.dtype:
    if label == "string":
        return np.dtype(object)
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(_CODES[label]))


#: floats of fewer than 8 bits: finite only (no infinity, no NaN). float8e8m0 is apart: powers of
#: two only (no sign, no zero, no infinity), NaN is 0xFF
NARROW_FLOATS = ("float4e2m1", "float6e2m3", "float6e3m2")


def is_float(label: str) -> bool:
    return label in FLOATS or label in FLOAT8 or label in NARROW_FLOATS or label == "float8e8m0"


def is_int(label: str) -> bool:
    return label in INTS or label in ("int4", "uint4", "int2", "uint2")


def has_inf(label: str) -> bool:
    """Whether the float type holds +-inf (the float8 "fn"/"fnuz" types, float8e8m0 and those
    under 8 bits do not)."""
    return label in FLOATS or label == "float8e5m2"


def has_nan(label: str) -> bool:
    return is_float(label) and label not in NARROW_FLOATS


def finite_range(label: str) -> tuple[float, float]:
    """(lowest, highest) finite value of a dtype."""
    dtype = np_dtype(label)
    if is_float(label):
        info = ml_dtypes.finfo(dtype)
        return float(info.min), float(info.max)
    if label == "bool":
        return 0, 1
    info = ml_dtypes.iinfo(dtype)
    return int(info.min), int(info.max)


# -- shapes -----------------------------------------------------------------------------------
def shapes(draw: Callable, min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5) -> tuple[int, ...]:
    """A shape with at most MAX_ELEMENTS elements (empty dims allowed when min_side is 0)."""
    rank = draw(st.integers(min_dims, max_dims))
    dims = []
    for _ in range(rank):
        room = max(1, MAX_ELEMENTS // max(1, int(np.prod(dims)) if dims else 1))
        dims.append(draw(st.integers(min_side, max(min_side, min(max_side, room)))))
    return tuple(dims)


def broadcast_shapes(draw: Callable, count: int = 2, max_dims: int = 4, max_side: int = 4) -> list[tuple[int, ...]]:
    """``count`` shapes that broadcast together under numpy (multidirectional) rules."""
    full = shapes(draw, 0, max_dims, 1, max_side)
    out = []
    for _ in range(count):
        drop = draw(st.integers(0, len(full)))
        dims = list(full[drop:])
        for i in range(len(dims)):
            if draw(st.booleans()) and draw(st.booleans()):
                dims[i] = 1
        out.append(tuple(dims))
    return out


# -- values -----------------------------------------------------------------------------------
def arrays(draw: Callable, label: str, shape: tuple[int, ...] | None = None, lo: float | None = None, hi: float | None = None,
           allow_nan: bool = False, allow_inf: bool = False, nonzero: bool = False, **shape_kw: Any) -> np.ndarray:
    """An array of dtype ``label``; floats are finite and within [lo, hi] unless allowed."""
    if shape is None:
        shape = shapes(draw, **shape_kw)
    n = int(np.prod(shape)) if shape else 1
    dtype = np_dtype(label)
    if label == "string":
        vals = draw(st.lists(st.text(alphabet="abcXYZ019 _", max_size=5), min_size=n, max_size=n))
        return np.array(vals, dtype=object).reshape(shape)
    if label == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool).reshape(shape)
    if is_int(label):
        low, high = finite_range(label)
        low = int(max(low, lo)) if lo is not None else low
        high = int(min(high, hi)) if hi is not None else high
        elems = st.integers(low, high).filter(lambda v: v != 0) if nonzero else st.integers(low, high)
        return np.array(draw(st.lists(elems, min_size=n, max_size=n)), dtype=object).astype(dtype).reshape(shape)
    low, high = finite_range(label)
    low = max(low, lo) if lo is not None else max(low, -1e4)
    high = min(high, hi) if hi is not None else min(high, 1e4)
    width = 64 if label == "float64" else 32
    elems = st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)
    # NaN and +-inf where the type holds them (a float4e2m1 or float8 "fn" type turns them into
    # other values: drawn as before, so their frozen cases stay the same)
    as_before = label not in ("float8e8m0", "float6e2m3", "float6e3m2")
    specials = ([float("nan")] if allow_nan and (as_before or has_nan(label)) else []) + \
        ([float("inf"), float("-inf")] if allow_inf and (as_before or has_inf(label)) else [])
    if specials:
        elems = st.one_of(elems, st.sampled_from(specials))
    if nonzero:
        elems = elems.filter(lambda v: v != 0)
    vals = np.array(draw(st.lists(elems, min_size=n, max_size=n)), dtype=np.float64)
    out = vals.astype(dtype).reshape(shape)
    if nonzero and out.size and np.any(out == 0):  # a tiny value can round to 0 in a narrow type
        out = np.where(out == 0, np.array(1, dtype=dtype), out).astype(dtype)
    return out


def scalar(draw: Callable, label: str, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    return arrays(draw, label, shape=(), lo=lo, hi=hi)


def smallest_subnormal(label: str) -> float:
    """The smallest positive subnormal of a float dtype (2^-149 for float32)."""
    return float(ml_dtypes.finfo(np_dtype(label)).smallest_subnormal)


def edge_values(label: str) -> np.ndarray:
    """The values that break kernels: NaN, +-inf, -0.0, denormals, extremes, 0 and +-1."""
    dtype = np_dtype(label)
    if label == "string":
        return np.array(["", "a", "Z z", "0"], dtype=object)
    if label == "bool":
        return np.array([False, True])
    low, high = finite_range(label)
    if is_int(label):
        vals = sorted({low, low + 1, -1 if low < 0 else 0, 0, 1, high - 1, high})
        return np.array(vals, dtype=object).astype(dtype)
    info = ml_dtypes.finfo(dtype)
    if label == "float8e8m0":  # powers of two: the extremes, 1 and its neighbours, NaN
        vals = [1.0, 0.5, 2.0, low, high, float("nan")]
        return np.array(vals, dtype=np.float64).astype(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, high, low, float(info.smallest_subnormal), -float(info.smallest_subnormal),
            float(info.smallest_normal), float("inf"), float("-inf"), float("nan")]
    if label in ("float6e2m3", "float6e3m2"):  # finite only: no value stands for inf or NaN
        vals = vals[:-3]
    with np.errstate(all="ignore"):
        arr = np.array(vals, dtype=np.float64).astype(dtype)
    return arr
