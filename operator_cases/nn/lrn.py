"""LRN, local response normalization across channels (ONNX spec: LRN-1, 13).

For X of shape (N x C x D1 ... Dk), element (n, c, d...) sums the squares of the channels
``max(0, c - floor((size - 1) / 2)) <= i <= min(C - 1, c + ceil((size - 1) / 2))`` (so an even
``size`` reaches one channel further up than down), and
``Y = X / (bias + alpha / size * square_sum) ^ beta``.

LRN-13 only adds bfloat16. ``alpha``, ``beta`` and ``bias`` are FLOATs (rounded to float32 first).
Evaluated in float64 and rounded once. NaN and infinities follow IEEE arithmetic: an infinite
element makes its own output inf / inf = NaN and its neighbours' x / inf = 0 (beta > 0).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._common import back, wide
from ._norm_util import arr, f32, specials

op = Operator("LRN")
st = S.st
VERSIONS = (1, 13)


@op.reference(*VERSIONS)
def lrn(x, *, size, alpha=1e-4, beta=0.75, bias=1.0):
    x = np.asarray(x)
    xw = wide(x)
    size = int(size)
    c = x.shape[1]
    down, up = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = xw * xw
    total = np.zeros(x.shape)
    for ch in range(c):
        total[:, ch] = sq[:, max(0, ch - down):min(c - 1, ch + up) + 1].sum(axis=1)
    with np.errstate(all="ignore"):
        return back(xw / (f32(bias) + f32(alpha) / size * total) ** f32(beta), x)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    rank = d(st.sampled_from([4, 3, 4, 5]))
    shape = (d(st.integers(1, 2)), d(st.integers(1, 6))) + tuple(d(st.integers(1, 3)) for _ in range(rank - 2))
    attrs = {"size": d(st.integers(1, 6))}
    if d(st.booleans()):
        attrs["alpha"] = d(st.sampled_from([1e-4, 0.5, 1.0, 2e-2]))
    if d(st.booleans()):
        attrs["beta"] = d(st.sampled_from([0.75, 0.5, 1.0, 2.0, 0.0]))
    if d(st.booleans()):
        attrs["bias"] = d(st.sampled_from([1.0, 2.0, 0.5]))
    return Example([S.arrays(d, dtype, shape=shape, lo=-4, hi=4)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    a = arr(dtype)
    sp = specials(dtype, (2, 5, 2, 2))
    strong = {"alpha": 1.0, "beta": 0.75, "bias": 1.0}
    out = [Example([v], {"size": 3, **strong}, name=k) for k, v in sp.items()]
    out += [
        Example([sp["plain"]], {"size": 2, **strong}, name="even_size"),
        Example([sp["plain"]], {"size": 4, "alpha": 0.5, "beta": 0.5, "bias": 2.0}, name="even_size_4"),
        Example([sp["plain"]], {"size": 1, "alpha": 0.5, "beta": 1.0}, name="size_1"),
        Example([sp["plain"]], {"size": 11, **strong}, name="size_beyond_channels"),
        Example([sp["plain"]], {"size": 3, "beta": 0.0}, name="beta_0"),
        Example([sp["plain"]], {"size": 3}, name="defaults"),
        Example([a(np.zeros((1, 3, 2)))], {"size": 3, "bias": 0.0, "alpha": 1.0}, name="zero_bias_zero_input"),
        Example([sp["plain"].reshape(2, 5, 4)], {"size": 5, **strong}, name="rank3"),
        Example([sp["plain"].reshape(2, 5, 2, 1, 2)], {"size": 3, **strong}, name="rank5"),
        Example([a(np.zeros((0, 5, 2, 2)))], {"size": 3}, name="empty_batch"),
    ]
    return out


def _bound(ref, ins, attrs):
    return np.abs(np.nan_to_num(ins[0])) + np.abs(np.nan_to_num(np.asarray(ref(*ins, **attrs), dtype=np.float64)))


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=8.0, bound=_bound)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 3 and v.size > 0)
    if x is None:
        return None
    attrs = {"size": 1 + c.pick(5), "alpha": c.choice([1e-4, 0.5]), "beta": c.choice([0.75, 0.5]), "bias": c.choice([1.0, 2.0])}
    return Plan([x], attrs, n_acc=attrs["size"], n_outputs=1)
