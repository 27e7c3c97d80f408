"""ConvInteger: Conv of (x - x_zero_point) and (w - w_zero_point), accumulated in int32
(ONNX spec: ConvInteger-10).

x is int8 or uint8 (T1, the swept type), w independently int8 or uint8 (T2, drawn per example),
y is int32. x_zero_point is "a scalar, which means a per-tensor/layer quantization" of x's type;
w_zero_point "could be a scalar or a 1-D tensor ... per output channel quantization. If it's a
1-D tensor, its number of elements should be equal to the number of output channels (M)". Both
default to 0. The geometry (kernel_shape, strides, dilations, pads, auto_pad with SAME_* giving
``ceil(input / strides)``) and the grouping are Conv's (``_window_util``, ``_conv_util``).

"The production MUST never overflow. The accumulation may overflow if and only if in 32 bits":
the reference accumulates exactly (int64) and the cases keep every sum inside int32 (at most a few
dozen products of 255 * 255), so the result is exact; the extreme values of both types are in
the edge examples.

Spec-silent: what a padding cell holds. The text says only "the number of pixels added"; a
quantized convolution pads with the real value 0, which is ``x_zero_point`` (the padded cell then
adds nothing), and that is what we expect; a backend may pad with the integer 0 instead (the
cell then adds ``-x_zero_point * (w - w_zero_point)``). With x_zero_point = 0 both agree, so only
outputs whose window holds padding under a non-zero x_zero_point are open, and there the result
must be one of the two.
"""

from __future__ import annotations

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator, SilentCheck

from ._conv_util import draw_conv_geometry, grouped_correlation, integer_conv_extremes, ramp
from ._window_util import batch_edges, gather, resolve

op = Operator("ConvInteger")
st = S.st


def _geometry(x, w, kernel_shape, strides, dilations, pads, auto_pad):
    kernel = list(kernel_shape) if kernel_shape is not None else list(np.shape(w)[2:])
    return resolve(np.shape(x)[2:], kernel, strides, dilations, pads, auto_pad)


def convolve(x, w, x_zero_point, w_zero_point, attrs: dict, pad_with_zero_point: bool = True) -> np.ndarray:
    """The exact result (int64); padding cells hold x_zero_point, or the integer 0."""
    x, w = np.asarray(x), np.asarray(w)
    g = _geometry(x, w, attrs.get("kernel_shape"), attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                  attrs.get("auto_pad", "NOTSET"))
    xz = 0 if x_zero_point is None else int(np.asarray(x_zero_point).reshape(-1)[0])
    xs = x.astype(np.int64) - xz
    win, valid, _, _ = gather(xs, g)  # padding cells 0 = x_zero_point after the shift
    if not pad_with_zero_point:
        win = np.where(valid, win, np.int64(-xz))
    ws = w.astype(np.int64)
    if w_zero_point is not None:
        wz = np.asarray(w_zero_point).astype(np.int64).reshape(-1)
        ws = ws - wz.reshape((wz.size,) + (1,) * (w.ndim - 1))
    return grouped_correlation(win, ws, int(attrs.get("group", 1)))


@op.reference(10)
def conv_integer(x, w, x_zero_point=None, w_zero_point=None, **attrs):
    y = convolve(x, w, x_zero_point, w_zero_point, attrs)
    lo, hi = S.finite_range("int32")
    if y.size and (y.min() < lo or y.max() > hi):
        raise OverflowError("ConvInteger: a sum leaves int32; the strategies must avoid it")
    return y.astype(np.int32)


def padded_outputs(inputs: list, attrs: dict, expected: list, since: int) -> list:
    """Open: the outputs whose window holds a padding cell, when x_zero_point is not 0."""
    x, w = inputs[0], inputs[1]
    xz = inputs[2] if len(inputs) > 2 else None
    if xz is None or int(np.asarray(xz).reshape(-1)[0]) == 0:
        return [None]
    g = _geometry(x, w, attrs.get("kernel_shape"), attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                  attrs.get("auto_pad", "NOTSET"))
    _, valid, _, _ = gather(np.zeros((1, 1, *np.shape(x)[2:])), g)
    r = len(g["out"])
    return [~valid.reshape(*g["out"], -1).all(axis=-1) if r else None]


def zero_or_zero_point(c: SilentCheck) -> bool:
    mask = c.masks[0]
    got = np.asarray(c.actual[0]).astype(np.int64)[mask]
    ins = list(c.inputs) + [None] * (4 - len(c.inputs))
    other = convolve(*ins[:4], c.attrs, pad_with_zero_point=False)[mask]
    want = np.asarray(c.expected[0]).astype(np.int64)[mask]
    return bool(np.all((got == want) | (got == other)))


op.spec_silent(
    "padding_value", (10,),
    spec="The integer convolution operator consumes an input tensor, its zero-point, a filter, and its zero-point, and computes the output.",
    expected="padding cells hold x_zero_point (the quantized real 0), so they add nothing: what a quantized convolution means; "
             "the text (and pads: 'the number of pixels added') never says what a padding cell holds",
    where=padded_outputs,
    invariants={"each padded output is the result with padding x_zero_point or with padding the integer 0": zero_or_zero_point},
    readings={"padding cells hold the integer 0": lambda c: [convolve(*(list(c.inputs) + [None] * (4 - len(c.inputs)))[:4], c.attrs,
                                                                      pad_with_zero_point=False).astype(np.asarray(c.expected[0]).dtype)]})


@op.strategy(10)
def draw(d, dtype, opset):
    shape, groups, m, kernel, attrs = draw_conv_geometry(d, budget=128)
    c = shape[1]
    wtype = d(st.sampled_from(["uint8", "int8"]))
    x = S.arrays(d, dtype, shape=shape)
    w = S.arrays(d, wtype, shape=(m, c // groups, *kernel))
    kind = d(st.sampled_from(["none", "x", "w", "both", "w_channel", "both_channel"]))
    xz = S.arrays(d, dtype, shape=()) if kind.startswith("both") or kind == "x" else None
    wz = None
    if kind in ("w", "both"):
        wz = S.arrays(d, wtype, shape=())
    elif kind.endswith("channel"):
        wz = S.arrays(d, wtype, shape=(m,))
    return Example([x, w, xz, wz], attrs)


@op.edges(10)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    lo, hi = S.finite_range(dtype)
    out = []
    for wname, ext, wext in integer_conv_extremes(dtype):
        out += [
            Example([ext, wext], {}, name=f"extremes_{wname}"),
            Example([ext, wext, np.array(hi, dtype=t), np.array(S.finite_range(wname)[0], dtype=wext.dtype)], {},
                    name=f"extreme_zero_points_{wname}"),
        ]
    shift = 0 if dtype == "int8" else 8  # small values, centred for uint8 (w is uint8 here, centred on 8)

    def xs(shape, **kw):
        return (ramp(np.int64, shape, **kw) + shift).astype(t)

    def ws(shape, tw=np.uint8, **kw):
        return (ramp(np.int64, shape, **kw) + (8 if tw == np.uint8 else 0)).astype(tw)

    x, w = xs((1, 2, 4, 4)), ws((3, 2, 2, 2), start=2, mod=5, offset=2)
    xz, wz = np.array(shift + 1, dtype=t), np.array(8, dtype=np.uint8)
    per = np.array([8, 10, 7], dtype=np.uint8)
    out += [
        Example([x, w, xz, per], {}, name="per_channel_w_zero_point"),
        Example([x, w, None, wz], {}, name="w_zero_point_only"),
        Example([x, w, np.array(0, dtype=t), wz], {"pads": [1, 0, 0, 1]}, name="pads_zero_point_0"),
        Example([x, w, xz, wz], {"pads": [1, 0, 0, 1], "strides": [2, 1]}, name="pads_nonzero_zero_point"),  # spec-silent
        Example([x, w, xz, per], {"pads": [0, 1, 1, 0]}, name="pads_per_channel"),  # spec-silent
        Example([x, w, xz, wz], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, name="same_upper_strided"),
        Example([x[:, :1].copy(), w[:1, :1].copy(), xz], {"auto_pad": "SAME_LOWER"}, name="same_lower_odd"),
        Example([x, w, xz, wz], {"auto_pad": "VALID", "dilations": [2, 2], "strides": [1, 2]}, name="valid_dilated_strided"),
        Example([x, w, xz, wz], {"kernel_shape": [2, 2], "group": 1, "auto_pad": "NOTSET"}, name="explicit_defaults"),
        Example([xs((1, 4, 3, 3)), ws((4, 2, 2, 2)), xz, np.array([8, 9, 10, 11], dtype=np.uint8)], {"group": 2},
                name="group2_per_channel"),
        Example([xs((1, 3, 3, 3)), ws((3, 1, 2, 2), np.int8)], {"group": 3}, name="depthwise_int8_weights"),
        Example([xs((2, 2, 5)), ws((2, 2, 3)), xz, wz], {"strides": [2]}, name="conv1d"),
        Example([xs((1, 1, 3, 3, 3)), ws((2, 1, 2, 2, 2), start=2, mod=3), xz], {"dilations": [1, 2, 1]}, name="conv3d"),
    ]
    return out + batch_edges(dtype, out[-5])
