"""Signal processing: DFT, STFT, the Hann / Hamming / Blackman windows, BitCast.

Complex values travel as a trailing dimension of size 2 (real, imaginary), as the spec lays them
out; real inputs have a trailing dimension of size 1. The transforms run in TensorFlow's complex
type of the input's width (complex64 for float32, complex128 for float64; ``tf.signal`` has no
narrower one, so float16 and bfloat16 are unsupported).
"""

from __future__ import annotations

import math

import tensorflow as tf

from ..base import Unsupported
from .lowering import tf_dtype
from .ops_control import _known
from .registry import lowers

_COMPLEX = {tf.float32: tf.complex64, tf.float64: tf.complex128}


def _as_complex(node, x):
    if x.dtype not in _COMPLEX:
        raise Unsupported(f"{node}: tf.signal has no transform of {x.dtype.name} (complex64 and complex128 only)")
    if x.shape[-1] == 1:
        return tf.complex(x[..., 0], tf.zeros_like(x[..., 0]))
    return tf.complex(x[..., 0], x[..., 1])


def _split(c, dtype):
    return tf.stack([tf.math.real(c), tf.math.imag(c)], axis=-1)


def _fit(c, axis, length):
    """``c`` cut or zero-padded to ``length`` along ``axis``."""
    n = c.shape[axis]
    if n > length:
        return tf.gather(c, tf.range(length), axis=axis)
    if n < length:
        pad = [[0, 0]] * c.shape.rank
        pad[axis] = [0, length - n]
        return tf.pad(c, pad)
    return c


def _dft(node, x, length, axis, inverse, onesided):
    rank = x.shape.rank
    a = axis + rank if axis < 0 else axis
    if a == rank - 1:
        raise ValueError(f"{node}: axis {axis} is the real/imaginary axis")
    signal = _as_complex(node, x)
    n_in = signal.shape[a]
    if length is None:
        length = 2 * (n_in - 1) if (onesided and inverse) else n_in
    perm = [d for d in range(rank - 1) if d != a] + [a]
    back = [perm.index(d) for d in range(rank - 1)]
    moved = tf.transpose(signal, perm)
    if inverse and onesided:  # a one-sided spectrum back to a real signal
        out = tf.signal.irfft(_fit(moved, rank - 2, length // 2 + 1), fft_length=[length])
        return tf.expand_dims(tf.transpose(out, back), -1)
    moved = _fit(moved, rank - 2, length)
    out = tf.signal.ifft(moved) if inverse else tf.signal.fft(moved)
    if onesided and not inverse:
        out = out[..., :length // 2 + 1]
    return _split(tf.transpose(out, back), x.dtype)


@lowers("DFT", 17)
def dft_17(node, x, dft_length=None, *, axis=1, inverse=0, onesided=0):
    return _dft(node, x, int(_known(node, dft_length, "dft_length")) if dft_length is not None else None, axis, inverse, onesided)


@lowers("DFT", 20)
def dft_20(node, x, dft_length=None, axis=None, *, inverse=0, onesided=0):
    length = int(_known(node, dft_length, "dft_length")) if dft_length is not None else None
    if axis is None or tf.get_static_value(axis) is not None:
        return _dft(node, x, length, int(_known(node, axis, "axis")) if axis is not None else -2, inverse, onesided)
    # an axis known only when the graph runs: one branch per possible axis
    rank = x.shape.rank
    a = tf.reshape(tf.cast(axis, tf.int32), [])
    a = tf.where(a < 0, a + rank, a)
    return tf.switch_case(a, [lambda d=d: _dft(node, x, length, d, inverse, onesided) for d in range(rank - 1)])


@lowers("STFT", 17)
def stft(node, signal, frame_step, window=None, frame_length=None, *, onesided=1):
    """Frames of ``frame_length`` every ``frame_step`` samples, times the window, each transformed."""
    step = tf.cast(tf.reshape(frame_step, []), tf.int32)
    sig = _as_complex(node, signal)  # [batch, length]
    length = tf.cast(tf.reshape(frame_length, []), tf.int32) if frame_length is not None else (
        window.shape[0] if window is not None else sig.shape[1])
    frames = tf.signal.frame(sig, length, step, axis=1)  # [batch, frames, length]
    if window is not None:
        frames = frames * tf.cast(window, frames.dtype)
    spec = tf.signal.fft(frames)
    if onesided and signal.shape[-1] == 1:
        spec = spec[..., :length // 2 + 1]
    return _split(spec, signal.dtype)


def _window(node, size, periodic, output_datatype, terms):
    """sum_m terms[m] cos(2 pi m k / N) with N the size (periodic) or size - 1, in float64, then
    the output type (an integer type truncates the value, a sum within 1e-9 of an integer being
    that integer: 0.42 + 0.5 + 0.08 is 1, which float64 sums to 1 - 2**-53)."""
    n = tf.cast(tf.reshape(size, []), tf.int64)
    denom = tf.cast(n if periodic else n - 1, tf.float64)
    k = tf.cast(tf.range(n), tf.float64)
    w = tf.zeros_like(k)
    for m, coef in enumerate(terms):
        w = w + coef * tf.cos(2 * math.pi * m * k / denom)
    out = tf_dtype(output_datatype)
    if not out.is_floating:
        near = tf.round(w)
        w = tf.where(tf.abs(w - near) < 1e-9, near, tf.math.floor(w))  # the values are >= 0: floor truncates
    return tf.cast(w, out)


@lowers("HannWindow", 17)
def hann_window(node, size, *, output_datatype=1, periodic=1):
    return _window(node, size, periodic, output_datatype, (0.5, -0.5))


@lowers("HammingWindow", 17)
def hamming_window(node, size, *, output_datatype=1, periodic=1):
    return _window(node, size, periodic, output_datatype, (25 / 46, -(1 - 25 / 46)))


@lowers("BlackmanWindow", 17)
def blackman_window(node, size, *, output_datatype=1, periodic=1):
    return _window(node, size, periodic, output_datatype, (0.42, -0.5, 0.08))


@lowers("BitCast", 26)
def bit_cast(node, x, *, to):
    """The same bits read as another type of the same width (tf.bitcast); bool through uint8."""
    target = tf_dtype(to)
    src = x.dtype
    if src.size != target.size:
        raise ValueError(f"{node}: {src.name} and {target.name} differ in width")
    if src == tf.bool:
        x = tf.cast(x, tf.uint8)
    if target == tf.bool:
        return tf.cast(tf.bitcast(x, tf.uint8), tf.bool)  # a byte other than 0 or 1 is no bool value
    return tf.bitcast(x, target) if x.dtype != target else tf.identity(x)


@lowers("MelWeightMatrix", 17)
def mel_weight_matrix(node, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *, output_datatype=1):
    """Triangular filters of peak 1 on the mel scale mel(f) = 2595 log10(1 + f / 700) (the spec's);
    the edges one (num_mel_bins + 2)-th of the mel range apart and f Hz in bin
    floor(f (dft_length + 1) / sample_rate) are what the official data holds (the text leaves them
    open). Shape [floor(dft_length / 2) + 1, num_mel_bins]; every input may be data."""
    f64 = tf.float64
    bands = tf.cast(tf.reshape(num_mel_bins, []), tf.int64)
    n_fft = tf.cast(tf.reshape(dft_length, []), tf.int64)
    rate = tf.cast(tf.reshape(sample_rate, []), f64)
    to_mel = lambda f: 2595 * tf.math.log(1 + f / 700) / tf.math.log(tf.constant(10.0, f64))  # noqa: E731
    low, high = to_mel(tf.cast(tf.reshape(lower_edge_hertz, []), f64)), to_mel(tf.cast(tf.reshape(upper_edge_hertz, []), f64))
    mels = low + tf.cast(tf.range(bands + 2), f64) * ((high - low) / tf.cast(bands + 2, f64))
    hz = 700 * (tf.pow(tf.constant(10.0, f64), mels / 2595) - 1)
    edges = tf.floor(hz * tf.cast(n_fft + 1, f64) / rate)
    left, peak, right = edges[:-2], edges[1:-1], edges[2:]
    k = tf.cast(tf.range(n_fft // 2 + 1), f64)[:, None]
    # a side of zero width is a step at the peak
    rising = tf.where(peak > left, (k - left) / tf.maximum(peak - left, 1), tf.cast(k >= peak, f64))
    falling = tf.where(right > peak, (right - k) / tf.maximum(right - peak, 1), tf.cast(k <= peak, f64))
    return tf.cast(tf.clip_by_value(tf.minimum(rising, falling), 0, 1), tf_dtype(output_datatype))
