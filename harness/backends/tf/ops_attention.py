"""Attention-23/24/25: scaled dot-product attention with masks, a KV cache and grouped heads.

The spec's pattern, in the inputs' type: Q, K, V as (batch, heads, sequence, head_size) (a 3-D
input ``(B, S, heads * head_size)`` split with ``q_num_heads`` / ``kv_num_heads``); the present
K and V are ``Concat(past, incoming)`` on the sequence axis; ``Q*sqrt(scale)`` times
``(K*sqrt(scale))^T`` (scale defaults to ``1/sqrt(head_size)``), the softcap
``softcap * tanh(qk / softcap)`` when softcap is not 0, plus the attention bias (the mask: boolean
as 0 / -inf, float added, from -24 "padded to total_sequence_length with negative infinity"; the
causal frontier ``j <= i + offset``, offset the past length or from -24 ``nonpad_kv_seqlen -
q_sequence_length``; from -24 the padding past ``nonpad_kv_seqlen``; from -25 the sliding window
``p - left <= j <= p + right``), Softmax over the keys (in ``softmax_precision`` when given:
"cast to this type before softmax and then cast back"), times V. Query head ``h`` reads K/V head
``h // (q_num_heads / kv_num_heads)``. "A fully-masked query row ... produces a zero output row,
not NaN." ``qk_matmul_output_mode`` 0..3: the scaled product, after softcap, after the bias, the
softmax."""

from __future__ import annotations

import math

import tensorflow as tf

from ..base import Unsupported
from .lowering import tf_dtype
from .registry import lowers


def _heads(x, n):
    """(B, S, n * D) -> (B, n, S, D)."""
    b, s, hidden = x.shape.as_list()
    return tf.transpose(tf.reshape(x, [b, s, int(n), hidden // int(n)]), [0, 2, 1, 3])


@lowers("Attention", 23, 24, 25)
def attention(node, Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, is_causal=0,
              kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0, scale=None, softcap=0.0, softmax_precision=None,
              left_window_size=-1, right_window_size=-1):
    three_d = Q.shape.rank == 3
    if three_d:
        if q_num_heads is None or kv_num_heads is None:
            raise ValueError(f"{node}: 3-D Q, K, V need q_num_heads and kv_num_heads")
        q, k, v = _heads(Q, q_num_heads), _heads(K, kv_num_heads), _heads(V, kv_num_heads)
    else:
        q, k, v = Q, K, V
    past = None
    if past_key is not None:
        past = past_key.shape[2]
        k, v = tf.concat([past_key, k], axis=2), tf.concat([past_value, v], axis=2)
    present_key, present_value = k, v
    b, hq, sq, d = q.shape.as_list()
    hkv, total = k.shape[1], k.shape[2]
    if hq % hkv:
        raise ValueError(f"{node}: q_num_heads {hq} is not a multiple of kv_num_heads {hkv}")
    kr, vr = tf.repeat(k, hq // hkv, axis=1), tf.repeat(v, hq // hkv, axis=1)
    s = 1.0 / d ** 0.5 if scale is None else float(scale)
    dt = q.dtype
    if s < 0:  # sqrt(scale) is NaN: the factor the attribute names, applied once (spec-silent)
        qk = tf.linalg.matmul(q, kr, transpose_b=True) * tf.cast(s, dt)
    else:
        r = tf.cast(s ** 0.5, dt)
        qk = tf.linalg.matmul(q * r, kr * r, transpose_b=True)
    capped = tf.cast(softcap, dt) * tf.math.tanh(qk / tf.cast(softcap, dt)) if softcap else qk
    ninf = tf.constant(float("-inf"), dt)
    bias = tf.zeros([b, 1, sq, total], dt)
    if attn_mask is not None:
        mb = tf.where(attn_mask, tf.zeros([], dt), ninf) if attn_mask.dtype == tf.bool else tf.cast(attn_mask, dt)
        short = mb.shape[-1]
        if mb.shape.rank and short < total and short != 1:
            if node.since < 24:
                raise ValueError(f"{node}: a mask of {short} keys for {total}")
            fill = tf.fill(tf.concat([tf.shape(mb)[:-1], [total - short]], 0), ninf)
            mb = tf.concat([mb, fill], axis=-1)
        bias = bias + mb
    i = tf.reshape(tf.range(sq, dtype=tf.int64), [1, 1, sq, 1])
    j = tf.reshape(tf.range(total, dtype=tf.int64), [1, 1, 1, total])
    if past is not None or node.since < 24 or nonpad_kv_seqlen is None:
        offset = tf.constant(past or 0, tf.int64)
    else:
        offset = tf.reshape(tf.cast(nonpad_kv_seqlen, tf.int64) - sq, [-1, 1, 1, 1])
    p = i + offset
    ok = tf.ones([b, 1, sq, total], tf.bool)
    if is_causal:
        ok &= j <= p
    if node.since >= 25 and left_window_size >= 0:
        ok &= j >= p - left_window_size
    if node.since >= 25 and right_window_size >= 0:
        ok &= j <= p + right_window_size
    if nonpad_kv_seqlen is not None:
        ok &= j < tf.reshape(tf.cast(nonpad_kv_seqlen, tf.int64), [-1, 1, 1, 1])
    bias = tf.broadcast_to(bias + tf.where(ok, tf.zeros([], dt), ninf), [b, hq, sq, total])
    scores = capped + bias
    work = scores if softmax_precision is None else tf.cast(scores, tf_dtype(softmax_precision))
    probs = tf.cast(tf.nn.softmax(work, axis=-1), dt)
    masked_row = tf.reduce_all(tf.math.is_inf(bias) & (bias < 0), axis=-1, keepdims=True)
    probs = tf.where(masked_row, tf.zeros([], dt), probs)
    y = tf.linalg.matmul(probs, vr)
    if three_d:
        y = tf.reshape(tf.transpose(y, [0, 2, 1, 3]), [b, sq, hq * vr.shape[-1]])  # V may have its own head size
    debug = {0: qk, 1: capped, 2: scores, 3: probs}[int(qk_matmul_output_mode)]
    return y, present_key, present_value, debug


@lowers("RotaryEmbedding", 23)
def rotary_embedding(node, x, cos_cache, sin_cache, position_ids=None, *, interleaved=0, num_heads=None, rotary_embedding_dim=0):
    """The spec's algorithm: as (batch, sequence, heads, head_size), the first
    ``rotary_embedding_dim`` of each head (all by default) split in halves (or even/odd when
    interleaved) and rotated by the cos/sin caches (indexed by position_ids when given)."""
    shape = x.shape.as_list()
    if len(shape) == 4:
        work = tf.transpose(x, [0, 2, 1, 3])
    else:
        if not num_heads:
            raise ValueError(f"{node}: a 3-D input needs num_heads")
        work = tf.reshape(x, [shape[0], shape[1], num_heads, shape[2] // num_heads])
    head = work.shape[3]
    dim = rotary_embedding_dim or head
    rot, keep = work[..., :dim], work[..., dim:]
    if position_ids is not None:
        cos_cache, sin_cache = tf.gather(cos_cache, position_ids), tf.gather(sin_cache, position_ids)
    if cos_cache.shape[-1] != dim // 2 or sin_cache.shape[-1] != dim // 2:
        raise ValueError(f"{node}: the caches' last dimension is not rotary_embedding_dim / 2 = {dim // 2}")
    cos, sin = tf.expand_dims(cos_cache, 2), tf.expand_dims(sin_cache, 2)
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else tf.split(rot, 2, axis=-1)
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    rot = tf.reshape(tf.stack([real, imag], axis=-1), tf.shape(rot)) if interleaved else tf.concat([real, imag], -1)
    out = tf.concat([rot, keep], -1)
    return tf.reshape(out, shape) if len(shape) == 3 else tf.transpose(out, [0, 2, 1, 3])


_NARROW = (tf.float16, tf.bfloat16)


@lowers("FlexAttention", 1, domain="ai.onnx.preview")
def flex_attention(node, q, k, v, *, prob_mod=None, score_mod=None, scale=None, softmax_precision=None, outer=None):
    """Scores = (Q @ K^T) * scale, score_mod, Softmax, prob_mod, times V; in softmax_precision
    ("defaults to float32 for non-double inputs, otherwise double"), the result in Q's type.
    Query head h uses K/V head floor(h / group_size)."""
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        k, v = tf.repeat(k, hq // hk, axis=1), tf.repeat(v, hq // hk, axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    work = tf_dtype(softmax_precision) if softmax_precision else (tf.float64 if q.dtype == tf.float64 else tf.float32)
    scores = tf.matmul(tf.cast(q, work), tf.cast(k, work), transpose_b=True) * tf.constant(scale, work)
    if score_mod is not None:
        (scores,) = score_mod.run({score_mod.inputs[0]: scores}, outer)
    probs = tf.nn.softmax(scores, axis=-1)
    if prob_mod is not None:
        (probs,) = prob_mod.run({prob_mod.inputs[0]: probs}, outer)
    return tf.cast(tf.matmul(probs, tf.cast(v, work)), q.dtype)


@lowers("SwiGLU", 28)
def swiglu(node, a, b, *, alpha=1.0):
    return a * tf.math.sigmoid(tf.constant(alpha, a.dtype) * a) * b


@lowers("CausalConvWithState", 27)
def causal_conv_with_state(node, x, weight, bias=None, past_state=None, *, activation="none"):
    """A depthwise 1-D convolution over Concat(past_state, x) on time (zeros without past_state),
    then SiLU when asked; the present state is the last K - 1 steps of that concatenation."""
    like = x
    if x.dtype in _NARROW:  # the schema's function body: Cast to float, convolve, CastLike back
        x, weight, bias, past_state = (None if t is None else tf.cast(t, tf.float32) for t in (x, weight, bias, past_state))
    k = weight.shape[-1]
    if past_state is None:
        past_state = tf.zeros(tf.stack([tf.shape(x)[0], tf.shape(x)[1], k - 1]), x.dtype)
    full = tf.concat([past_state, x], axis=-1)
    channels = x.shape[1]
    # (N, C, L) -> (N, L, 1, C): a depthwise convolution over one spatial row
    y = tf.nn.depthwise_conv2d(tf.transpose(full, [0, 2, 1])[:, :, None, :],
                               tf.reshape(tf.transpose(tf.reshape(weight, [channels, k])), [k, 1, channels, 1]),
                               strides=[1, 1, 1, 1], padding="VALID")
    y = tf.transpose(y[:, :, 0, :], [0, 2, 1])
    if bias is not None:
        y = y + tf.reshape(bias, [1, -1, 1])
    if activation in ("silu", "swish"):
        y = y * tf.math.sigmoid(y)
    present = full[..., tf.shape(full)[-1] - (k - 1):] if k > 1 else full[..., :0]
    return tf.cast(y, like.dtype), tf.cast(present, like.dtype)


@lowers("LinearAttention", 27)
def linear_attention(node, query, key, value, past_state=None, decay=None, beta=None, *, chunk_size=64, kv_num_heads,
                     q_num_heads, scale=0.0, update_rule="gated_delta"):
    """The spec's recurrence token by token (unrolled when tracing), in the query's type, float32
    for float16 / bfloat16 (the schema's function body casts to float and back):
    S_t = exp(g_t) S_{t-1} (gated kinds), plus k_t (x) v_t or, for the delta kinds,
    beta_t k_t (x) (v_t - S^T k_t) with S the decayed state; o_t = scale q_t^T S_t. A KV head's
    state serves q_num_heads / kv_num_heads query heads."""
    b, t = tf.shape(query)[0], query.shape[1]
    if t is None:
        raise Unsupported(f"{node}: a sequence length known only when the graph runs")
    dk = query.shape[-1] // q_num_heads
    dv = value.shape[-1] // kv_num_heads
    out_type = query.dtype
    if query.dtype in _NARROW:
        query, key, value, decay, beta = (None if v is None else tf.cast(v, tf.float32) for v in (query, key, value, decay, beta))
    q = tf.reshape(query, tf.stack([b, t, q_num_heads, dk]))
    kk = tf.reshape(key, tf.stack([b, t, kv_num_heads, dk]))
    vv = tf.reshape(value, tf.stack([b, t, kv_num_heads, dv]))
    scale = tf.constant(scale or 1.0 / math.sqrt(dk), query.dtype)
    state = tf.cast(past_state, query.dtype) if past_state is not None else tf.zeros(tf.stack([b, kv_num_heads, dk, dv]), query.dtype)
    if decay is not None:
        g = tf.reshape(decay, tf.stack([b, t, kv_num_heads, decay.shape[-1] // kv_num_heads]))  # per head or per key dim
    if beta is not None:
        be = tf.broadcast_to(beta, tf.stack([b, t, kv_num_heads]))
    group = q_num_heads // kv_num_heads
    outs = []
    for step in range(t):
        k_t, v_t = kk[:, step], vv[:, step]  # (B, Hkv, dk), (B, Hkv, dv)
        if update_rule in ("gated", "gated_delta"):
            state = state * tf.exp(g[:, step])[..., None]  # (B, Hkv, dk or 1, 1)
        if update_rule in ("delta", "gated_delta"):
            predicted = tf.einsum("bhkv,bhk->bhv", state, k_t)
            state = state + be[:, step][:, :, None, None] * tf.einsum("bhk,bhv->bhkv", k_t, v_t - predicted)
        elif update_rule in ("linear", "gated"):
            state = state + tf.einsum("bhk,bhv->bhkv", k_t, v_t)
        else:
            raise Unsupported(f"{node}: update_rule {update_rule!r}")
        q_t = tf.reshape(q[:, step], tf.stack([b, kv_num_heads, group, dk]))
        outs.append(scale * tf.reshape(tf.einsum("bhgk,bhkv->bhgv", q_t, state), tf.stack([b, q_num_heads * dv])))
    out = tf.stack(outs, axis=1) if outs else tf.zeros(tf.stack([b, 0, q_num_heads * dv]), query.dtype)
    # present_state has past_state's type S (the query's type when there is no past_state)
    return tf.cast(out, out_type), tf.cast(state, past_state.dtype if past_state is not None else out_type)
