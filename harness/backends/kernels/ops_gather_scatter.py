"""Gather and Scatter families: Gather, GatherElements, GatherND, Scatter, ScatterElements,
ScatterND, TensorScatter. Negative indices count from the end of their axis."""

from __future__ import annotations

import math

import numpy as np

from ._util import ML_FLOATS, normalize_axis
from .registry import register

_REDUCTIONS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _positive(indices: np.ndarray, dim) -> np.ndarray:
    indices = np.asarray(indices).astype(np.int64, copy=False)
    return np.where(indices < 0, indices + dim, indices)


@register("Gather", since=1)
def gather(node):
    axis = node.attrs.get("axis", 0)

    def run(x, indices):
        ax = normalize_axis(axis, x.ndim)
        return (np.take(x, _positive(indices, x.shape[ax]), axis=ax),)

    return run


@register("GatherElements", since=11)
def gather_elements(node):
    axis = node.attrs.get("axis", 0)

    def run(x, indices):
        ax = normalize_axis(axis, x.ndim)
        # output[i][j][k] = input[index[i][j][k]][j][k] (axis 0): off the axis, indices may be
        # shorter than the data, which then takes part only up to their length
        part = x[tuple(slice(None) if d == ax else slice(0, n) for d, n in enumerate(np.shape(indices)))]
        return (np.take_along_axis(part, _positive(indices, x.shape[ax]), axis=ax),)

    return run


@register("GatherND", since=11)
def gather_nd(node):
    batch_dims = node.attrs.get("batch_dims", 0)

    def run(x, indices):
        b = batch_dims
        k = indices.shape[-1]
        batch = math.prod(x.shape[:b])
        data = x.reshape((batch,) + x.shape[b:])
        idx = np.asarray(indices, dtype=np.int64).reshape(batch, -1, k)
        dims = np.array(x.shape[b : b + k], dtype=np.int64)
        idx = np.where(idx < 0, idx + dims, idx)
        picked = data[(np.arange(batch)[:, None], *np.moveaxis(idx, -1, 0))]
        return (picked.reshape(indices.shape[:-1] + x.shape[b + k :]),)

    return run


def _element_index(indices: np.ndarray, axis: int, dim: int) -> tuple:
    """Full index tuple addressing data[... indices[i] along axis ...] for every i."""
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = _positive(indices, dim)
    return tuple(grid)


def scatter_elements(x, indices, updates, axis, reduction):
    ax = normalize_axis(axis, x.ndim)
    y = x.copy()
    index = _element_index(indices, ax, x.shape[ax])
    if reduction == "none":
        y[index] = updates
    else:
        _REDUCTIONS[reduction].at(y, index, updates)
    return y


@register("Scatter", since=9)
def scatter(node):
    axis = node.attrs.get("axis", 0)

    def run(x, indices, updates):
        return (scatter_elements(x, indices, updates, axis, "none"),)

    return run


@register("ScatterElements", since=11)
def scatter_elements_kernel(node):
    axis = node.attrs.get("axis", 0)
    reduction = node.attrs.get("reduction", "none")

    def run(x, indices, updates):
        return (scatter_elements(x, indices, updates, axis, reduction),)

    return run


@register("ScatterND", since=11)
def scatter_nd(node):
    reduction = node.attrs.get("reduction", "none")

    def run(x, indices, updates):
        y = x.copy()
        k = indices.shape[-1]
        idx = _positive(indices, np.array(x.shape[:k], dtype=np.int64))
        index = tuple(np.moveaxis(idx, -1, 0))
        if reduction == "none":
            y[index] = updates
        else:
            widen = y.dtype in ML_FLOATS
            z = y.astype(np.float32) if widen else y
            _REDUCTIONS[reduction].at(z, index, updates.astype(z.dtype, copy=False))
            y = z.astype(x.dtype) if widen else z
        return (y,)

    return run


@register("TensorScatter", since=24)
def tensor_scatter(node):
    axis = node.attrs.get("axis", -2)
    circular = node.attrs.get("mode", "linear") == "circular"

    def run(past, update, write_indices=None):
        ax = normalize_axis(axis, past.ndim)
        y = past.copy()
        max_len, seq_len = past.shape[ax], update.shape[ax]
        batch = past.shape[0]
        starts = np.zeros(batch, dtype=np.int64) if write_indices is None else np.asarray(write_indices, dtype=np.int64)
        for b in range(batch):
            pos = starts[b] + np.arange(seq_len)
            if circular:
                pos %= max_len
            index = [slice(None)] * (past.ndim - 1)
            index[ax - 1] = pos
            y[b][tuple(index)] = update[b]
        return (y,)

    return run
