"""LayerNormalization (ONNX spec: LayerNormalization-17, the only version).

Over ``normalized_axes = [axis, ..., rank - 1]`` (``axis`` default -1, range [-r, r)):
``Mean = ReduceMean(X)``, ``D = X - Mean``, ``Var = ReduceMean(D * D)``,
``InvStdDev = 1 / sqrt(Var + epsilon)``, ``Normalized = D * InvStdDev``, then
``Y = Normalized * Scale + B``; Scale and the optional B are unidirectionally broadcast to X.
Outputs: Y (type T, shape of X) and the optional Mean and InvStdDev, of shape
``[d[0], ..., d[axis-1], 1, ..., 1]`` and of type U = ``stash_type`` (default 1, float).

Precision. The spec says stage one "must happen" in the precision of ``stash_type``: by default
X is cast to float32, the statistics and Normalized are computed in float32 and Normalized is
cast back to T before the scale and shift. Our oracle computes everything in float64 and rounds
once per output: the float64 result is the value that computation approximates, and the
rounding errors of a float32 (or float16) evaluation depend on the order of its sums, which the
spec leaves to the implementation, so no single float32 evaluation is "the" answer; the
per-dtype tolerance covers those errors. Overflow is no matter of order: where the squared
deviations exceed float32's range (|x - mean| from about 1.8e19), any float32 stage one has
Var = inf, so InvStdDev = 0 and Y = B, which our oracle gives too (example stash_overflow, float32
X). Consequence for double inputs: a backend that follows
stash_type literally rounds stage one to float32, so LayerNormalization cases with float64 X
carry a float32-sized tolerance (see ``harness/data/tolerances.toml``).

The drawn cases keep the variance of every normalized group of two or more elements >= 0.25
(well conditioned) and draw stash_type 1 only (U = bfloat16 would make the spec's answer a
bfloat16 computation); the edge examples cover constant groups (``epsilon`` dominates: Y = B),
NaN and inf in a group (that group's outputs are NaN, the others unaffected), large float16
values (whose squares need the float32 stash), empty batches, every axis of a rank-3 X in both
spellings, and stash_type 16 (bfloat16) on rows that every precision normalizes exactly. ``epsilon`` is a FLOAT
attribute, so it is rounded to float32 first.
"""

from collections.abc import Callable

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, ROUNDOFF, Ctx, Plan, as_list
from harness.registry import Example, Operator

from .._accumulate_util import add_examples
from .._common import back, wide
from .._common import rounded_reach
from ._norm_util import scaled_bound, scaled_plan, stage_one_bound, stash_cast_point

op = Operator("LayerNormalization")
st = S.st


@op.reference(17)
def layer_normalization(x, scale, b=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    x = np.asarray(x)
    xw = wide(x)
    r = x.ndim
    axis = int(axis) + r if int(axis) < 0 else int(axis)
    axes = tuple(range(axis, r))
    n = int(np.prod(x.shape[axis:]))
    if n == 0:
        mean = np.full(x.shape[:axis] + (1,) * len(axes), np.nan)
        var = mean
    else:
        mean = xw.mean(axis=axes, keepdims=True)
        squares = (xw - mean) ** 2
        var = squares.mean(axis=axes, keepdims=True)
        # stage one happens in U: where the squared deviations overflow U (float32: |x - mean|
        # from about 1.8e19), every order of summing them gives Var = inf, so InvStdDev = 0 and
        # Normalized = D * 0 = +-0, Y = B (ONNX Runtime, onnx.reference and our kernels; a fuzz
        # campaign's graph [[-3.4e21, -0.65]] gave [-0, 0] where float64 gives [-0.92, 0.74])
        var = np.where(squares.sum(axis=axes, keepdims=True) > _stash_max(stash_type), np.inf, var)
    inv = 1.0 / np.sqrt(var + float(np.float32(epsilon)))
    y = (xw - mean) * inv * wide(scale)
    if b is not None:
        y = y + wide(b)
    u = S.np_dtype(S.label_of(int(stash_type)))
    return [back(y, x), back(mean, np.empty(0, u)), back(inv, np.empty(0, u))]


def _stash_max(stash_type) -> float:
    return S.finite_range(S.label_of(int(stash_type)))[1]


# a float64 X beyond float32's range with stash_type 1 (a PyTorch campaign: |x| = 6e169)
stash_cast_point(op, 17, layer_normalization, "Var overflows to inf, InvStdDev = 0 and Y = B", "PyTorch does")


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """Per output, how far an evaluation of the spec's function body lands from our value (float64,
    rounded once), element by element (``_norm_util.stage_one_bound`` and ``scaled_bound``): stage
    one (Mean, D, Var, InvStdDev, Normalized) rounded at the unit roundoff u_s of ``stash_type``
    ("must happen" in that precision: 2**-24 for float, 2**-8 for bfloat16) over the n elements of a
    group, |dN| <= gamma_n mean|x| InvStdDev + |N| (gamma_(n+5) / 2 + 4 u_s); then "Normalized
    is cast back to the original type of X" and Mul(Normalized, Scale), Add(., B) happen in T (u):
    |dY| <= |Scale| dN + 2u |N Scale| before the sum's rounding, then its rounding and ours
    (``_norm_util.scaled_bound``). Mean and InvStdDev
    are stage-one values in U = stash_type: within gamma_n mean|x| and (gamma_(n+5) / 2 + 2 u_s)
    InvStdDev before their last rounding to U, then that rounding and ours (``rounded_reach``)."""
    x, scale, b = (list(inputs) + [None] * 3)[:3]
    x = np.asarray(x)
    axis = int(attrs.get("axis", -1)) % max(x.ndim, 1)
    axes = tuple(range(axis, x.ndim))
    label_s = S.label_of(int(attrs.get("stash_type", 1)))
    norm, norm_err, mean, mean_err, inv, inv_err = stage_one_bound(wide(x), axes, float(attrs.get("epsilon", 1e-5)), label_s)
    s = np.broadcast_to(wide(np.asarray(scale)), x.shape)
    b = None if b is None else np.broadcast_to(wide(np.asarray(b)), x.shape)
    y_b = scaled_bound(norm, norm_err, s, b, x, 1 + (label_s != S.label_of(x.dtype)), False)
    like = np.empty(0, S.np_dtype(label_s))
    return [y_b, rounded_reach(mean, mean_err, like), rounded_reach(inv, inv_err, like)]


def _spread_groups(x, axis, dtype):
    """Every normalized group of >= 2 elements gets variance >= 0.25."""
    if x.size == 0:
        return x
    lead = int(np.prod(x.shape[:axis])) if axis else 1
    flat = x.astype(np.float64).reshape(lead, -1).copy()
    n = flat.shape[1]
    if n < 2 or flat.size == 0:
        return x
    pattern = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1 + np.arange(n) % 3)
    for g in range(lead):
        if flat[g].var() < 0.25:
            flat[g] = np.round(flat[g] * 0.25) + pattern
    return flat.reshape(x.shape).astype(S.np_dtype(dtype))


def _param_shape(d, x_shape, axis):
    """A shape unidirectionally broadcastable to X: mostly the normalized shape."""
    norm = x_shape[axis:]
    kind = d(st.integers(0, 9))
    if kind == 5 and len(norm) > 1:
        return norm[d(st.integers(1, len(norm) - 1)):]       # a suffix
    if kind == 7:
        return tuple(1 if d(st.booleans()) else s for s in norm)  # some dims 1
    if kind == 8:
        return tuple(x_shape)                                  # the whole shape of X
    return tuple(norm)


@op.strategy(17)
def draw(d, dtype, opset):
    rank = d(st.sampled_from([2, 3, 1, 4]))
    shape = S.shapes(d, rank, rank, 0 if d(st.integers(0, 11)) == 5 else 1, 5)
    axis = d(st.integers(0, rank - 1))
    # an empty dimension only before axis: the mean of an empty group is not defined
    shape = shape[:axis] + tuple(max(1, s) for s in shape[axis:])
    x = S.arrays(d, dtype, shape=shape, lo=-4, hi=4)
    x = _spread_groups(x, axis, dtype)
    attrs = {}
    if axis != rank - 1 or d(st.booleans()):
        attrs["axis"] = axis - rank if d(st.booleans()) else axis
    if d(st.booleans()):
        # epsilon 0 only where every group has two or more elements (so variance >= 0.25)
        eps = [1e-5, 1e-3, 0.1, 1e-2] + ([0.0] if int(np.prod(shape[axis:])) >= 2 else [])
        attrs["epsilon"] = d(st.sampled_from(eps))
    if d(st.integers(0, 3)) == 1:
        attrs["stash_type"] = 1
    scale = S.arrays(d, dtype, shape=_param_shape(d, shape, axis), lo=-2, hi=2)
    ins = [x, scale]
    if d(st.integers(0, 2)):
        ins.append(S.arrays(d, dtype, shape=_param_shape(d, shape, axis), lo=-2, hi=2))
    return Example(ins, attrs, outputs=d(st.sampled_from([1, 3, 2])))


@op.edges(17)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    a = lambda v: np.array(v, dtype=np.float64).astype(t)
    x = a(np.arange(24).reshape(2, 3, 4) % 7 - 3)
    nan_x = a([[1.0, 2.0, 3.0, 4.0], [1.0, np.nan, 3.0, 4.0], [1.0, np.inf, 3.0, 4.0], [-1.0, 0.0, 1.0, 2.0]])
    s4, b4 = a([1.0, -0.5, 2.0, 0.25]), a([0.0, 1.0, -1.0, 0.5])
    out = [
        Example([x, a(np.ones(4)), a(np.zeros(4))], name="plain", outputs=3),
        Example([a(np.full((2, 4), 1.5)), s4, b4], name="epsilon_dominated", outputs=3),
        Example([a([[0.0, 0.01, 0.0, 0.01]]), s4, b4], {"epsilon": 0.1}, name="epsilon_large", outputs=3),
        Example([nan_x, s4, b4], name="nan_inf_in_row", outputs=3),
        Example([x, a(np.ones((3, 4))), a(np.zeros((3, 4)))], {"axis": 1}, name="axis_1", outputs=3),
        Example([x, a(np.full((2, 3, 4), 0.5))], {"axis": 0}, name="axis_0_no_bias", outputs=3),
        Example([x, a([[2.0], [1.0], [-1.0]]), a([1.0, 0.0, 0.0, -1.0])], {"axis": -2}, name="broadcast_scale_bias", outputs=3),
        Example([x, a(2.0), a(0.5)], {"axis": -2, "stash_type": 1}, name="scalar_scale_bias", outputs=3),
        Example([a([[30000.0, -30000.0, 0.0, 100.0]]), s4, b4], name="large_values", outputs=3),
        Example([a(np.zeros((0, 4))), s4, b4], name="empty_batch", outputs=3),
        *([Example([a([[-3.4e21, -0.65, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]), s4, b4], name="stash_overflow", outputs=3)]
          if dtype == "float32" else []),
        # a float64 value beyond float32's range, stash_type 1 (LayerNormalization.stash_cast)
        *([Example([a([[6e169, -0.65, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]), s4, b4], name="stash_cast", outputs=3)]
          if dtype == "float64" else []),
        Example([a([[-0.0, 0.0, -0.0, 0.0], [S.smallest_subnormal(dtype), 0.0, -S.smallest_subnormal(dtype), 0.0]]), s4, b4],
                name="signed_zero_subnormal_rows", outputs=3),
        Example([a([[3.0], [-2.0]]), a([2.0]), a([1.0])], name="single_element_groups", outputs=3),
        Example([x, a(np.ones(4))], name="y_and_mean", outputs=2),
    ]
    # every axis of a rank-3 X, both spellings (1, 0 and -2 are above)
    for axis, name in ((2, "axis_2"), (-1, "axis_minus1"), (-3, "axis_minus3")):
        out.append(Example([x, a(np.full(x.shape[axis:], 0.5)), a(np.full(x.shape[axis:], 0.25))], {"axis": axis}, name=name, outputs=3))
    # stash_type 16: Mean and InvStdDev in bfloat16, stage one in bfloat16 precision; the rows have
    # mean 0 or 1 and variance 1 (epsilon 0), so every precision computes them exactly
    exact = a([[-1.0, 1.0, -1.0, 1.0], [0.0, 2.0, 2.0, 0.0]])
    out.append(Example([exact, s4, b4], {"stash_type": 16, "epsilon": 0.0}, name="stash_bfloat16", outputs=3))
    return out


# -- how it enters a generated graph -------------------------------------------------------
def layernorm_bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    """max|x| * InvStdDev * |Scale| + |B| + |Y|: an implementation's Mean is off by about
    n * u * max|x|, and D * InvStdDev * Scale amplifies that; in a (near-)constant group
    InvStdDev approaches 1/sqrt(epsilon), so Y = B exactly while a correct float32 evaluation
    is off by ~1e-5 (the node is then skipped as ill-conditioned)."""
    x = np.nan_to_num(ins[0])
    axis = int(attrs.get("axis", -1)) % x.ndim
    axes = tuple(range(axis, x.ndim))
    inv = 1.0 / np.sqrt(np.var(x, axis=axes, keepdims=True) + attrs.get("epsilon", 1e-5))
    b = np.max(np.abs(x), axis=axes, keepdims=True) * inv * np.abs(ins[1])
    if len(ins) > 2 and ins[2] is not None:
        b = b + np.abs(ins[2])
    return b + np.abs(np.asarray(as_list(ref(*ins, **attrs))[0], dtype=np.float64))


@op.fuzz(nan=NAN_ASSUMED, ulps=16.0, type_param="T", compute_u=ROUNDOFF["float32"],
         bound=layernorm_bound)
def fuzz(c: Ctx) -> Plan | None:
    return scaled_plan(c, bias=True)


# -- accumulation width (issue 32): stage one happens in stash_type (float32 by default), so a float16 row whose
# sum or sum of squares overflows float16 still normalizes exactly (a separate example set)
def _narrow_examples(dtype, since):
    if dtype != "float16":
        return []
    t = 2.0 ** 15
    a = lambda v: np.array(v, dtype=np.float64).astype(np.float16)  # noqa: E731
    x = a([[t, t, t / 2, t / 2], [-t / 2, t / 2, -t / 2, t / 2], [1, 2, 3, 4]])
    return [Example([x, a([2.0] * 4), a([0.5] * 4)], name="narrow_accumulation", outputs=3)]


add_examples(op, (17,), _narrow_examples)
