"""CausalConvWithState: stateful causal depthwise 1-D convolution with an optional fused SiLU
(ONNX spec: CausalConvWithState-27).

input (B, C, L), weight (C, 1, k), the optional bias (C) and past_state (B, C, k - 1) ("If not
provided, padding is zero"). "Replaces the 3-op pattern (Concat + Conv + Slice)": the effective
sequence is past_state followed by input along the last axis (k - 1 + L positions), and output
position t is Conv's depthwise cross-correlation over positions t .. t + k - 1 of it ("causal
(looks only at current and past positions)", "each channel is convolved independently with its
own kernel", weight "a drop-in for a depthwise Conv(group=channels) weight"), plus bias; the
output has "same shape as input". ``activation`` 'silu' and 'swish' (the same function, x *
sigmoid(x)) are applied after the bias; 'none' (the default) leaves it. present_state "Contains
the last (k - 1) values of the effective padded/concatenated sequence ... including any values
from past_state or zero-padding when the current input is shorter than k - 1"; with k = 1 it
is empty (B, C, 0).

Evaluated in float64 (the convolution on a grid where every sum is exact) and rounded once.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back, wide
from ._conv_util import ramp, specials, sub_normal
from .._reduce_util import float_grid
from ._window_util import text

op = Operator("CausalConvWithState")
st = S.st


@op.reference(27)
def causal_conv_with_state(x, weight, bias=None, past_state=None, *, activation="none"):
    x, w = np.asarray(x), np.asarray(weight)
    b, c, length = x.shape
    k = w.shape[2]
    past = np.zeros((b, c, k - 1)) if past_state is None else wide(past_state)
    seq = np.concatenate([past, wide(x)], axis=2)  # (B, C, k - 1 + L)
    ww = wide(w)[:, 0]  # (C, k)
    y = np.zeros((b, c, length))
    for j in range(k):  # tap j of position t reads seq[t + j]; a 0 weight adds 0 * value (IEEE)
        y = y + seq[:, :, j:j + length] * ww[None, :, j:j + 1]
    if bias is not None:
        y = y + wide(bias)[None, :, None]
    mode = text(activation)
    if mode in ("silu", "swish"):
        y = y * (0.5 + 0.5 * np.tanh(0.5 * y))  # x * sigmoid(x), sigmoid without overflow (no case feeds it -inf: -inf * 0)
    elif mode != "none":
        raise ValueError(f"CausalConvWithState: activation {mode!r}")
    present = seq[:, :, seq.shape[2] - (k - 1):] if k > 1 else np.zeros((b, c, 0))
    return [back(y, x), back(present, x)]


@op.strategy(27)
def draw(d, dtype, opset):
    b, c = d(st.integers(1, 2)), d(st.integers(1, 4))
    k = d(st.sampled_from([1, 2, 3, 4]))
    length = d(st.integers(1, 6))
    terms = k + 1
    x = float_grid(d, dtype, (b, c, length), terms, 4.0, 2)
    w = float_grid(d, dtype, (c, 1, k), terms, 4.0, 2)
    bias = float_grid(d, dtype, (c,), terms, 4.0, 2) if d(st.booleans()) else None
    past = float_grid(d, dtype, (b, c, k - 1), terms, 4.0, 2) if d(st.booleans()) else None
    attrs = {}
    act = d(st.sampled_from(["none", "silu", "swish", None]))
    if act is not None:
        attrs["activation"] = act
    return Example([x, w, bias, past], attrs)


@op.edges(27)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    x = ramp(t, (2, 3, 5))
    w = ramp(t, (3, 1, 3), start=2, mod=5, offset=2)
    past = ramp(t, (2, 3, 2), start=4, mod=9, offset=4)
    bias = np.array([0.5, -1, 2], dtype=t)
    out = [
        Example([x, w], {}, name="no_state_zero_padding"),
        Example([x, w, bias, past], {}, name="past_state_bias"),
        Example([x, w, None, past], {"activation": "silu"}, name="silu"),
        Example([x, w, bias, past], {"activation": "swish"}, name="swish"),
        Example([x, w, bias], {"activation": "none"}, name="activation_none"),
        Example([x[:, :, :1].copy(), w, None, past], {}, name="input_shorter_than_state"),  # present keeps part of past_state
        Example([x[:, :, :1].copy(), w], {}, name="input_shorter_no_state"),  # present keeps zero padding
        Example([x, ramp(t, (3, 1, 1)), bias, np.zeros((2, 3, 0), dtype=t)], {}, name="kernel_1_empty_state"),
        Example([x, ramp(t, (3, 1, 1)), bias], {}, name="kernel_1_no_state"),
        Example([x[:, :, :0].copy(), w, None, past], {}, name="empty_sequence"),
        Example([x[:0].copy(), w, None, past[:0].copy()], {}, name="empty_batch"),
        Example([ramp(t, (1, 1, 6)), np.array([[[0, 0, 1]]], dtype=t), None, np.array([[[7, 9]]], dtype=t)], {},
                name="identity_kernel_is_causal"),  # output = input: only the newest tap is 1
        Example([ramp(t, (1, 1, 4)), np.array([[[1, 0, 0]]], dtype=t), None, np.array([[[7, 9]]], dtype=t)], {},
                name="oldest_tap_reads_state"),
    ]
    if S.is_float(dtype):
        out.append(Example([specials(t, (1, 2, 5)), np.ones((2, 1, 2), dtype=t), None, np.ones((1, 2, 1), dtype=t)], {}, name="nan_inf"))
        out.append(Example([sub_normal(x), w, None, sub_normal(past)], {}, name="subnormal_signed_zero"))
        big = S.finite_range(dtype)[1]  # two taps of the largest value: +inf in any accumulation
        out.append(Example([np.full((1, 1, 3), big, dtype=t), np.ones((1, 1, 2), dtype=t), np.ones((1,), dtype=t)],
                           {"activation": "silu"}, name="overflow_silu_large"))
    return out
