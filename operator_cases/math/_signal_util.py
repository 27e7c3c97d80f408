"""Shared pieces of the signal operators (ONNX spec: HannWindow-17, HammingWindow-17,
BlackmanWindow-17; DFT, STFT use the complex layout helpers).

Windows. The texts say only "Generates a Hann / Hamming / Blackman window as described in the
paper https://ieeexplore.ieee.org/document/1455106" (Harris 1978) and, for ``periodic``: "If 1,
returns a window to be used as periodic function. If 0, return a symmetric window. When
'periodic' is specified, hann computes a window of length size + 1 and returns the first size
points." So with ``N = size`` (periodic) or ``N = size - 1`` (symmetric), for ``n`` in
``[0, size)``, the paper's windows are a sum of cosines ``sum_k (-1)^k a_k cos(2 pi k n / N)``:

- Hann: ``a = (0.5, 0.5)``;
- Hamming: ``a = (25/46, 21/46)``, the paper's exact Hamming coefficients (it rounds them to
  0.54, 0.46; the two differ by 0.0035 at most);
- Blackman: ``a = (0.42, 0.5, 0.08)``.

Computed in float64, then converted to ``output_datatype`` (default 1 = FLOAT); an integer type
truncates toward zero like Cast, so a window holds 1 only where it is exactly 1.0 and 0
elsewhere (the float64 sum is snapped to the integer it is within 1e-9 of before truncating,
so the rounding of 0.42 + 0.5 + 0.08 does not make the peak 0). ``size = 1`` with ``periodic = 0`` makes ``N = 0`` and the formula 0/0: the spec
gives no value (a spec-silent point; we take 1.0, the value every window has at its centre).
"""

from __future__ import annotations

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF
from harness.registry import Example, Operator

from .._common import gamma, rounded_reach

st = S.st
#: the output types of T2 (labels)
OUTPUT_TYPES = ("float32", "float64", "float16", "bfloat16", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                "int32", "int64")


def window(size, coeffs: tuple[float, ...], periodic: int, output_datatype: int) -> np.ndarray:
    n_out = int(np.asarray(size))
    if n_out < 0:
        raise ValueError(f"window size {n_out} < 0")
    period = n_out if periodic else n_out - 1
    n = np.arange(n_out, dtype=np.float64)
    if period == 0:
        w = np.ones(n_out)  # spec-silent: size 1, symmetric
    else:
        w = sum((-1) ** k * a * np.cos(2 * math.pi * k * n / period) for k, a in enumerate(coeffs))
    label = S.label_of(int(output_datatype))
    w = np.asarray(w, dtype=np.float64)
    if S.is_int(label):  # the exact value, truncated: 0.42 + 0.5 + 0.08 is 1 (float64 sums it to 1 - 2**-53)
        w = np.trunc(np.where(np.abs(w - np.round(w)) < 1e-9, np.round(w), w))
    return w.astype(S.np_dtype(label))


def window_op(name: str, coeffs: tuple[float, ...]) -> Operator:
    """Register the reference, strategy, edges and spec-silent point of a cosine-sum window."""
    op = Operator(name)

    @op.reference(17)
    def reference(size, *, periodic=1, output_datatype=1):
        return window(size, coeffs, periodic, output_datatype)

    @op.strategy(17)
    def draw(d, dtype, opset):
        size = d(st.integers(0, 40))
        attrs = {}
        if d(st.booleans()):
            attrs["periodic"] = d(st.integers(0, 1))
        if size == 1 and attrs.get("periodic", 1) == 0:
            size = 2
        if d(st.booleans()):
            attrs["output_datatype"] = 1  # the other types are named edges (backends' precision differs by type)
        return Example([np.array(size, dtype=S.np_dtype(dtype))], attrs)

    @op.edges(17)
    def edges(dtype, opset):
        s = lambda v: np.array(v, dtype=S.np_dtype(dtype))  # noqa: E731
        out = [
            Example([s(0)], name="size_0"),
            Example([s(0)], {"periodic": 0}, name="size_0_symmetric"),
            Example([s(1)], name="size_1_periodic"),
            Example([s(1)], {"periodic": 0}, name="size_1_symmetric"),
            Example([s(2)], {"periodic": 0}, name="size_2_symmetric"),
            Example([s(8)], name="periodic_even"),
            Example([s(7)], {"periodic": 1}, name="periodic_odd"),
            Example([s(8)], {"periodic": 0}, name="symmetric_even"),
            Example([s(9)], {"periodic": 0}, name="symmetric_odd"),
        ]
        if dtype == "int64":  # every output type once (the peak is exactly 1.0 only with an odd symmetric size)
            out += [Example([s(5)], {"periodic": 0, "output_datatype": S.onnx_code(t)}, name=f"dtype_{t}") for t in OUTPUT_TYPES]
            out += [Example([s(32)], {"output_datatype": S.onnx_code(t)}, name=f"long_{t}") for t in ("float16", "bfloat16", "float64")]
        return out

    op.spec_silent(
        "size_1_symmetric", (17,),
        spec=f"Generates a {name[:-len('Window')]} window as described in the paper https://ieeexplore.ieee.org/document/1455106",
        expected="[1.0]: the value of the window at its centre",
        where=lambda inputs, attrs, expected, since: [np.ones(np.shape(expected[0]), dtype=bool)
                                                    if int(np.asarray(inputs[0])) == 1 and not attrs.get("periodic", 1) else None],
        invariants={"one element": lambda c: np.shape(c.actual[0]) == (1,)},
        readings={"the formula read literally: n / (N - 1) is 0 / 0, NaN": lambda c: [np.full_like(np.asarray(c.expected[0]), np.nan)]})
    return op


# -- complex layout (DFT, STFT) ------------------------------------------------------------------
def to_complex(x) -> np.ndarray:
    """A [..., 1] (real) or [..., 2] (real, imaginary) tensor as complex128 of shape [...]."""
    a = np.asarray(x).astype(np.float64)
    if a.shape[-1] not in (1, 2):
        raise ValueError(f"last dimension {a.shape[-1]}: 1 (real) or 2 (complex) expected")
    return a[..., 0] + (1j * a[..., 1] if a.shape[-1] == 2 else 0)


def from_complex(c: np.ndarray, dtype, real: bool = False) -> np.ndarray:
    """Complex [...] back to [..., 2] (or [..., 1] with ``real``) in ``dtype``."""
    c = np.asarray(c)
    parts = [c.real] if real else [c.real, c.imag]
    return np.stack(parts, axis=-1).astype(dtype)



# -- rounding bound of a transform (DFT, STFT; harness/data/tolerances.toml, ``bound``) -----------
def magnitudes(x) -> np.ndarray:
    """|re| + |im| of each element of a [..., 1] or [..., 2] signal, as a real signal of that layout
    (imaginary parts 0): transformed by the op itself, its bin 0 is sum_n (|re x_n| + |im x_n|)
    over the terms each output sums (divided by N for an inverse)."""
    a = np.abs(np.asarray(x).astype(np.float64))
    m = a.sum(axis=-1, keepdims=True)
    return np.concatenate([m, np.zeros_like(m)], axis=-1) if a.shape[-1] == 2 else m


def transform_bound(y: np.ndarray, mag: np.ndarray, n: int, like, extra: int = 0, stored: float = 0.0) -> np.ndarray:
    """The allowance per output of a sum of N twiddled terms, y the exact outputs (float64, layout
    [..., 2] or [..., 1]) and ``mag`` each output's sum of term magnitudes sum_n (|re x_n| + |im x_n|)
    (|cos| + |sin| <= 2 aside: each twiddle factor's parts are at most 1): a direct sum rounds a
    twiddle factor (its cos and sin), a product and the complex product's addition (3 roundings a
    term) and N - 1 additions; a radix-2 FFT rounds at most 4 times a stage over ceil(log2 N)
    stages and its twiddles once; an inverse divides by N (one more); ``extra`` more roundings a
    term (a window). So |dy| <= gamma_K(u_acc) * 2 * mag with K = N + 4 + 4 ceil(log2 N) + extra,
    covering either order (Higham, Accuracy and Stability, 3.1 and 24.1); ``stored``: the unit
    roundoff of a type the terms are stored in before the sum (STFT's windowed frame, a tensor of
    T), each term then off by that times its magnitude (a twiddle factor has modulus 1): + stored * mag.

    u_acc: the unit roundoff of the arithmetic, float32's (2**-24) for the float16 and bfloat16
    signals: the spec names no precision, and a sum accumulated in those types is not among the
    readings we accept (its worst case, gamma_N(2**-8) * sum |x|, is 4 % of the largest output at N
    = 12 in bfloat16, and could not tell an output 5 % off); numpy's FFT (onnx.reference) evaluates
    in float64 and our kernels in float32 or wider. Then the last rounding to T against ours
    (``_common.rounded_reach``)."""
    label = S.label_of(np.asarray(like).dtype)
    u_acc = ROUNDOFF["float32"] if label in ("float16", "bfloat16") else ROUNDOFF[label]
    k = n + 4 + 4 * int(np.ceil(np.log2(max(n, 1)))) + extra
    return rounded_reach(y, (gamma(k, u_acc) * 2 + stored) * mag, like)
