"""Recurrent family (RNN, GRU, LSTM): one- and two-step recurrences worked by hand from the spec's
equations (math.tanh, math.exp), against our references."""

import math

import numpy as np
import pytest

from operator_cases.rnn.gru import gru
from operator_cases.rnn.lstm import lstm
from operator_cases.rnn.rnn import rnn

f32 = np.float32


def sig(v):
    return 1.0 / (1.0 + math.exp(-v))


def a(*shape_and_values):
    *shape, values = shape_and_values
    return np.array(values, dtype=np.float64).reshape(shape)


def test_rnn_two_steps_default_tanh():
    # Ht = tanh(Xt*Wi^T + Ht-1*Ri^T + Wbi + Rbi), W = 0.5, R = 0.25, Wb = 0.1, Rb = 0.2
    X, W, R, B = a(2, 1, 1, [1.0, 2.0]), a(1, 1, 1, [0.5]), a(1, 1, 1, [0.25]), a(1, 2, [0.1, 0.2])
    h1 = math.tanh(0.5 + 0.3)
    h2 = math.tanh(1.0 + 0.25 * h1 + 0.3)
    Y, Y_h = rnn(X, W, R, B, hidden_size=1)
    np.testing.assert_allclose(Y.ravel(), [h1, h2], rtol=1e-15)
    np.testing.assert_allclose(Y_h.ravel(), [h2], rtol=1e-15)


def test_rnn_reverse_with_sequence_lens_pads_with_zeros():
    # batch entry 0 has length 1: only its step 0; entry 1 runs step 1 then step 0
    X = a(2, 2, 1, [1.0, 1.0, 2.0, 3.0])  # X[t, b]
    W, R, B = a(1, 1, 1, [0.5]), a(1, 1, 1, [0.25]), a(1, 2, [0.1, 0.2])
    e0 = math.tanh(0.5 * 1.0 + 0.3)
    e1_t1 = math.tanh(0.5 * 3.0 + 0.3)
    e1_t0 = math.tanh(0.5 * 1.0 + 0.25 * e1_t1 + 0.3)
    Y, Y_h = rnn(X, W, R, B, np.array([1, 2], np.int32), direction="reverse", hidden_size=1)
    np.testing.assert_allclose(Y[:, 0, :, 0], [[e0, e1_t0], [0.0, e1_t1]], rtol=1e-15)
    np.testing.assert_allclose(Y_h.ravel(), [e0, e1_t0], rtol=1e-15)


def test_bidirectional_activation_parameters_are_consumed_in_order():
    # activations [LeakyRelu, HardSigmoid]: alpha 0.1 goes to LeakyRelu, 0.3 to HardSigmoid; beta 0.7 to HardSigmoid
    X = a(1, 1, 1, [-2.0])
    W, R = a(2, 1, 1, [1.0, 1.0]), a(2, 1, 1, [0.0, 0.0])
    Y, Y_h = rnn(X, W, R, direction="bidirectional", activations=["LeakyRelu", "HardSigmoid"],
                 activation_alpha=[0.1, 0.3], activation_beta=[0.7])
    np.testing.assert_allclose(Y.ravel(), [-0.2, 0.3 * -2.0 + 0.7], rtol=1e-15)


@pytest.mark.parametrize("name, x, want", [
    ("Relu", -1.5, 0.0), ("Sigmoid", 0.0, 0.5), ("Affine", 2.0, 2.0),  # Affine defaults alpha 1, beta 0
    ("LeakyRelu", -2.0, -0.02), ("ThresholdedRelu", 1.0, 1.0), ("ThresholdedRelu", 0.5, 0.0),  # x >= alpha (1.0)
    ("ScaledTanh", 0.5, math.tanh(0.5)), ("HardSigmoid", 1.0, 0.7), ("HardSigmoid", 4.0, 1.0),
    ("Elu", -1.0, math.exp(-1.0) - 1.0), ("Softsign", -3.0, -0.75), ("Softplus", 0.0, math.log(2.0)),
    ("Softplus", 1000.0, 1000.0),  # log(1 + e^1000) = 1000 in float64 rounding; no overflow to inf
])
def test_each_activation_with_its_defaults(name, x, want):
    # W = 1, R = 0: Ht = f(Xt)
    Y, _ = rnn(a(1, 1, 1, [x]), a(1, 1, 1, [1.0]), a(1, 1, 1, [0.0]), activations=[name])
    assert float(Y.ravel()[0]) == pytest.approx(want, rel=1e-15, abs=1e-300)


def _gru_gates(x, h, w, r, b):
    wz, wr, wh = w
    rz, rr, rh = r
    wbz, wbr, wbh, rbz, rbr, rbh = b
    z = sig(x * wz + h * rz + wbz + rbz)
    rg = sig(x * wr + h * rr + wbr + rbr)
    return z, rg, wh, rh, wbh, rbh


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_one_step_both_reset_placements(lbr):
    x, h0 = 0.7, -0.4
    w, r, b = [0.3, -0.6, 0.9], [0.5, 0.2, -0.8], [0.1, -0.2, 0.3, 0.05, 0.15, -0.45]
    z, rg, wh, rh, wbh, rbh = _gru_gates(x, h0, w, r, b)
    if lbr:  # ht = g(Xt*Wh^T + rt (.) (Ht-1*Rh^T + Rbh) + Wbh)
        hh = math.tanh(x * wh + rg * (h0 * rh + rbh) + wbh)
    else:  # ht = g(Xt*Wh^T + (rt (.) Ht-1)*Rh^T + Rbh + Wbh)
        hh = math.tanh(x * wh + (rg * h0) * rh + rbh + wbh)
    want = (1 - z) * hh + z * h0
    Y, Y_h = gru(a(1, 1, 1, [x]), a(1, 3, 1, w), a(1, 3, 1, r), a(1, 6, b), None, a(1, 1, 1, [h0]),
                 hidden_size=1, linear_before_reset=lbr)
    assert float(Y_h.ravel()[0]) == pytest.approx(want, rel=1e-14)
    assert float(Y.ravel()[0]) == pytest.approx(want, rel=1e-14)


def test_gru_version_1_default_direction_spelled_foward_is_forward():
    x = a(2, 1, 1, [0.5, -1.0])
    w, r = a(1, 3, 1, [0.3, -0.6, 0.9]), a(1, 3, 1, [0.5, 0.2, -0.8])
    np.testing.assert_array_equal(gru(x, w, r, direction="foward")[0], gru(x, w, r)[0])


def _lstm_step(x, h, c, w, r, b, p, input_forget=False, clip=None):
    wi, wo, wf, wc = w
    ri, ro, rf, rc = r
    wbi, wbo, wbf, wbc, rbi, rbo, rbf, rbc = b
    pi, po, pf = p
    cl = (lambda v: max(-clip, min(clip, v))) if clip is not None else (lambda v: v)
    i = sig(cl(x * wi + h * ri + pi * c + wbi + rbi))
    f = 1 - i if input_forget else sig(cl(x * wf + h * rf + pf * c + wbf + rbf))
    cc = math.tanh(cl(x * wc + h * rc + wbc + rbc))
    C = f * c + i * cc
    o = sig(cl(x * wo + h * ro + po * C + wbo + rbo))
    return o * math.tanh(C), C


@pytest.mark.parametrize("input_forget, clip", [(0, None), (1, None), (0, 0.3)])
def test_lstm_one_step_with_peepholes(input_forget, clip):
    x, h0, c0 = 1.2, 0.3, -0.8
    w, r = [0.4, -0.7, 0.2, 0.9], [0.1, 0.6, -0.3, 0.5]
    b, p = [0.05, -0.1, 0.2, 0.0, 0.1, 0.3, -0.2, 0.15], [0.5, -0.4, 0.25]
    H, C = _lstm_step(x, h0, c0, w, r, b, p, bool(input_forget), clip)
    attrs = {"hidden_size": 1, "input_forget": input_forget}
    if clip is not None:
        attrs["clip"] = clip
    Y, Y_h, Y_c = lstm(a(1, 1, 1, [x]), a(1, 4, 1, w), a(1, 4, 1, r), a(1, 8, b), None, a(1, 1, 1, [h0]), a(1, 1, 1, [c0]),
                       a(1, 3, p), **attrs)
    assert float(Y_h.ravel()[0]) == pytest.approx(H, rel=1e-14)
    assert float(Y_c.ravel()[0]) == pytest.approx(C, rel=1e-14)
    assert float(Y.ravel()[0]) == pytest.approx(H, rel=1e-14)


def test_lstm_defaults_zero_state_and_no_bias():
    # i = f = o = sigmoid(x), c~ = tanh(x) with W = 1, R = 0; C = i * c~; H = o * tanh(C)
    x = 0.6
    Y, Y_h, Y_c = lstm(a(1, 1, 1, [x]), a(1, 4, 1, [1.0] * 4), a(1, 4, 1, [0.0] * 4))
    C = sig(x) * math.tanh(x)
    assert float(Y_c.ravel()[0]) == pytest.approx(C, rel=1e-15)
    assert float(Y_h.ravel()[0]) == pytest.approx(sig(x) * math.tanh(C), rel=1e-15)


def test_layout_1_is_the_batch_major_transpose():
    rng = np.random.default_rng(3)
    X, W, R = rng.uniform(-1, 1, (3, 2, 2)), rng.uniform(-1, 1, (2, 8, 2)), rng.uniform(-1, 1, (2, 8, 2))
    h0 = rng.uniform(-1, 1, (2, 2, 2))
    lens = np.array([3, 1], np.int32)
    Y0, H0, C0 = lstm(X, W, R, None, lens, h0, direction="bidirectional", layout=0)
    Y1, H1, C1 = lstm(X.transpose(1, 0, 2), W, R, None, lens, h0.transpose(1, 0, 2), direction="bidirectional", layout=1)
    np.testing.assert_array_equal(Y1, Y0.transpose(2, 0, 1, 3))
    np.testing.assert_array_equal(H1, H0.transpose(1, 0, 2))
    np.testing.assert_array_equal(C1, C0.transpose(1, 0, 2))


def test_seq_length_0_keeps_the_initial_state():
    h0 = a(1, 2, 1, [0.25, -0.5])
    Y, Y_h = rnn(np.zeros((0, 2, 1)), a(1, 1, 1, [1.0]), a(1, 1, 1, [1.0]), None, None, h0)
    assert Y.shape == (0, 1, 2, 1)
    np.testing.assert_array_equal(Y_h, h0)


def test_outputs_keep_the_input_type_and_nan_propagates():
    X = np.array([[[np.nan]], [[1.0]]], f32)
    Y, Y_h = rnn(X, np.ones((1, 1, 1), f32), np.full((1, 1, 1), 0.5, f32))
    assert Y.dtype == f32 and Y_h.dtype == f32
    assert np.isnan(Y).all()  # tanh(NaN) = NaN, and the NaN state feeds the next step


def test_invalid_inputs_are_refused():
    with pytest.raises(ValueError):
        rnn(np.zeros((2, 1, 1)), np.ones((1, 1, 1)), np.ones((1, 1, 1)), None, np.array([3], np.int32))  # length > seq_length
    with pytest.raises(ValueError):
        rnn(np.zeros((2, 1, 1)), np.ones((1, 1, 1)), np.ones((1, 1, 1)), hidden_size=2)
    with pytest.raises(ValueError):
        rnn(np.zeros((2, 1, 1)), np.ones((1, 1, 1)), np.ones((1, 1, 1)), activations=["Gelu"])


def test_padding_point_opens_only_the_padded_steps_and_checks_them():
    from harness.registry import SPEC_SILENT, SilentCheck

    point = SPEC_SILENT["RNN.padding"]
    X, W, R = a(2, 1, 1, [1.0, 2.0]), a(1, 1, 1, [0.5]), a(1, 1, 1, [0.25])
    lens = np.array([1], np.int32)
    inputs, attrs = [X, W, R, None, lens], {"hidden_size": 1}
    expected = rnn(*inputs, **attrs)
    masks = point.masks(inputs, attrs, expected, 7)
    assert masks[0].ravel().tolist() == [False, True] and not masks[1].any()
    (invariant,) = point.invariants.values()
    h = math.tanh(0.5)

    def keeps(y1):
        actual = [a(2, 1, 1, 1, [h, y1]), a(1, 1, 1, [h])]
        return invariant(SilentCheck(inputs, attrs, expected, actual, masks, 7))

    assert keeps(0.0) and keeps(h)  # zeros, or the entry's state carried on
    assert not keeps(0.3)
