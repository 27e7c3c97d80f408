"""ConvTranspose: the transpose (gradient) of Conv, with groups, bias, strides, dilations,
output_padding, output_shape and padding (ONNX spec: ConvTranspose-1, 11, 22).

X is (N x C x D1 x ... x Dn), W is (C x M/group x k1 x ... x kn), the optional bias B is (M);
"The number of channels in the output should be equal to W.shape[1] * group". Input position
``o`` and tap ``j`` of channel c (group g = c // (C/G)) add ``X[c, o] * W[c, m', j]`` to output
channel ``g * M/G + m'`` at ``o * stride + j * dilation - pads[start]``: the full result has
``stride * (input - 1) + output_padding + ((kernel - 1) * dilation + 1)`` cells per axis, of
which ``pads[start]`` are cut at the beginning and ``pads[end]`` at the end ("If the pads
parameter is provided the shape of the output is calculated via ... output_shape[i] = stride[i] *
(input_size[i] - 1) + output_padding[i] + ((kernel_shape[i] - 1) * dilations[i] + 1) -
pads[start_i] - pads[end_i]"). The output_padding cells no tap reaches hold 0 (+ bias):
"this attribute doesn't directly affect the computed output values" (version 11 on).

Padding from ``output_shape`` (which "will cause pads values to be auto generated", "pads values
are ignored") and from auto_pad SAME_*: ``total_padding = stride * (input - 1) + output_padding +
extent - output_shape``, split by a rule that changed between versions:

- ConvTranspose-1: "If (auto_pads != SAME_UPPER): pads[start_i] = total_padding[i]/2;
  pads[end_i] = total_padding[i] - (total_padding[i]/2) / Else: pads[start_i] = total_padding[i]
  - (total_padding[i]/2); pads[end_i] = (total_padding[i]/2)": NOTSET and SAME_LOWER put the odd
  cell at the end, SAME_UPPER at the beginning, contradicting its own auto_pad text ("the extra
  padding at the end for SAME_UPPER and at the beginning for SAME_LOWER"); SAME_* "pad the input
  so that the output spatial size match the input" (with strides > 1 that is not what later
  versions say). So version 1's SAME_* cases have stride 1 and an even total (no odd cell);
  its output_shape cases follow the formula (odd cell at the end): named edge examples (ONNX
  Runtime splits by the version-11 rule at every opset); drawn ones have even totals.
- ConvTranspose-11 and 22: "If (auto_pads == SAME_UPPER): pads[start_i] = total_padding[i]/2;
  pads[end_i] = total_padding[i] - (total_padding[i]/2) / Else: pads[start_i] = total_padding[i] -
  (total_padding[i]/2); pads[end_i] = (total_padding[i]/2)": SAME_UPPER puts the odd cell at the
  end (as its auto_pad text says), SAME_LOWER *and NOTSET* at the beginning. SAME_* "pad the input
  so that output_shape[i] = input_shape[i] * strides[i]".

SAME_* with output_padding: the text gives ``input * stride`` (output_padding only moves the
padding), onnx's shape inference (1.23) ``input * stride + output_padding``, so a model stating
the text's shape is rejected by the checker: not drawn (output_padding with output_shape is).
A negative total (output_shape past the full result, or SAME_* with stride > extent +
output_padding) is not given a meaning: never drawn. VALID: no padding. output_padding is drawn
below the stride ("must be less than the corresponding stride/dilation dimension").
ConvTranspose-22 adds bfloat16.

Evaluated in float64 and rounded once; values are drawn on a binary grid on which every
partial sum is exact, so no summation order changes the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan, abs_bound, size_of
from harness.registry import Example, Operator

from .._common import back, wide
from ._conv_util import LETTERS_K, LETTERS_O, fold, fuzz_conv_input, ramp, specials
from .._reduce_util import float_grid
from ._window_util import batch_edges, draw_input_shape, ints, text

op = Operator("ConvTranspose")
st = S.st
VERSIONS = (1, 11, 22)


def split(total: int, mode: str, since: int) -> tuple[int, int]:
    """(pads[start], pads[end]) from a total padding, by the version's rule (see the docstring)."""
    half = total // 2
    if since == 1:
        return (half, total - half) if mode != "SAME_UPPER" else (total - half, half)
    return (half, total - half) if mode == "SAME_UPPER" else (total - half, half)


def geometry(spatial: tuple[int, ...], kernel: list[int], since: int, strides: Any = None, dilations: Any = None,
             pads: Any = None, auto_pad: Any = "NOTSET", output_padding: Any = None, output_shape: Any = None) -> dict[str, list[int]]:
    """Per axis: strides, dilations, pads (begin, end), the full result's size and the output size."""
    r = len(spatial)
    s, d, op_ = ints(strides, r, 1), ints(dilations, r, 1), ints(output_padding, r, 0)
    mode = text(auto_pad)
    explicit = ints(pads, 2 * r, 0)
    begin, end, out, full = [], [], [], []
    for i, n in enumerate(spatial):
        f = s[i] * (n - 1) + op_[i] + (int(kernel[i]) - 1) * d[i] + 1
        if output_shape is not None:
            pb, pe = split(f - int(list(output_shape)[-r:][i]), mode, since)
        elif mode in ("SAME_UPPER", "SAME_LOWER"):
            pb, pe = split(f - (n if since == 1 else n * s[i]), mode, since)
        elif mode in ("VALID", "NOTSET"):
            pb, pe = (0, 0) if mode == "VALID" else (explicit[i], explicit[i + r])
        else:
            raise ValueError(f"auto_pad {mode!r}")
        if pb < 0 or pe < 0:
            raise ValueError(f"negative total padding on axis {i} (output larger than the full result): not defined")
        begin.append(pb)
        end.append(pe)
        full.append(f)
        out.append(f - pb - pe)
    if any(o < 0 for o in out):
        raise ValueError(f"pads {begin} + {end} remove more than the full result {full}")
    return {"strides": s, "dilations": d, "begin": begin, "end": end, "full": full, "out": out}


def make_reference(since: int):
    def conv_transpose(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, output_padding=None,
                       output_shape=None, pads=None, strides=None):
        x, w = np.asarray(x), np.asarray(w)
        kernel = list(kernel_shape) if kernel_shape is not None else list(w.shape[2:])
        g = geometry(x.shape[2:], kernel, since, strides, dilations, pads, auto_pad, output_padding, output_shape)
        n, c = x.shape[:2]
        groups, r = int(group), x.ndim - 2
        mg = w.shape[1]
        xs, ks = x.shape[2:], w.shape[2:]
        o, k = LETTERS_O[:r], LETTERS_K[:r]
        prod = np.einsum(f"ngc{o},gcm{k}->ngm{o}{k}", wide(x).reshape(n, groups, c // groups, *xs),
                         wide(w).reshape(groups, c // groups, mg, *ks))
        y = fold(prod.reshape(n, groups * mg, *xs, *ks), tuple(g["out"]), g["strides"], g["dilations"], g["begin"])
        if b is not None:
            y = y + wide(b).reshape((groups * mg,) + (1,) * r)
        return back(y, x)

    return conv_transpose


for _v in VERSIONS:
    op.reference(_v)(make_reference(_v))


def draw_attrs(d, spatial: tuple[int, ...], since: int, budget) -> tuple[dict[str, Any], list[int]]:
    """kernel_shape, strides, dilations, output_padding and one way of padding (pads, auto_pad,
    output_shape) whose output is defined (see the docstring) and within ``budget(out)``."""
    r = len(spatial)
    for _ in range(16):
        kernel = [d(st.integers(1, 3)) for _ in range(r)]
        strides = [d(st.sampled_from([1, 2, 1, 3])) for _ in range(r)]
        dil = [d(st.sampled_from([1, 2, 1])) for _ in range(r)]
        attrs: dict[str, Any] = {"kernel_shape": kernel}
        if any(v != 1 for v in strides) or d(st.integers(0, 3)) == 0:
            attrs["strides"] = strides
        if any(v != 1 for v in dil) or d(st.integers(0, 3)) == 0:
            attrs["dilations"] = dil
        if any(v > 1 for v in strides) and d(st.booleans()):
            attrs["output_padding"] = [d(st.integers(0, v - 1)) for v in strides]
        extent = [(k - 1) * v + 1 for k, v in zip(kernel, dil)]
        mode = d(st.sampled_from(["pads", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "output_shape", "pads"]))
        if mode == "pads":
            attrs["pads"] = [d(st.integers(0, e - 1)) for e in extent] + [d(st.integers(0, e - 1)) for e in extent]
        elif mode == "NOTSET":
            if d(st.booleans()):
                attrs["auto_pad"] = "NOTSET"
        elif mode == "output_shape":
            how = d(st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", None]))
            if how is not None:
                attrs["auto_pad"] = how
            full = [s * (n - 1) + p + e for s, n, p, e in zip(strides, spatial, attrs.get("output_padding", [0] * r), extent)]
            # not below the input size: onnx's shape inference (1.23) then drops the spatial dims
            attrs["output_shape"] = [d(st.integers(max(1, n, f - 3), f)) for f, n in zip(full, spatial)]
        else:
            attrs["auto_pad"] = mode
            if mode != "VALID" and "output_padding" in attrs:
                continue  # SAME_* with output_padding: onnx's shape inference disagrees with the text (see the docstring)
            if since == 1 and mode != "VALID" and (any(v != 1 for v in strides) or any(e % 2 == 0 for e in extent)
                                                   or "output_padding" in attrs):
                continue  # ConvTranspose-1's SAME_*: stride 1 and an even total only (see the docstring)
        try:
            g = geometry(spatial, kernel, since, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                         attrs.get("auto_pad", "NOTSET"), attrs.get("output_padding"), attrs.get("output_shape"))
        except ValueError:
            continue
        if since == 1 and "output_shape" in attrs and any((b + e) % 2 for b, e in zip(g["begin"], g["end"])):
            continue  # version 1's odd split is tested by the named edges only (see the docstring)
        if all(o >= 1 for o in g["out"]) and budget(g["out"]):
            return attrs, kernel
    return {"kernel_shape": [1] * r}, [1] * r


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = max(v for v in VERSIONS if v <= opset)
    shape = draw_input_shape(d, budget=96)
    n, c, spatial = shape[0], shape[1], shape[2:]
    groups = d(st.sampled_from([g for g in (1, 2, 3) if c % g == 0]))
    mg = d(st.integers(1, 2))
    attrs, kernel = draw_attrs(d, spatial, since, lambda out: n * groups * mg * int(np.prod(out)) <= 256)
    if d(st.booleans()):
        del attrs["kernel_shape"]
    if groups != 1 or d(st.integers(0, 3)) == 0:
        attrs["group"] = groups
    terms = c // groups * int(np.prod(kernel)) + 1
    x = float_grid(d, dtype, shape, terms, 4.0, 2)
    w = float_grid(d, dtype, (c, mg, *kernel), terms, 4.0, 2)
    b = float_grid(d, dtype, (groups * mg,), terms, 4.0, 2) if d(st.booleans()) else None
    return Example([x, w, b], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = max(v for v in VERSIONS if v <= opset)
    t = S.np_dtype(dtype)
    x = ramp(t, (1, 2, 3, 3))
    w = ramp(t, (2, 2, 2, 2), start=2, mod=5, offset=2)
    bias = np.array([1, -0.5, 2, 0], dtype=t)
    out = [
        Example([x, w, bias[:2]], {"strides": [2, 2], "pads": [1, 0, 0, 1]}, name="asymmetric_pads_bias"),
        Example([x, w], {}, name="kernel_shape_inferred"),
        Example([x, w], {"kernel_shape": [2, 2], "strides": [2, 3], "output_padding": [1, 2]}, name="output_padding"),
        Example([x, w], {"strides": [2, 2], "dilations": [2, 1], "output_padding": [1, 0], "pads": [1, 1, 0, 1]},
                name="dilated_output_padding_pads"),
        Example([x, w], {"strides": [3, 3]}, name="stride_past_kernel"),  # cells no tap reaches: 0
        Example([x, w], {"auto_pad": "VALID", "strides": [2, 1]}, name="valid"),
        # full result 6 x 6, odd total paddings 1 and 3: the version's split rule decides which side loses the odd cell
        Example([x, w, bias[:2]], {"strides": [2, 2], "output_shape": [5, 3]}, name="output_shape_odd_total"),
        Example([x, w], {"strides": [2, 2], "output_shape": [5, 3], "auto_pad": "SAME_UPPER"}, name="output_shape_same_upper"),
        Example([x, w], {"strides": [2, 2], "output_shape": [3, 5], "auto_pad": "SAME_LOWER"}, name="output_shape_same_lower"),
        Example([x, w], {"strides": [2, 2], "output_shape": [6, 6], "output_padding": [1, 1]}, name="output_shape_output_padding"),
        Example([ramp(t, (1, 4, 2, 3)), ramp(t, (4, 1, 2, 2), start=4, mod=5, offset=2), bias], {"group": 4, "strides": [2, 1]},
                name="depthwise"),
        Example([ramp(t, (2, 4, 2, 2)), ramp(t, (4, 2, 2, 1), start=1, mod=5, offset=2), bias], {"group": 2, "pads": [0, 0, 1, 0]},
                name="group2_batch2"),
        Example([ramp(t, (1, 2, 4)), ramp(t, (2, 1, 3)), np.array([0.5], dtype=t)], {"strides": [2], "pads": [1, 2]}, name="conv1d"),
        Example([ramp(t, (1, 1, 2, 2, 2)), ramp(t, (1, 2, 2, 1, 2), start=2, mod=3, offset=1)],
                {"strides": [2, 1, 2], "pads": [1, 0, 0, 0, 0, 1], "output_padding": [1, 0, 0]}, name="conv3d"),
        Example([ramp(t, (1, 1, 1, 1)), ramp(t, (1, 1, 3, 3))], {"pads": [1, 1, 1, 1]}, name="single_input_cell"),
    ]
    if since == 1:  # stride 1, odd extent: an even total, the split is not in question
        out.append(Example([x, ramp(t, (2, 1, 3, 3), start=3)], {"auto_pad": "SAME_UPPER"}, name="same_upper_unit_stride"))
        out.append(Example([x, ramp(t, (2, 1, 3, 1), start=3)], {"auto_pad": "SAME_LOWER", "dilations": [1, 2]},
                           name="same_lower_unit_stride"))
    else:  # SAME_*: output = input * stride; total = output_padding + extent - stride
        out.append(Example([x, w], {"auto_pad": "SAME_UPPER", "strides": [2, 2], "kernel_shape": [2, 2], "dilations": [2, 1]},
                           name="same_upper_odd_total"))
        out.append(Example([x, w], {"auto_pad": "SAME_LOWER", "strides": [2, 2], "dilations": [2, 1]}, name="same_lower_odd_total"))
    special = specials(t, (1, 1, 3, 3))
    out.append(Example([special, np.ones((1, 1, 2, 2), dtype=t)], {"strides": [2, 2]}, name="nan_inf"))
    out.append(Example([special, np.array([[[[0, 1], [1, 1]]]], dtype=t)], {}, name="inf_times_zero_weight"))
    return out + batch_edges(dtype, out[0], overflow=True)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    start = fuzz_conv_input(c)
    if start is None:
        return None
    x, channels, spatial, group = start
    kernel = [1 + c.pick(3) for _ in spatial]
    strides = [1 + c.pick(2) for _ in spatial]
    attrs: dict[str, Any] = {"kernel_shape": kernel}
    if any(v != 1 for v in strides):
        attrs["strides"] = strides
        if c.pick(2):
            attrs["output_padding"] = [c.pick(v) for v in strides]
    mode = c.pick(4)
    if mode == 1 and c.since >= 11:
        attrs["auto_pad"] = c.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
        if attrs["auto_pad"] != "VALID":
            attrs.pop("output_padding", None)  # see the docstring
    elif mode >= 2:
        attrs["pads"] = [c.pick(k) for k in kernel] + [c.pick(k) for k in kernel]
    try:
        g = geometry(spatial, kernel, c.since, attrs.get("strides"), None, attrs.get("pads"), attrs.get("auto_pad", "NOTSET"),
                     attrs.get("output_padding"))
    except ValueError:
        return None
    out_channels = group * (1 + c.pick(2))
    if min(g["out"]) < 1 or x.shape[0] * out_channels * size_of(tuple(g["out"])) > MAX_ELEMENTS:
        return None
    if c.pick(2):
        del attrs["kernel_shape"]  # optional: inferred from W
    if group > 1:
        attrs["group"] = group
    w = c.const(c.floats((channels, out_channels // group, *kernel)))
    ins = [x, w] + ([c.const(c.floats((out_channels,)))] if c.pick(2) else [])
    return Plan(ins, attrs, n_acc=channels // group * size_of(tuple(kernel)) + 1)
