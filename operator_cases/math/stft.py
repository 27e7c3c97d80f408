"""STFT: the short-time Fourier transform (ONNX spec: STFT-17).

"sliding a window of length frame_length over the signal with a step size of frame_step,
computing a DFT of each windowed frame"; "frames = floor((signal_length - frame_length) /
frame_step) + 1". ``frame_length`` "When omitted and window is provided, frame_length is
inferred from window.shape[0]. When both window and frame_length are omitted, frame_length
defaults to signal_length"; the window, when omitted, is "a rectangular (all-ones) window".
``onesided`` (default 1) keeps the first frame_length // 2 + 1 bins ("dft_unique_bins");
"if the input or window tensors are complex, then onesided output is not possible", so a complex
signal is drawn with onesided = 0 only. Output [batch][frames][bins][2].

Frame ``f`` is ``signal[:, f * frame_step : f * frame_step + frame_length] * window`` and its
DFT the sum of the DFT operator (y[k] = sum_n e^{-2 pi j k n / N} x[n], N = frame_length),
computed in complex128 and rounded once. A frame with inf or NaN: spec-silent as for DFT (the
IEEE complex products make NaN or inf depending on how they are formed).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF
from harness.registry import Example, Operator

from ._signal_util import from_complex, magnitudes, to_complex, transform_bound

op = Operator("STFT")
st = S.st


def _geometry(signal, frame_step, window, frame_length):
    length = np.asarray(signal).shape[1]
    step = int(np.asarray(frame_step))
    if frame_length is not None:
        fl = int(np.asarray(frame_length))
        if window is not None and np.asarray(window).shape[0] != fl:
            raise ValueError(f"window of length {np.asarray(window).shape[0]} with frame_length {fl}")
    else:
        fl = np.asarray(window).shape[0] if window is not None else length
    if step < 1 or fl < 1 or fl > length:
        raise ValueError(f"STFT: frame_step {step}, frame_length {fl}, signal length {length}")
    return step, fl, (length - fl) // step + 1


@op.reference(17)
def stft(signal, frame_step, window=None, frame_length=None, *, onesided=1):
    x = np.asarray(signal)
    step, fl, frames = _geometry(signal, frame_step, window, frame_length)
    c = to_complex(x)  # [batch, length]
    w = np.ones(fl) if window is None else np.asarray(window).astype(np.float64)
    idx = np.arange(frames)[:, None] * step + np.arange(fl)[None, :]
    framed = c[:, idx] * w  # [batch, frames, fl]
    if onesided:
        if x.shape[-1] != 1:
            raise ValueError("STFT: onesided output of a complex signal")
        spec = np.fft.rfft(framed.real, fl, axis=-1)
    else:
        spec = np.fft.fft(framed, fl, axis=-1)
    return from_complex(spec, x.dtype)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """The allowance per output (``_signal_util.transform_bound``): each bin of a frame sums the
    frame_length windowed terms x_n w_n (one more rounding a term, the window's product), bounded
    by gamma_K(u_acc) times twice the frame's sum of (|re x_n| + |im x_n|) |w_n| (the op applied to
    those magnitudes and |window|, bin 0). "computing a DFT of each windowed frame": the windowed
    frame may be a tensor of T, each x_n w_n rounded there before the sum (onnx.reference does so),
    which adds u_T sum |x_n w_n| (``stored``)."""
    signal, frame_step = inputs[0], inputs[1]
    window = inputs[2] if len(inputs) > 2 else None
    frame_length = inputs[3] if len(inputs) > 3 else None
    x = np.asarray(signal)
    wide_w = None if window is None else np.asarray(window).astype(np.float64)
    y = stft(x.astype(np.float64), frame_step, wide_w, frame_length, **attrs)
    mag = stft(magnitudes(x), frame_step, None if window is None else np.abs(wide_w), frame_length, **attrs)
    fl = _geometry(signal, frame_step, window, frame_length)[1]
    stored = 0.0 if window is None else ROUNDOFF[S.label_of(x.dtype)]  # no window: x * 1 is x
    return [transform_bound(y, np.broadcast_to(mag[:, :, :1, :1], y.shape), fl, x, extra=1, stored=stored)]


def _open_frames(inputs, attrs, expected, since):
    """Open: every output of a frame whose windowed samples hold inf or NaN."""
    x = np.asarray(inputs[0]).astype(np.float64)
    window = inputs[2] if len(inputs) > 2 else None
    w_bad = window is not None and not np.isfinite(np.asarray(window).astype(np.float64)).all()
    if np.isfinite(x).all() and not w_bad:
        return [None] * len(expected)
    step, fl, frames = _geometry(inputs[0], inputs[1], window, inputs[3] if len(inputs) > 3 else None)
    bad = ~np.isfinite(x).all(axis=-1)  # [batch, length]
    idx = np.arange(frames)[:, None] * step + np.arange(fl)[None, :]
    frame_bad = bad[:, idx].any(axis=-1) | bool(w_bad)  # [batch, frames]
    return [np.broadcast_to(frame_bad[:, :, None, None], np.shape(expected[0]))]


def _some_nonfinite(c) -> bool:
    a = np.asarray(c.actual[0]).astype(np.float64)
    return a.shape == np.shape(c.expected[0]) and bool((~np.isfinite(a[c.masks[0]])).any())


op.spec_silent(
    "nonfinite", (17,),
    spec="computing a DFT of each windowed frame.",
    expected="numpy.fft's values (a real frame's DC bin has imaginary part 0, where IEEE complex products of inf give NaN)",
    where=_open_frames, invariants={"some output of each such frame is inf or NaN": _some_nonfinite})


def _i(v, label="int64"):
    return None if v is None else np.array(v, dtype=S.np_dtype(label))


@op.strategy(17)
def draw(d, dtype, opset):
    batch = d(st.integers(1, 2))
    length = d(st.integers(1, 16))
    complex_in = d(st.integers(0, 3)) == 0
    x = S.arrays(d, dtype, shape=(batch, length, 2 if complex_in else 1), lo=-4, hi=4)
    fl = d(st.integers(1, min(length, 10)))
    step = d(st.integers(1, 5))
    how = d(st.sampled_from(["window", "length", "both", "neither"]))
    if how == "neither":
        fl = length
    window = S.arrays(d, dtype, shape=(fl,), lo=0, hi=1) if how in ("window", "both") else None
    attrs = {}
    if complex_in:
        attrs["onesided"] = 0
    elif d(st.booleans()):
        attrs["onesided"] = d(st.integers(0, 1))
    label = d(st.sampled_from(["int64", "int32"]))
    return Example([x, _i(step, label), window, _i(fl, label) if how in ("length", "both") else None], attrs)


@op.edges(17)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    sig = np.sin(np.arange(12.0) * 0.7).reshape(1, 12, 1)
    two = np.concatenate([sig, np.cos(np.arange(12.0)).reshape(1, 12, 1)], axis=0)
    cplx = np.concatenate([sig, np.cos(np.arange(12.0)).reshape(1, 12, 1)], axis=-1)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 4)
    special = sig.copy()
    special[0, 1, 0], special[0, 5, 0], special[0, 9, 0], special[0, 10, 0] = np.nan, np.inf, -0.0, -np.inf
    tiny = S.smallest_subnormal(dtype)
    i = _i
    return [
        Example([sig.astype(t), i(2), hann.astype(t), i(4)], name="window_and_length"),
        Example([sig.astype(t), i(3), hann.astype(t)], name="window_gives_length"),
        Example([sig.astype(t), i(4), None, i(5)], name="length_rectangular"),
        Example([sig.astype(t), i(1)], name="neither_whole_signal"),
        Example([two.astype(t), i(5), None, i(3)], name="step_beyond_frame"),
        Example([sig.astype(t), i(1), None, i(1)], name="frame_length_1"),
        Example([sig.astype(t), i(2), hann.astype(t), i(4)], {"onesided": 0}, name="real_twosided"),
        Example([sig.astype(t), i(3), hann.astype(t)], {"onesided": 1}, name="onesided_explicit"),
        Example([cplx.astype(t), i(2), hann.astype(t), i(4)], {"onesided": 0}, name="complex_signal"),
        Example([sig.astype(t), i(2, "int32"), hann.astype(t), i(4, "int32")], name="int32_step_length"),
        Example([np.zeros((0, 8, 1), dtype=t), i(2), None, i(4)], name="empty_batch"),
        Example([special.astype(t), i(2), hann.astype(t), i(4)], name="nan_inf_neg_zero"),
        Example([(sig * tiny).astype(t), i(2), None, i(4)], name="subnormal"),
    ]
