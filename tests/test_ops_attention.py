"""Attention family: hand-computed values (softmax weights chosen as 1/4, 3/4 or uniform, right
angles for rotations, one-dimensional recurrences) against our references."""

import math

import numpy as np
import pytest

from operator_cases.nn.attention import attention_23, attention_24, attention_25
from operator_cases.nn.linear_attention import linear_attention_27 as lin
from operator_cases.nn.rotary_embedding import rotary_embedding_23 as rope

L3 = math.log(3.0)


def a4(*values, shape):
    return np.array(values, dtype=np.float64).reshape(shape)


# one query, two keys, head_size 1 (default scale 1): scores [0, ln 3] -> weights [1/4, 3/4]
Q1 = a4(1.0, shape=(1, 1, 1, 1))
K2 = a4(0.0, L3, shape=(1, 1, 2, 1))
V2 = a4(4.0, 8.0, shape=(1, 1, 2, 1))


def test_softmax_weights_and_output():
    y, pk, pv, w = attention_23(Q1, K2, V2, qk_matmul_output_mode=3)
    np.testing.assert_allclose(w.ravel(), [0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(y.ravel(), [7.0], rtol=1e-15)  # 4/4 + 8*3/4
    np.testing.assert_array_equal(pk, K2)  # no past: the present cache is K itself
    np.testing.assert_array_equal(pv, V2)


def test_qk_output_modes():
    q, k = a4(1.0, shape=(1, 1, 1, 1)), a4(0.5, 0.0, shape=(1, 1, 2, 1))
    raw = attention_23(q, k, V2, scale=4.0, qk_matmul_output_mode=0)[3]
    np.testing.assert_allclose(raw.ravel(), [2.0, 0.0])  # (1 * 2) * (0.5 * 2): Q and K scaled by sqrt(4)
    capped = attention_23(q, k, V2, scale=4.0, softcap=1.0, qk_matmul_output_mode=1)[3]
    np.testing.assert_allclose(capped.ravel(), [math.tanh(2.0), 0.0], rtol=1e-15)
    mask = np.array([[0.0, -1.0]])
    biased = attention_23(q, k, V2, mask, scale=4.0, softcap=1.0, qk_matmul_output_mode=2)[3]
    np.testing.assert_allclose(biased.ravel(), [math.tanh(2.0), -1.0], rtol=1e-15)


def test_float_mask_is_added_and_bool_mask_hides():
    zeros = np.zeros((1, 1, 2, 1))
    y = attention_23(Q1, zeros, V2, np.array([[0.0, L3]]))[0]
    np.testing.assert_allclose(y.ravel(), [7.0], rtol=1e-15)
    y = attention_23(Q1, K2, V2, np.array([[False, True]]))[0]
    np.testing.assert_allclose(y.ravel(), [8.0])


def test_fully_masked_row_is_zero_not_nan():
    y, _, _, w = attention_23(Q1, K2, V2, np.array([[False, False]]), qk_matmul_output_mode=3)
    np.testing.assert_array_equal(y.ravel(), [0.0])
    np.testing.assert_array_equal(w.ravel(), [0.0, 0.0])
    y = attention_23(Q1, K2, V2, np.array([[-np.inf, -np.inf]]))[0]  # a float mask of -inf is "fully masked" too
    np.testing.assert_array_equal(y.ravel(), [0.0])
    empty = attention_23(Q1, np.zeros((1, 1, 0, 1)), np.zeros((1, 1, 0, 1)))[0]  # no keys at all
    np.testing.assert_array_equal(empty.ravel(), [0.0])


def test_causal_square_and_with_past_offset():
    q = a4(1.0, 1.0, shape=(1, 1, 2, 1))
    y = attention_23(q, K2, V2, is_causal=1)[0]
    np.testing.assert_allclose(y.ravel(), [4.0, 7.0], rtol=1e-15)  # query 0 sees key 0 only
    # one query after a past of 2 keys and 2 new keys: j <= 0 + past_sequence_length = 2, keys 0..2 (scores all 0)
    k = np.zeros((1, 1, 2, 1))
    past_k, past_v = np.zeros((1, 1, 2, 1)), a4(1.0, 2.0, shape=(1, 1, 2, 1))
    y, pk, pv, _ = attention_23(Q1, k, a4(3.0, 10.0, shape=(1, 1, 2, 1)), None, past_k, past_v, is_causal=1)
    np.testing.assert_allclose(y.ravel(), [2.0], rtol=1e-15)  # (1 + 2 + 3) / 3
    np.testing.assert_array_equal(pv.ravel(), [1.0, 2.0, 3.0, 10.0])
    assert pk.shape == (1, 1, 4, 1)


def test_grouped_query_heads_share_consecutive_kv_heads():
    q = np.zeros((1, 4, 1, 1))
    k = np.zeros((1, 2, 1, 1))
    v = a4(1.0, 5.0, shape=(1, 2, 1, 1))
    y = attention_23(q, k, v)[0]
    np.testing.assert_array_equal(y.ravel(), [1.0, 1.0, 5.0, 5.0])  # head h reads K/V head h // 2


def test_three_d_inputs_pack_heads():
    q = np.array([[[1.0, 1.0]]])  # (B=1, S=1, 2 heads of size 1)
    k = np.array([[[0.0], [L3]]])  # one KV head
    v = np.array([[[4.0], [8.0]]])
    y = attention_23(q, k, v, q_num_heads=2, kv_num_heads=1)[0]
    assert y.shape == (1, 1, 2)
    np.testing.assert_allclose(y.ravel(), [7.0, 7.0], rtol=1e-15)


def test_negative_softcap_is_the_formula():
    q, k = a4(1.0, shape=(1, 1, 1, 1)), a4(2.0, 0.0, shape=(1, 1, 2, 1))
    w = attention_23(q, k, V2, softcap=-1.0, qk_matmul_output_mode=1)[3]
    np.testing.assert_allclose(w.ravel(), [math.tanh(2.0), 0.0], rtol=1e-15)  # -1 * tanh(2 / -1)


def test_nonpad_kv_seqlen_hides_padding_and_shifts_causal():
    k, v = np.zeros((1, 1, 3, 1)), a4(2.0, 4.0, 100.0, shape=(1, 1, 3, 1))
    y = attention_24(Q1, k, v, None, None, None, np.array([2]))[0]
    np.testing.assert_allclose(y.ravel(), [3.0])
    # the spec's picture: S_q = 4, S_k = 8, nonpad 8 -> offset 4: q0 attends k0..k4
    q4, k8 = np.zeros((1, 1, 4, 1)), np.zeros((1, 1, 8, 1))
    w = attention_24(q4, k8, k8, None, None, None, np.array([8]), is_causal=1, qk_matmul_output_mode=3)[3]
    np.testing.assert_allclose(w[0, 0, 0], [0.2] * 5 + [0.0] * 3, rtol=1e-15)
    # nonpad 2 < S_q = 4: offset -2, queries 0 and 1 see no key (zero rows)
    w = attention_24(q4, k8, k8, None, None, None, np.array([2]), is_causal=1, qk_matmul_output_mode=3)[3]
    np.testing.assert_array_equal(w[0, 0, :2], 0.0)
    np.testing.assert_allclose(w[0, 0, 3], [0.5, 0.5] + [0.0] * 6)


def test_short_mask_is_padded_with_minus_inf():
    k, v = np.zeros((1, 1, 3, 1)), a4(2.0, 4.0, 100.0, shape=(1, 1, 3, 1))
    y = attention_24(Q1, k, v, np.array([[True, True]]))[0]
    np.testing.assert_allclose(y.ravel(), [3.0])
    y = attention_24(Q1, k, v, np.array([[0.0]]))[0]  # a last dimension of 1 broadcasts
    np.testing.assert_allclose(y.ravel(), [106.0 / 3], rtol=1e-15)


def test_sliding_window_matches_the_spec_picture():
    q, k = np.zeros((1, 1, 4, 1)), np.zeros((1, 1, 6, 1))
    w = attention_25(q, k, k, left_window_size=2, right_window_size=1, qk_matmul_output_mode=3)[3][0, 0]
    seen = w > 0
    expected = [[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0], [0, 1, 1, 1, 1, 0]]
    np.testing.assert_array_equal(seen, np.array(expected, bool))


def test_softmax_precision_rounds_the_weights():
    w = attention_23(Q1, K2, V2, softmax_precision=10, qk_matmul_output_mode=3)[3]  # float16: 1/4 and 3/4 are exact
    np.testing.assert_array_equal(w.ravel(), [0.25, 0.75])
    q = np.array([[[[1.0]]]], np.float32)
    w = attention_23(q, np.zeros((1, 1, 3, 1), np.float32), np.zeros((1, 1, 3, 1), np.float32),
                     softmax_precision=10, qk_matmul_output_mode=3)[3]
    assert w.dtype == np.float32 and w.ravel()[0] == np.float32(np.float16(1 / 3))


# -- RotaryEmbedding: angle pi/2 (cos 0, sin 1) --------------------------------------------------
X = np.array([[[[1.0, 2.0, 3.0, 4.0]]]], np.float32)  # (B=1, H=1, S=1, D=4)
C0, S1 = np.zeros((1, 1, 2), np.float32), np.ones((1, 1, 2), np.float32)


def test_rotary_halves_and_interleaved():
    np.testing.assert_array_equal(rope(X, C0, S1).ravel(), [-3.0, -4.0, 1.0, 2.0])  # [-x2, x1] with x1, x2 halves
    np.testing.assert_array_equal(rope(X, C0, S1, interleaved=1).ravel(), [-2.0, 1.0, -4.0, 3.0])  # pairs (1,2), (3,4)


def test_rotary_partial_and_position_ids():
    out = rope(X, np.array([[1.0], [0.0]], np.float32), np.array([[0.0], [1.0]], np.float32), np.array([[1]]),
               rotary_embedding_dim=2)
    np.testing.assert_array_equal(out.ravel(), [-2.0, 1.0, 3.0, 4.0])  # position 1 is the right angle; 3, 4 copied
    same = rope(X, np.array([[1.0], [0.0]], np.float32), np.array([[0.0], [1.0]], np.float32), np.array([[0]]),
                rotary_embedding_dim=2)
    np.testing.assert_array_equal(same, X)  # position 0: angle 0


def test_rotary_three_d_with_num_heads():
    x3 = np.array([[[1.0, 2.0, 5.0, 6.0]]], np.float32)  # (B=1, S=1, 2 heads of size 2)
    out = rope(x3, np.zeros((1, 1, 1), np.float32), np.ones((1, 1, 1), np.float32), num_heads=2)
    np.testing.assert_array_equal(out.ravel(), [-2.0, 1.0, -6.0, 5.0])


# -- LinearAttention: one head, d_k = d_v = 1, q = k = 1, v = 2 then 3 ------------------------------
QL = np.ones((1, 2, 1), np.float32)
VL = np.array([[[2.0], [3.0]]], np.float32)
HEADS = {"q_num_heads": 1, "kv_num_heads": 1, "scale": 1.0}
HALF = np.full((1, 2, 1), math.log(0.5), np.float32)


@pytest.mark.parametrize("rule, decay, beta, outputs", [
    ("linear", None, None, [2.0, 5.0]),                                     # S: 2, 2 + 3
    ("gated", np.array([[[0.0], [math.log(0.5)]]], np.float32), None, [2.0, 4.0]),   # S: 2, 2/2 + 3
    ("delta", None, np.full((1, 2, 1), 0.5, np.float32), [1.0, 2.0]),       # S: 0.5 * 2, 1 + 0.5 * (3 - 1)
    ("gated_delta", HALF, np.ones((1, 2, 1), np.float32), [2.0, 3.0]),      # S: 2, 1 + (3 - 1)
])
def test_linear_attention_update_rules(rule, decay, beta, outputs):
    out, state = lin(QL, QL, VL, None, decay, beta, update_rule=rule, **HEADS)
    np.testing.assert_allclose(out.ravel(), outputs, rtol=1e-6)
    np.testing.assert_allclose(state.ravel(), outputs[-1:], rtol=1e-6)


def test_linear_attention_past_default_scale_gqa_and_per_key_decay():
    past = np.array([[[[10.0]]]], np.float32)
    out, state = lin(QL[:, :1], QL[:, :1], VL[:, :1], past, update_rule="linear", **HEADS)
    np.testing.assert_allclose([out.item(), state.item()], [12.0, 12.0])
    # d_k = 4: the default scale is 1/2; query (1, 0, 0, 0) reads the first row of S = k (x) v
    q = np.array([[[1.0, 0.0, 0.0, 0.0]]], np.float32)
    k = np.array([[[2.0, 0.0, 0.0, 0.0]]], np.float32)
    out, _ = lin(q, k, np.array([[[3.0]]], np.float32), q_num_heads=1, kv_num_heads=1, update_rule="linear")
    np.testing.assert_allclose(out.ravel(), [3.0])  # 0.5 * 2 * 3
    # two query heads read one state
    out, _ = lin(np.array([[[1.0, -1.0]]], np.float32), QL[:, :1], VL[:, :1], q_num_heads=2, kv_num_heads=1,
                 update_rule="linear", scale=1.0)
    np.testing.assert_allclose(out.ravel(), [2.0, -2.0])
    # per-key decay scales rows of S: S0 = I, decay (0, ln 1/2), k = 0: S = diag(1, 1/2)
    eye = np.eye(2, dtype=np.float32)[None, None]
    _, state = lin(np.zeros((1, 1, 2), np.float32), np.zeros((1, 1, 2), np.float32), np.zeros((1, 1, 2), np.float32), eye,
                   np.array([[[0.0, math.log(0.5)]]], np.float32), update_rule="gated", **HEADS)
    np.testing.assert_allclose(state[0, 0], [[1.0, 0.0], [0.0, 0.5]], rtol=1e-6)


def test_linear_attention_empty_sequence_keeps_the_past():
    past = np.full((1, 1, 1, 1), 7.0, np.float32)
    out, state = lin(QL[:, :0], QL[:, :0], VL[:, :0], past, HALF[:, :0], np.ones((1, 0, 1), np.float32), **HEADS)
    assert out.shape == (1, 0, 1)
    np.testing.assert_array_equal(state, past)
