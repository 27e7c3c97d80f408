"""DFT: the discrete Fourier transform along one axis (ONNX spec: DFT-17, DFT-20).

"y[m, k] = sum_{n=0}^{N-1} e^{-2 pi j k n / N} x[m, n]" and the inverse "x[m, n] = 1/N
sum_{k=0}^{N-1} e^{2 pi j k n / N} y[m, k]". The last input dimension is 1 (real) or 2 (real,
imaginary). ``dft_length`` N: "If greater than the axis dimension, the signal will be
zero-padded up to dft_length. If less than the axis dimension, only the first dft_length values
will be used"; by default the axis dimension, "except for the IRFFT case (onesided=1,
inverse=1), in which case the default dft_length is 2 * (signal_dim_axis - 1)". ``onesided``:
the forward transform of a real signal returns the first floor(N/2) + 1 bins; with
``inverse`` it takes those bins of a conjugate-symmetric spectrum and returns the real signal
of length N (the other bins are the conjugates: X[N - k] = X[k]*). Axis: DFT-17 an attribute
(default 1), DFT-20 an input (default -2); negative counts from the back of the full rank
(the complex dimension included), "Accepted range is [-r, -2] U [0, r-2]".

Computed in complex128 (numpy.fft's fft / ifft / rfft / irfft evaluate exactly these sums) and
rounded once to the input type. Drawn signals hold values in [-4, 4]; an IRFFT input is the
one-sided spectrum of a real signal (its DC and Nyquist bins real), since the text does not say
what a non-Hermitian half spectrum means. A signal with inf or NaN: the sums hold inf * 0 and
inf - inf terms, whose NaN or inf depends on how the complex products are formed (spec-silent: every
output of such a transform line is open; some must be non-finite).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from ._signal_util import from_complex, magnitudes, to_complex, transform_bound

op = Operator("DFT")
st = S.st


def _dft(x, dft_length, axis, inverse, onesided):
    x = np.asarray(x)
    r = x.ndim
    axis = int(axis)
    if not (-r <= axis <= -2 or 0 <= axis <= r - 2):
        raise ValueError(f"DFT axis {axis} outside [-{r}, -2] U [0, {r - 2}]")
    ax = axis % r
    c = to_complex(x)
    size = c.shape[ax]
    irfft = bool(onesided) and bool(inverse)
    n = int(np.asarray(dft_length)) if dft_length is not None else (2 * (size - 1) if irfft else size)
    if n < 1:
        raise ValueError(f"dft_length {n} < 1")
    if irfft:
        if x.shape[-1] != 2:
            raise ValueError("IRFFT (onesided=1, inverse=1) takes a complex input")
        return from_complex(np.fft.irfft(c, n, axis=ax), x.dtype, real=True)
    if onesided:
        if x.shape[-1] != 1:
            raise ValueError("onesided=1 forward takes a real input")
        return from_complex(np.fft.rfft(c.real, n, axis=ax), x.dtype)
    return from_complex((np.fft.ifft if inverse else np.fft.fft)(c, n, axis=ax), x.dtype)


@op.reference(17)
def dft_17(x, dft_length=None, *, axis=1, inverse=0, onesided=0):
    return _dft(x, dft_length, axis, inverse, onesided)


@op.reference(20)
def dft_20(x, dft_length=None, axis=None, *, inverse=0, onesided=0):
    return _dft(x, dft_length, -2 if axis is None else np.asarray(axis), inverse, onesided)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """The allowance per output of a transform line (``_signal_util.transform_bound``): each output
    sums the N terms of its line (zero-padded or cut to dft_length), bounded by gamma_K(u_acc)
    times twice the line's sum of |re x_n| + |im x_n| (the op applied to those magnitudes, bin 0;
    over N for an inverse, an IRFFT's mirrored bins counted twice)."""
    x = np.asarray(inputs[0])
    ref = dft_17 if since < 20 else dft_20
    rest = list(inputs[1:3 if since >= 20 else 2])
    y = ref(x.astype(np.float64), *rest, **attrs)
    axis = int(attrs.get("axis", 1)) if since < 20 else (-2 if len(inputs) < 3 or inputs[2] is None else int(np.asarray(inputs[2])))
    ax = axis % x.ndim
    mag = np.take(ref(magnitudes(x), *rest, **attrs), [0], axis=ax)[..., :1]
    size = x.shape[ax]
    irfft = bool(attrs.get("onesided", 0)) and bool(attrs.get("inverse", 0))
    n = int(np.asarray(inputs[1])) if len(inputs) > 1 and inputs[1] is not None else (2 * (size - 1) if irfft else size)
    return [transform_bound(y, np.broadcast_to(mag, y.shape), n, x)]


def _open_lines(inputs, attrs, expected, since):
    """Open: every output of a transform line (along the axis) whose signal holds inf or NaN."""
    x = np.asarray(inputs[0]).astype(np.float64)
    if np.isfinite(x).all():
        return [None] * len(expected)
    if since == 17:
        axis = int(attrs.get("axis", 1))
    else:
        axis = -2 if len(inputs) < 3 or inputs[2] is None else int(np.asarray(inputs[2]))
    ax = axis % x.ndim
    bad = (~np.isfinite(x)).any(axis=(ax, x.ndim - 1), keepdims=True)
    return [np.broadcast_to(bad, np.shape(expected[0]))]


def _some_nonfinite(c) -> bool:
    a = np.asarray(c.actual[0]).astype(np.float64)
    return a.shape == np.shape(c.expected[0]) and bool((~np.isfinite(a[c.masks[0]])).any())


op.spec_silent(
    "nonfinite", (17, 20),
    spec={17: "Computes the discrete Fourier transform of input.",
          20: "y[m, k] = \\sum_{n=0}^{N-1} e^{-2 \\pi j \\frac{k n}{N} } x[m, n]"},
    expected="numpy.fft's values: a real signal's DC bin has imaginary part 0 (IEEE complex products of inf give NaN there: (1 + 0j)(inf + 0j) = inf + NaN j)",
    where=_open_lines, invariants={"some output of each such line is inf or NaN": _some_nonfinite})


def _half_spectrum(signal: np.ndarray, ax: int, n: int, dtype) -> np.ndarray:
    """The one-sided spectrum (floor(n/2) + 1 bins, [..., 2]) of a real signal along ``ax``."""
    return from_complex(np.fft.rfft(signal, n, axis=ax), dtype)


def _example(opset, x, n, axis, inverse, onesided, name=""):
    attrs = {}
    if inverse:
        attrs["inverse"] = 1
    if onesided:
        attrs["onesided"] = 1
    n_in = None if n is None else np.array(n, dtype=np.int64)
    if opset == 17:
        if axis != 1:
            attrs["axis"] = axis
        return Example([x, n_in], attrs, name=name)
    ax_in = None if axis == -2 and not name.startswith("axis") else np.array(axis, dtype=np.int64)
    return Example([x, n_in, ax_in], attrs, name=name)


@op.strategy(17, 20)
def draw(d, dtype, opset):
    rank = d(st.integers(2, 3))  # signal dims, the first a batch-like one; then the complex dim
    shape = [d(st.integers(1, 3))] + [d(st.integers(1, 8)) for _ in range(rank - 1)]
    axes = list(range(rank))
    ax = d(st.sampled_from(axes[1:] if opset == 17 and d(st.integers(0, 3)) else axes))
    axis = ax - (rank + 1) if d(st.booleans()) else ax
    mode = d(st.sampled_from(["full", "full", "inverse", "rfft", "irfft"]))
    n = d(st.integers(1, 10)) if d(st.booleans()) else None
    if mode == "irfft":
        n = n if n is not None else 2 * (shape[ax] - 1)
        if n < 1:
            n = shape[ax] = 2
            n = None if d(st.booleans()) else 2
        signal_shape = list(shape)
        signal_shape[ax] = n or 2 * (shape[ax] - 1)
        signal = S.arrays(d, "float64", shape=tuple(signal_shape), lo=-4, hi=4)
        x = _half_spectrum(signal, ax, signal_shape[ax], S.np_dtype(dtype))
        if n is not None and x.shape[ax] != n // 2 + 1:
            n = None if x.shape[ax] > 1 else n
        return _example(opset, x, n, axis, 1, 1)
    last = 1 if mode == "rfft" else d(st.integers(1, 2))
    x = S.arrays(d, dtype, shape=(*shape, last), lo=-4, hi=4)
    return _example(opset, x, n, axis, int(mode == "inverse"), int(mode == "rfft"))


@op.edges(17, 20)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    ramp = np.arange(8, dtype=np.float64).reshape(1, 8, 1)
    cplx = np.stack([np.arange(6.0), -np.arange(6.0) / 2], axis=-1).reshape(1, 6, 2)
    tiny = S.smallest_subnormal(dtype)
    special = np.array([[[0.0], [-0.0], [np.inf], [1.0]], [[np.nan], [1.0], [2.0], [-0.0]]])
    signal = np.cos(np.arange(6.0)).reshape(1, 6)
    out = [
        _example(opset, ramp.astype(t), None, -2, 0, 0, "real_forward"),
        _example(opset, cplx.astype(t), None, 1, 0, 0, "complex_forward"),
        _example(opset, cplx.astype(t), None, 1, 1, 0, "complex_inverse"),
        _example(opset, ramp.astype(t), None, 1, 1, 0, "real_inverse"),
        _example(opset, ramp.astype(t), None, 1, 0, 1, "rfft_even"),
        _example(opset, ramp[:, :7].astype(t), None, 1, 0, 1, "rfft_odd"),
        _example(opset, _half_spectrum(signal, 1, 6, t), None, 1, 1, 1, "irfft_default_length"),
        _example(opset, _half_spectrum(signal[:, :5], 1, 5, t), 5, 1, 1, 1, "irfft_odd_length"),
        _example(opset, ramp.astype(t), 12, 1, 0, 0, "dft_length_pads"),
        _example(opset, cplx.astype(t), 4, 1, 0, 0, "dft_length_truncates"),
        _example(opset, ramp.astype(t), 1, 1, 0, 0, "dft_length_1"),
        _example(opset, np.ones((1, 1, 1), dtype=t), None, 1, 0, 0, "length_1"),
        _example(opset, np.arange(12.0).reshape(3, 4, 1).astype(t), None, 0, 0, 0, "axis_0"),
        _example(opset, np.arange(24.0).reshape(2, 3, 4, 1).astype(t), None, -3, 0, 0, "axis_negative"),
        _example(opset, np.arange(24.0).reshape(2, 3, 2, 2).astype(t), None, 2, 1, 0, "axis_2_inverse"),
        _example(opset, np.zeros((0, 5, 1), dtype=t), None, 1, 0, 0, "empty_batch"),
        _example(opset, special.astype(t), None, 1, 0, 0, "nan_inf_neg_zero"),
        _example(opset, (ramp * tiny).astype(t), None, 1, 0, 0, "subnormal"),
    ]
    if opset == 20:
        out.append(_example(opset, ramp.astype(t), None, -2, 0, 0, "axis_input_default"))
    return out


def _line_bound(ref, ins, attrs) -> np.ndarray:
    """Every output of a transform line rounds with the sum of |x| over that line (each term
    is an input times a unit twiddle), not with its own magnitude (which may cancel to 0)."""
    y = np.asarray(ref(*ins, **attrs))
    x = np.abs(np.asarray(ins[0], dtype=np.float64))
    axis = int(attrs.get("axis", 1)) if len(ins) < 3 or ins[2] is None else int(np.asarray(ins[2]))
    total = x.sum(axis=(axis % x.ndim, x.ndim - 1), keepdims=True)
    return np.broadcast_to(total, y.shape[:-1] + (1,)) * np.ones(y.shape)


@op.fuzz(nan=None, ulps=4.0, bound=_line_bound, type_param="T1")
def fuzz(c: Ctx) -> Plan | None:
    """A DFT along one axis of a value whose last dimension is 1 (real) or 2 (complex)."""
    x = c.take("float", 0, lambda v: v.rank >= 2 and v.shape[-1] in (1, 2) and v.size > 0)
    if x is None:
        return None
    ax = c.pick(x.rank - 1)
    if x.shape[ax] == 0:
        return None
    attrs = {}
    if c.pick(2):
        attrs["inverse"] = 1
    elif x.shape[-1] == 1 and c.pick(2):
        attrs["onesided"] = 1  # RFFT
    n = x.shape[ax]
    if c.since < 20:
        if ax != 1:
            attrs["axis"] = ax
        return Plan([x], attrs, n_acc=n)
    return Plan([x, None, c.ints(np.array(ax, dtype=np.int64))], attrs, n_acc=n)
