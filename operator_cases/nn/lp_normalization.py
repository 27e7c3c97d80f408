"""LpNormalization (ONNX spec: LpNormalization-1, 22).

"output = input / Lp_norm(input, axis). When the Lp norm is zero (i.e., all elements along the
axis are zero), the output is defined to be zero to avoid division by zero." ``p``: "only 1 or 2
are supported" (sum of |x|, or the square root of the sum of squares); ``axis`` default -1 ("-1
mean last axis"; other negative values count from the back). LpNormalization-22 only adds
bfloat16.

Evaluated in float64 and rounded once. NaN and infinities follow IEEE arithmetic (an infinite
element makes the norm inf: its own output inf / inf = NaN, the others 0). Subnormals appear
with p = 1 only: their squares underflow in the input type, and whether an implementation may
evaluate the p = 2 norm that way (accumulation width) the text does not say.

Accumulation width at the other end (spec-silent point ``LpNormalization.narrow_accumulation``):
in float16 and bfloat16 a row whose sum of |x| or of squares overflows the type while the output
(at most 1 in magnitude) is representable (the ``narrow_accumulation`` examples) is ours in
float64; a norm accumulated in the input type is +inf and gives 0, a reading computed here.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._accumulate_util import NARROW, EXPECTED, add_examples, finite_is_ours_or, narrow_spec, running_sum, top
from .._common import back, wide
from ._norm_util import arr, take_with_axis

op = Operator("LpNormalization")
st = S.st
VERSIONS = (1, 22)


@op.reference(*VERSIONS)
def lp_normalization(x, *, axis=-1, p=2):
    x = np.asarray(x)
    xw = wide(x)
    ax = int(axis) % x.ndim
    norm = np.abs(xw).sum(axis=ax, keepdims=True) if int(p) == 1 else np.sqrt((xw * xw).sum(axis=ax, keepdims=True))
    with np.errstate(all="ignore"):
        return back(np.where(norm == 0, 0.0, xw / norm), x)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    rank = d(st.sampled_from([2, 1, 3, 4]))
    shape = S.shapes(d, rank, rank, 1, 4)
    attrs = {}
    axis = d(st.integers(0, rank - 1))
    if axis != rank - 1 or d(st.booleans()):
        attrs["axis"] = axis - rank if d(st.booleans()) else axis
    if d(st.booleans()):
        attrs["p"] = d(st.sampled_from([1, 2]))
    # on a grid of 1/64: no value so small that its square underflows (see the docstring)
    x = np.round(S.arrays(d, dtype, shape=shape, lo=-8, hi=8).astype(np.float64) * 64) / 64
    return Example([x.astype(S.np_dtype(dtype))], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    a = arr(dtype)
    x = a(np.arange(24).reshape(2, 3, 4) % 7 - 3)
    tiny = S.smallest_subnormal(dtype)
    rows = a([[0.0, 0.0, 0.0], [-0.0, 0.0, -0.0], [3.0, -4.0, 0.0], [np.nan, 1.0, 2.0], [np.inf, 1.0, 2.0], [-np.inf, np.inf, 0.0]])
    out = []
    for p in (1, 2):
        out += [
            Example([rows], {"p": p}, name=f"p{p}_zero_nan_inf_rows"),
            Example([x], {"p": p, "axis": 0}, name=f"p{p}_axis_0"),
            Example([x], {"p": p, "axis": 1}, name=f"p{p}_axis_1"),
            Example([x], {"p": p, "axis": -2}, name=f"p{p}_axis_neg2"),
            Example([a([3.0, -4.0, 0.0, 12.0])], {"p": p}, name=f"p{p}_rank1"),
            Example([a(np.zeros((0, 3)))], {"p": p}, name=f"p{p}_empty_batch"),
            Example([a(np.zeros((2, 0)))], {"p": p}, name=f"p{p}_empty_axis"),
        ]
    out.append(Example([a([[tiny, -tiny, 2 * tiny, -0.0], [tiny, 0.0, 0.0, 0.0]])], {"p": 1}, name="p1_subnormal"))
    out.append(Example([x], name="defaults"))
    return out


def _norm_in_type(x, attrs):
    axis = int(attrs.get("axis", -1)) % x.ndim
    if int(attrs.get("p", 2)) == 1:
        return running_sum(x, (axis,), absolute=True)
    with np.errstate(all="ignore"):
        return np.sqrt(running_sum(x, (axis,), square=True).astype(np.float64)).astype(x.dtype)


def _narrow(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if S.label_of(x.dtype) not in NARROW or x.size == 0:
        return [None]
    axis = int(attrs.get("axis", -1)) % x.ndim
    finite = np.all(np.isfinite(x.astype(np.float64)), axis=axis, keepdims=True)  # an inf or NaN input is IEEE's
    return [np.broadcast_to(finite & ~np.isfinite(_norm_in_type(x, attrs).astype(np.float64)), x.shape)]


def _in_type(c):
    x = np.asarray(c.inputs[0])
    norm = _norm_in_type(x, c.attrs).astype(np.float64)
    with np.errstate(all="ignore"):
        return [np.where(norm == 0, 0.0, x.astype(np.float64) / norm).astype(x.dtype)]


op.spec_silent(
    "narrow_accumulation", VERSIONS, spec=narrow_spec(op, VERSIONS), expected=EXPECTED, where=_narrow,
    invariants={"a finite value there is ours or 0 (x divided by an overflowed norm)": lambda c: finite_is_ours_or(c, 0.0)},
    readings={"the norm accumulated in the input type, left to right (+inf: x / inf = 0)": _in_type})


def _narrow_examples(dtype, since):
    """The first row's sum of |x| (p = 1) or of squares (p = 2) overflows the type, the second's does not."""
    if dtype not in NARROW:
        return []
    t, a = top(dtype), arr(dtype)
    return [Example([a([[t, t, 0], [1, 2, 1]])], {"p": 1}, name="narrow_accumulation_p1"),
            Example([a([[3 * t / 8, t / 2, 0], [3, 4, 0]])], {"p": 2}, name="narrow_accumulation_p2")]


add_examples(op, VERSIONS, _narrow_examples)


# -- how it enters a generated graph -------------------------------------------------------
def _stable(ins, attrs, u):
    x = ins[0].wide
    if x.size == 0 or np.isnan(x).any():
        return True
    ax = int(attrs.get("axis", -1)) % x.ndim
    norm = np.abs(x).sum(axis=ax)
    return bool(np.all(norm > 1e-3))  # a norm near 0 makes the result jump to the defined 0


@op.fuzz(nan=NAN_IEEE, ulps=8.0, bound=lambda ref, ins, attrs: np.abs(np.nan_to_num(np.asarray(ref(*ins, **attrs), dtype=np.float64))) + 1.0,
         stable=_stable)
def fuzz(c: Ctx) -> Plan | None:
    taken = take_with_axis(c)
    if taken is None:
        return None
    x, axis = taken
    return Plan([x], {"axis": axis, "p": c.choice([2, 1])}, n_acc=x.shape[axis], n_outputs=1)
