"""Slice (ONNX spec: Slice-1, 10, 11, 13).

Slice-1 takes starts/ends/axes as attributes; from Slice-10 they are inputs, with ``steps``.
Out-of-range indices are clamped: starts to [0, dim] ([0, dim-1] for negative steps), ends to
[0, dim] ([-1, dim-1] for negative steps), after adding dim to negative values; Slice-11 allows
negative axes. This follows the clamping rules in the Slice-13 spec text."""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, axes_subset
from harness.registry import Example, Operator

op = Operator("Slice")


def _slice(x, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else [int(a) + x.ndim if a < 0 else int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        dim = x.shape[axis]
        start, end = int(start), int(end)
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        # a Python slice with a negative end would wrap around; the spec's -1 means "before 0"
        index[axis] = slice(start, end if end >= 0 else None, step)
    return x[tuple(index)].copy()


@op.reference(1)
def slice_1(x, *, starts, ends, axes=None):
    return _slice(x, starts, ends, axes)


@op.reference(10, 11, 13)
def slice_10(x, starts, ends, axes=None, steps=None):
    return _slice(x, starts, ends, axes, steps)


def _draw_params(d, x, negative_axes: bool, with_steps: bool):
    axes = d(S.st.lists(S.st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    if negative_axes:
        axes = [a - x.ndim if d(S.st.booleans()) else a for a in axes]
    starts, ends, steps = [], [], []
    for a in axes:
        dim = x.shape[a]
        starts.append(d(S.st.integers(-dim - 2, dim + 2)))
        ends.append(d(S.st.integers(-dim - 2, dim + 2)))
        steps.append(d(S.st.sampled_from([1, 1, 2, -1, -2, 3])) if with_steps else 1)
    return starts, ends, axes, steps


@op.strategy(1)
def draw_1(d, dtype, opset):
    x = S.arrays(d, dtype, min_dims=1, max_dims=3, min_side=1)
    starts, ends, axes, _ = _draw_params(d, x, False, False)
    attrs = {"starts": starts, "ends": ends}
    if axes != list(range(len(axes))) or d(S.st.booleans()):
        attrs["axes"] = axes
    return Example([x], attrs)


@op.strategy(10, 11, 13)
def draw_10(d, dtype, opset):
    x = S.arrays(d, dtype, min_dims=1, max_dims=3, min_side=1)
    starts, ends, axes, steps = _draw_params(d, x, opset >= 11, True)
    ints = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    return Example([x, ints(starts), ints(ends), ints(axes), ints(steps)])


@op.edges(1)
def edges_1(dtype, opset):
    x = S.edge_values(dtype).reshape(1, -1)
    return [Example([x], {"starts": [0, 1], "ends": [1, 1 << 62]}, name="end_past_dim"),
            Example([x], {"starts": [-3], "ends": [-1], "axes": [1]}, name="axes_negative_starts"),
            Example([np.zeros((0, 3), dtype=x.dtype)], {"starts": [1], "ends": [3], "axes": [1]}, name="empty_input")]


@op.edges(10, 11, 13)
def edges_10(dtype, opset):
    x = S.edge_values(dtype).reshape(1, -1)
    i = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return [Example([x, i(0, 1), i(1, 1 << 62)], name="end_past_dim"),
            Example([x, i(-1), i(-(1 << 62)), i(1), i(-1)], name="reverse_all"),
            Example([x, i(2), i(2), i(1)], name="empty"),
            Example([np.zeros((0, 3), dtype=x.dtype), i(1), i(3), i(1)], name="empty_input")]


# -- how it enters a generated graph -------------------------------------------------------
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def slice_params(c: Ctx, dim: int) -> tuple[int, int, int]:
    """start, end and step for one axis of size ``dim``: plain, negative, past either end,
    strided, reversed."""
    kind = c.pick(7)
    if kind == 0:
        start = c.pick(dim)
        return start, start + 1 + c.pick(dim - start), 1
    if kind == 1:  # negative indices (an end of 0 would make it empty: use "to the end")
        start = -1 - c.pick(dim)
        end = start + 1 + c.pick(-start)
        return start, end if end else INT64_MAX, 1
    if kind == 2:  # ends past the end (the INT64_MAX idiom) and starts before the start
        return c.choice([0, -dim - 3]), c.choice([INT64_MAX, dim + 4]), 1
    if kind == 3:
        start = c.pick(dim)
        return start, dim, 2 + c.pick(2)
    if kind == 4:  # reverse
        return dim - 1 - c.pick(dim), c.choice([-dim - 1, INT64_MIN]), -1
    if kind == 5:
        start = c.pick(dim)
        return start, -1 - dim + start if c.pick(2) else INT64_MIN, -2
    start = c.pick(dim)
    return start, start + 1 + c.pick(dim - start), 1


@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and min(v.shape) > 0)
    if x is None:
        return None
    axes = axes_subset(c, x.rank)
    starts, ends, steps = [], [], []
    for a in axes:
        s, e, k = slice_params(c, x.shape[a])
        starts.append(s)
        ends.append(e)
        steps.append(k)
    ins = [x, c.ints(starts), c.ints(ends)]
    plain_axes = [a % x.rank for a in axes] == list(range(len(axes)))
    if not (plain_axes and all(k == 1 for k in steps) and c.pick(2)):
        ins.append(c.ints(axes))
        if any(k != 1 for k in steps) or c.pick(2):
            ins.append(c.ints(steps))
    return Plan(ins)
