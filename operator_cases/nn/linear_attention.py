"""LinearAttention: the recurrent linear-attention family (ONNX spec: LinearAttention-27).

Query (B, T, H_q * d_k), key (B, T, H_kv * d_k) and value (B, T, H_kv * d_v) are packed 3-D and
unpacked with the required ``q_num_heads`` / ``kv_num_heads``; the state S (B, H_kv, d_k, d_v)
starts at ``past_state`` (zeros when absent). Per token t, by ``update_rule``:

- "linear": S_t = S_{t-1} + k_t (x) v_t
- "gated": S_t = exp(g_t) * S_{t-1} + k_t (x) v_t
- "delta": S_t = S_{t-1} + beta_t * k_t (x) (v_t - S_{t-1}^T k_t)
- "gated_delta" (default): S_t = exp(g_t) * S_{t-1} + beta_t * k_t (x) (v_t - exp(g_t) * S_{t-1}^T k_t)

and o_t = scale * q_t^T S_t (scale 0: 1/sqrt(d_k)). ``decay`` g is (B, T, H_kv * d_k) (one gate per
key dimension: row i of S scales by exp(g_t[i])) or (B, T, H_kv) (one per head); ``beta`` is
(B, T, H_kv) or (B, T, 1). Grouped heads: query head h reads state h // (H_q / H_kv) (each state
serves consecutive query heads). ``chunk_size`` is a tuning hint that "does not affect output
correctness": the reference ignores it. Outputs: (B, T, H_q * d_v) in T and the final state in S.

Evaluated sequentially in float64 ("Equivalent to running the recurrent update sequentially for
each token"), each output rounded once. Without past_state, nothing fixes the type S of
present_state: we take T (the query's type).
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("LinearAttention")
st = S.st
RULES = ("linear", "gated", "delta", "gated_delta")


def linear_attention(query, key, value, past_state=None, decay=None, beta=None, *, q_num_heads, kv_num_heads,
                     chunk_size=64, scale=0.0, update_rule="gated_delta"):
    rule = update_rule.decode() if isinstance(update_rule, bytes) else update_rule
    if rule not in RULES:
        raise ValueError(f"update_rule {rule!r} not one of {RULES}")
    hq, hkv = int(q_num_heads), int(kv_num_heads)
    if hkv <= 0 or hq % hkv:
        raise ValueError(f"q_num_heads {hq} must be a positive multiple of kv_num_heads {hkv}")
    q = np.asarray(query).astype(np.float64)
    k = np.asarray(key).astype(np.float64)
    v = np.asarray(value).astype(np.float64)
    b, t = q.shape[:2]
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    q = q.reshape(b, t, hq, dk)
    k = k.reshape(b, t, hkv, dk)
    v = v.reshape(b, t, hkv, dv)
    state = np.zeros((b, hkv, dk, dv)) if past_state is None else np.asarray(past_state).astype(np.float64).copy()
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated:
        if decay is None:
            raise ValueError(f"update_rule {rule!r} needs decay")
        g = np.asarray(decay).astype(np.float64)
        g = g.reshape(b, t, hkv, g.shape[-1] // hkv)  # (.., dk) per key dimension or (.., 1) per head
    if delta:
        if beta is None:
            raise ValueError(f"update_rule {rule!r} needs beta")
        be = np.broadcast_to(np.asarray(beta).astype(np.float64), (b, t, hkv))  # (B, T, H_kv) or (B, T, 1)
    s = 1.0 / np.sqrt(dk) if not scale else float(scale)
    group = hq // hkv
    out = np.zeros((b, t, hq, dv))
    with np.errstate(all="ignore"):
        for step in range(t):
            kt, vt = k[:, step], v[:, step]  # (B, Hkv, dk), (B, Hkv, dv)
            if gated:
                state = np.exp(g[:, step])[..., None] * state  # rows of S by exp(g) (broadcast for a per-head gate)
            if delta:
                retrieved = np.einsum("bhkv,bhk->bhv", state, kt)  # S^T k (of the decayed state when gated)
                state = state + be[:, step, :, None, None] * np.einsum("bhk,bhv->bhkv", kt, vt - retrieved)
            else:
                state = state + np.einsum("bhk,bhv->bhkv", kt, vt)
            read = np.repeat(state, group, axis=1)  # query head h reads state h // group
            out[:, step] = s * np.einsum("bhk,bhkv->bhv", q[:, step], read)
        state_type = np.asarray(past_state).dtype if past_state is not None else np.asarray(query).dtype
        return out.reshape(b, t, hq * dv).astype(np.asarray(query).dtype), state.astype(state_type)


@op.reference(27)
def linear_attention_27(query, key, value, past_state=None, decay=None, beta=None, **attrs):
    return linear_attention(query, key, value, past_state, decay, beta, **attrs)


def _normalized(x: np.ndarray, d: int) -> np.ndarray:
    """Each head's d-vector scaled to unit L2 norm ("Should be L2-normalized for delta/gated_delta")."""
    w = x.astype(np.float64).reshape(x.shape[:-1] + (x.shape[-1] // d, d))
    n = np.sqrt((w * w).sum(-1, keepdims=True))
    return np.where(n > 0, w / np.where(n > 0, n, 1), w).reshape(x.shape).astype(x.dtype)


@op.strategy(27)
def draw(d, dtype, opset):
    b, t = d(st.integers(1, 2)), d(st.integers(0, 3))
    hkv = d(st.integers(1, 2))
    hq = hkv * d(st.integers(1, 2))
    dk, dv = d(st.integers(1, 3)), d(st.integers(1, 3))
    rule = d(st.sampled_from(RULES))
    attrs: dict = {"q_num_heads": hq, "kv_num_heads": hkv}
    if rule != "gated_delta" or d(st.booleans()):
        attrs["update_rule"] = rule
    if d(st.integers(0, 2)) == 0:
        attrs["scale"] = d(st.sampled_from([0.25, 0.5, 1.0, 2.0]))
    if d(st.integers(0, 3)) == 0:
        attrs["chunk_size"] = d(st.sampled_from([1, 2, 64]))
    q = S.arrays(d, dtype, shape=(b, t, hq * dk), lo=-2.0, hi=2.0)
    k = S.arrays(d, dtype, shape=(b, t, hkv * dk), lo=-2.0, hi=2.0)
    if rule in ("delta", "gated_delta"):
        k = _normalized(k, dk)
    v = S.arrays(d, dtype, shape=(b, t, hkv * dv), lo=-2.0, hi=2.0)
    state_type = dtype if d(st.integers(0, 2)) else d(st.sampled_from(["float32", "float16", "bfloat16"]))
    past = S.arrays(d, state_type, shape=(b, hkv, dk, dv), lo=-1.0, hi=1.0) if d(st.booleans()) else None
    decay = beta = None
    if rule in ("gated", "gated_delta"):
        per_key = d(st.booleans())
        decay = S.arrays(d, dtype, shape=(b, t, hkv * dk if per_key else hkv), lo=-2.0, hi=0.5)
    if rule in ("delta", "gated_delta"):
        beta = S.arrays(d, dtype, shape=(b, t, hkv if d(st.booleans()) else 1), lo=0.0, hi=1.0)
    return Example([q, k, v, past, decay, beta], attrs)


@op.edges(27)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    f = lambda x: np.asarray(x, dtype=np.float64).astype(t)  # noqa: E731
    # B=1, T=2, one head, d_k = d_v = 2; values exact in every float type
    q = f([[[1.0, 0.0], [0.5, 1.0]]])
    k = f([[[1.0, 0.0], [0.0, 1.0]]])
    v = f([[[2.0, -1.0], [0.5, 0.25]]])
    past = f(np.array([[[[0.5, 0.0], [0.0, -0.5]]]]))
    g_head = f([[[0.0], [-np.log(2.0)]]])  # exp: 1, 1/2
    g_key = f([[[0.0, -1.0], [-0.5, 0.0]]])
    beta = f([[[0.5], [1.0]]])
    one = {"q_num_heads": 1, "kv_num_heads": 1}
    out = []
    for rule in RULES:
        decay = g_head if rule.startswith("gated") else None
        bt = beta if rule.endswith("delta") else None
        out.append(Example([q, k, v, past, decay, bt], {**one, "update_rule": rule, "scale": 1.0}, name=f"{rule}_with_past"))
        out.append(Example([q, k, v, None, decay, bt], {**one, "update_rule": rule}, name=f"{rule}_no_past"))
    out += [
        Example([q, k, v, past, g_key, beta], {**one, "scale": 1.0}, name="gated_delta_default_per_key_decay"),
        Example([q, k, v, past, g_key, None], {**one, "update_rule": "gated"}, name="gated_per_key_decay"),
        Example([q, k, v, past, g_head, beta], {**one, "chunk_size": 1}, name="chunk_size_1"),
        # GQA: 2 query heads share one state
        Example([np.concatenate([q, -q], -1), k, v, past, g_head, beta], {"q_num_heads": 2, "kv_num_heads": 1}, name="gqa"),
        # two KV heads, beta per head, d_v = 1
        Example([np.concatenate([q, q], -1), np.concatenate([k, k[..., ::-1]], -1), f([[[1.0, -1.0], [0.5, 2.0]]]),
                 None, f([[[0.0, -1.0], [-0.25, 0.0]]]), f([[[0.5, 1.0], [0.25, 0.0]]])],
                {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated_delta"}, name="two_heads_beta_per_head"),
        Example([q[:, :0], k[:, :0], v[:, :0], past, g_head[:, :0], beta[:, :0]], one, name="empty_sequence"),
        Example([q[:, :0], k[:, :0], v[:, :0], None, None, None], {**one, "update_rule": "linear"}, name="empty_sequence_no_past"),
        Example([f([[[np.nan, 0.0], [1.0, 1.0]]]), k, v, past, None, None], {**one, "update_rule": "linear"}, name="nan_query"),
        Example([q, k, f([[[np.inf, 0.0], [1.0, 1.0]]]), None, None, None], {**one, "update_rule": "linear"}, name="inf_value"),
        Example([q, k, v, past, f([[[np.inf], [0.0]]]), beta], one, name="inf_decay"),
        Example([q, k, v, past, f([[[-np.inf], [0.0]]]), beta], one, name="decay_to_zero"),
        Example([q * f(S.smallest_subnormal(dtype)), k, v, past, g_head, beta], one, name="subnormal_query"),
    ]
    if dtype != "float32":
        out.append(Example([q, k, v, past.astype(np.float32), g_head, beta], one, name="float32_state"))
    return out
