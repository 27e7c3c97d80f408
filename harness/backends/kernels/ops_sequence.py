"""Sequence and optional operators. A sequence is a Python list of arrays (never mutated: every
kernel builds a new list); an empty optional is None."""

from __future__ import annotations

import numpy as np

from ._util import ints, normalize_axis, scalar
from .ops_tensor import _split
from .registry import register


@register("SequenceConstruct", since=11)
def sequence_construct(node):
    def run(*xs):
        return (list(xs),)

    return run


@register("SequenceEmpty", since=11)
def sequence_empty(node):
    def run():
        return ([],)

    return run


def _position(seq: list, pos, insert: bool = False) -> int:
    n = len(seq)
    p = int(scalar(pos))
    if not (-n <= p <= n if insert else -n <= p < n):
        raise IndexError(f"sequence position {p} is out of range for length {n}")
    return p + n if p < 0 else p


@register("SequenceAt", since=11)
def sequence_at(node):
    def run(seq, pos):
        return (seq[_position(seq, pos)],)

    return run


@register("SequenceInsert", since=11)
def sequence_insert(node):
    def run(seq, tensor, pos=None):
        out = list(seq)
        if pos is None:
            out.append(tensor)
        else:
            out.insert(_position(seq, pos, insert=True), tensor)
        return (out,)

    return run


@register("SequenceErase", since=11)
def sequence_erase(node):
    def run(seq, pos=None):
        out = list(seq)
        del out[-1 if pos is None else _position(seq, pos)]
        return (out,)

    return run


@register("SequenceLength", since=11)
def sequence_length(node):
    def run(seq):
        return (np.array(len(seq), dtype=np.int64),)

    return run


@register("ConcatFromSequence", since=11)
def concat_from_sequence(node):
    axis = node.attrs["axis"]
    new_axis = node.attrs.get("new_axis", 0)

    def run(seq):
        if new_axis:
            return (np.stack(seq, axis=normalize_axis(axis, seq[0].ndim + 1)),)
        return (np.concatenate(seq, axis=normalize_axis(axis, seq[0].ndim)),)

    return run


@register("SplitToSequence", since=11)
def split_to_sequence(node):
    axis = node.attrs.get("axis", 0)
    keepdims = node.attrs.get("keepdims", 1)

    def run(x, split=None):
        ax = normalize_axis(axis, x.ndim)
        dim = x.shape[ax]
        if split is None:
            parts = _split(x, ax, [1] * dim, dim)
            if not keepdims:
                parts = [np.squeeze(p, axis=ax) for p in parts]
            return (parts,)
        if np.ndim(split) == 0:
            size = int(scalar(split))
            sizes = [min(size, dim - i) for i in range(0, dim, size)]
        else:
            sizes = ints(split)
        return (_split(x, ax, sizes, len(sizes)),)

    return run


@register("Optional", since=15)
def optional(node):
    def run(x=None):
        return (x,)

    return run


@register("OptionalGetElement", since=15)
def optional_get_element(node):
    def run(x):
        if x is None:
            raise ValueError("OptionalGetElement: the optional is empty")
        return (x,)

    return run


@register("OptionalHasElement", since=15)
def optional_has_element(node):
    def run(x=None):
        return (np.array(x is not None),)

    return run
