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


def widen(x: np.ndarray) -> np.ndarray:
    """ml_dtypes values (narrow floats, sub-byte integers) as float32, which holds every one
    of them exactly; numpy's own types are returned unchanged."""
    return x.astype(np.float32) if x.dtype in ML_FLOATS or x.dtype in ML_INTS else x


def float32_if_ml(x: np.ndarray) -> np.ndarray:
    """An ml_dtypes float (bfloat16, float8, float4) as float32, which holds each exactly, for
    numpy to compute in; any other array unchanged."""
    return x.astype(np.float32) if x.dtype in ML_FLOATS else x


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



def legacy_broadcast(node):
    """Binary ops before opset 7 broadcast only with ``broadcast=1``, B aligned with A's
    dimensions starting at ``axis``. Returns a function aligning B, or None when numpy's
    trailing-dimension broadcasting already gives the spec's result."""
    if not node.attrs.get("broadcast", 0) or "axis" not in node.attrs:
        return None
    axis = node.attrs["axis"]

    def align(a, b):
        ax = normalize_axis(axis, a.ndim)
        return b.reshape(b.shape + (1,) * (a.ndim - ax - b.ndim))

    return align


def broadcasting(node, run):
    """``run(a, b)`` for a binary op's node, B aligned first where the node asks for the legacy
    broadcast (see ``legacy_broadcast``); ``run`` itself (its in-place variant too) otherwise."""
    align = legacy_broadcast(node)
    if align is None:
        return run
    return lambda a, b: run(a, align(a, b))
