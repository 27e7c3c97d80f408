"""Shared pieces of the Lp pooling operators (ONNX spec: LpPool-1/2/11/18/22,
GlobalLpPool-1/2/22): the Lp norm of a set of cells in float64, the p values each version
allows, and their fuzz templates. The window geometry itself is ``_window_util``'s.

"Lp pooling consisting of computing the Lp norm on all values of a subset of the input tensor":
``(sum |x|^p) ^ (1 / p)``; a padding cell adds |0|^p = 0. Version 1 has a FLOAT ``p`` (default
2.0), version 2 on an INT ``p`` (default 2). NaN and infinities follow IEEE arithmetic (a window
holding NaN gives NaN, one holding +-inf and no NaN gives inf).

Subnormals are drawn with p = 1 only: with p >= 2 their powers underflow in the input type, and
whether an implementation may sum them there (accumulation width) the text does not say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, size_of
from harness.registry import Example, Operator

from .._accumulate_util import EXPECTED, NARROW, add_examples, finite_is_ours_or, in_type, narrow_spec, top

st = S.st


def lp_norm(values: np.ndarray, p: Any, axis: Any) -> np.ndarray:
    """(sum |v|^p) ^ (1 / p) over ``axis``, in float64."""
    p = float(p)
    a = np.abs(values.astype(np.float64))
    with np.errstate(all="ignore"):
        if p == 1:
            return a.sum(axis=axis)
        if p == 2:
            return np.sqrt((a * a).sum(axis=axis))
        return (a**p).sum(axis=axis) ** (1.0 / p)


def narrow_accumulation(op: Operator, versions: tuple[int, ...], windows: Callable[[np.ndarray, dict], np.ndarray],
                        example_attrs: dict[str, Any]) -> None:
    """Declare ``<Op>.narrow_accumulation`` for an Lp pool and add its example. The text names no
    type for the sum of |x|^p: the sum accumulated in the input type is accepted where our wide one
    is finite and it is not. ``windows(x, attrs)``: x's windows in x's type, each window's cells on
    the last axis; ``example_attrs``: the example's attributes besides ``p``."""

    def norm_in_type(x: np.ndarray, attrs: dict) -> np.ndarray:
        p = float(attrs.get("p", 2))
        win = windows(x, attrs)
        with np.errstate(all="ignore"):
            y = in_type(win, (win.ndim - 1,), lambda a, v: a + np.abs(v) ** p, lambda a, n: a ** (1.0 / p))
        return y.reshape(y.shape[:-1])

    def where(inputs, attrs, expected, since):
        x = np.asarray(inputs[0])
        if S.label_of(x.dtype) not in NARROW or x.size == 0:
            return [None]
        with np.errstate(all="ignore"):
            return [np.isfinite(np.asarray(expected[0]).astype(np.float64)) & ~np.isfinite(norm_in_type(x, attrs).astype(np.float64))]

    op.spec_silent(
        "narrow_accumulation", versions, spec=narrow_spec(op, versions), expected=EXPECTED, where=where,
        invariants={"a finite value there is ours": lambda c: finite_is_ours_or(c, np.inf)},
        readings={"each window's sum of |x|^p accumulated in the input type, left to right (+inf)":
                  lambda c: [norm_in_type(np.asarray(c.inputs[0]), c.attrs)]})

    def examples(dtype: str, since: int) -> list[Example]:
        """(3t/8)^2 + (t/2)^2 overflows the type; its square root, 5t/8, does not."""
        if dtype not in NARROW:
            return []
        t = top(dtype)
        return [Example([np.array([[[3 * t / 8, t / 2, 0.0]]]).astype(S.np_dtype(dtype))], {**example_attrs, "p": 2.0 if since == 1 else 2},
                        name="narrow_accumulation")]

    add_examples(op, versions, examples)


def draw_p(d: Callable, since: int) -> float | int:
    """A p value of the version's attribute type (FLOAT before 2, INT from 2)."""
    if since < 2:
        return d(st.sampled_from([2.0, 1.0, 3.0, 1.5]))
    return d(st.sampled_from([2, 1, 3]))


def p_values(since: int) -> list[float | int]:
    return [1.0, 2.0, 3.0, 1.5] if since < 2 else [1, 2, 3]


def lp_bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    return np.abs(np.nan_to_num(np.asarray(ref(*ins, **attrs), dtype=np.float64)))


def lp_pool_template(op: Operator, window_attrs: Callable[[Ctx, tuple[int, ...], bool], dict | None]) -> None:
    """LpPool: a window over the spatial axes of a rank 3 or 4 value (``window_attrs`` from
    ``_window_util``), p = 2 or 1."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: 3 <= v.rank <= 4 and v.size > 0)
        if x is None:
            return None
        attrs = window_attrs(c, x.shape[2:], c.since >= 18)
        if attrs is None:
            return None
        attrs["p"] = c.choice([2, 1]) if c.since >= 2 else c.choice([2.0, 1.0])
        return Plan([x], attrs, n_acc=size_of(tuple(attrs["kernel_shape"])), n_outputs=1)

    op.fuzz(nan=NAN_IEEE, ulps=4.0, bound=lp_bound)(plan)


def global_lp_pool_template(op: Operator) -> None:
    """GlobalLpPool: any value of rank 3 or more, p = 2 or 1."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.rank >= 3 and v.size > 0)
        if x is None:
            return None
        p = c.choice([2, 1]) if c.since >= 2 else c.choice([2.0, 1.0])
        return Plan([x], {"p": p}, n_acc=size_of(x.shape[2:]))

    op.fuzz(nan=NAN_IEEE, ulps=4.0, bound=lp_bound)(plan)
