"""Attention (opsets 23, 24, 25), RotaryEmbedding (23) and LinearAttention (27)."""

from __future__ import annotations

import math

import numpy as np
from onnx import helper

from .registry import register, register_each


def _compute_dtype(dtype):
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _softmax_rows(s):
    """Softmax over the last axis (IEEE: a row of -inf only, or holding NaN or +inf, is NaN)."""
    if s.shape[-1] == 0:
        return s
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        e = np.exp(s - m)
        return e / np.sum(e, axis=-1, keepdims=True)


def _attention_factory(node, version):
    attrs = node.attrs
    q_heads_attr = attrs.get("q_num_heads")
    kv_heads_attr = attrs.get("kv_num_heads")
    scale_attr = attrs.get("scale")
    softcap = float(attrs.get("softcap", 0.0))
    is_causal = int(attrs.get("is_causal", 0))
    mode = int(attrs.get("qk_matmul_output_mode", 0))
    sm_prec = attrs.get("softmax_precision")
    left_w = int(attrs.get("left_window_size", -1)) if version >= 25 else -1
    right_w = int(attrs.get("right_window_size", -1)) if version >= 25 else -1
    outs_wanted = len(node.outputs)

    def run(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None):
        out_dtype = Q.dtype
        # the spec computes in the input precision (softmax too, unless softmax_precision says
        # otherwise); float16/bfloat16 stay in their own type so rounding follows the spec's steps
        cd = Q.dtype.type
        three_d = Q.ndim == 3
        B = Q.shape[0]
        if three_d:
            qh, kvh = int(q_heads_attr), int(kv_heads_attr)
            Sq, Skv = Q.shape[1], K.shape[1]
            q = Q.reshape(B, Sq, qh, Q.shape[2] // qh).transpose(0, 2, 1, 3)
            k = K.reshape(B, Skv, kvh, K.shape[2] // kvh).transpose(0, 2, 1, 3)
            v = V.reshape(B, Skv, kvh, V.shape[2] // kvh).transpose(0, 2, 1, 3)
        else:
            q, k, v = Q, K, V
            qh, kvh = q.shape[1], k.shape[1]
        past_len = 0
        if past_key is not None:
            past_len = past_key.shape[2]
            k = np.concatenate([past_key.astype(k.dtype, copy=False), k], axis=2)
            v = np.concatenate([past_value.astype(v.dtype, copy=False), v], axis=2)
        present_k, present_v = k, v
        Sq = q.shape[2]
        T = k.shape[2]
        head = q.shape[3]
        scale = float(scale_attr) if scale_attr is not None else 1.0 / math.sqrt(head)
        qf = q.astype(cd, copy=False)
        kf = k.astype(cd, copy=False)
        vf = v.astype(cd, copy=False)
        if qh != kvh:
            rep = qh // kvh
            kf = np.repeat(kf, rep, axis=1)
            vf = np.repeat(vf, rep, axis=1)
        if scale >= 0:
            rs = cd(math.sqrt(scale))
            qk = np.matmul(qf * rs, np.swapaxes(kf * rs, -1, -2))  # (B, qh, Sq, T)
        else:  # sqrt(scale) is NaN: apply the factor itself, as the attribute defines it
            qk = np.matmul(qf, np.swapaxes(kf, -1, -2)) * cd(scale)
        qk_out = qk
        if softcap != 0:  # softcap * tanh(qk / softcap), for any non-zero softcap
            qk = cd(softcap) * np.tanh(qk / cd(softcap))
            if mode == 1:
                qk_out = qk
        # additive bias from mask / causal frontier / window / padding
        bias = None
        if attn_mask is not None:
            m = np.asarray(attn_mask)
            if m.dtype == np.bool_:
                mb = np.where(m, cd(0), cd(-np.inf))
            else:
                mb = m.astype(cd)
            if 1 < mb.shape[-1] < T:  # a short mask is padded with -inf; a last dimension of 1 broadcasts
                widths = [(0, 0)] * (mb.ndim - 1) + [(0, T - mb.shape[-1])]
                mb = np.pad(mb, widths, constant_values=-np.inf)
            while mb.ndim < 4:
                mb = mb[None]
            bias = mb
        need_pos = is_causal or left_w >= 0 or right_w >= 0
        if need_pos or nonpad_kv_seqlen is not None:
            j = np.arange(T).reshape(1, 1, 1, T)
            i = np.arange(Sq).reshape(1, 1, Sq, 1)
            allowed = np.ones((1, 1, Sq, T), dtype=bool)
            if need_pos:
                if past_key is not None or version < 24:
                    offset = np.full((1, 1, 1, 1), past_len)
                elif nonpad_kv_seqlen is not None:
                    offset = (np.asarray(nonpad_kv_seqlen).astype(np.int64) - Sq).reshape(B, 1, 1, 1)
                else:
                    offset = np.zeros((1, 1, 1, 1), dtype=np.int64)
                p = i + offset
                if is_causal:
                    allowed = allowed & (j <= p)
                if left_w >= 0:
                    allowed = allowed & (j >= p - left_w)
                if right_w >= 0:
                    allowed = allowed & (j <= p + right_w)
            if nonpad_kv_seqlen is not None:
                allowed = allowed & (j < np.asarray(nonpad_kv_seqlen).astype(np.int64).reshape(B, 1, 1, 1))
            pb = np.where(allowed, cd(0), cd(-np.inf))
            bias = pb if bias is None else bias + pb
        scores = qk if bias is None else qk + bias
        # "a fully-masked query row (every key's combined additive bias is -inf) produces a zero output row"
        if bias is None:
            dead = np.zeros(qk.shape[:-1] + (1,), dtype=bool) if T else np.ones(qk.shape[:-1] + (1,), dtype=bool)
        else:
            dead = np.all(np.isneginf(np.broadcast_to(bias, bias.shape[:-2] + (Sq, T))), axis=-1, keepdims=True)
        if mode == 2:
            qk_out = scores
        if sm_prec is not None:
            sdt = helper.tensor_dtype_to_np_dtype(int(sm_prec))
            probs = _softmax_rows(scores.astype(sdt)).astype(cd)
        else:
            probs = _softmax_rows(scores)
        probs = np.where(dead, cd(0), probs).astype(cd, copy=False)
        if mode == 3:
            qk_out = probs
        y = np.matmul(probs, vf)  # (B, qh, Sq, vhead)
        if three_d:
            y = y.transpose(0, 2, 1, 3).reshape(B, Sq, -1)
        outs = [
            y.astype(out_dtype),
            present_k,
            present_v,
            qk_out.astype(out_dtype),
        ]
        return tuple(outs[:outs_wanted])

    return run


register_each("Attention", (23, 24, 25), _attention_factory)


# --------------------------------------------------------------------------- RotaryEmbedding


@register("RotaryEmbedding", since=23)
def rotary_embedding(node):
    attrs = node.attrs
    interleaved = int(attrs.get("interleaved", 0))
    num_heads = int(attrs.get("num_heads", 0))
    rot_dim_attr = int(attrs.get("rotary_embedding_dim", 0))

    def run(X, cos_cache, sin_cache, position_ids=None):
        dtype = X.dtype
        if X.ndim == 4:
            x = X.transpose(0, 2, 1, 3)  # (B, S, H, D)
        else:
            Bn, S, hidden = X.shape
            x = X.reshape(Bn, S, num_heads, hidden // num_heads)
        D = x.shape[3]
        rd = rot_dim_attr or D
        half = rd // 2
        cos, sin = cos_cache, sin_cache
        if position_ids is not None:
            pid = np.asarray(position_ids).astype(np.int64)
            cos = cos[pid]
            sin = sin[pid]
        cd = _compute_dtype(dtype)
        cos = cos.astype(cd)[:, :, None, :half]
        sin = sin.astype(cd)[:, :, None, :half]
        xr = x[..., :rd].astype(cd)
        if interleaved:
            x1, x2 = xr[..., 0::2], xr[..., 1::2]
        else:
            x1, x2 = xr[..., :half], xr[..., half:]
        real = cos * x1 - sin * x2
        imag = sin * x1 + cos * x2
        out = np.empty(x.shape, dtype=dtype)
        if interleaved:
            out[..., 0:rd:2] = real
            out[..., 1:rd:2] = imag
        else:
            out[..., :half] = real
            out[..., half:rd] = imag
        out[..., rd:] = x[..., rd:]
        if X.ndim == 4:
            out = out.transpose(0, 2, 1, 3)
        else:
            out = out.reshape(X.shape)
        return (np.ascontiguousarray(out),)

    return run


# --------------------------------------------------------------------------- LinearAttention


@register("LinearAttention", since=27)
def linear_attention(node):
    """The recurrence of the spec, token by token, in float32 (the schema's function body
    computes in float and casts each output back); a native kernel because the function body's
    ``Reshape(.., [B, T, H, -1])`` cannot resolve -1 for an empty sequence."""
    attrs = node.attrs
    hq, hkv = int(attrs["q_num_heads"]), int(attrs["kv_num_heads"])
    rule = attrs.get("update_rule", "gated_delta")
    rule = rule.decode() if isinstance(rule, bytes) else rule
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ValueError(f"LinearAttention: unknown update_rule {rule!r}")
    scale_attr = float(attrs.get("scale", 0.0))
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")

    def run(query, key, value, past_state=None, decay=None, beta=None):
        b, t = query.shape[:2]
        dk, dv = query.shape[2] // hq, value.shape[2] // hkv
        f = np.float32
        q = query.astype(f).reshape(b, t, hq, dk)
        k = key.astype(f).reshape(b, t, hkv, dk)
        v = value.astype(f).reshape(b, t, hkv, dv)
        state = np.zeros((b, hkv, dk, dv), f) if past_state is None else past_state.astype(f)
        if gated:
            if decay is None:
                raise ValueError(f"LinearAttention {rule}: decay is required")
            g = decay.astype(f).reshape(b, t, hkv, decay.shape[2] // hkv)
        if delta:
            if beta is None:
                raise ValueError(f"LinearAttention {rule}: beta is required")
            be = np.broadcast_to(beta.astype(f), (b, t, hkv))
        scale = f(scale_attr) if scale_attr else f(1.0) / np.sqrt(f(dk))
        group = hq // hkv
        out = np.zeros((b, t, hq, dv), dtype=query.dtype)
        with np.errstate(all="ignore"):
            for step in range(t):
                kt, vt = k[:, step], v[:, step]
                if gated:
                    state = state * np.exp(g[:, step])[..., None]
                if delta:
                    retrieved = np.einsum("bhkv,bhk->bhv", state, kt)
                    state = state + be[:, step, :, None, None] * np.einsum("bhk,bhv->bhkv", kt, vt - retrieved)
                else:
                    state = state + np.einsum("bhk,bhv->bhkv", kt, vt)
                read = np.repeat(state, group, axis=1)
                out[:, step] = (scale * np.einsum("bhk,bhkv->bhv", q[:, step], read)).astype(query.dtype)
        state_type = past_state.dtype if past_state is not None else query.dtype
        return out.reshape(b, t, hq * dv), state.astype(state_type)

    return run
