"""MelWeightMatrix: triangular mel filterbanks over the bins of a one-sided DFT (ONNX spec:
MelWeightMatrix-17).

What the text fixes: the output has floor(dft_length / 2) + 1 rows (the "nonredundant DFT
bins", "floor(dft_length/2) + 1") and num_mel_bins columns (it right-multiplies a spectrogram
[frames, num_spectrogram_bins] into [frames, num_mel_bins]); the bands are triangles over
"[lower_edge_hertz, upper_edge_hertz] range on the mel scale", mel(f) = 2595 log10(1 + f/700);
"In the returned matrix, all the triangles (filterbanks) have a peak value of 1.0". It does not
say where a band's edges fall between bins, nor how a triangle is sampled (in mel or in bins).

Our reading: num_mel_bins + 2 points evenly spaced in mel from mel(lower) to mel(upper), band m
spanning points m, m + 1 (its peak), m + 2; each point taken back to hertz and to its nearest
bin (bin k is frequency k * sample_rate / dft_length); band m is 0 outside [lo, hi], rises
linearly from lo to 1 at its peak bin and falls linearly to hi, so the matrix holds each peak
at exactly 1.0 as the text says. Since the sampling is our choice, every element is spec-silent;
the invariants are what the text does fix: the shape, values in [0, 1], each column either all
zero or a single triangle (non-decreasing then non-increasing) whose peak is 1.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("MelWeightMatrix")
st = S.st


def _mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def _args(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
    bands, n, rate = int(np.asarray(num_mel_bins)), int(np.asarray(dft_length)), int(np.asarray(sample_rate))
    lo, hi = float(np.asarray(lower_edge_hertz)), float(np.asarray(upper_edge_hertz))
    if bands < 0 or n < 1 or rate < 1 or not 0 <= lo < hi:
        raise ValueError(f"MelWeightMatrix: {bands} bands, dft_length {n}, rate {rate}, edges {lo}..{hi}")
    return bands, n, rate, lo, hi


def _triangles_at(bins: np.ndarray, rows: int, bands: int) -> np.ndarray:
    """Band m: 0 outside bins[m]..bins[m + 2], rising linearly to 1 at bins[m + 1], then falling."""
    out = np.zeros((rows, bands))
    k = np.arange(rows)
    for m in range(bands):
        a, c, b = bins[m], bins[m + 1], bins[m + 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            up = (k - a) / (c - a) if c > a else (k == c).astype(float)
            down = (b - k) / (b - c) if b > c else (k == c).astype(float)
        out[:, m] = np.clip(np.where(k <= c, up, down), 0.0, 1.0)
    return out


@op.reference(17)
def mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *, output_datatype=1):
    bands, n, rate, lo, hi = _args(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
    points = _hz(np.linspace(_mel(lo), _mel(hi), bands + 2))
    bins = np.round(points * n / rate).astype(np.int64)
    return _triangles_at(bins, n // 2 + 1, bands).astype(S.np_dtype(S.label_of(int(output_datatype))))


def official_placement(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *, output_datatype=1):
    """The placement of onnx's own test (test_melweightmatrix) and of ONNX Runtime: the
    num_mel_bins + 2 points are mel(lower) + i * step for i = 0 .. num_mel_bins + 1 with step
    (mel(upper) - mel(lower)) / (num_mel_bins + 2), so the last point stops one step short of
    upper_edge_hertz; point f falls in bin floor((dft_length + 1) * f / sample_rate). The same
    triangles between them."""
    bands, n, rate, lo, hi = _args(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
    step = (_mel(hi) - _mel(lo)) / (bands + 2)
    points = _hz(_mel(lo) + np.arange(bands + 2) * step)
    bins = np.floor((n + 1) * points / rate).astype(np.int64)
    return _triangles_at(bins, n // 2 + 1, bands).astype(S.np_dtype(S.label_of(int(output_datatype))))


def _triangles(c) -> bool:
    a = np.asarray(c.actual[0]).astype(np.float64)
    if a.shape != np.shape(c.expected[0]) or ((a < 0) | (a > 1)).any():
        return False
    for col in a.T:
        if not col.any():
            continue
        top = int(np.argmax(col))
        if col[top] != 1.0 or (np.diff(col[:top + 1]) < 0).any() or (np.diff(col[top:]) > 0).any():
            return False
    return True


op.spec_silent(
    "sampling", (17,),
    spec="In the returned matrix, all the triangles (filterbanks) have a peak value of 1.0.",
    expected="mel points evenly spaced from mel(lower_edge_hertz) to mel(upper_edge_hertz) (the range the spec names), "
             "snapped to their nearest bins (bin k is k * sample_rate / dft_length); each triangle linear in bins between them",
    where=lambda inputs, attrs, expected, since: [np.ones(np.shape(expected[0]), dtype=bool)],
    invariants={"shape, values in [0, 1], each column zero or one triangle peaking at 1": _triangles},
    readings={"onnx's test data (test_melweightmatrix): mel step over num_mel_bins + 2, bin floor((dft_length + 1) f / rate)":
              lambda c: [official_placement(*c.inputs, **c.attrs)]})


def _ex(dtype, bands, n, rate, lo, hi, attrs=None, name="", hz="float32"):
    i = lambda v: np.array(v, dtype=S.np_dtype(dtype))  # noqa: E731
    f = lambda v: np.array(v, dtype=S.np_dtype(hz))  # noqa: E731
    return Example([i(bands), i(n), i(rate), f(lo), f(hi)], dict(attrs or {}), name=name)


@op.strategy(17)
def draw(d, dtype, opset):
    n = d(st.integers(4, 64))
    rate = d(st.sampled_from([8000, 16000, 22050, 44100]))
    lo = float(d(st.integers(0, 200)) * 5)
    hi = float(d(st.integers(int(lo) // 5 + 40, rate // 10)) * 5)
    attrs = {"output_datatype": 1} if d(st.booleans()) else {}
    return _ex(dtype, d(st.integers(1, 8)), n, rate, lo, min(hi, rate / 2), attrs)


@op.edges(17)
def edges(dtype, opset):
    out = [
        _ex(dtype, 4, 16, 8000, 0, 4000, name="four_bands"),
        _ex(dtype, 8, 64, 16000, 20, 8000, name="speech"),
        _ex(dtype, 1, 8, 8000, 100, 3000, name="one_band"),
        _ex(dtype, 10, 8, 8000, 0, 4000, name="more_bands_than_bins"),
        _ex(dtype, 0, 16, 8000, 0, 4000, name="no_bands"),
        _ex(dtype, 3, 15, 8000, 0, 4000, name="odd_dft_length"),
        _ex(dtype, 4, 32, 16000, 300, 2000, name="double_edges", hz="float64"),
        _ex(dtype, 4, 32, 16000, 300, 2000, name="half_edges", hz="float16"),
    ]
    if dtype == "int64":
        out += [_ex(dtype, 4, 16, 8000, 0, 4000, {"output_datatype": S.onnx_code(t)}, name=f"dtype_{t}")
                for t in ("float64", "float16", "bfloat16", "int32", "uint8")]
    return out
