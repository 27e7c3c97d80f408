"""QLinearConv: the quantized convolution (ONNX spec: QLinearConv-10).

The convolution of (x - x_zero_point) and (w - w_zero_point) (ConvInteger's, conv_integer.py:
geometry, groups, kernel_shape, strides, dilations, pads, auto_pad), plus the bias B, is the
real output divided by x_scale * w_scale: "When bias is present it must be quantized using scale
= input scale * weight scale and zero point as 0". The output is quantized as everywhere in the
family: y = saturate(round(acc * x_scale * w_scale / y_scale) + y_zero_point); the text names no
rounding, we round half to even as QuantizeLinear and QLinearMatMul say (spec-silent
``tie_rounding``: where acc * x_scale * w_scale / y_scale is exactly k + 0.5). x_scale, x_zero_point, y_scale, y_zero_point are scalars ("It's a scalar, which means a
per-tensor/layer quantization"); w_scale and w_zero_point are scalars or 1-D of length M (per
output channel). x, w, y are int8 or uint8 each (T1, T2, T3), B int32.

Spec-silent:
* ``padding_value`` (as ConvInteger's): a padding cell holds x_zero_point (the real 0) in our
  reference; a runtime may pad with the integer 0. Open where a window holds padding and
  x_zero_point is not 0.
* ``requantize_precision``: the text names no precision for acc * x_scale * w_scale / y_scale;
  we compute it exactly, a runtime may form the multiplier in float32. Open where the readings
  differ.
Either way an open element must be the result of one combination of the readings.

No fuzz template: a generated graph holds values of one float dtype, int64 and bool
(harness.fuzz_api.Value.kind); this op's inputs and output (quantized 8-bit tensors) has no kind there, so it cannot sensibly enter one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator, SilentCheck

from ._conv_util import draw_conv_geometry, integer_conv_extremes, ramp
from .._quant_util import f64, in_type, to_quantized, values
from ._window_util import batch_edges
from .conv_integer import convolve, padded_outputs

op = Operator("QLinearConv")
st = S.st


def _attrs(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k in ("kernel_shape", "strides", "dilations", "pads", "auto_pad", "group")}


def qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None, *, attrs: dict,
                 pad_with_zero_point: bool = True, float32_multiplier: bool = False, ties: str = "even") -> np.ndarray:
    acc = convolve(x, w, x_zero_point, w_zero_point, _attrs(attrs), pad_with_zero_point).astype(object)
    m = acc.shape[1]
    nsp = acc.ndim - 2
    if B is not None:
        acc = acc + np.asarray(B).astype(np.int64).astype(object).reshape((1, m) + (1,) * nsp)
    ws = f64(w_scale).reshape(-1)
    ws = np.broadcast_to(ws, (m,))
    xs, ys = float(f64(x_scale).reshape(())), float(f64(y_scale).reshape(()))
    out = np.empty(acc.shape, dtype=np.float64)
    for idx in np.ndindex(acc.shape):
        a, c = acc[idx], idx[1]
        if float32_multiplier:
            with np.errstate(all="ignore"):
                mult = in_type(in_type(xs * ws[c], "float32") / ys, "float32")
                out[idx] = in_type(float(in_type(float(a), "float32")) * mult, "float32")
        elif ys == 0:
            out[idx] = np.nan if a == 0 or xs * ws[c] == 0 else np.inf * np.sign(float(a) * xs * ws[c])
        else:
            out[idx] = float(Fraction(int(a)) * Fraction(xs) * Fraction(float(ws[c])) / Fraction(ys))
    to = S.label_of(np.asarray(y_zero_point).dtype)
    with np.errstate(all="ignore"):
        r = np.rint(out)
        if ties != "even":
            tie = (out - np.floor(out)) == 0.5
            r = np.where(tie, np.floor(out) if ties == "down" else np.ceil(out), r)
        return to_quantized(r + float(f64(y_zero_point).reshape(())), to)


def scaled_exact(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None, *, attrs: dict) -> np.ndarray:
    """acc * x_scale * w_scale / y_scale, exactly (as a float64 array of exact halves)."""
    acc = convolve(x, w, x_zero_point, w_zero_point, _attrs(attrs)).astype(object)
    m, nsp = acc.shape[1], acc.ndim - 2
    if B is not None:
        acc = acc + np.asarray(B).astype(np.int64).astype(object).reshape((1, m) + (1,) * nsp)
    ws = np.broadcast_to(f64(w_scale).reshape(-1), (m,))
    xs, ys = float(f64(x_scale).reshape(())), float(f64(y_scale).reshape(()))
    out = np.zeros(acc.shape, dtype=np.float64)
    if ys == 0:
        return out
    for idx in np.ndindex(acc.shape):
        out[idx] = float(Fraction(int(acc[idx])) * Fraction(xs) * Fraction(float(ws[idx[1]])) / Fraction(ys))
    return out


@op.reference(10)
def reference(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None, **attrs):
    return qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B, attrs=attrs)


def _combos(inputs, attrs):
    ins = list(inputs) + [None] * (9 - len(inputs))
    return [qlinear_conv(*ins, attrs=attrs, pad_with_zero_point=p, float32_multiplier=f, ties=t)
            for p in (True, False) for f in (False, True) for t in ("even", "down", "up")]


def _one_of(c: SilentCheck) -> bool:
    a = np.asarray(c.actual[0]).astype(np.int64)
    ok = np.zeros(a.shape, dtype=bool)
    for r in _combos(c.inputs, c.attrs):
        ok |= r.astype(np.int64) == a
    return bool(ok[c.masks[0]].all())


def _padding(inputs, attrs, expected, since):
    ins = list(inputs) + [None] * (9 - len(inputs))
    x, xz, w = ins[0], ins[2], ins[3]
    return padded_outputs([x, w, xz], attrs, expected, since)


def _precision(inputs, attrs, expected, since):
    ins = list(inputs) + [None] * (9 - len(inputs))
    a = qlinear_conv(*ins, attrs=attrs)
    b = qlinear_conv(*ins, attrs=attrs, float32_multiplier=True)
    m = a != b
    return [m if m.any() else None]


def _ties(inputs, attrs, expected, since):
    ins = list(inputs) + [None] * (9 - len(inputs))
    v = scaled_exact(*ins, attrs=attrs)
    m = (v - np.floor(v)) == 0.5
    return [m if m.any() else None]


def _variant(**how):
    """QLinearConv under one reading (keywords of ``qlinear_conv``)."""
    def reading(c):
        ins = list(c.inputs) + [None] * (9 - len(c.inputs))
        return [qlinear_conv(*ins, attrs=c.attrs, **how).astype(np.asarray(c.expected[0]).dtype)]
    return reading


READINGS = {"padding cells hold 0": _variant(pad_with_zero_point=False),
            "a float32 multiplier (x_scale * w_scale / y_scale)": _variant(float32_multiplier=True),
            "a tie rounded down": _variant(ties="down"), "a tie rounded up": _variant(ties="up"),
            "a float32 multiplier, a tie rounded up": _variant(float32_multiplier=True, ties="up")}

SENTENCE = ("each such output is the result of one combination of the readings (padding x_zero_point or 0; exact or "
            "float32 multiplier; a tie rounded to even, down or up)")
op.spec_silent(
    "padding_value", (10,),
    spec="The convolution operator consumes a quantized input tensor, its scale and zero point, a quantized filter, its "
         "scale and zero point, and output's scale and zero point, and computes the quantized output.",
    expected="padding cells hold x_zero_point (the quantized real 0), so they add nothing, as ConvInteger.padding_value; "
             "pads says only 'the number of pixels added'",
    where=_padding, invariants={SENTENCE: _one_of}, readings={k: READINGS[k] for k in ("padding cells hold 0",)})
op.spec_silent(
    "requantize_precision", (10,),
    spec="Each scale and zero-point pair must have same shape. [...] When bias is present it must be quantized using "
         "scale = input scale * weight scale and zero point as 0.",
    expected="acc * x_scale * w_scale / y_scale computed exactly and rounded half to even; the text names no precision "
             "for the requantization (a float32 multiplier can cross a near-tie)",
    where=_precision, invariants={SENTENCE: _one_of},
    readings={k: READINGS[k] for k in ("a float32 multiplier (x_scale * w_scale / y_scale)", "a float32 multiplier, a tie rounded up")})
op.spec_silent(
    "tie_rounding", (10,),
    spec="The convolution operator consumes a quantized input tensor, its scale and zero point, a quantized filter, its "
         "scale and zero point, and output's scale and zero point, and computes the quantized output.",
    expected="ties to even, as QuantizeLinear's and QLinearMatMul's 'rounding to nearest ties to even': QLinearConv's "
             "text names no rounding at all",
    where=_ties, invariants={SENTENCE: _one_of}, readings={k: READINGS[k] for k in ("a tie rounded down", "a tie rounded up")})


# -- strategy ---------------------------------------------------------------------------------
def _zp(d, label: str, n: int | None = None) -> np.ndarray:
    lo, hi = S.finite_range(label)
    mid = (lo + hi) // 2
    pick = st.integers(max(lo, mid - 20), min(hi, mid + 20)) | st.sampled_from([lo, hi, 0 if lo < 0 else lo])
    if n is None:
        return values(label, d(pick))
    return values(label, d(st.lists(pick, min_size=n, max_size=n)))


@op.strategy(10)
def draw(d, dtype, opset):
    shape, groups, m, kernel, attrs = draw_conv_geometry(d, budget=128)
    c = shape[1]
    # y of x's type, w int8 or of x's type: the combinations runtimes implement; the others are
    # the named edges saturate_*_to_* and in_range_*_to_*
    wtype = d(st.sampled_from(sorted({dtype, "int8"}))) if dtype == "uint8" else dtype
    ytype = dtype
    x = S.arrays(d, dtype, shape=shape)
    w = S.arrays(d, wtype, shape=(m, c // groups, *kernel))
    per_channel = d(st.booleans())
    wz = _zp(d, wtype, m if per_channel else None)
    taps = (c // groups) * int(np.prod(kernel))
    xs = 2.0 ** d(st.integers(-6, 0)) * d(st.sampled_from([1.0, 1.5, 0.7]))
    ws = [2.0 ** d(st.integers(-6, 0)) * d(st.sampled_from([1.0, 1.25, 0.9])) for _ in range(m if per_channel else 1)]
    # y_scale about the spread of the real output over 64 steps: in range mostly, saturating now and then
    ys = xs * max(ws) * taps * 128 * 128 / 64 * d(st.sampled_from([0.05, 0.25, 1.0, 4.0]))
    ws_arr = values("float32", ws) if per_channel else values("float32", ws[0])
    b = values("int32", d(st.lists(st.integers(-5000, 5000), min_size=m, max_size=m))) if d(st.booleans()) else None
    return Example([x, values("float32", xs), _zp(d, dtype), w, ws_arr, wz, values("float32", ys), _zp(d, ytype), b], attrs)


@op.edges(10)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    lo, hi = S.finite_range(dtype)
    f = lambda v: values("float32", v)  # noqa: E731
    out = []
    for wname, ext, wext in integer_conv_extremes(dtype):
        wlo = S.finite_range(wname)[0]
        for yname in ("uint8", "int8"):
            out.append(Example([ext, f(1.0), values(dtype, hi), wext, f(1.0), values(wname, wlo), f(1.0),
                                values(yname, 0)], name=f"saturate_{wname}_to_{yname}"))
            out.append(Example([ext, f(0.01), values(dtype, 0 if lo < 0 else 128), wext, f(0.01), values(wname, 0 if wlo < 0 else 128),
                                f(1.0), values(yname, 0 if yname == "int8" else 128)], name=f"in_range_{wname}_to_{yname}"))
    shift = 0 if dtype == "int8" else 8

    def xs(shape, **kw):
        return (ramp(np.int64, shape, **kw) + shift).astype(t)

    # w and y of x's type (int8 weights under int8 x): what runtimes implement; the other
    # combinations are the edges saturate_*_to_* and in_range_*_to_*
    tw = np.int8 if dtype == "int8" else np.uint8
    wname = "int8" if dtype == "int8" else "uint8"
    wshift = 0 if dtype == "int8" else 8

    def ws(shape, **kw):
        return (ramp(np.int64, shape, **kw) + wshift).astype(tw)

    x, w = xs((1, 2, 4, 4)), ws((3, 2, 2, 2), start=2, mod=5, offset=2)
    xz, wz = values(dtype, shift + 1), values(wname, wshift)
    u8 = lambda v: values(dtype, v if dtype == "uint8" else (np.asarray(v) - 128) // 4)  # noqa: E731
    per = values(wname, np.array([0, 2, -1]) + wshift)
    one = f(1.0)
    out += [
        # ties: acc * 1 * 1 / 2 with odd acc is k + 0.5
        Example([x, one, xz, w, one, wz, f(2.0), u8(128)], {}, name="ties_to_even"),
        Example([x, one, xz, w, f([1.0, 0.5, 0.25]), per, f(2.0), u8(100)], {}, name="per_channel_scale_and_zero_point"),
        Example([x, one, xz, w, one, wz, f(1.0), u8(100), values("int32", [1, -2, 3])], {}, name="bias"),
        Example([x, one, xz, w, one, wz, f(0.5), u8(128), values("int32", [2**20, -(2**20), 0])], {}, name="bias_saturates"),
        Example([x, one, xz, w, f(-1.0), wz, f(1.0), u8(128)], {}, name="negative_scale"),
        Example([x, one, values(dtype, 0), w, one, wz, one, u8(100)], {"pads": [1, 0, 0, 1]}, name="pads_zero_point_0"),
        Example([x, one, xz, w, one, wz, one, u8(100)], {"pads": [1, 0, 0, 1], "strides": [2, 1]}, name="pads_nonzero_zero_point"),
        Example([x, one, xz, w, one, wz, one, u8(100)], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided"),
        Example([x, one, xz, w, one, wz, one, u8(100)], {"kernel_shape": [2, 2], "strides": [1, 2]}, name="explicit_kernel_shape"),
        Example([x[:, :1].copy(), one, xz, w[:1, :1].copy(), one, wz, one, u8(100)], {"auto_pad": "SAME_LOWER"}, name="same_lower_odd"),
        Example([x, one, xz, w, one, wz, one, u8(100)], {"auto_pad": "VALID", "dilations": [2, 2], "strides": [1, 2]},
                name="valid_dilated_strided"),
        Example([xs((1, 4, 3, 3)), one, xz, ws((4, 2, 2, 2)), one, values(wname, np.array([0, 1, 2, 3]) + wshift), one, u8(50)], {"group": 2},
                name="group2_per_channel"),
        Example([xs((2, 2, 5)), one, xz, ws((2, 2, 3)), one, wz, one, u8(60)], {"strides": [2]}, name="conv1d"),
        Example([xs((1, 1, 3, 3, 3)), one, xz, ws((2, 1, 2, 2, 2), start=2, mod=3), one, wz, one, u8(60)], {"dilations": [1, 2, 1]},
                name="conv3d"),
    ]
    return out + batch_edges(dtype, out[-5])
