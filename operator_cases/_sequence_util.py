"""Shared pieces of the sequence and optional operators (ConcatFromSequence, SequenceAt,
SequenceConstruct, SequenceEmpty, SequenceErase, SequenceInsert, SequenceLength,
SplitToSequence, Optional, OptionalGetElement, OptionalHasElement).

A sequence input is given as ``seq(items, dtype)`` (a :class:`harness.values.Typed` whose graph
type is ``seq(tensor(dtype))`` with element shapes left open, since the elements may differ), an
optional as ``opt(value, inner_type)`` (``None``: the empty optional). A reference sees a
sequence as a :class:`harness.values.SeqList` (a list knowing its element type, so an empty one
still has one) and returns a sequence or optional output as a ``Typed`` too.

Positions (SequenceAt, SequenceErase, SequenceInsert) are checked against the spec's accepted
range, "[-n, n - 1]" ("[-n, n]" for SequenceInsert); outside it the reference raises
:class:`PositionError`: the spec calls such a position not accepted and names no result, so
no case expects one (tests/test_ops_sequence.py checks the raise by hand).

Every op here copies values, so floats are drawn with NaN, +-inf, -0.0 and subnormals (the edge
values) as elements: a copy keeps them bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness import strategies as S
from harness.values import SeqList, Typed, optional_type, sequence_type, tensor_type

st = S.st
#: most elements a drawn sequence holds
MAX_ITEMS = 4
#: the shares of drawn examples: the ops copy values, the dtype sweep (13 to 26 element types)
#: exercises binding and type plumbing more than arithmetic, so a few draws per dtype do
SHARE = 0.2


class PositionError(IndexError):
    """A position outside the range the spec accepts."""


def code(dtype: str) -> int:
    return S.onnx_code(dtype)


def seq(items: Any, dtype: str) -> Typed:
    """A sequence input of element type ``dtype``."""
    return Typed([np.asarray(v) if not isinstance(v, np.ndarray) else v for v in items], sequence_type(code(dtype)))


def opt(value: Any, inner: Any) -> Typed:
    """An optional input: ``value`` (a tensor, a list for a sequence, None when empty) of
    type ``inner`` (a TypeProto)."""
    if isinstance(value, Typed):
        value = value.value
    return Typed(value, optional_type(inner))


def tensor_of(dtype: str) -> Any:
    return tensor_type(code(dtype))


def seq_of(dtype: str) -> Any:
    return sequence_type(code(dtype))


def elem_code(value: Any) -> int:
    """The ONNX element type of a tensor, or of a sequence (its declared one when known)."""
    if isinstance(value, SeqList) and value.elem:
        return value.elem
    if isinstance(value, list):
        if not value:
            raise ValueError("an empty sequence of unknown element type")
        return elem_code(value[0])
    return S.onnx_code(S.label_of(np.asarray(value).dtype))


def seq_out(items: list, elem: int) -> Typed:
    """A sequence output of ONNX element type ``elem`` (copies of the items)."""
    return Typed([np.array(v, copy=True) for v in items], sequence_type(elem))


def type_of(value: Any) -> Any:
    """The TypeProto of a tensor or sequence value (a sequence: its element type, shapes open)."""
    if isinstance(value, list):
        return sequence_type(elem_code(value))
    arr = np.asarray(value)
    return tensor_type(elem_code(arr), list(arr.shape))


def position(pos: Any, n: int, insert: bool = False) -> int:
    """A position as an index in [0, n) ([0, n] to insert): "Negative value means counting
    positions from the back"; outside "[-n, n - 1]" ("[-n, n]" to insert) a PositionError."""
    arr = np.asarray(pos)
    if arr.ndim != 0:
        raise PositionError(f"position must be a scalar tensor, got shape {arr.shape}")
    p = int(arr)
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise PositionError(f"position {p} outside the accepted range [-{n}, {hi}] of a sequence of {n}")
    return p + n if p < 0 else p


# -- drawing ------------------------------------------------------------------------------------
def values(d: Any, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``dtype`` and ``shape``; floats hold NaN and +-inf too (copies keep them)."""
    return S.arrays(d, dtype, shape=shape, allow_nan=True, allow_inf=True) if S.is_float(dtype) else S.arrays(d, dtype, shape=shape)


def item(d: Any, dtype: str, max_dims: int = 3) -> np.ndarray:
    return values(d, dtype, S.shapes(d, 0, max_dims, 0, 3))


def items(d: Any, dtype: str, lo: int = 0, hi: int = MAX_ITEMS) -> list[np.ndarray]:
    """``lo`` to ``hi`` tensors of independent shapes and ranks (a sequence's elements may differ)."""
    n = d(st.integers(lo, hi))
    return [item(d, dtype) for _ in range(n)]


def index_dtype(d: Any) -> np.dtype:
    """The dtype of a position or split input: type constraint I is int32 or int64."""
    return np.dtype(d(st.sampled_from(["int64", "int32"])))


def edge_items(dtype: str) -> list[np.ndarray]:
    """Elements of different shapes and ranks: the edge values (NaN, +-inf, -0.0, subnormals,
    extremes), a scalar, an empty tensor and a 2-D block."""
    e = S.edge_values(dtype)
    return [e, e[:1].reshape(()), np.zeros((2, 0), dtype=e.dtype), np.resize(e, (2, 3))]


# -- how sequences enter a generated graph ------------------------------------------------------
def _takes(op: str, opset: int, dtype: str) -> bool:
    from harness import schema

    sch = schema.schema_at(op, opset)
    if sch is None:
        return False
    allowed = schema.allowed_types(sch).get("T") or schema.allowed_types(sch).get("S") or []
    # S lists sequence types, seq(tensor(...)): the tensor type inside is the one that counts
    return any(S.label_from_type_str(t[4:-1] if t.startswith("seq(") else t) == dtype for t in allowed)


def fuzz_sequence(c, consumer: str):
    """A sequence built from pool tensors for ``consumer`` (its plan's steps): SequenceConstruct
    of one to three pool values of x's shape, or SplitToSequence of x (along a drawn axis, in
    pieces of 1 with keepdims, or in two given lengths). Returns (steps, the sequence as a local
    value, the items' shapes) or None. Only tensors enter and leave the pool."""
    from harness.fuzz_api import Step

    x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if x is None or not all(_takes(op, c.opset, c.dtype) for op in ("SequenceConstruct", "SplitToSequence", consumer)):
        return None
    name = c.fresh("seq") + "s"
    if c.pick(2) == 0:
        items = [x]
        for slot in (1, 2)[: c.pick(3)]:
            v = c.take("float", slot, lambda v: v.shape == x.shape)
            if v is not None:
                items.append(v)
        return [Step("SequenceConstruct", list(items), [name])], c.local(name), [x.shape] * len(items)
    axis = c.pick(x.rank)
    n = x.shape[axis]
    if n >= 2 and c.pick(2):
        first = 1 + c.pick(n - 1)
        step = Step("SplitToSequence", [x, c.ints([first, n - first])], [name], {"axis": axis - x.rank if c.pick(2) else axis})
        shapes = [x.shape[:axis] + (k,) + x.shape[axis + 1:] for k in (first, n - first)]
    else:
        step = Step("SplitToSequence", [x], [name], {"axis": axis})
        shapes = [x.shape[:axis] + (1,) + x.shape[axis + 1:]] * n
    return [step], c.local(name), shapes


def fuzz_consume(c, s, shapes: list[tuple[int, ...]]):
    """Helper steps that turn the sequence ``s`` (a local value of a plan whose items have
    ``shapes``) back into a tensor, for the plan's ``then`` after a node that gives a sequence:
    ConcatFromSequence (along the one axis the items differ on, or along a drawn axis, new_axis
    0 or 1, when they agree), SequenceAt of a drawn position in [-n, n - 1], or SequenceLength
    (the count alone, an int64 scalar: the only one of the three an empty sequence has a result
    for). Returns the steps, or None when no consumer takes the sequence."""
    from harness.fuzz_api import Step

    n = len(shapes)
    ranks = {len(sh) for sh in shapes}
    r = ranks.pop() if len(ranks) == 1 else -1
    differ = [a for a in range(r) if len({sh[a] for sh in shapes}) > 1] if r >= 0 else []
    menu = []
    if n and r >= 0 and len(differ) <= 1 and (r >= 1 or not differ) and _takes("ConcatFromSequence", c.opset, c.dtype):
        menu.append("ConcatFromSequence")
    if n and _takes("SequenceAt", c.opset, c.dtype):
        menu.append("SequenceAt")
    if _takes("SequenceLength", c.opset, c.dtype):
        menu.append("SequenceLength")
    if not menu:
        return None
    op = c.choice(menu)
    out = c.fresh("seq") + "y"
    if op == "SequenceLength":
        return [Step(op, [s], [out])]
    if op == "SequenceAt":
        return [Step(op, [s, c.ints(np.array(c.pick(2 * n) - n, dtype=np.int64))], [out])]
    new_axis = 1 if r == 0 else (0 if differ else c.pick(2))  # scalars only stack
    axis = differ[0] if differ else c.pick(r + new_axis)
    if c.pick(3) == 2:  # negative axes: [-r, -1] (or [-r - 1, -1] with new_axis)
        axis -= r + new_axis
    attrs = {"axis": axis}
    if new_axis or c.pick(2):
        attrs["new_axis"] = new_axis
    return [Step(op, [s], [out], attrs)]
