"""Helpers shared by the kernel modules: dtypes, axes, attribute access."""

from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

#: ml_dtypes floating types that numpy cannot compute in directly; kernels widen them to
#: float32, compute, and narrow the result back
ML_FLOATS = frozenset(
    np.dtype(t)
    for t in (
        ml_dtypes.bfloat16,
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2,
        ml_dtypes.float8_e5m2fnuz,
        ml_dtypes.float8_e8m0fnu,
        ml_dtypes.float4_e2m1fn,
    )
)
#: packed sub-byte integer types (ml_dtypes int4/uint4/int2/uint2)
ML_INTS = frozenset(np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2))

STRING = np.dtype(object)


@functools.lru_cache(maxsize=None)
def np_dtype(elem_type: int) -> np.dtype:
    """numpy dtype of an ONNX TensorProto element type."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


@functools.lru_cache(maxsize=None)
def onnx_elem_type(dtype: np.dtype) -> int:
    """ONNX TensorProto element type of a numpy dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OUS":
        return onnx.TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(dtype)


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc" or dtype in ML_FLOATS


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype to compute in: float16 and the ml_dtypes floats are widened to float32 so
    that transcendental functions round once, at the final narrowing."""
    if dtype == np.float16 or dtype in ML_FLOATS:
        return np.dtype(np.float32)
    if dtype in ML_INTS:
        return np.dtype(np.int32)
    return dtype


def widen(x: np.ndarray) -> np.ndarray:
    """x in its compute dtype (no copy when already there)."""
    cd = compute_dtype(x.dtype)
    return x if cd == x.dtype else x.astype(cd)


def as_array(x: Any) -> np.ndarray:
    """numpy scalars (which numpy reductions return) as 0-d arrays."""
    return x if type(x) is np.ndarray else np.asarray(x)


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes, rank: int) -> tuple[int, ...]:
    return tuple(normalize_axis(int(a), rank) for a in np.asarray(axes).reshape(-1))


def ints(x) -> list[int]:
    """A 0-d or 1-d integer tensor (or None) as a list of Python ints."""
    if x is None:
        return []
    return [int(v) for v in np.asarray(x).reshape(-1)]


def scalar(x) -> Any:
    """The single element of a 0-d or one-element tensor as a Python scalar."""
    return np.asarray(x).reshape(-1)[0].item()

