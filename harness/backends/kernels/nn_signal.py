"""Signal kernels: DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix."""

from __future__ import annotations

import numpy as np
from onnx import helper

from .registry import register


def _np_dtype(onnx_type: int):
    return helper.tensor_dtype_to_np_dtype(int(onnx_type))


def _scalar(v, default=None):
    if v is None:
        return default
    a = np.asarray(v).reshape(-1)
    if a.size == 0:
        return default
    return a[0].item()


def _to_complex(x):
    """[..., 1] real or [..., 2] complex -> complex array (without the last axis)."""
    # single precision in, single precision transform (numpy's pocketfft has float32 kernels)
    fd = np.float64 if x.dtype == np.float64 else np.float32
    if x.shape[-1] == 1:
        return x[..., 0].astype(fd), False
    z = np.empty(x.shape[:-1], dtype=np.complex128 if fd == np.float64 else np.complex64)
    z.real = x[..., 0]
    z.imag = x[..., 1]
    return z, True


def _from_complex(z, dtype):
    out = np.stack([z.real, z.imag], axis=-1)
    return out.astype(dtype, copy=False)


def _fix_length(z, axis, n):
    L = z.shape[axis]
    if n == L:
        return z
    if n < L:
        return np.take(z, np.arange(n), axis=axis)
    widths = [(0, 0)] * z.ndim
    widths[axis] = (0, n - L)
    return np.pad(z, widths)


def _dft(x, axis, dft_length, inverse, onesided):
    dtype = x.dtype
    r = x.ndim
    ax = axis % r if axis >= 0 else axis + r
    if ax >= r - 1:
        raise ValueError("DFT axis must not be the complex axis")
    z, _ = _to_complex(x)
    if inverse and onesided:
        n = int(dft_length) if dft_length is not None else 2 * (z.shape[ax] - 1)
        y = np.fft.irfft(z, n=n, axis=ax)
        return y[..., None].astype(dtype, copy=False)
    n = int(dft_length) if dft_length is not None else z.shape[ax]
    z = _fix_length(z, ax, n)
    if inverse:
        y = np.fft.ifft(z, axis=ax)
    else:
        y = np.fft.fft(z, axis=ax)
        if onesided:
            y = np.take(y, np.arange(n // 2 + 1), axis=ax)
    return _from_complex(y, dtype)


@register("DFT", since=17)
def dft_17(node):
    attrs = node.attrs
    axis = int(attrs.get("axis", 1))
    inverse = int(attrs.get("inverse", 0))
    onesided = int(attrs.get("onesided", 0))

    def run(x, dft_length=None):
        return (_dft(x, axis, _scalar(dft_length), inverse, onesided),)

    return run


@register("DFT", since=20)
def dft_20(node):
    attrs = node.attrs
    inverse = int(attrs.get("inverse", 0))
    onesided = int(attrs.get("onesided", 0))

    def run(x, dft_length=None, axis=None):
        return (_dft(x, int(_scalar(axis, -2)), _scalar(dft_length), inverse, onesided),)

    return run


@register("STFT", since=17)
def stft(node):
    onesided = int(node.attrs.get("onesided", 1))

    def run(signal, frame_step, window=None, frame_length=None):
        dtype = signal.dtype
        z, is_complex = _to_complex(signal)  # (batch, length)
        step = int(_scalar(frame_step))
        fl = _scalar(frame_length)
        if fl is None:
            fl = window.shape[0] if window is not None else z.shape[1]
        fl = int(fl)
        frames = (z.shape[1] - fl) // step + 1
        view = np.lib.stride_tricks.sliding_window_view(z, fl, axis=1)[:, ::step][:, :frames]  # (B, F, fl)
        if window is not None:
            view = view * np.asarray(window).astype(view.real.dtype)
        if onesided and not is_complex:
            y = np.fft.rfft(view.real, axis=-1)
        else:
            y = np.fft.fft(view, axis=-1)
        return (_from_complex(y, dtype),)

    return run


def _window(node, kind):
    periodic = int(node.attrs.get("periodic", 1))
    out_dtype = _np_dtype(node.attrs.get("output_datatype", 1))

    def run(size):
        n = int(_scalar(size))
        N = n if periodic else n - 1
        k = np.arange(n, dtype=np.float64)
        if N <= 0:
            w = np.ones(n, dtype=np.float64)
        else:
            t = 2 * np.pi * k / N
            if kind == "hann":
                w = 0.5 - 0.5 * np.cos(t)
            elif kind == "hamming":
                a0 = 25.0 / 46.0
                w = a0 - (1 - a0) * np.cos(t)
            else:
                w = 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t)
        return (w.astype(out_dtype),)

    return run


@register("HannWindow", since=17)
def hann_window(node):
    return _window(node, "hann")


@register("HammingWindow", since=17)
def hamming_window(node):
    return _window(node, "hamming")


@register("BlackmanWindow", since=17)
def blackman_window(node):
    return _window(node, "blackman")


def _mel(hz):
    """The spec's mel scale: mel(f) = 2595 * log10(1 + f/700)."""
    return 2595.0 * np.log10(1.0 + hz / 700.0)


def _hz(mel):
    """The inverse of :func:`_mel`."""
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


@register("MelWeightMatrix", since=17)
def mel_weight_matrix(node):
    """One triangle per mel band over the floor(dft_length/2) + 1 spectrogram bins, peak 1.0.

    The spec fixes the mel scale and the peak. Where its edges land it leaves to the words
    "lower edge of the lowest triangular band" and "desired top edge of the highest band"; the
    official case's expected data pins it: the num_mel_bins + 2 band edges lie
    (mel(upper) - mel(lower)) / (num_mel_bins + 2) apart from mel(lower) (so the top band stops
    one step short of upper_edge_hertz), and an edge of f Hz sits on spectrogram bin
    floor(f * (dft_length + 1) / sample_rate). Band m rises from edge m to 1 at edge m + 1 and
    falls back to 0 at edge m + 2; a side of zero width is a step, so a band whose edges share
    a bin is a single 1.
    """
    out_dtype = _np_dtype(node.attrs.get("output_datatype", 1))

    def run(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
        bands = int(_scalar(num_mel_bins))
        n_fft = int(_scalar(dft_length))
        rate = float(_scalar(sample_rate))
        low = _mel(float(_scalar(lower_edge_hertz)))
        high = _mel(float(_scalar(upper_edge_hertz)))
        edges_mel = low + (high - low) / (bands + 2) * np.arange(bands + 2, dtype=np.float64)
        edges = np.floor(_hz(edges_mel) * (n_fft + 1) / rate)
        left, peak, right = edges[:-2], edges[1:-1], edges[2:]  # one entry per band (column)
        k = np.arange(n_fft // 2 + 1, dtype=np.float64)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            # zero-width sides give +-inf (a step) or 0/0 = NaN (only at k == peak, set below)
            rising = (k - left) / (peak - left)
            falling = (right - k) / (right - peak)
        weights = np.where(k == peak, 1.0, np.clip(np.fmin(rising, falling), 0.0, 1.0))
        return (weights.astype(out_dtype),)

    return run
