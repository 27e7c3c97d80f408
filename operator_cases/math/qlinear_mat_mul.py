"""QLinearMatMul: the quantized product of two quantized matrices (ONNX spec: QLinearMatMul-10, 21).

"Matrix product that behaves like numpy.matmul [...] The quantization formula is
y = saturate((x / y_scale) + y_zero_point). For (x / y_scale), it is rounding to nearest ties to
even." Here x is the real product: (a - a_zero_point) * a_scale times (b - b_zero_point) *
b_scale, so y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point) with acc the
product of the centred matrices. "Production must never overflow, and accumulation may overflow
if and only if in 32 bits": the reference accumulates exactly (Python integers; float 8 values
scaled to integers) and the cases keep every sum inside int32.

QLinearMatMul-10: a, b, y of int8 or uint8 (each its own type), float scales. QLinearMatMul-21
adds the float 8 types for a, b and y and float16 / bfloat16 scales (TS). A float 8 output is
"the quantization formula" followed by Cast's conversion of opset 21 (saturating, as the op has
no ``saturate`` attribute: +-inf to NaN for the FNUZ types).

Drawn: y of a's type and b of a's type (or int8 under a uint8 a), float32 or float16 scales;
every other combination of types (and bfloat16 scales) is a named edge, so that a runtime lacking
one is known by name.

Granularity: "Scale and zero point must have same shape. They must be either scalar (per tensor)
or N-D tensor (per row for 'a' and per column for 'b')"; the text then names "an M element
vector" for a 2-D a, which broadcasts (numpy) along K, not along rows, and "a K element vector"
for per column of b, whose columns number N. We draw per-tensor parameters and, as edges, the N-D
forms the text gives for N-D inputs ([M, 1] per row of a, [1, N] per column of b), which
broadcast as numpy does; the 1-D forms are left out as the text contradicts itself on them.

Spec-silent ``requantize_precision``: the text names no precision for acc * a_scale * b_scale /
y_scale. We compute it exactly and round once to an integer (ties to even); a runtime computing
the multiplier a_scale * b_scale / y_scale in float32 first may land on the other side of a
near-tie. Where the readings give different outputs the elements are open; the result must be
one of them.

No fuzz template: a generated graph holds values of one float dtype, int64 and bool
(harness.fuzz_api.Value.kind); this op's inputs and output (quantized 8-bit tensors) has no kind there, so it cannot sensibly enter one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._quant_util import WholeReadings, f64, in_type, to_quantized, values

op = Operator("QLinearMatMul")
st = S.st
VERSIONS = (10, 21)


def exact_product(a, za, b, zb) -> np.ndarray:
    """(a - za) @ (b - zb) exactly, as an object array of Fractions (numpy.matmul shapes)."""
    def centred(m, z):
        m64, z64 = f64(m), np.broadcast_to(f64(z), np.shape(m))
        out = np.empty(m64.shape, dtype=object)
        for i in np.ndindex(m64.shape):
            out[i] = Fraction(float(m64[i])) - Fraction(float(z64[i]))
        return out

    a64, b64 = f64(a) - f64(za), f64(b) - f64(zb)
    if not (np.isfinite(a64).all() and np.isfinite(b64).all()):  # NaN / inf (float 8): IEEE's result where not finite
        with np.errstate(all="ignore"):
            ieee = np.matmul(a64, b64)
        fin = exact_product(np.where(np.isfinite(a64), a, 0).astype(np.asarray(a).dtype), za,
                            np.where(np.isfinite(b64), b, 0).astype(np.asarray(b).dtype), zb)
        out = np.empty(np.shape(ieee), dtype=object)
        for i in np.ndindex(out.shape):
            out[i] = ieee[i] if not np.isfinite(ieee[i]) else fin[i]
        return out
    A, B = centred(a, za), centred(b, zb)
    if A.ndim == 0 or B.ndim == 0:
        raise ValueError("matmul of a rank-0 input")
    if A.size == 0 or B.size == 0 or A.shape[-1] == 0:
        shape = np.matmul(np.zeros(A.shape), np.zeros(B.shape)).shape
        return np.full(shape, Fraction(0), dtype=object)
    return np.matmul(A, B)


def _scaled(acc, sa, sb, sy, reading: int) -> np.ndarray:
    """acc * sa * sb / sy as float64 per the reading: 0 exact, 1 float32 multiplier
    fl(fl(sa * sb) / sy) then fl(acc * multiplier), 2 float32 left to right, 3 the multiplier in
    the scales' own type (float16 / bfloat16 scales of QLinearMatMul-21) then fl32(acc * it)."""
    shape = acc.shape
    slabel = S.label_of(np.asarray(sa).dtype)
    sa_, sb_, sy_ = (np.broadcast_to(f64(s), shape) for s in (sa, sb, sy))
    out = np.empty(shape, dtype=np.float64)
    for i in np.ndindex(shape):
        if reading == 0 and isinstance(acc[i], Fraction):
            v = acc[i] * Fraction(float(sa_[i])) * Fraction(float(sb_[i]))
            out[i] = float(v / Fraction(float(sy_[i]))) if sy_[i] != 0 else float(v) * np.inf if v != 0 else np.nan
            continue
        if not isinstance(acc[i], Fraction):  # NaN / inf
            with np.errstate(all="ignore"):
                out[i] = acc[i] * sa_[i] * sb_[i] / sy_[i]
            continue
        with np.errstate(all="ignore"):
            a32 = float(in_type(np.float64(acc[i]), "float32"))
            if reading in (1, 3):
                t = "float32" if reading == 1 else slabel
                m = in_type(in_type(sa_[i] * sb_[i], t) / sy_[i], t)
                out[i] = in_type(a32 * m, "float32")
            else:
                out[i] = in_type(in_type(in_type(a32 * sa_[i], "float32") * sb_[i], "float32") / sy_[i], "float32")
    return out


def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, reading: int = 0):
    """The output; scales and zero points broadcast (numpy) against their matrix, so the
    per-row [.., M, 1] and per-column [.., 1, N] forms scale rows and columns of the product."""
    acc = exact_product(a, a_zero_point, b, b_zero_point)
    scaled = _scaled(acc, a_scale, b_scale, y_scale, reading)
    to = S.label_of(np.asarray(y_zero_point).dtype)
    zy = f64(y_zero_point).reshape(())
    with np.errstate(all="ignore"):
        if S.is_int(to):
            return to_quantized(np.rint(scaled) + zy, to)
        return to_quantized(scaled + zy, to, saturate=1, fnuz_inf_nan=True)


@op.reference(*VERSIONS)
def reference(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    return qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)


_REQUANTIZE = WholeReadings(lambda inputs, attrs, since: [qlinear_matmul(*inputs, reading=k) for k in range(4)])


op.spec_silent(
    "requantize_precision", VERSIONS,
    spec="The quantization formula is y = saturate((x / y_scale) + y_zero_point). For (x / y_scale), it is rounding "
         "to nearest ties to even.",
    expected="acc * a_scale * b_scale / y_scale computed exactly, then rounded half to even: the text names no "
             "precision; a float32 multiplier (a_scale * b_scale / y_scale), one in the scales' type (float16) or float32 "
             "steps can cross a near-tie",
    where=_REQUANTIZE.where,
    invariants={"each such element is the result of the exact, float32-multiplier, float32 left-to-right or scale-type-multiplier reading": _REQUANTIZE.one_of},
    readings={name: _REQUANTIZE.reading(k) for k, name in
              ((1, "a float32 multiplier (a_scale * b_scale / y_scale)"), (2, "float32 steps, left to right"),
               (3, "a multiplier in the scales' type"))})


# -- strategy ---------------------------------------------------------------------------------
def _qtypes(since: int) -> list[str]:
    return ["int8", "uint8"] + (list(S.FLOAT8) if since >= 21 else [])


def _draw_q(d, label: str, shape) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    if S.is_int(label):
        lo, hi = S.finite_range(label)
        return values(label, d(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), shape)
    v = d(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 0.25, 0.125]) |
                   st.floats(-16, 16, allow_nan=False, width=32), min_size=n, max_size=n))
    return values(label, v, shape)


def _zero_point(d, label: str) -> np.ndarray:
    if S.is_int(label):
        lo, hi = S.finite_range(label)
        return values(label, d(st.integers(lo, hi)))
    return values(label, 0.0)  # "usually not used"


def _scale(d, label: str) -> np.ndarray:
    e = d(st.integers(-7, 3))
    m = d(st.sampled_from([1.0, 1.25, 0.75, 1.1, 0.3]))
    return values(label, 2.0**e * m)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = opset
    # y of a's type, b int8 or of a's type: the combinations runtimes implement; every other one
    # (and bfloat16 scales) is a named edge (extremes_*_to_*, to_*, bfloat16_scales)
    btype = d(st.sampled_from(sorted({dtype, "int8"}))) if dtype == "uint8" else dtype
    ytype = dtype
    stype = d(st.sampled_from(["float32", "float16"] if since >= 21 else ["float32"]))
    m, k, n = d(st.integers(1, 4)), d(st.integers(1, 4)), d(st.integers(1, 4))
    batch = d(st.sampled_from([(), (), (2,), (1,)]))
    a = _draw_q(d, dtype, batch + (m, k))
    b = _draw_q(d, btype, (k, n) if d(st.booleans()) else batch + (k, n))
    return Example([a, _scale(d, stype), _zero_point(d, dtype), b, _scale(d, stype), _zero_point(d, btype),
                    _scale(d, stype), _zero_point(d, ytype)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    f = lambda v, shape=None: values("float32", v, shape)  # noqa: E731
    q = lambda v, shape=None, t=dtype: values(t, v, shape)  # noqa: E731
    out = []
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        ext = q([[lo, hi, lo], [hi, lo, hi]])
        for bt in ("int8", "uint8"):
            blo, bhi = S.finite_range(bt)
            bext = q([[blo, bhi], [bhi, blo], [blo, blo]], t=bt)
            for yt in ("int8", "uint8"):
                out.append(Example([ext, f(0.5), q(hi), bext, f(0.25), q(blo, t=bt), f(0.125), q(0, t=yt)],
                                   name=f"extremes_{bt}_to_{yt}"))
        mid = 0 if lo < 0 else 128
        yz = q(0 if lo < 0 else 100)  # y of a's type, b int8: what runtimes implement (the others: extremes_*)
        b8 = lambda v: q(v, t="int8")  # noqa: E731
        # ties: acc odd with scales 1, 1 and y_scale 2 -> acc / 2 = k + 0.5
        a = q(np.array([[1, 3, 5, 7], [-1, -3, -5, 2]]) + mid)
        b = b8(np.array([[1], [0], [0], [0]]))
        out.append(Example([a, f(1.0), q(mid), b, f(1.0), b8(0), f(2.0), yz], name="ties_to_even"))
        out.append(Example([a, f(1.0), q(mid), b, f(1.0), b8(0), f(0.001), yz], name="saturate"))
        out.append(Example([a, f(-1.0), q(mid), b, f(1.0), b8(0), f(0.5), yz], name="negative_scale"))
        out.append(Example([a[0], f(1.0), q(mid), b, f(1.0), b8(0), f(1.0), yz], name="1d_a"))
        out.append(Example([a, f(1.0), q(mid), b[:, 0], f(1.0), b8(0), f(1.0), yz], name="1d_b"))
        a3 = q(np.arange(12).reshape(2, 2, 3) % 5 + mid)
        b3 = b8(np.array([[1, -1], [2, 0], [0, 3]]))
        out.append(Example([a3, f(0.5), q(mid), b3, f(0.5), b8(1), f(0.25), yz], name="batched_broadcast"))
        out.append(Example([a3, f([[[0.5], [1.0]], [[2.0], [0.25]]]), q(mid), b3, f([[0.5, 0.25]]), b8(1), f(0.25), yz],
                           name="per_row_a_per_column_b_scales"))
        out.append(Example([q(np.zeros((0, 3))), f(1.0), q(mid), b3, f(1.0), b8(0), f(1.0), yz], name="empty_m"))
        # K = 0: y is y_zero_point everywhere; a zero point no fresh buffer holds (not 0), so garbage cannot pass
        out.append(Example([q(np.zeros((2, 0))), f(1.0), q(mid), b8(np.zeros((0, 2))), f(1.0), b8(0), f(1.0),
                            q(37 if lo < 0 else 100)], name="empty_k"))
    else:
        fmax = float(S.finite_range(dtype)[1])
        a = q([[1.0, 2.0, -0.5], [fmax, -fmax, 0.0]])
        b = q([[1.0], [0.5], [2.0]])
        z = q(0.0)
        for yt in ("int8", "uint8", dtype):
            out.append(Example([a, f(1.0), z, b, f(1.0), z, f(1.0), values(yt, 0.0 if yt != "uint8" else 128)],
                               name=f"to_{yt}" if yt != dtype else "to_same_float8"))
        for bt in S.FLOAT8:  # b and y of every other float 8 type
            if bt != dtype:
                out.append(Example([a, f(0.5), z, values(bt, [[1.0], [0.5], [2.0]]), f(1.0), values(bt, 0.0), f(2.0), values(bt, 0.0)],
                                   name=f"b_and_y_{bt}"))
        tiny = float(S.smallest_subnormal(dtype))
        a_sub = q([[-0.0, tiny, -tiny], [tiny, tiny, 0.0]])
        out.append(Example([a_sub, f(1.0), z, q([[1.0], [2.0], [1.0]]), f(1.0), z, f(1.0), z], name="signed_zero_subnormal"))
        specials = q([[np.nan, 1.0], [np.inf if dtype == "float8e5m2" else fmax, 1.0]])
        out.append(Example([specials, f(1.0), z, q([[1.0], [1.0]]), f(1.0), z, f(1.0), z], name="nan_inf"))
        out.append(Example([a, values("float16", 0.5), z, b, values("float16", 2.0), z, values("float16", 1.0), values("uint8", 0)],
                           name="float16_scales"))
        out.append(Example([a, values("bfloat16", 0.5), z, b, values("bfloat16", 2.0), z, values("bfloat16", 1.0), values("uint8", 0)],
                           name="bfloat16_scales"))
    return out
