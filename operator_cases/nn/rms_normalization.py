"""RMSNormalization (ONNX spec: RMSNormalization-23, the only version).

Over ``normalized_axes = [axis, ..., rank - 1]`` (``axis`` default -1, "allowed range is [-r, r)"):
``XSquaredMean = ReduceMean(X * X)``, ``RMS = Sqrt(XSquaredMean + epsilon)``,
``Normalized = X / RMS``, then ``Y = Normalized * Scale``, Scale (type V) "unidirectional
broadcastable to tensor X"; Y is of type V and X's shape.

"Depending on stash_type attribute, the actual computation must happen in different
floating-point precision. For example, if stash_type is 1, this operator casts all input
variables to 32-bit float, perform the computation, and finally cast Normalized back to the
original type of X": our oracle computes stage one in float64, rounds Normalized to X's type
(the spec's cast), multiplies by Scale in float64 and rounds once to V (see ``_norm_util``). The
drawn cases use stash_type 1 (the default) and, at the edges, 11 (double); a float16 or bfloat16
stash would make the answer a low-precision computation whose rounding depends on the order of
its sums.

The edges cover all-zero groups (epsilon dominates: Y = 0), NaN and infinities (their group is
NaN: inf / inf), -0.0 and subnormals, every axis (negative too), a Scale of each broadcastable
shape and an empty batch. The schema lets Scale and Y (type V) differ from X (type T), but
the text's ``Mul(Normalized, Scale)`` of a T and a V value is no valid ONNX node when they differ
(ONNX Runtime rejects such a model, onnx.reference returns type T): the cases keep V = T.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, ROUNDOFF, Ctx, Plan
from harness.registry import Example, Operator

from .._accumulate_util import add_examples
from .._common import back, wide
from ._norm_util import arr, draw_epsilon, f32, scaled_plan, stash_cast_point, standardized_bound

op = Operator("RMSNormalization")
st = S.st


@op.reference(23)
def rms_normalization(x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    x = np.asarray(x)
    xw = wide(x)
    r = x.ndim
    axes = tuple(range(int(axis) % r, r))
    with np.errstate(all="ignore"):
        rms = np.sqrt((xw * xw).mean(axis=axes, keepdims=True) + f32(epsilon)) if x.size else np.ones((1,) * r)
        # stage one happens in stash_type: where the squares overflow it (float32 from |x| about
        # 1.8e19) every order of summing them gives RMS = inf and Normalized = X / inf = +-0 (the
        # kernel engine; a kernel campaign's graph [[-0.71, -5.8e21]] gave [-0, -0])
        if x.size:
            top = S.finite_range(S.label_of(int(stash_type)))[1]
            rms = np.where((xw * xw).sum(axis=axes, keepdims=True) > top, np.inf, rms)
        normalized = wide(back(xw / rms, x))  # "cast Normalized back to the original type of X"
        return back(normalized * wide(np.asarray(scale)), np.asarray(scale))


def _scale_shape(d, shape, axis):
    norm = shape[axis:]
    kind = d(st.integers(0, 7))
    if kind == 5 and len(norm) > 1:
        return norm[d(st.integers(1, len(norm) - 1)):]
    if kind == 6:
        return tuple(1 if d(st.booleans()) else s for s in norm)
    return tuple(norm)


@op.strategy(23)
def draw(d, dtype, opset):
    rank = d(st.sampled_from([2, 3, 1, 4]))
    shape = S.shapes(d, rank, rank, 1, 4)
    axis = d(st.integers(0, rank - 1))
    x = S.arrays(d, dtype, shape=shape, lo=-4, hi=4)
    lead = int(np.prod(shape[:axis])) if axis else 1
    flat = x.astype(np.float64).reshape(lead, -1)
    flat[np.abs(flat).max(axis=1) < 0.5, 0] = 1.0  # every group's RMS well away from 0
    x = flat.reshape(shape).astype(x.dtype)
    attrs = {}
    if axis != rank - 1 or d(st.booleans()):
        attrs["axis"] = axis - rank if d(st.booleans()) else axis
    draw_epsilon(d, attrs, positive_only=True)
    if d(st.integers(0, 3)) == 0:
        attrs["stash_type"] = 1
    return Example([x, S.arrays(d, dtype, shape=_scale_shape(d, shape, axis), lo=-2, hi=2)], attrs)


@op.edges(23)
def edges(dtype, opset):
    a = arr(dtype)
    x = a(np.arange(24).reshape(2, 3, 4) % 7 - 3)
    s4 = a([1.0, -0.5, 2.0, 0.25])
    tiny = S.smallest_subnormal(dtype)
    out = [
        Example([x, s4], name="plain"),
        Example([a([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]), s4], name="zero_group"),
        Example([a([[1.0, np.nan, 3.0, 4.0], [1.0, np.inf, 3.0, 4.0], [-np.inf, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]), s4],
                name="nan_inf_in_row"),
        Example([a([[-0.0, 0.0, -0.0, 0.0], [tiny, 0.0, -tiny, 2 * tiny]]), s4], name="signed_zero_subnormal_rows"),
        Example([a([[-0.0, 1.0, -0.0, 0.0]]), s4], {"epsilon": 0.0}, name="neg_zero_no_epsilon"),
        Example([x, a(np.ones((3, 4)))], {"axis": 1}, name="axis_1"),
        Example([x, a(np.full((2, 3, 4), 0.5))], {"axis": 0}, name="axis_0"),
        Example([x, a([[2.0], [1.0], [-1.0]])], {"axis": -2}, name="axis_neg2_broadcast_scale"),
        Example([x, a(3.0)], {"axis": -1, "epsilon": 0.5}, name="scalar_scale_epsilon"),
        Example([x, s4], {"stash_type": 11}, name="stash_double"),
        Example([a(np.zeros((0, 4))), s4], name="empty_batch"),
        *([Example([a([[-0.71, -5.8e21, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]), s4], name="stash_overflow")] if dtype == "float32" else []),
        # a float64 value beyond float32's range, stash_type 1 (RMSNormalization.stash_cast)
        *([Example([a([[-1.02, -7.9e169, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]), s4], name="stash_cast")] if dtype == "float64" else []),
    ]
    return out


def _axes(x, attrs):
    return tuple(range(int(attrs.get("axis", -1)) % x.ndim, x.ndim))


# a float64 X beyond float32's range with stash_type 1 (a kernel campaign: [[-1.02, -7.9e169]])
stash_cast_point(op, 23, rms_normalization, "RMS overflows to inf and Normalized = X / inf = +-0", "the kernel engine and PyTorch do")


def _scale(ins, x):
    return np.abs(np.asarray(ins[1], dtype=np.float64)).max()


def _stable(ins, attrs, u):
    x = ins[0].wide
    if x.size == 0 or np.isnan(x).any():
        return True
    rms = np.sqrt(np.mean(x * x, axis=_axes(x, attrs)))
    return bool(np.all(rms > 1e-3))


# -- how it enters a generated graph -------------------------------------------------------
# compute_u: stage one happens in stash_type, float32 by default, so a float64 graph's value
# carries float32 rounding (the spec's literal computation, as tolerances.toml says for the cases)
@op.fuzz(nan=NAN_IEEE, ulps=16.0, bound=standardized_bound(_axes, _scale), stable=_stable, type_param="T",
         compute_u=ROUNDOFF["float32"])
def fuzz(c: Ctx) -> Plan | None:
    return scaled_plan(c, bias=False)


# -- accumulation width (issue 32): the computation happens in stash_type (float32 by default), so a float16
# row whose sum of squares overflows float16 still normalizes exactly
def _narrow_examples(dtype, since):
    if dtype != "float16":
        return []
    t, a = 2.0 ** 15, arr(dtype)
    return [Example([a([[3 * t / 8, t / 2, 0.0], [3.0, 4.0, 0.0]]), a([2.0, 2.0, 2.0])], name="narrow_accumulation")]


add_examples(op, (23,), _narrow_examples)
