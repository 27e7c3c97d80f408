"""Attention: scaled dot-product attention with masks, a KV cache and grouped heads (ONNX spec:
Attention-23, 24, 25).

The spec's pattern, on Q, K, V reshaped to (batch, heads, sequence, head_size) (a 3-D input
``(B, S, heads * head_size)`` is split with ``q_num_heads`` / ``kv_num_heads``): the present K
and V are ``Concat(past, incoming)`` along the sequence axis; then ``Q*sqrt(scale)`` times
``(K*sqrt(scale))^T`` (scale defaults to ``1/sqrt(head_size)``), the softcap
``softcap * tanh(qk / softcap)`` when softcap is not 0, plus the attention bias, Softmax over
the keys, times V. Grouped-query heads: query head ``h`` reads K/V head
``h // (q_num_heads / kv_num_heads)`` (each K/V head serves consecutive query heads, as the
schema's function body expands them).

The bias is the sum of: the mask (boolean: 0 where True, -inf where False; float: added as is;
from -24 a mask whose last dimension is shorter than the total sequence is "padded to
total_sequence_length with negative infinity"), the causal frontier (``is_causal``: query ``i``
attends key ``j`` iff ``j <= i + offset``; offset = past length, or from -24 per batch
``nonpad_kv_seqlen - q_sequence_length`` for an external cache, else 0), the padding past
``nonpad_kv_seqlen`` (-24 on) and the sliding window (-25: ``p - left <= j <= p + right`` with
``p = offset + i``, -1 unbounded). "A fully-masked query row (every key's combined additive bias
is -inf) produces a zero output row, not NaN", for Y and the mode-3 ``qk_matmul_output``.

``qk_matmul_output_mode``: 0 the scaled QK product, 1 after softcap, 2 after the bias, 3 the
softmax (cast to T1). ``softmax_precision`` (1, 10, 11, 16): "the attention weights will be cast
to this type before softmax and then cast back": our reference rounds the scores to that type,
takes the softmax in float64 and rounds the weights to it (and then to T1). A runtime that
rounds each softmax step in that type ("The floating-point precision used in softmax
computation") lands a few of its units away: the tolerance's bound derived per element
(rounding_bound, for every T1) allows exactly that.

Evaluated in float64 (each output rounded once to its type, apart from the softmax_precision
casts the spec names). Spec-silent points: NaN and infinities in the inputs (the spec's additive
pattern makes a NaN or +inf score anywhere in a row, masked or not, poison the row; a runtime that
skips masked keys does not), a negative ``scale`` (sqrt(scale) is NaN; the attribute names the
factor itself), and an integer mask (the text names boolean and float masks only).
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF as _UNIT  # unit roundoff: half a unit in the last place at 1
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Attention", type_param="T1")
st = S.st
VERSIONS = (23, 24, 25)
#: softmax_precision values the spec lists: FLOAT, FLOAT16, DOUBLE, BFLOAT16
PRECISIONS = (1, 10, 11, 16)


def _heads(x: np.ndarray, n) -> np.ndarray:
    """(B, S, n * D) -> (B, n, S, D)."""
    b, s, hidden = x.shape
    n = int(n)
    if n <= 0 or hidden % n:
        raise ValueError(f"hidden size {hidden} is not a multiple of the head count {n}")
    return x.reshape(b, s, n, hidden // n).transpose(0, 2, 1, 3)


def _round(x: np.ndarray, code) -> np.ndarray:
    """x rounded to the ONNX float type ``code``, back in float64."""
    with np.errstate(all="ignore"):
        return x.astype(S.np_dtype(S.label_of(int(code)))).astype(np.float64)


def allowed_keys(b: int, sq: int, total: int, *, since: int, past: int | None, nonpad, is_causal: int,
                 left: int = -1, right: int = -1) -> np.ndarray:
    """(B, 1, Sq, T) boolean: the keys the causal frontier, the window and the padding leave."""
    i = np.arange(sq).reshape(1, 1, sq, 1)
    j = np.arange(total).reshape(1, 1, 1, total)
    if past is not None or since < 24:
        offset = np.full((1, 1, 1, 1), past or 0)
    elif nonpad is not None:
        offset = (np.asarray(nonpad).astype(np.int64) - sq).reshape(-1, 1, 1, 1)
    else:
        offset = np.zeros((1, 1, 1, 1), np.int64)
    p = i + offset
    ok = np.ones((b, 1, sq, total), dtype=bool)
    if is_causal:
        ok &= j <= p
    if left >= 0:
        ok &= j >= p - left
    if right >= 0:
        ok &= j <= p + right
    if nonpad is not None:
        ok &= j < np.asarray(nonpad).astype(np.int64).reshape(-1, 1, 1, 1)
    return ok


def attention(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, since: int,
              is_causal=0, kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0, scale=None, softcap=0.0,
              softmax_precision=None, left_window_size=-1, right_window_size=-1, masked_fill=False):
    """The four outputs (Y, present_key, present_value, qk_matmul_output) of one Attention node.
    ``masked_fill`` (not an attribute: the nonfinite point's reading): a -inf bias replaces the score
    instead of being added to it."""
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    if Q.ndim == 3:
        if q_num_heads is None or kv_num_heads is None:
            raise ValueError("3-D Q, K, V need q_num_heads and kv_num_heads")
        q, k, v = _heads(Q, q_num_heads), _heads(K, kv_num_heads), _heads(V, kv_num_heads)
    elif Q.ndim == 4:
        q, k, v = Q, K, V
    else:
        raise ValueError(f"Q of rank {Q.ndim}: 3-D or 4-D")
    if (past_key is None) != (past_value is None):
        raise ValueError("past_key and past_value go together")
    past = None
    if past_key is not None:
        if nonpad_kv_seqlen is not None:
            raise ValueError("nonpad_kv_seqlen is not used together with past_key / past_value")
        past = past_key.shape[2]
        k = np.concatenate([np.asarray(past_key), k], axis=2)
        v = np.concatenate([np.asarray(past_value), v], axis=2)
    present_key, present_value = k, v  # exact copies, in K's and V's own types
    b, hq, sq, d = q.shape
    hkv, total = k.shape[1], k.shape[2]
    if hq % hkv:
        raise ValueError(f"q_num_heads {hq} is not a multiple of kv_num_heads {hkv}")
    group = hq // hkv
    qf = q.astype(np.float64)
    kf = np.repeat(k.astype(np.float64), group, axis=1)  # query head h reads K/V head h // group
    vf = np.repeat(v.astype(np.float64), group, axis=1)
    s = 1.0 / np.sqrt(d) if scale is None else float(scale)
    if s < 0:
        qk = np.matmul(qf, np.swapaxes(kf, -1, -2)) * s  # the factor the attribute names (see the spec-silent point)
    else:
        r = np.sqrt(s)
        qk = np.matmul(qf * r, np.swapaxes(kf * r, -1, -2))
    capped = softcap * np.tanh(qk / softcap) if softcap else qk
    # the additive bias: the mask, then the causal frontier / window / padding as 0 or -inf
    bias = np.zeros((b, 1, sq, total))
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        mb = np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(np.float64)
        if mb.ndim and mb.shape[-1] < total and mb.shape[-1] != 1:
            if since < 24:
                raise ValueError(f"Attention-23: mask of {mb.shape[-1]} keys for {total}")
            mb = np.concatenate([mb, np.full(mb.shape[:-1] + (total - mb.shape[-1],), -np.inf)], axis=-1)
        bias = bias + mb
    ok = allowed_keys(b, sq, total, since=since, past=past, nonpad=nonpad_kv_seqlen, is_causal=is_causal,
                      left=left_window_size, right=right_window_size)
    bias = np.broadcast_to(bias + np.where(ok, 0.0, -np.inf), (b, hq, sq, total))
    scores = np.where(np.isneginf(bias), -np.inf, capped + bias) if masked_fill else capped + bias
    work = scores if softmax_precision is None else _round(scores, softmax_precision)
    m = np.max(work, axis=-1, keepdims=True) if total else np.zeros(work.shape[:-1] + (1,))
    m = np.where(np.isneginf(m), 0.0, m)  # an all -inf row: exp gives 0 / 0 = NaN, the IEEE result
    e = np.exp(work - m)
    probs = e / np.sum(e, axis=-1, keepdims=True)
    if softmax_precision is not None:
        probs = _round(probs, softmax_precision)
    masked_row = np.all(np.isneginf(bias), axis=-1, keepdims=True)  # "every key's combined bias is -inf"
    probs = np.where(masked_row, 0.0, probs)
    probs_t = _round(probs, S.onnx_code(S.label_of(Q.dtype))) if softmax_precision is not None else probs
    y = np.matmul(probs_t, vf)
    if Q.ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    debug = {0: qk, 1: capped, 2: scores, 3: probs_t}[int(qk_matmul_output_mode)]
    with np.errstate(all="ignore"):
        return (y.astype(Q.dtype), present_key.astype(K.dtype), present_value.astype(V.dtype), debug.astype(Q.dtype))


@op.reference(23)
def attention_23(Q, K, V, attn_mask=None, past_key=None, past_value=None, **attrs):
    with np.errstate(all="ignore"):
        return attention(Q, K, V, attn_mask, past_key, past_value, since=23, **attrs)


@op.reference(24)
def attention_24(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, **attrs):
    with np.errstate(all="ignore"):
        return attention(Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen, since=24, **attrs)


@op.reference(25)
def attention_25(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, **attrs):
    with np.errstate(all="ignore"):
        return attention(Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen, since=25, **attrs)


# -- tolerance: the rounding an evaluation in T1 justifies -------------------------------------
#: the float types' smallest subnormal: a rounding that underflows may lose half of it whatever the magnitude
_TINY = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}


def _gamma(n: int, u: float) -> float:
    """Bound on the relative error of n roundings in a row (Higham's gamma_n)."""
    return n * u / (1 - n * u)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """Per output, how far an evaluation of the spec's pattern with every step rounded in T1 ("If
    softmax precision is not provided, the same precision as the input of softmax (Q and K) is
    used") can land from our value (float64, rounded once), element by element, to first order in
    T1's unit roundoff u (2**-8 for bfloat16, 2**-11 for float16); gamma_n = n u / (1 - n u):

    * a score t_j = sum_d (q_d sqrt(s)) (k_jd sqrt(s)) over the head size D: two scalings, D
      products and D - 1 additions, so |dt_j| <= gamma_(D+2) A_j, A_j = |s| sum_d |q_d| |k_jd|
      (Higham, Accuracy and Stability, 3.1); the softcap c tanh(t / c) adds u |t_j| + 2u |capped_j|
      (tanh contracts the error it is given), the bias addition u |x_j|, a softmax_precision cast
      2u' |x_j|: E_j in all;
    * the softmax over the T keys of a row: the row's max cancels (a common shift), x_j - m rounds
      (u |x_j - m|), so weight j carries e_j = E_j + u |x_j - m| and the rest a shared factor: the
      sum of T exponentials (gamma_(T-1)); exp and the division add r = 2u each weight (with a
      softmax_precision of unit u': exp and division there, then the cast back to T1, 2u' + u);
    * Y_c = sum_j p_j v_jc: a shared factor moves Y by itself only, and a T-term dot product is
      within gamma_T of its terms' magnitudes (its last addition is the backend's last rounding), so
      |dY_c| <= sum_j p_j |v_jc - Y_c| e_j + gamma_(T-1) |Y_c| + (r + gamma_T) sum_j p_j |v_jc|,
      plus u |Y_c| for our one rounding;
    * qk_matmul_output: mode 0 gamma_(D+2) A + 2u |t|, mode 1 and 2 E + 2u |value| (the backend's
      last rounding is in E, ours is one more u), mode 3 p_j (e_j + sum_k p_k e_k + gamma_(T-1) + r + u);
      present_key / present_value are copies (0);
    * each of the at most D + T + 8 roundings behind an element may also underflow, losing up to
      half T1's smallest subnormal: that many halves are added to every bound but the copies'.

    Our reference supplies t, the capped and biased scores, the weights p, the present V and A
    (its qk output with |Q| and |K| fed). Where the inputs hold NaN or an infinity the bound is 0:
    the spec-silent points judge those elements."""
    Q, K, V, mask, pk, pv, nonpad = (list(inputs) + [None] * 7)[:7]
    u = _UNIT[S.label_of(np.asarray(Q).dtype)]
    sp = attrs.get("softmax_precision")
    u_sp = 0.0 if sp is None else max(u, _UNIT[S.label_of(int(sp))])
    r = 2 * u if sp is None else 2 * u_sp + u
    f = lambda x, a=False: None if x is None else (np.abs if a else np.asarray)(np.asarray(x).astype(np.float64))  # noqa: E731
    base = {k: v for k, v in attrs.items() if k != "qk_matmul_output_mode"}

    def ref(mode=0, abs_qk=False):
        with np.errstate(all="ignore"):
            return attention(f(Q, abs_qk), f(K, abs_qk), f(V), mask, f(pk, abs_qk), f(pv), nonpad,
                             since=since, qk_matmul_output_mode=mode, **base)

    y, present_k, present_v, t = ref(0)
    capped, x, p = ref(1)[3], ref(2)[3], ref(3)[3]
    a = np.abs(ref(0, abs_qk=True)[3])
    b, hq, sq, total = np.shape(t)
    d = np.shape(present_k)[-1]
    v = np.repeat(present_v, hq // np.shape(present_v)[1], axis=1)  # query head h reads K/V head h // group
    c = abs(float(attrs.get("softcap", 0.0) or 0.0))
    g_d, g_t, g_t1 = _gamma(d + 2, u), _gamma(total, u), _gamma(max(total - 1, 0), u)
    with np.errstate(all="ignore"):
        qk_err = g_d * a
        capped_err = qk_err + (u * np.abs(t) + 2 * u * np.abs(capped) if c else 0.0)
        finite = np.isfinite(x)
        score_err = np.where(finite, capped_err + (u + 2 * u_sp) * np.abs(x), 0.0)
        m = np.max(np.where(finite, x, -np.inf), axis=-1, keepdims=True, initial=-np.inf)
        e = np.where(finite, score_err + u * np.abs(x - m), 0.0)  # (B, H, Sq, T)
        yh = p @ v  # (B, H, Sq, Dv)
        spread = np.abs(v[:, :, None, :, :] - yh[:, :, :, None, :])  # |v_jc - Y_c|: (B, H, Sq, T, Dv)
        y_bound = (np.einsum("bhij,bhijc->bhic", p * e, spread) + g_t1 * np.abs(yh)
                   + (r + g_t) * (p @ np.abs(v)) + u * np.abs(yh))
        if np.ndim(Q) == 3:
            y_bound = y_bound.transpose(0, 2, 1, 3).reshape(np.shape(y))
        mode = int(attrs.get("qk_matmul_output_mode", 0))
        shown = {0: qk_err + 2 * u * np.abs(t), 1: capped_err + 2 * u * np.abs(capped), 2: score_err + 2 * u * np.abs(x),
                 3: p * (e + np.sum(p * e, axis=-1, keepdims=True) + g_t1 + r + u)}[mode]
        underflow = (d + total + 8) * _TINY[S.label_of(np.asarray(Q).dtype)] / 2
        bounds = [y_bound + underflow, np.zeros(np.shape(present_k)), np.zeros(np.shape(present_v)), shown + underflow]
    return [np.where(np.isfinite(bd), bd, 0.0) for bd in bounds]


# -- spec-silent points ------------------------------------------------------------------------
def _is_float(x) -> bool:
    return x is not None and S.is_float(S.label_of(np.asarray(x).dtype))


def _nonfinite(x) -> bool:
    return _is_float(x) and not bool(np.isfinite(np.asarray(x).astype(np.float64)).all())


def _open_nonfinite(inputs, attrs, expected, since):
    """Open: the Y elements (and mode-3 weights) our reference makes NaN when Q, K, V, the past or
    a float mask holds NaN or an infinity."""
    if not any(_nonfinite(x) for x in inputs[:6]):
        return [None] * len(expected)
    masks = [np.isnan(np.asarray(expected[0]).astype(np.float64))] + [None] * (len(expected) - 1)
    if len(expected) > 3 and int(attrs.get("qk_matmul_output_mode", 0)) == 3:
        masks[3] = np.isnan(np.asarray(expected[3]).astype(np.float64))
    return masks


def _v_columns(c) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per output element of Y (4-D view), the smallest and largest finite V value of its column."""
    V = np.asarray(c.inputs[2]).astype(np.float64)
    three = V.ndim == 3
    v = _heads(V, c.attrs["kv_num_heads"]) if three else V
    if len(c.inputs) > 5 and c.inputs[5] is not None:
        v = np.concatenate([np.asarray(c.inputs[5]).astype(np.float64), v], axis=2)
    fin = np.isfinite(v)
    lo = np.min(np.where(fin, v, np.inf), axis=2, keepdims=True)
    hi = np.max(np.where(fin, v, -np.inf), axis=2, keepdims=True)
    return lo, hi, three


def _nan_zero_or_hull(c) -> bool:
    """Every open element of Y is NaN, 0 (the fully-masked guard) or a convex combination of
    the finite values of its V column (softmax weights are >= 0 and sum to 1)."""
    y = np.asarray(c.actual[0]).astype(np.float64)
    if y.shape != np.shape(c.expected[0]):
        return False
    if c.masks[0] is None or not c.masks[0].any():
        return True
    lo, hi, three = _v_columns(c)
    hq = int(c.attrs.get("q_num_heads", y.shape[1] if y.ndim == 4 else 1))
    group = hq // lo.shape[1]
    lo, hi = np.repeat(lo, group, axis=1), np.repeat(hi, group, axis=1)
    if three:
        y4 = y.reshape(y.shape[0], y.shape[1], hq, -1).transpose(0, 2, 1, 3)
        mask = c.masks[0].reshape(y4.shape[0], y4.shape[2], hq, -1).transpose(0, 2, 1, 3)
    else:
        y4, mask = y, c.masks[0]
    slack = 1e-2 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
    good = np.isnan(y4) | (y4 == 0) | ((y4 >= lo - slack) & (y4 <= hi + slack))
    return bool(np.all(good[mask]))


def _weights_nan_or_unit(c) -> bool:
    if len(c.actual) < 4 or c.masks[3] is None:
        return True
    w = np.asarray(c.actual[3]).astype(np.float64)[c.masks[3]]
    return bool(np.all(np.isnan(w) | ((w >= 0) & (w <= 1))))


op.spec_silent(
    "nonfinite", VERSIONS,
    spec="a float mask of the same type as query, key, value that is added to the attention score [...] at_mask---Add [...] Softmax",
    expected="the spec's pattern in IEEE 754 arithmetic: a NaN or +inf score anywhere in a row (a masked key included: "
             "NaN + -inf is NaN), or a NaN or infinite V value under any weight (0 * inf is NaN), makes the row NaN; "
             "a runtime that skips masked keys (flash attention) keeps it finite",
    where=_open_nonfinite,
    invariants={"each open Y element is NaN, 0 or within the finite range of its V column": _nan_zero_or_hull,
                "each open attention weight (mode 3) is NaN or in [0, 1]": _weights_nan_or_unit},
    readings={"a -inf bias replaces the score (masked_fill) instead of being added: a NaN or +inf score of a masked key "
              "takes no part": lambda c: _reading_of(c, lambda ins, at: (ins, {**at, "masked_fill": True}))})


def _negative_scale(inputs, attrs, expected, since):
    if attrs.get("scale") is None or float(attrs["scale"]) >= 0:
        return [None] * len(expected)
    return [np.ones(np.shape(e), bool) if k in (0, 3) else None for k, e in enumerate(expected)]


def _nan_or_expected(c) -> bool:
    """Every open element is NaN (sqrt of a negative scale) or our value (the factor applied)."""
    for k in (0, 3):
        if k >= len(c.actual) or c.masks[k] is None:
            continue
        a = np.asarray(c.actual[k]).astype(np.float64)
        e = np.asarray(c.expected[k]).astype(np.float64)
        if a.shape != e.shape:
            return False
        close = np.isnan(a) | np.isclose(a, e, rtol=1e-2, atol=1e-2, equal_nan=True)
        if not np.all(close[c.masks[k]]):
            return False
    return True


op.spec_silent(
    "negative_scale", VERSIONS,
    spec="Q*sqrt(scale) K*sqrt(scale)",  # the attribute: "Scaling factor applied to $Q*K^T$ [...] scale `Q`, `K` by `sqrt(scale)` before matmul"
    expected="the product Q*K^T times the (negative) factor, as the attribute defines it; sqrt(scale) of the overflow "
             "advice is NaN for a negative scale (the schema's function body then gives NaN everywhere)",
    where=_negative_scale,
    invariants={"each Y and qk_matmul_output element is NaN or our value": _nan_or_expected},
    readings={"sqrt(scale) taken literally: NaN in every Y and qk_matmul_output element":
              lambda c: [np.full(np.shape(e), np.nan, np.asarray(e).dtype) if k in (0, 3) else None for k, e in enumerate(c.expected)]})


def _integer_mask(inputs, attrs, expected, since):
    m = inputs[3] if len(inputs) > 3 else None
    if m is None or np.asarray(m).dtype == bool or np.asarray(m).dtype == np.asarray(inputs[0]).dtype:
        return [None] * len(expected)
    return [np.ones(np.shape(e), bool) if k in (0, 3) else None for k, e in enumerate(expected)]


def _same_shape(c) -> bool:
    return all(np.shape(a) == np.shape(e) for a, e in zip(c.actual, c.expected))


op.spec_silent(
    "mask_type", VERSIONS,
    spec="`attn_mask`: A boolean mask where a value of `True` indicates that the element should take part in attention "
         "or a float mask of the same type as query, key, value that is added to the attention score.",
    expected="an integer mask, or a float mask of another type than Q, added to the scores as numbers (the schema's "
             "function body casts the bias to T1); the type constraint U allows them but the text names only boolean "
             "masks and float masks of the query's type",
    where=_integer_mask,
    invariants={"the outputs have the expected shapes": _same_shape},
    readings={"the mask read as a boolean one (nonzero: the key takes part)":
              lambda c: _reading_of(c, lambda ins, at: (ins[:3] + [np.asarray(ins[3]) != 0] + ins[4:], at))})


#: how close a backend's value must be to one of the readings of a spec-silent point (the
#: rounding of a computation in the input type, not the gap between the readings)
_CLOSE = {"float64": 1e-6, "float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}


def _close_to(actual, other, dtype_of, attrs=None) -> np.ndarray:
    a = np.asarray(actual).astype(np.float64)
    o = np.asarray(other).astype(np.float64)
    tol = _CLOSE.get(S.label_of(np.asarray(dtype_of).dtype), 1e-2)
    if attrs and attrs.get("softmax_precision") is not None:  # a narrower softmax rounds coarser
        tol = max(tol, _CLOSE[S.label_of(int(attrs["softmax_precision"]))])
    with np.errstate(all="ignore"):
        return (np.abs(a - o) <= tol * np.maximum(1.0, np.abs(o))) | (np.isnan(a) & np.isnan(o)) | (a == o)


def _outputs_or(alternative):
    """Invariant: each open element equals our value or the ``alternative`` reading's (both
    within the input type's rounding)."""
    def holds(c) -> bool:
        other = c.reference(*alternative(c.inputs, c.attrs)[0], **alternative(c.inputs, c.attrs)[1])
        for k, mask in enumerate(c.masks):
            if mask is None or k >= len(c.actual):
                continue
            if np.shape(c.actual[k]) != np.shape(c.expected[k]):
                return False
            ok = _close_to(c.actual[k], c.expected[k], c.inputs[0], c.attrs) | _close_to(c.actual[k], other[k], c.inputs[0], c.attrs)
            if not np.all(ok[mask]):
                return False
        return True
    return holds


def _value_outputs(expected, attrs, modes=(1, 2, 3)):
    """Y, and qk_matmul_output when its mode shows the point."""
    out = [np.ones(np.shape(expected[0]), bool)] + [None] * (len(expected) - 1)
    if len(expected) > 3 and int(attrs.get("qk_matmul_output_mode", 0)) in modes:
        out[3] = np.ones(np.shape(expected[3]), bool)
    return out


def _negative_softcap(inputs, attrs, expected, since):
    if float(attrs.get("softcap", 0.0)) >= 0:
        return [None] * len(expected)
    return _value_outputs(expected, attrs)


op.spec_silent(
    "negative_softcap", VERSIONS,
    spec="softcap (if provided)",  # the attribute (25): "applied as `softcap * tanh(logits / softcap)`. Default value of `0.0` means no soft capping is applied"
    expected="the formula softcap * tanh(qk / softcap) for any non-zero softcap (the schema's function body applies it), "
             "which for a negative softcap equals capping at |softcap|; a runtime may apply no cap unless softcap > 0",
    where=_negative_softcap,
    invariants={"each open element is the capped value (ours) or the uncapped one":
                _outputs_or(lambda ins, at: (ins, {**at, "softcap": 0.0}))},
    readings={"no cap unless softcap > 0": lambda c: _reading_of(c, lambda ins, at: (ins, {**at, "softcap": 0.0}))})


def _mask_one_key(inputs, attrs, expected, since):
    m = inputs[3] if len(inputs) > 3 else None
    if m is None or np.ndim(m) == 0 or np.shape(m)[-1] != 1:
        return [None] * len(expected)
    k = np.asarray(inputs[1])  # Y does not show the key count: take it from K and the past
    total = k.shape[-2] if k.ndim == 4 else k.shape[1]
    if len(inputs) > 4 and inputs[4] is not None:
        total += np.shape(inputs[4])[2]
    if total <= 1:
        return [None] * len(expected)
    return _value_outputs(expected, attrs, modes=(2, 3))


def _padded_mask(inputs, attrs):
    ins = list(inputs)
    m = np.asarray(ins[3])
    k = np.asarray(ins[1])
    total = (k.shape[-2] if k.ndim == 4 else k.shape[1]) + (np.shape(ins[4])[2] if len(ins) > 4 and ins[4] is not None else 0)
    fill = np.zeros(m.shape[:-1] + (total - 1,), bool) if m.dtype == bool else np.full(m.shape[:-1] + (total - 1,), -np.inf).astype(m.dtype)
    ins[3] = np.concatenate([m, fill], axis=-1)
    return ins, attrs


op.spec_silent(
    "mask_one_key", (24, 25),
    spec="Here, the kv_sequence dimension of `attn_mask` can be shorter than `K` and `V`, but still needs to be at least as "
         "long as the maximum value of `nonpad_kv_seqlen`.",  # attn_mask: "Shape must be broadcastable to (..) The last
    # dimension can also be shorter than total_sequence_length and will be padded to total_sequence_length with negative infinity"
    expected="a mask whose last dimension is 1 is broadcast over every key (it is broadcastable, the first rule); "
             "read as a short mask it would be padded and hide every key but the first (the schema's function body pads it)",
    where=_mask_one_key,
    invariants={"each open element is the broadcast reading (ours) or the padded one": _outputs_or(_padded_mask)},
    readings={"a short mask padded with -inf (the schema's function body)": lambda c: _reading_of(c, _padded_mask)})


def _reading_of(c, alternative) -> list:
    """Our outputs on the inputs and attributes ``alternative`` gives (a reading that differs from ours there alone)."""
    ins, attrs = alternative(list(c.inputs), c.attrs)
    return [np.asarray(o).astype(np.asarray(e).dtype) for o, e in zip(c.reference(*ins, **attrs), c.expected)]


def _double_precision(inputs, attrs, expected, since):
    if np.asarray(inputs[0]).dtype != np.float64:
        return [None] * len(expected)
    return _value_outputs(expected, attrs, modes=(0, 1, 2, 3))


def _others_open(c) -> list:
    """Per output, the elements another point leaves open (its invariants decide there), and those a
    narrower softmax moves (the tolerance decides there)."""
    others = (_negative_softcap, _negative_scale, _integer_mask, _open_nonfinite, _narrow_softmax)
    others += (_mask_one_key,) if c.since >= 24 else ()
    out = [np.zeros(np.shape(e), bool) for e in c.expected]
    for point in others:
        for k, m in enumerate(point(c.inputs, c.attrs, c.expected, c.since)):
            if m is not None and k < len(out):
                out[k] = out[k] | np.broadcast_to(np.asarray(m, bool), out[k].shape)
    return out


def _within_float32_scale(c) -> bool:
    taken = _others_open(c)
    for k, mask in enumerate(c.masks):
        if mask is None or k >= len(c.actual):
            continue
        mask = mask & ~taken[k]
        if np.shape(c.actual[k]) != np.shape(c.expected[k]):
            return False
        if not np.all(_close_to(c.actual[k], c.expected[k], c.inputs[0])[mask]):
            return False
    return True


op.spec_silent(
    "float32_scale", VERSIONS,
    spec="Q*sqrt(scale) K*sqrt(scale)",  # the attribute (a 32-bit float): "Default value is `1/sqrt(head_size)`"
    expected="for double inputs, the scale 1/sqrt(head_size) (or the float attribute's value) and its square root in "
             "double precision; the attribute is a 32-bit float and the schema's function body takes sqrt(scale) in "
             "float, so the factor may carry float32 rounding (a relative error near 1e-7)",
    where=_double_precision,
    invariants={"each open element is within 1e-6 (relative) of ours": _within_float32_scale},
    readings={"sqrt(scale) in float32 (the attribute, or 1/sqrt(head_size), and its square root rounded to float32: the "
              "schema's function body)": lambda c: _reading_of(c, lambda ins, at: (ins, {**at, "scale": _float32_sqrt_squared(c)}))})


def _float32_scale(c) -> np.float32:
    """The scale as a 32-bit float: the attribute, or 1/sqrt(head_size) evaluated in float32."""
    if c.attrs.get("scale") is not None:
        return np.float32(c.attrs["scale"])
    q = np.asarray(c.inputs[0])
    d = q.shape[-1] if q.ndim == 4 else q.shape[-1] // int(c.attrs["q_num_heads"])
    return np.float32(1) / np.sqrt(np.float32(d))


def _float32_sqrt_squared(c) -> float:
    """The scale whose square root (in double) is sqrt(scale) evaluated in float32."""
    return float(np.float32(np.sqrt(_float32_scale(c)))) ** 2


_EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def _narrow_softmax(inputs, attrs, expected, since):
    """The outputs a softmax_precision narrower than T1 moves: there a computation of each softmax
    step in that type ('The floating-point precision used in softmax computation') differs from
    ours (exact, rounded once) by up to a few of its units; the tolerance's bound derived with that
    unit (rounding_bound, harness/data/tolerances.toml) allows it, so no point opens them, but the
    float32_scale invariant leaves them to the tolerance."""
    p = attrs.get("softmax_precision")
    if p is None or _EPS[S.label_of(int(p))] <= _EPS[S.label_of(np.asarray(inputs[0]).dtype)]:
        return [None] * len(expected)
    return _value_outputs(expected, attrs, modes=(3,))


# -- examples ----------------------------------------------------------------------------------
def _arr(d, dtype, shape, lo=-2.0, hi=2.0):
    return S.arrays(d, dtype, shape=tuple(shape), lo=lo, hi=hi)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = opset if opset in VERSIONS else max(v for v in VERSIONS if v <= opset)
    b = d(st.integers(1, 2))
    hkv = d(st.integers(1, 2))
    hq = hkv * d(st.integers(1, 2))
    hd, vd = d(st.integers(1, 4)), d(st.integers(1, 3))
    sq, skv = d(st.integers(1, 3)), d(st.integers(0, 3))
    three = d(st.booleans())
    attrs: dict = {}
    use_past = d(st.integers(0, 2)) == 0
    past = d(st.integers(0, 2)) if use_past else None
    nonpad = None
    if since >= 24 and not use_past and d(st.integers(0, 3)) == 0:
        nonpad = np.array(d(st.lists(st.integers(0, skv), min_size=b, max_size=b)), np.int64)
    total = skv + (past or 0)

    def qkv(heads, s, width):
        return _arr(d, dtype, (b, s, heads * width)) if three else _arr(d, dtype, (b, heads, s, width))

    q, k, v = qkv(hq, sq, hd), qkv(hkv, skv, hd), qkv(hkv, skv, vd)
    if three:
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
    pk = _arr(d, dtype, (b, hkv, past, hd)) if use_past else None
    pv = _arr(d, dtype, (b, hkv, past, vd)) if use_past else None
    mask = None
    kind = d(st.sampled_from(["none", "bool", "float"]))
    if kind != "none":
        shape = list(d(st.sampled_from([(sq, total), (1, sq, total), (b, 1, sq, total), (b, hq, sq, total), (1, 1, 1, total), (sq, 1)])))
        if since >= 24 and shape[-1] == total and total > 1 and d(st.integers(0, 3)) == 0:
            shape[-1] = d(st.integers(max(1, int(nonpad.max()) if nonpad is not None and nonpad.size else 1), total))
        if kind == "bool":
            mask = S.arrays(d, "bool", shape=tuple(shape))
        else:
            mask = _arr(d, dtype, shape, lo=-3.0, hi=3.0)
            if mask.size and d(st.booleans()):
                mask.flat[d(st.integers(0, mask.size - 1))] = -np.inf
    if d(st.booleans()):
        attrs["is_causal"] = 1
    if d(st.integers(0, 2)) == 0:
        attrs["softcap"] = d(st.sampled_from([0.0, 0.5, 1.0, 3.0, -2.0]))
    if d(st.integers(0, 2)) == 0:
        attrs["scale"] = d(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0]))
    if d(st.integers(0, 3)) == 0:
        attrs["softmax_precision"] = d(st.sampled_from(PRECISIONS))
    if since >= 25 and d(st.booleans()):
        attrs["left_window_size"] = d(st.integers(-1, 2))
        attrs["right_window_size"] = d(st.integers(-1, 2))
    outputs = 1
    if nonpad is None and d(st.booleans()):
        # onnx's shape inference takes qk_matmul_output's last dimension as 0 when K is empty (past or not)
        outputs = d(st.sampled_from([3, 4])) if skv else 3
        if outputs == 4:
            attrs["qk_matmul_output_mode"] = d(st.integers(0, 3))
    return Example([q, k, v, mask, pk, pv, nonpad], attrs, outputs=outputs)


def _t(x, dtype):
    return np.asarray(x, dtype=np.float64).astype(S.np_dtype(dtype))


def _qkv(dtype, b=1, hq=2, hkv=2, sq=3, skv=3, hd=2, vd=2, past=None):
    """Small fixed 4-D inputs: values k / 8 - 1 (exact in every float type)."""
    n = lambda *shape: _t((np.arange(np.prod(shape)) % 17).reshape(shape) / 8.0 - 1.0, dtype)  # noqa: E731
    q, k, v = n(b, hq, sq, hd), n(b, hkv, skv, hd)[..., ::-1].copy(), n(b, hkv, skv, vd) * _t(0.5, dtype)
    if past is None:
        return [q, k, v]
    return [q, k, v, None, n(b, hkv, past, hd) * _t(-1, dtype), n(b, hkv, past, vd)]


def _ex(inputs, attrs=None, name="", outputs=4):
    return Example(list(inputs), dict(attrs or {}), name=name, outputs=outputs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = opset if opset in VERSIONS else max(v for v in VERSIONS if v <= opset)
    f = lambda x: _t(x, dtype)  # noqa: E731
    q, k, v = _qkv(dtype)
    bool_mask = np.array([[True, False, True], [False, False, False], [True, True, False]])
    float_mask = f([[0.0, -1.0, 0.5], [-np.inf, -np.inf, -np.inf], [2.0, -np.inf, 0.0]])
    out = [
        _ex([q, k, v], name="plain"),
        _ex([q, k, v], {"qk_matmul_output_mode": 1, "softcap": 0.5}, name="softcap_mode1"),
        _ex([q, k, v], {"qk_matmul_output_mode": 2, "softcap": 1.0, "is_causal": 1}, name="softcap_causal_mode2"),
        _ex([q, k, v], {"softcap": -1.0}, name="negative_softcap"),
        _ex([q, k, v, bool_mask], {"qk_matmul_output_mode": 3}, name="bool_mask_masked_row_mode3"),
        _ex([q, k, v, float_mask], {"qk_matmul_output_mode": 3}, name="float_mask_neg_inf_row_mode3"),
        _ex([q, k, v, float_mask], {"qk_matmul_output_mode": 2}, name="float_mask_mode2"),
        _ex([q, k, v, bool_mask[None, None]], {"is_causal": 1, "qk_matmul_output_mode": 3}, name="bool_mask_and_causal"),
        _ex([q, k, v, bool_mask[:1]], name="mask_broadcast_rows", outputs=1),
        _ex([q, k, v, f([[0.0], [1.0], [-np.inf]])], name="mask_broadcast_keys", outputs=1),
        _ex([q, k, v, np.ones((1, 2, 3, 3), bool)], name="mask_per_head", outputs=1),
        _ex([q, k, v], {"is_causal": 1, "qk_matmul_output_mode": 3}, name="causal_square"),
        _ex(_qkv(dtype, sq=2, skv=4), {"is_causal": 1, "qk_matmul_output_mode": 3}, name="causal_cross_top_left"),
        _ex(_qkv(dtype, sq=4, skv=2), {"is_causal": 1}, name="causal_more_queries"),
        _ex([q, k, v], {"scale": 0.25}, name="scale"),
        _ex([q, k, v], {"scale": 0.0, "qk_matmul_output_mode": 3}, name="scale_zero_uniform"),
        _ex([q, k, v], {"scale": -0.5}, name="negative_scale"),
        _ex(_qkv(dtype, hq=4, hkv=2), {"qk_matmul_output_mode": 3}, name="gqa"),
        _ex(_qkv(dtype, hq=3, hkv=1, vd=1), name="mqa"),
        _ex(_qkv(dtype, past=2), {"is_causal": 1, "qk_matmul_output_mode": 3}, name="past_causal"),
        _ex(_qkv(dtype, sq=1, skv=1, past=3), {"qk_matmul_output_mode": 0}, name="decode_step"),
        # offset = past length (2), not total - q length (3): query 0 sees keys 0..2 of 4
        _ex(_qkv(dtype, hq=1, hkv=1, sq=1, skv=2, past=2), {"is_causal": 1, "qk_matmul_output_mode": 3}, name="causal_past_offset"),
        _ex(_qkv(dtype, past=0), name="empty_past"),
        _ex(_qkv(dtype, sq=0), name="empty_query"),
        _ex(_qkv(dtype, skv=0), {"qk_matmul_output_mode": 3}, name="empty_keys"),
        # 3 outputs: onnx's shape inference takes qk_matmul_output's last dimension as 0 when K is empty
        _ex(_qkv(dtype, skv=0, past=2), {"is_causal": 1}, name="empty_new_keys_with_past", outputs=3),
    ]
    for p in PRECISIONS:
        out.append(_ex([q, k, v, float_mask], {"softmax_precision": p, "qk_matmul_output_mode": 3}, name=f"softmax_precision_{p}"))
    # 3-D inputs: heads packed in the last dimension
    q3 = q.transpose(0, 2, 1, 3).reshape(1, 3, 4)
    k3 = k.transpose(0, 2, 1, 3).reshape(1, 3, 4)
    v3 = np.concatenate([v, v[..., :1]], axis=-1).transpose(0, 2, 1, 3).reshape(1, 3, 6)
    out += [
        _ex([q3, k3, v3], {"q_num_heads": 2, "kv_num_heads": 2}, name="three_d"),
        _ex([q3, k3[..., :2], v3[..., :3]], {"q_num_heads": 2, "kv_num_heads": 1, "is_causal": 1}, name="three_d_mqa_causal"),
    ]
    qg, kg, vg = _qkv(dtype, hq=4, hkv=2)
    out.append(_ex([qg.transpose(0, 2, 1, 3).reshape(1, 3, 8), kg.transpose(0, 2, 1, 3).reshape(1, 3, 4),
                    vg.transpose(0, 2, 1, 3).reshape(1, 3, 4), bool_mask], {"q_num_heads": 4, "kv_num_heads": 2, "qk_matmul_output_mode": 3},
                   name="three_d_gqa_mask"))
    # non-finite values
    qn = q.copy()
    qn[0, 0, 0, 0] = np.nan
    kn = k.copy()
    kn[0, 1, 2, 1] = np.inf
    vn = v.copy()
    vn[0, 0, 1, 0] = np.nan
    vi = v.copy()
    vi[0, 1, 0, 1] = -np.inf
    out += [
        _ex([qn, k, v], {"qk_matmul_output_mode": 3}, name="nan_query"),
        _ex([q, kn, v], {"qk_matmul_output_mode": 0}, name="inf_key"),
        _ex([q, k, vn, bool_mask], name="nan_value_under_mask"),
        _ex([q, k, vi], {"is_causal": 1}, name="inf_value_causal"),
        _ex([q, k, v, f([[np.nan, 0, 0], [0, np.inf, 0], [0, 0, 0]])], {"qk_matmul_output_mode": 2}, name="nan_inf_float_mask"),
        _ex([q * f(S.smallest_subnormal(dtype)), k, v], name="subnormal_query"),
        _ex([f(np.where(np.arange(6).reshape(1, 2, 3, 1) % 2, -0.0, 0.0)), k[..., :1], v], name="negative_zero_ties", outputs=1),
        _ex([q, k, v, np.array([[1, 0, -2]], np.int64)], name="integer_mask", outputs=1),
        _ex([q, k, v, np.array([[3, 0, 1]], np.uint8)], name="uint8_mask", outputs=1),
        _ex([q, k, v, np.array([[0.0, -1.0, 0.5]], np.float64 if dtype != "float64" else np.float32)], name="other_float_mask", outputs=1),
        # V (type T2) of another float type than Q, K (T1): Y is T1, present_value T2
    ]
    mixed, t2 = _qkv(dtype, past=1), np.float16 if dtype == "float32" else np.float32
    mixed[2], mixed[5] = mixed[2].astype(t2), mixed[5].astype(t2)
    out.append(_ex(mixed, {"is_causal": 1}, name="value_type_differs", outputs=3))
    if since >= 24:
        nonpad = np.array([2], np.int64)
        out += [
            _ex([q, k, v, None, None, None, nonpad], name="nonpad", outputs=1),
            _ex([q, k, v, None, None, None, nonpad], {"is_causal": 1}, name="nonpad_causal_offset_negative", outputs=1),
            _ex(_qkv(dtype, sq=2, skv=4) + [None, None, None, np.array([3], np.int64)], {"is_causal": 1}, name="nonpad_causal_offset", outputs=1),
            _ex([q, k, v, None, None, None, np.array([0], np.int64)], name="nonpad_zero", outputs=1),
            _ex([q, k, v, bool_mask[:, :2], None, None, nonpad], name="nonpad_short_mask", outputs=1),
            _ex(_qkv(dtype, b=2) + [None, None, None, np.array([3, 1], np.int64)], {"is_causal": 1}, name="nonpad_per_batch", outputs=1),
            _ex([q, k, v, float_mask[:, :2]], {"qk_matmul_output_mode": 2}, name="short_mask_padded"),
            _ex(_qkv(dtype, past=2)[:3] + [bool_mask] + _qkv(dtype, past=2)[4:], name="short_mask_with_past"),
        ]
    if since >= 25:
        sw = _qkv(dtype, sq=4, skv=6)
        out += [
            _ex(sw, {"left_window_size": 2, "right_window_size": 1, "qk_matmul_output_mode": 3}, name="window_spec_example"),
            _ex(sw, {"left_window_size": 2, "right_window_size": 0}, name="window_left_looking"),
            _ex(sw, {"left_window_size": 0, "right_window_size": 0, "qk_matmul_output_mode": 3}, name="window_self_only"),
            _ex(sw, {"left_window_size": 1, "is_causal": 1, "qk_matmul_output_mode": 3}, name="window_and_causal"),
            _ex(sw, {"right_window_size": 2, "is_causal": 1}, name="window_right_and_causal"),
            _ex(_qkv(dtype, past=2), {"left_window_size": 1, "right_window_size": 0}, name="window_with_past"),
            _ex(_qkv(dtype, sq=2, skv=5) + [None, None, None, np.array([4], np.int64)], {"left_window_size": 1, "is_causal": 1},
                name="window_nonpad_offset", outputs=1),
        ]
    return out


# -- how it enters a generated graph -------------------------------------------------------
def _value_bound(ref, ins, attrs) -> np.ndarray:
    """Y is a convex combination of V's rows: it rounds with max |V| over the keys (plus the
    scores' rounding, which moves the weights), not with its own magnitude (which may cancel)."""
    out = ref(*ins, **attrs)
    y = np.asarray(out[0] if isinstance(out, (list, tuple)) else out)
    return np.broadcast_to(max(1.0, float(np.max(np.abs(np.asarray(ins[2], dtype=np.float64)), initial=0.0))), y.shape)


# compute_u: the scale is a 32-bit float attribute (spec-silent point Attention.float32_scale)
@op.fuzz(nan=None, ulps=8.0, bound=_value_bound, type_param="T1", compute_u=2.0**-24)
def fuzz(c: Ctx) -> Plan | None:
    """Self-attention of one 4-D value (batch, heads, sequence, head_size) with itself, or of a
    3-D value with one head; optionally causal. Values are bounded (softmax is smooth)."""
    x = c.take("float", 0, lambda v: v.rank in (3, 4) and v.size > 0 and min(v.shape) > 0
               and bool(np.all(np.abs(v.wide) < 8)) and v.shape[-1] <= 8)
    if x is None:
        return None
    attrs: dict = {}
    if x.rank == 3:
        attrs.update(q_num_heads=1, kv_num_heads=1)
    if c.pick(2):
        attrs["is_causal"] = 1
    return Plan([x, x, x], attrs, n_acc=x.shape[-2] * x.shape[-1], n_outputs=1)
