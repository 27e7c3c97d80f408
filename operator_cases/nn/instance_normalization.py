"""InstanceNormalization (ONNX spec: InstanceNormalization-1, 6, 22).

"y = scale * (x - mean) / sqrt(variance + epsilon) + B, where mean and variance are computed per
instance per channel": over the spatial axes D1..Dn of each (n, c), with the population variance;
scale and B have size C.

Versions: InstanceNormalization-1 takes "The input 4-dimensional tensor of shape NCHW" (and the
legacy ``consumed_inputs``, no effect on values); InstanceNormalization-6 takes (N x C x D1 ... Dn);
InstanceNormalization-22 adds bfloat16.

Evaluated in float64 and rounded once (see ``_norm_util``). Drawn channels have a variance >= 0.25;
the edge examples add a constant channel (epsilon dominates: y = B), a single spatial cell (the
same), NaN and infinities (their channel is NaN, the others unaffected), -0.0 and subnormals (the
variance underflows in the input type but not in float64, where epsilon still dominates) and an
empty batch.

Accumulation width (spec-silent point ``InstanceNormalization.narrow_accumulation``): in float16
and bfloat16 a channel whose sum or sum of squares overflows the type while y is representable
(the ``narrow_accumulation`` example set) is ours in float64; statistics accumulated in the input
type give NaN (the mean overflowed) or B (the variance did: (x - mean) / inf), a reading computed
here (``_accumulate_util``).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._accumulate_util import NARROW, EXPECTED, add_examples, finite_is_ours_or, narrow_spec, standardized_in_type, top
from .._common import back, wide
from ._norm_util import (arr, channel_norm_template, channel_param, draw_epsilon, scaled_bound, specials, spread, stage_one_bound,
                         standardize)

op = Operator("InstanceNormalization")
st = S.st
VERSIONS = (1, 6, 22)


@op.reference(*VERSIONS)
def instance_normalization(x, scale, b, *, epsilon=1e-5, consumed_inputs=None):
    x = np.asarray(x)
    y = standardize(wide(x), tuple(range(2, x.ndim)), epsilon) * channel_param(scale, x.ndim) + channel_param(b, x.ndim)
    return back(y, x)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """How far an evaluation in the input type lands from our value (float64, rounded once), element
    by element: the spec names no precision for the statistics ("mean and variance are computed per
    instance per channel"), so every step may round in T (u_s = u: 2**-11 for float16, 2**-8 for
    bfloat16) over the n = D1 * ... * Dn elements of a channel (``_norm_util.stage_one_bound``):
    |dN| <= gamma_n mean|x| InvStdDev + |N| (gamma_(n+5) / 2 + 4u); then scale and B:
    |dY| <= |scale| dN + u |N scale| before the sum's rounding, then its rounding and ours
    (``_norm_util.scaled_bound``)."""
    x, scale, b = inputs[:3]
    x = np.asarray(x)
    if x.size == 0:
        return [np.zeros(x.shape)]
    norm, norm_err = stage_one_bound(wide(x), tuple(range(2, x.ndim)), float(attrs.get("epsilon", 1e-5)), S.label_of(x.dtype))[:2]
    return [scaled_bound(norm, norm_err, channel_param(scale, x.ndim), channel_param(b, x.ndim), x, 1, False)]


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("InstanceNormalization", opset).since_version
    rank = 4 if since == 1 else d(st.sampled_from([4, 3, 5]))
    n, c = d(st.integers(1, 2)), d(st.integers(1, 4))
    spatial = [d(st.integers(1, 4)) for _ in range(rank - 2)]
    if int(np.prod(spatial)) < 2:
        spatial[-1] = 2
    shape = (n, c, *spatial)
    x = spread(S.arrays(d, dtype, shape=shape, lo=-4, hi=4), tuple(range(2, rank)), dtype)
    attrs = {}
    draw_epsilon(d, attrs)
    return Example([x, S.arrays(d, dtype, shape=(c,), lo=-2, hi=2), S.arrays(d, dtype, shape=(c,), lo=-2, hi=2)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("InstanceNormalization", opset).since_version
    a = arr(dtype)
    sp = specials(dtype, (2, 3, 2, 2))
    s3, b3 = a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0])
    out = [Example([v, s3, b3], name=k) for k, v in sp.items()]
    out += [
        Example([sp["plain"], s3, b3], {"epsilon": 0.5}, name="epsilon_large"),
        Example([a(np.arange(6).reshape(2, 3, 1, 1)), s3, b3], name="single_cell"),
        Example([a(np.zeros((0, 3, 2, 2))), s3, b3], name="empty_batch"),
    ]
    if since >= 6:
        out += [
            Example([sp["plain"].reshape(2, 3, 4), s3, b3], name="rank3"),
            Example([sp["plain"].reshape(1, 3, 2, 2, 2), s3, b3], name="rank5"),
        ]
    return out


def _axes(x, attrs):
    return tuple(range(2, x.ndim))


def _narrow(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if S.label_of(x.dtype) not in NARROW or x.size == 0:
        return [None]
    eps = attrs.get("epsilon", 1e-5)
    over = standardized_in_type(x, _axes(x, attrs), eps)[1] | standardized_in_type(x, _axes(x, attrs), eps, wide_mean=True)[1]
    finite = np.all(np.isfinite(x.astype(np.float64)), axis=_axes(x, attrs), keepdims=True)  # an inf or NaN input is IEEE's
    return [np.broadcast_to(over & finite, x.shape)]


def _in_type(wide_mean):
    def reading(c):
        x = np.asarray(c.inputs[0])
        y, _ = standardized_in_type(x, _axes(x, c.attrs), c.attrs.get("epsilon", 1e-5), wide_mean)
        s, b = (channel_param(np.asarray(v), x.ndim).astype(np.float64) for v in c.inputs[1:3])
        with np.errstate(all="ignore"):
            return [((y.astype(np.float64) * s).astype(x.dtype).astype(np.float64) + b).astype(x.dtype)]

    return reading


op.spec_silent(
    "narrow_accumulation", VERSIONS, spec=narrow_spec(op, VERSIONS), expected=EXPECTED, where=_narrow,
    invariants={"a finite value there is ours or B (x - mean divided by an overflowed standard deviation)":
                lambda c: finite_is_ours_or(c, channel_param(np.asarray(c.inputs[2]), np.ndim(c.inputs[0])))},
    readings={"statistics accumulated in the input type, left to right": _in_type(False),
              "the mean accumulated wide, the squared deviations summed in the input type (numpy's float16 mean and var)": _in_type(True)})


def _narrow_examples(dtype, since):
    """Channel 0's sum overflows the type, channel 1's sum of squares, channel 2 neither."""
    if dtype not in NARROW:
        return []
    t, a = top(dtype), arr(dtype)
    x = a([[[t, t], [t / 2, t / 2]], [[-t / 2, t / 2], [-t / 2, t / 2]], [[1, 2], [3, 4]]])[None]
    return [Example([x, a([2.0, 2.0, 1.0]), a([0.5, 0.5, 0.0])], name="narrow_accumulation")]


add_examples(op, VERSIONS, _narrow_examples)


def _build(c, x):
    ch = x.shape[1]
    return [x, c.const(c.floats((ch,), 0.5, 1.5)), c.const(c.floats((ch,)))], {"epsilon": c.choice([1e-5, 1e-2])}


# how it enters a generated graph (harness.suites.generated)
channel_norm_template(op, axes_of=_axes, build=_build)
