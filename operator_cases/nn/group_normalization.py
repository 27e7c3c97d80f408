"""GroupNormalization (ONNX spec: GroupNormalization-18, 21).

"y = scale * (x - mean) / sqrt(variance + epsilon) + bias, where the mean and variance are
computed per instance per group of channels": X is (N x C x D1 ... Dn), its C channels split into
``num_groups`` consecutive groups of C / num_groups channels ("It should be a divisor of the
number of channels C"), and the statistics of (n, group) are taken over those channels and all of
D1..Dn (population variance).

Versions: GroupNormalization-18 has "scale and bias should be specified for each group of
channels": Scale and Bias of shape (num_groups), group g's values applied to its channels.
GroupNormalization-21 changes them to "specified for each channel": shape (C); and adds
``stash_type``: "the first stage normalizes the elements to have zero mean and unit variance ...
The floating-point precision used in the first stage is determined by the stash_type attribute
... casts the normalized results back to the original type of X. The second stage does not depend
on stash_type": we round the normalized values to X's type, then scale and shift (see
``_norm_util``). The drawn cases use stash_type 1 (float32, the default) and, at the edges, 11
(double); a float16 or bfloat16 stash would make the answer a low-precision computation whose
rounding depends on the order of its sums.

Drawn groups have a variance >= 0.25; the edges add a constant group (epsilon dominates: y =
bias), NaN and infinities (their group is NaN), subnormals, num_groups 1 (LayerNormalization
over C, D1..Dn) and num_groups = C (InstanceNormalization), rank 2 and an empty batch.
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import ROUNDOFF
from harness.registry import Example, Operator

from .._accumulate_util import add_examples
from .._common import back, wide
from ._norm_util import (arr, channel_norm_template, channel_param, draw_epsilon, scaled_bound, specials, spread,
                         stage_one_bound, standardize)

op = Operator("GroupNormalization")
st = S.st
VERSIONS = (18, 21)


def normalized(x, num_groups, epsilon, stash_max: float | None = None):
    """Stage one; ``stash_max``: the largest finite value of stash_type, in which stage one
    happens (version 21): where a group's squared deviations overflow it, every order of summing
    them gives a variance of inf, so the normalized values are D * 0 = +-0 (ONNX Runtime and
    onnx.reference on a float32 group [3e19, -2e19, 1, 2.5e19, 0.5, -1]; float64 normalizes it)."""
    x = np.asarray(x)
    n, c = x.shape[:2]
    g = int(num_groups)
    grouped = wide(x).reshape((n, g, (c // g) * int(np.prod(x.shape[2:]))))
    y = standardize(grouped, (2,), epsilon)
    if stash_max is not None and grouped.size:
        with np.errstate(all="ignore"):
            d = grouped - grouped.mean(axis=2, keepdims=True)
            y = np.where((d * d).sum(axis=2, keepdims=True) > stash_max, d * 0.0, y)
    return y.reshape(x.shape)


@op.reference(18)
def group_normalization_18(x, scale, bias, *, num_groups, epsilon=1e-5):
    x = np.asarray(x)
    per = x.shape[1] // int(num_groups)
    s, b = (np.repeat(wide(np.asarray(p)).reshape(-1), per) for p in (scale, bias))
    return back(normalized(x, num_groups, epsilon) * channel_param(s, x.ndim) + channel_param(b, x.ndim), x)


@op.reference(21)
def group_normalization_21(x, scale, bias, *, num_groups, epsilon=1e-5, stash_type=1):
    x = np.asarray(x)
    stash_max = S.finite_range(S.label_of(int(stash_type)))[1]
    stage_one = wide(back(normalized(x, num_groups, epsilon, stash_max), x))  # "casts the normalized results back"
    return back(stage_one * channel_param(scale, x.ndim) + channel_param(bias, x.ndim), x)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """How far an evaluation of the spec's computation lands from our value (float64, rounded once),
    element by element (``_norm_util.stage_one_bound`` and ``scaled_bound``): the first stage over
    the n = (C / num_groups) * D1 * ... * Dn elements of a group, every step rounded at u_s ("The
    floating-point precision used in the first stage is determined by the stash_type attribute",
    version 21, default float: 2**-24; version 18's function body computes in T), so
    |dN| <= gamma_n mean|x| InvStdDev + |N| (gamma_(n+5) / 2 + 4 u_s); version 21 "casts the
    normalized results back to the original type of X" and "the second stage does not depend on
    stash_type": scale and bias in T (u), |dY| <= |scale| dN + 3u |N scale| before the sum's
    rounding (the backend's cast and product, our own cast), then its rounding and ours
    (``_norm_util.scaled_bound``)."""
    x, scale, bias = inputs[:3]
    x = np.asarray(x)
    g = int(attrs["num_groups"])
    label_s = S.label_of(int(attrs.get("stash_type", 1))) if since >= 21 else S.label_of(x.dtype)
    n, c = x.shape[:2]
    if x.size == 0 or c % g:
        return [np.zeros(x.shape)]
    grouped = wide(x).reshape((n, g, -1))
    norm, norm_err = (a.reshape(x.shape) for a in stage_one_bound(grouped, (2,), float(attrs.get("epsilon", 1e-5)), label_s)[:2])
    s = wide(np.asarray(scale)).reshape(-1)
    s = np.repeat(s, c // g) if since < 21 else s
    b = wide(np.asarray(bias)).reshape(-1)
    b = np.repeat(b, c // g) if since < 21 else b
    cast = since >= 21  # "casts the normalized results back to the original type of X", and so do we
    return [scaled_bound(norm, norm_err, channel_param(s, x.ndim), channel_param(b, x.ndim), x, 1 + 2 * cast, cast)]


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("GroupNormalization", opset).since_version
    rank = d(st.sampled_from([4, 3, 2]))
    n = d(st.integers(1, 2))
    groups = d(st.integers(1, 3))
    c = groups * d(st.integers(1, 3))
    spatial = [d(st.integers(1, 3)) for _ in range(rank - 2)]
    shape = (n, c, *spatial)
    x = S.arrays(d, dtype, shape=shape, lo=-4, hi=4)
    x = spread(x.reshape(n, groups, -1), (2,), dtype).reshape(shape)
    attrs = {"num_groups": groups}
    draw_epsilon(d, attrs)
    p = groups if since == 18 else c
    if since >= 21 and d(st.integers(0, 3)) == 0:
        attrs["stash_type"] = 1
    return Example([x, S.arrays(d, dtype, shape=(p,), lo=-2, hi=2), S.arrays(d, dtype, shape=(p,), lo=-2, hi=2)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("GroupNormalization", opset).since_version
    a = arr(dtype)
    sp = specials(dtype, (2, 4, 3))
    per_group = since == 18

    def params(groups, c=4):
        k = groups if per_group else c
        return [a((np.arange(k) % 3 - 1) * 0.5 + 1.0), a(np.arange(k) % 2 - 0.5)]

    out = [Example([v, *params(2)], {"num_groups": 2}, name=k) for k, v in sp.items()]
    out += [
        Example([sp["plain"], *params(1)], {"num_groups": 1}, name="one_group"),
        Example([sp["plain"], *params(4)], {"num_groups": 4, "epsilon": 0.25}, name="group_per_channel"),
        Example([sp["plain"][:, :, 0].copy(), *params(2)], {"num_groups": 2}, name="rank2"),
        Example([sp["plain"].reshape(2, 4, 3, 1, 1), *params(2)], {"num_groups": 2}, name="rank5"),
        Example([a(np.zeros((0, 4, 3))), *params(2)], {"num_groups": 2}, name="empty_batch"),
    ]
    if since >= 21:
        out.append(Example([sp["plain"], *params(2)], {"num_groups": 2, "stash_type": 11}, name="stash_double"))
    return out


def _axes(x, attrs):
    # the generated graphs use one group (statistics over C, D1..Dn) or one per channel (over D1..Dn)
    return tuple(range(1 if attrs["num_groups"] == 1 else 2, x.ndim))


def _build(c, x):
    if c.since == 18:
        return None  # deprecated in onnx 1.23: the checker refuses GroupNormalization-18 in a graph
    ch = x.shape[1]
    g = c.choice([1, ch])
    k = g if c.since < 21 else ch
    return [x, c.const(c.floats((k,), 0.5, 1.5)), c.const(c.floats((k,)))], {"num_groups": g, "epsilon": c.choice([1e-5, 1e-2])}


# how it enters a generated graph (harness.suites.generated); compute_u: GroupNormalization-21's stage
# one happens in stash_type, float32 by default, so a float64 graph's value carries float32 rounding
# (as tolerances.toml says for the cases; version 18 computes in the input type, which this covers too)
channel_norm_template(op, axes_of=_axes, build=_build, compute_u=ROUNDOFF["float32"])


# -- accumulation width (issue 32): GroupNormalization-21's first stage happens in stash_type (float32 by
# default), so a float16 group whose sum or sum of squares overflows float16 still normalizes exactly
def _narrow_examples(dtype, since):
    if dtype != "float16":
        return []
    t, a = 2.0 ** 15, arr(dtype)
    x = a([[[t, t], [t / 2, t / 2], [-t / 2, t / 2], [-t / 2, t / 2], [1, 2], [3, 4]]])
    return [Example([x, a([2.0] * 6), a([0.5] * 6)], {"num_groups": 3}, name="narrow_accumulation")]


add_examples(op, (21,), _narrow_examples)
