"""Signal processing: DFT, STFT, the Hann / Hamming / Blackman windows, MelWeightMatrix.

Complex values travel as a trailing dimension of size 2 (real, imaginary), as the spec lays
them out; real inputs have a trailing dimension of size 1.
"""

from __future__ import annotations

import math

import torch

from . import dtypes
from ._util import scalar
from .registry import lowers


def _as_complex(x):
    if x.shape[-1] == 1:
        return x[..., 0].to(torch.float64).to(torch.complex128)
    return torch.complex(x[..., 0].to(torch.float64), x[..., 1].to(torch.float64))


def _dft(x, length, axis, inverse, onesided):
    rank = x.dim()
    a = axis + rank if axis < 0 else axis
    signal = _as_complex(x)
    n_in = signal.shape[a]
    if length is None:
        length = 2 * (n_in - 1) if (onesided and inverse) else n_in
    if inverse and onesided:
        return torch.fft.irfft(signal, n=length, dim=a).unsqueeze(-1).to(x.dtype)  # a real signal
    if inverse:
        out = torch.fft.ifft(signal, n=length, dim=a)
    else:
        out = torch.fft.fft(signal, n=length, dim=a)
        if onesided:
            out = out.narrow(a, 0, length // 2 + 1)
    return torch.stack([out.real, out.imag], dim=-1).to(x.dtype)


@lowers("DFT", 17)
def dft_17(node, x, dft_length=None, *, axis=1, inverse=0, onesided=0):
    return _dft(x, int(scalar(dft_length)) if dft_length is not None else None, axis, inverse, onesided)


@lowers("DFT", 20)
def dft_20(node, x, dft_length=None, axis=None, *, inverse=0, onesided=0):
    a = int(scalar(axis)) if axis is not None else -2
    return _dft(x, int(scalar(dft_length)) if dft_length is not None else None, a, inverse, onesided)


@lowers("STFT", 17)
def stft(node, signal, frame_step, window=None, frame_length=None, *, onesided=1):
    step = int(scalar(frame_step))
    sig = _as_complex(signal)  # [batch, length]
    length = int(scalar(frame_length)) if frame_length is not None else (window.shape[0] if window is not None else sig.shape[1])
    frames = (sig.shape[1] - length) // step + 1
    pieces = torch.stack([sig[:, f * step:f * step + length] for f in range(frames)], dim=1)  # [batch, frames, length]
    if window is not None:
        pieces = pieces * window.to(torch.float64)
    spec = torch.fft.fft(pieces, dim=-1)
    if onesided and signal.shape[-1] == 1:
        spec = spec[..., : length // 2 + 1]
    return torch.stack([spec.real, spec.imag], dim=-1).to(signal.dtype)


def _window(node, size, periodic, output_datatype, terms):
    n = int(scalar(size))
    denom = n if periodic else n - 1
    k = torch.arange(n, dtype=torch.float64)
    w = torch.zeros(n, dtype=torch.float64)
    for m, coef in enumerate(terms):
        w = w + coef * torch.cos(2 * math.pi * m * k / denom)
    if output_datatype not in dtypes.FLOATING:
        # an integer type truncates the exact value: 0.42 + 0.5 + 0.08 is 1, which float64 sums to
        # 1 - 2**-53, so a sum within 1e-9 of an integer is that integer first
        near = torch.round(w)
        w = torch.trunc(torch.where((w - near).abs() < 1e-9, near, w))
    return w.to(dtypes.carrier(output_datatype)).to(node.device)


@lowers("HannWindow", 17)
def hann_window(node, size, *, output_datatype=1, periodic=1):
    return _window(node, size, periodic, output_datatype, (0.5, -0.5))


@lowers("HammingWindow", 17)
def hamming_window(node, size, *, output_datatype=1, periodic=1):
    alpha = 25 / 46
    return _window(node, size, periodic, output_datatype, (alpha, -(1 - alpha)))


@lowers("BlackmanWindow", 17)
def blackman_window(node, size, *, output_datatype=1, periodic=1):
    return _window(node, size, periodic, output_datatype, (0.42, -0.5, 0.08))


@lowers("MelWeightMatrix", 17)
def mel_weight_matrix(node, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *, output_datatype=1):
    # mel(f) = 2595 log10(1 + f/700) and peaks of 1.0 are the spec's; the edge spacing (one
    # (num_mel_bins + 2)-th of the mel range) and the bin of f Hz, floor(f (dft_length + 1) / rate),
    # are what the official case's expected data holds (the spec text leaves them open)
    bands, n_fft, rate = int(scalar(num_mel_bins)), int(scalar(dft_length)), float(scalar(sample_rate))
    if bands == 0:  # the output's shape [floor(dft_length/2) + 1, num_mel_bins]: empty
        return torch.zeros((n_fft // 2 + 1, 0), dtype=dtypes.carrier(output_datatype))
    range_hz = torch.tensor([float(scalar(lower_edge_hertz)), float(scalar(upper_edge_hertz))], dtype=torch.float64)
    low_mel, high_mel = (2595 * torch.log10(1 + range_hz / 700)).tolist()
    mels = low_mel + torch.arange(bands + 2, dtype=torch.float64) * ((high_mel - low_mel) / (bands + 2))
    hz = 700 * (torch.pow(10.0, mels / 2595) - 1)
    left, peak, right = torch.floor(hz * (n_fft + 1) / rate).unfold(0, 3, 1).unbind(1)  # each (bands,)
    k = torch.arange(n_fft // 2 + 1, dtype=torch.float64).unsqueeze(1)
    # a side of zero width is a step at the peak
    rising = torch.where(peak > left, (k - left) / (peak - left).clamp(min=1), (k >= peak).to(torch.float64))
    falling = torch.where(right > peak, (right - k) / (right - peak).clamp(min=1), (k <= peak).to(torch.float64))
    return torch.minimum(rising, falling).clamp(0, 1).to(dtypes.carrier(output_datatype))
