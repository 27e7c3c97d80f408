"""Transformer blocks: Attention (23, 24, 25), RotaryEmbedding, SwiGLU, LinearAttention and
CausalConvWithState, written from the operator descriptions in onnx/defs.

Attention follows the spec's pattern: Q and K each scaled by sqrt(scale), Q @ K^T, optional
softcap, the attention bias (boolean masks become 0 / -inf, the causal frontier is
bottom-right aligned at the cache offset, sliding windows since 25, padding past
``nonpad_kv_seqlen`` since 24), softmax in ``softmax_precision``, a fully masked query row
gives a zero row, then the product with V. Grouped-query heads repeat each K/V head
``q_num_heads / kv_num_heads`` times.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import dtypes
from .registry import lowers


def _heads(t, n):
    """(B, S, n * D) -> (B, n, S, D)."""
    b, s, hidden = t.shape
    return t.reshape(b, s, n, hidden // n).transpose(1, 2)


@lowers("Attention", 23, 24, 25)
def attention(node, q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, is_causal=0,
              kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0, scale=None, softcap=0.0,
              softmax_precision=None, left_window_size=-1, right_window_size=-1):
    three_d = q.dim() == 3
    if three_d:
        q, k, v = _heads(q, q_num_heads), _heads(k, kv_num_heads), _heads(v, kv_num_heads)
    dtype = q.dtype
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    # a negative scale has no square root: the factor itself is applied to Q K^T, as the attribute defines it
    root = torch.tensor(math.sqrt(scale) if scale >= 0 else 1.0, dtype=dtype, device=q.device)
    present_key = torch.cat([past_key, k], dim=2) if past_key is not None else k
    present_value = torch.cat([past_value, v], dim=2) if past_value is not None else v
    k, v = present_key, present_value
    sq, skv = q.shape[2], k.shape[2]

    bias = torch.zeros((sq, skv), dtype=dtype, device=q.device)
    if attn_mask is not None:
        if 1 < attn_mask.shape[-1] < skv:  # a mask shorter than the cache hides the rest (a last dimension of 1 broadcasts)
            fill = False if attn_mask.dtype == torch.bool else -math.inf
            attn_mask = F.pad(attn_mask, [0, skv - attn_mask.shape[-1]], value=fill)
        if attn_mask.dtype == torch.bool:
            attn_mask = torch.where(attn_mask, torch.zeros((), dtype=dtype), torch.full((), -math.inf, dtype=dtype))
        bias = bias + attn_mask.to(dtype)
    # the offset of the query block inside the keys: the past length, or per batch
    # nonpad_kv_seqlen - sq for an external cache, else 0 (spec, "is_causal")
    if past_key is None and nonpad_kv_seqlen is not None:
        offset = (nonpad_kv_seqlen.to(torch.int64) - sq).reshape(-1, 1, 1, 1)
    else:
        offset = torch.tensor(past_key.shape[2] if past_key is not None else 0, device=q.device)
    i = torch.arange(sq, device=q.device).reshape(sq, 1)
    j = torch.arange(skv, device=q.device).reshape(1, skv)
    diff = i + offset - j  # how far key j lies behind query i's absolute position
    allowed = torch.ones_like(diff, dtype=torch.bool)
    if is_causal:
        allowed &= diff >= 0
    if left_window_size is not None and left_window_size >= 0:
        allowed &= diff <= left_window_size
    if right_window_size is not None and right_window_size >= 0:
        allowed &= -diff <= right_window_size
    if nonpad_kv_seqlen is not None:
        allowed = allowed & (j < nonpad_kv_seqlen.to(torch.int64).reshape(-1, 1, 1, 1))
    bias = bias + torch.where(allowed, torch.zeros((), dtype=dtype), torch.full((), -math.inf, dtype=dtype))

    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        k = k.repeat_interleave(hq // hk, dim=1)
        v = v.repeat_interleave(hq // hk, dim=1)
    qk = (q * root) @ (k * root).transpose(-1, -2)
    if scale < 0:
        qk = qk * scale
    raw = qk
    if softcap:  # softcap * tanh(qk / softcap) for any non-zero softcap
        qk = softcap * torch.tanh(qk / softcap)
    scores = qk + bias
    work = scores.to(dtypes.carrier(softmax_precision)) if softmax_precision else scores
    if skv == 0:
        probs = work
        masked_row = torch.ones(work.shape[:-1] + (1,), dtype=torch.bool, device=q.device)
    else:
        peak = work.amax(dim=-1, keepdim=True)
        peak = torch.where(torch.isneginf(peak), torch.zeros_like(peak), peak)
        e = torch.exp(work - peak)
        probs = e / e.sum(dim=-1, keepdim=True)  # IEEE: a row of -inf scores only is NaN (unless masked, below)
        masked_row = torch.isneginf(torch.amax(bias, dim=-1, keepdim=True))
    probs = torch.where(masked_row, torch.zeros_like(probs), probs).to(dtype)
    y = probs @ v.to(dtype)  # V (T2) may be another float type than Q (T1); Y is T1
    if three_d:
        y = y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)
    debug = {0: raw, 1: qk, 2: scores, 3: probs}.get(qk_matmul_output_mode, raw).to(dtype)
    return y, present_key, present_value, debug


@lowers("FlexAttention", 1, domain="ai.onnx.preview")
def flex_attention(node, q, k, v, *, prob_mod=None, score_mod=None, scale=None, softmax_precision=None, outer=None):
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:  # query head h uses K/V head h // (hq / hk)
        k = k.repeat_interleave(hq // hk, dim=1)
        v = v.repeat_interleave(hq // hk, dim=1)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    precision = dtypes.carrier(softmax_precision) if softmax_precision else (torch.float64 if q.dtype == torch.float64 else torch.float32)
    scores = (q.to(precision) @ k.to(precision).transpose(-1, -2)) * scale
    if score_mod is not None:
        (scores,) = score_mod.run({score_mod.inputs[0]: scores}, outer)
    probs = torch.softmax(scores, dim=-1)
    if prob_mod is not None:
        (probs,) = prob_mod.run({prob_mod.inputs[0]: probs}, outer)
    return (probs @ v.to(precision)).to(q.dtype)


@lowers("RotaryEmbedding", 23)
def rotary_embedding(node, x, cos_cache, sin_cache, position_ids=None, *, interleaved=0, num_heads=0, rotary_embedding_dim=0):
    shape = x.shape
    if x.dim() == 4:
        t = x.transpose(1, 2)  # (B, S, H, D)
    else:
        b, s, hidden = x.shape
        t = x.reshape(b, s, num_heads, hidden // num_heads)
    dim = rotary_embedding_dim or t.shape[-1]
    rot, keep = t[..., :dim], t[..., dim:]
    if position_ids is not None:
        pos = position_ids.to(torch.int64)
        cos, sin = cos_cache[pos], sin_cache[pos]
    else:
        cos, sin = cos_cache, sin_cache
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot.chunk(2, dim=-1)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    rotated = torch.stack([real, imag], dim=-1).reshape(rot.shape) if interleaved else torch.cat([real, imag], dim=-1)
    out = torch.cat([rotated, keep], dim=-1).to(x.dtype)
    return out.reshape(shape) if x.dim() == 3 else out.transpose(1, 2)


@lowers("SwiGLU", 28)
def swiglu(node, a, b, *, alpha=1.0):
    return a * torch.sigmoid(alpha * a) * b


@lowers("CausalConvWithState", 27)
def causal_conv_with_state(node, x, weight, bias=None, past_state=None, *, activation="none"):
    batch, channels, _ = x.shape
    k = weight.shape[-1]
    if past_state is None:
        past_state = torch.zeros((batch, channels, k - 1), dtype=x.dtype, device=x.device)
    full = torch.cat([past_state, x], dim=-1)
    y = F.conv1d(full, weight, bias, groups=channels)
    if activation in ("silu", "swish"):
        y = y * torch.sigmoid(y)
    present = full[..., full.shape[-1] - (k - 1):] if k > 1 else full[..., :0]
    return y.to(x.dtype), present


@lowers("LinearAttention", 27)
def linear_attention(node, query, key, value, past_state=None, decay=None, beta=None, *, chunk_size=64, kv_num_heads,
                     q_num_heads, scale=0.0, update_rule="gated_delta"):
    b, t, _ = query.shape
    dk = query.shape[-1] // q_num_heads
    dv = value.shape[-1] // kv_num_heads
    q = query.reshape(b, t, q_num_heads, dk)
    kk = key.reshape(b, t, kv_num_heads, dk)
    vv = value.reshape(b, t, kv_num_heads, dv)
    scale = scale or 1.0 / math.sqrt(dk)
    work = torch.float64 if query.dtype == torch.float64 else torch.float32
    state = past_state.to(work) if past_state is not None else torch.zeros((b, kv_num_heads, dk, dv), dtype=work, device=query.device)
    if decay is not None:
        g = decay.to(work).reshape(b, t, kv_num_heads, decay.shape[-1] // kv_num_heads)  # (.., 1) per head or (.., dk) per key dimension
    if beta is not None:
        be = beta.to(work).expand(b, t, kv_num_heads)  # (B, T, Hkv) or (B, T, 1)
    group = q_num_heads // kv_num_heads
    outs = []
    for step in range(t):
        k_t, v_t = kk[:, step].to(work), vv[:, step].to(work)  # (B, Hkv, dk), (B, Hkv, dv)
        if update_rule in ("gated", "gated_delta"):
            gate = torch.exp(g[:, step]).unsqueeze(-1)  # (B, Hkv, dk or 1, 1)
            state = state * gate
        if update_rule in ("delta", "gated_delta"):
            predicted = torch.einsum("bhkv,bhk->bhv", state, k_t)
            state = state + be[:, step].reshape(b, kv_num_heads, 1, 1) * torch.einsum("bhk,bhv->bhkv", k_t, v_t - predicted)
        else:
            state = state + torch.einsum("bhk,bhv->bhkv", k_t, v_t)
        q_t = q[:, step].to(work).reshape(b, kv_num_heads, group, dk)
        outs.append(scale * torch.einsum("bhgk,bhkv->bhgv", q_t, state).reshape(b, q_num_heads * dv))
    out = torch.stack(outs, dim=1).to(query.dtype) if outs else query.new_zeros((b, 0, q_num_heads * dv))
    # present_state has past_state's type S (the query's type when there is no past_state)
    return out, state.to(past_state.dtype if past_state is not None else query.dtype)

