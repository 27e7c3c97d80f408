"""RotaryEmbedding: rotary positional embeddings (ONNX spec: RotaryEmbedding-23).

The input is brought to (batch, sequence, heads, head_size): a 4-D X is (batch, heads,
sequence, head_size), a 3-D X is (batch, sequence, num_heads * head_size) with ``num_heads``
required. The first ``rotary_embedding_dim`` values of each head (0: all of them) are rotated,
the rest copied. The cos/sin caches are indexed by ``position_ids`` (``cache[position_ids]``,
caches (max_position_id_plus_1, dim/2)) or, without position_ids, are already (batch, sequence,
dim/2). The rotated part splits into x1, x2 (halves, or the even and odd elements when
``interleaved``); ``real = cos*x1 - sin*x2``, ``imag = sin*x1 + cos*x2`` are written back in
the same layout. Evaluated in float64, rounded once to T.

Spec-silent: none of ours. NaN and infinities go through the products and sums of the spec's
formula by IEEE 754 (inf * 0 is NaN), which fixes the result.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from .._common import back, wide

op = Operator("RotaryEmbedding")
st = S.st


def rotary(X, cos_cache, sin_cache, position_ids=None, *, interleaved=0, num_heads=0, rotary_embedding_dim=0):
    x = wide(np.asarray(X))
    if x.ndim == 4:
        x = x.transpose(0, 2, 1, 3)
    elif x.ndim == 3:
        if not num_heads or x.shape[2] % int(num_heads):
            raise ValueError(f"3-D input of hidden size {x.shape[2]} needs num_heads dividing it (got {num_heads})")
        x = x.reshape(x.shape[0], x.shape[1], int(num_heads), x.shape[2] // int(num_heads))
    else:
        raise ValueError(f"X of rank {x.ndim}: 3-D or 4-D")
    head = x.shape[3]
    dim = int(rotary_embedding_dim) or head
    if dim % 2 or dim > head:
        raise ValueError(f"rotary_embedding_dim {dim} must be even and at most head_size {head}")
    cos, sin = wide(np.asarray(cos_cache)), wide(np.asarray(sin_cache))
    if position_ids is not None:
        pos = np.asarray(position_ids).astype(np.int64)
        if pos.size and (pos.min() < 0 or pos.max() >= cos.shape[0]):
            raise ValueError(f"position_ids outside [0, {cos.shape[0]})")
        cos, sin = cos[pos], sin[pos]
    if cos.shape[-1] != dim // 2 or sin.shape[-1] != dim // 2:
        raise ValueError(f"caches of last dimension {cos.shape[-1]}, {sin.shape[-1]} for rotary_embedding_dim/2 = {dim // 2}")
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]  # (B, S, 1, dim/2)
    rot = x[..., :dim]
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else (rot[..., : dim // 2], rot[..., dim // 2:])
    with np.errstate(all="ignore"):
        real = cos * x1 - sin * x2
        imag = sin * x1 + cos * x2
    out = x.copy()
    if interleaved:
        out[..., 0:dim:2], out[..., 1:dim:2] = real, imag
    else:
        out[..., : dim // 2], out[..., dim // 2: dim] = real, imag
    out = out.transpose(0, 2, 1, 3) if np.ndim(X) == 4 else out.reshape(np.shape(X))
    return back(out, X)


@op.reference(23)
def rotary_embedding_23(X, cos_cache, sin_cache, position_ids=None, **attrs):
    return rotary(X, cos_cache, sin_cache, position_ids, **attrs)


def _caches(d, dtype, shape):
    """cos/sin of drawn angles (what models hold), sometimes unrelated values in [-1, 1]."""
    if d(st.integers(0, 3)):
        ang = S.arrays(d, "float64", shape=shape, lo=-4.0, hi=4.0)
        return np.cos(ang).astype(S.np_dtype(dtype)), np.sin(ang).astype(S.np_dtype(dtype))
    return S.arrays(d, dtype, shape=shape, lo=-1.0, hi=1.0), S.arrays(d, dtype, shape=shape, lo=-1.0, hi=1.0)


@op.strategy(23)
def draw(d, dtype, opset):
    b, s, h = d(st.integers(1, 2)), d(st.integers(0, 3)), d(st.integers(1, 2))
    head = 2 * d(st.integers(1, 3))
    dim = 2 * d(st.integers(1, head // 2)) if d(st.booleans()) else 0
    attrs: dict = {}
    if dim:
        attrs["rotary_embedding_dim"] = dim
    if d(st.booleans()):
        attrs["interleaved"] = 1
    three = d(st.booleans())
    if three:
        attrs["num_heads"] = h
        x = S.arrays(d, dtype, shape=(b, s, h * head), lo=-4.0, hi=4.0)
    else:
        x = S.arrays(d, dtype, shape=(b, h, s, head), lo=-4.0, hi=4.0)
    half = (dim or head) // 2
    if d(st.booleans()):
        positions = d(st.integers(1, 5))
        cos, sin = _caches(d, dtype, (positions, half))
        pos = np.array(d(st.lists(st.integers(0, positions - 1), min_size=b * s, max_size=b * s)), np.int64).reshape(b, s)
        return Example([x, cos, sin, pos], attrs)
    cos, sin = _caches(d, dtype, (b, s, half))
    return Example([x, cos, sin], attrs)


@op.edges(23)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    x4 = (np.arange(24, dtype=np.float64).reshape(1, 2, 3, 4) / 4 - 2).astype(t)  # (B, H, S, D=4)
    ang = np.array([[0.0, 0.5], [1.0, 2.0], [-1.5, 3.0]])  # 3 positions, D/2 = 2
    cos, sin = np.cos(ang).astype(t), np.sin(ang).astype(t)
    pos = np.array([[2, 0, 1]], np.int64)
    c3, s3 = cos[None], sin[None]  # (B=1, S=3, 2)
    x3 = x4.transpose(0, 2, 1, 3).reshape(1, 3, 8)
    ev = S.edge_values(dtype)
    special = np.resize(ev, (1, 1, len(ev), 2)).astype(t)  # every edge value in each slot of a pair
    quarter = np.array([[[0.0]] * len(ev)])  # angle 0: cos 1, sin 0
    x6 = (np.arange(36, dtype=np.float64).reshape(1, 1, 6, 6) / 8 - 2).astype(t)
    return [
        Example([x4, cos, sin, pos], name="position_ids"),
        Example([x4, cos, sin, pos], {"interleaved": 1}, name="position_ids_interleaved"),
        Example([x4, c3, s3], name="no_position_ids"),
        Example([x4, c3, s3], {"interleaved": 1}, name="no_position_ids_interleaved"),
        Example([x3, cos, sin, pos], {"num_heads": 2}, name="three_d"),
        Example([x3, c3, s3], {"num_heads": 2, "interleaved": 1}, name="three_d_interleaved"),
        Example([x4, cos[:, :1], sin[:, :1], pos], {"rotary_embedding_dim": 2}, name="partial_rotary"),
        Example([x4, cos[:, :1], sin[:, :1], pos], {"rotary_embedding_dim": 2, "interleaved": 1}, name="partial_rotary_interleaved"),
        Example([x6, np.cos(np.arange(12.0).reshape(6, 2)).astype(t), np.sin(np.arange(12.0).reshape(6, 2)).astype(t),
                 np.array([[5, 4, 3, 2, 1, 0]], np.int64)], {"rotary_embedding_dim": 4}, name="partial_rotary_6"),
        Example([x4, cos, sin, np.array([[1, 1, 1]], np.int64)], name="repeated_position"),
        # positions only index the cache: 2 cached positions serve a sequence of 3
        Example([x4, cos[:2], sin[:2], np.array([[1, 0, 1]], np.int64)], name="cache_shorter_than_sequence"),
        Example([special, np.cos(quarter).astype(t), np.sin(quarter).astype(t)], name="edge_values_identity"),
        Example([special, np.full((1, len(ev), 1), 0.5, t), np.full((1, len(ev), 1), -0.5, t)], {"interleaved": 1}, name="edge_values_rotated"),
        Example([np.ones((1, 1, 2, 2), t), np.array([[[np.inf], [np.nan]]], t), np.array([[[0.0], [1.0]]], t)], name="nonfinite_cache"),
        Example([np.zeros((1, 2, 0, 4), t), np.zeros((3, 2), t), np.zeros((3, 2), t), np.zeros((1, 0), np.int64)], name="empty_sequence"),
        Example([np.zeros((0, 2, 3, 4), t), np.zeros((0, 3, 2), t), np.zeros((0, 3, 2), t)], name="empty_batch"),
        Example([x4, cos, sin, np.array([[2, 0, 1]], np.int64)], {"num_heads": 2}, name="four_d_with_num_heads"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
def _pair_bound(ref, ins, attrs) -> np.ndarray:
    """Each output is cos*x1 -+ sin*x2: it rounds with |x1| + |x2| (its pair), bounded here by
    the largest |x| of its head."""
    x = np.abs(np.asarray(ins[0], dtype=np.float64))
    y = np.asarray(ref(*ins, **attrs))
    return np.broadcast_to(2 * x.max(axis=-1, keepdims=True), y.shape)


@op.fuzz(nan=None, ulps=4.0, bound=_pair_bound)
def fuzz(c: Ctx) -> Plan | None:
    """Rotate a 4-D value (batch, heads, sequence, head_size) with an even head_size by fixed
    angles per position (cos/sin caches as constants, with or without position_ids)."""
    x = c.take("float", 0, lambda v: v.rank == 4 and v.shape[-1] % 2 == 0 and v.size > 0)
    if x is None:
        return None
    b, _, s, head = x.shape
    half = head // 2
    attrs = {"interleaved": 1} if c.pick(2) else {}
    if c.pick(2):
        positions = s + 1
        ang = c.rng.uniform(-3, 3, size=(positions, half))
        pos = c.rng.integers(0, positions, size=(b, s))
        return Plan([x, c.const(np.cos(ang)), c.const(np.sin(ang)), c.ints(pos.astype(np.int64))], attrs, n_acc=2)
    ang = c.rng.uniform(-3, 3, size=(b, s, half))
    return Plan([x, c.const(np.cos(ang)), c.const(np.sin(ang))], attrs, n_acc=2)
