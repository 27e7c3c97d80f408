"""Type conversion and (de)quantization: Cast, CastLike, QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear.

Values of types torch has no dtype for live in carriers (see :mod:`.dtypes`); the conversions
here produce the exact value of the target type inside its carrier:

- float8 (saturating by default, onnx Cast "float 8" tables), through torch's own float8 dtypes;
- float4e2m1 and float6e2m3/float6e3m2, rounded to nearest-even on their grids and saturated to the largest value;
- int4/uint4 and uint16/uint32 by truncation then wrap-around (fixed-point rule of Cast).
"""

from __future__ import annotations

import torch
from onnx import TensorProto as TP

from ..base import Unsupported
from . import dtypes
from ._util import axis as norm_axis
from .registry import lowers

_TORCH_FLOAT8 = {
    TP.FLOAT8E4M3FN: torch.float8_e4m3fn,
    TP.FLOAT8E4M3FNUZ: torch.float8_e4m3fnuz,
    TP.FLOAT8E5M2: torch.float8_e5m2,
    TP.FLOAT8E5M2FNUZ: torch.float8_e5m2fnuz,
}
_FLOAT8_MAX = {TP.FLOAT8E4M3FN: 448.0, TP.FLOAT8E4M3FNUZ: 240.0, TP.FLOAT8E5M2: 57344.0, TP.FLOAT8E5M2FNUZ: 57344.0}
_INT_RANGE = {
    TP.INT8: (-128, 127), TP.UINT8: (0, 255), TP.INT16: (-32768, 32767), TP.UINT16: (0, 65535),
    TP.INT32: (-(2**31), 2**31 - 1), TP.UINT32: (0, 2**32 - 1), TP.INT4: (-8, 7), TP.UINT4: (0, 15),
}
if hasattr(TP, "INT2"):
    _INT_RANGE[TP.INT2] = (-2, 1)
    _INT_RANGE[TP.UINT2] = (0, 3)


def _exact_value(x: torch.Tensor, code: int | None) -> torch.Tensor:
    """The tensor's numbers as they are in ONNX type ``code`` (uint64 carriers unfolded)."""
    if code == TP.UINT64:
        return x.to(torch.float64) + (x < 0).to(torch.float64) * 2.0**64
    return x


def to_float8(v: torch.Tensor, code: int, saturate: bool, fnuz_inf_nan: bool = False) -> torch.Tensor:
    """``fnuz_inf_nan``: the saturating table of Cast-19..23 sends +-inf to NaN for the FNUZ types
    ('Inf | FLT_MAX | NaN | FLT_MAX | NaN'); Cast-24 changed that row to +-FLT_MAX."""
    inf = torch.isinf(v)  # before float32: a float64 beyond float32's range is finite, not an infinity
    v = v.to(torch.float32)
    if saturate:
        top = _FLOAT8_MAX[code]
        v = torch.where(torch.isnan(v), v, v.clamp(-top, top))
    out = v.to(_TORCH_FLOAT8[code]).to(torch.float32)
    if saturate and fnuz_inf_nan and code in (TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2FNUZ):
        out = torch.where(inf, torch.full_like(out, float("nan")), out)
    if not saturate and code == TP.FLOAT8E4M3FN:
        # torch saturates e4m3fn; without saturation what rounds past 448 (beyond the 464
        # midpoint) is NaN, as is infinity (Cast, float 8 table for saturate=0)
        out = torch.where(v.abs() > 464.0, torch.full_like(out, float("nan")), out)
    return out


# the floats with no infinity and no NaN: (mantissa bits, smallest normal exponent, largest value)
_MINIFLOAT = {TP.FLOAT4E2M1: (1, 0, 6.0)}
if hasattr(TP, "FLOAT6E2M3"):
    _MINIFLOAT.update({TP.FLOAT6E2M3: (3, 0, 7.5), TP.FLOAT6E3M2: (2, -2, 28.0)})


def to_minifloat(v: torch.Tensor, code: int) -> torch.Tensor:
    """Round to nearest-even on the grid of float4e2m1 / float6e2m3 / float6e3m2 and saturate at
    the largest value (+-inf included); NaN stays NaN for the caller to decide. The grid step at
    a magnitude in [2**e, 2**(e+1)) is 2**(e - mantissa bits), e no lower than the smallest
    normal exponent (subnormals share its step)."""
    bits, emin, top = _MINIFLOAT[code]
    v = v.to(torch.float64)
    a = v.abs()
    e = (torch.frexp(torch.where(torch.isfinite(a), a, torch.ones_like(a)))[1] - 1).clamp(min=emin)
    step = torch.pow(2.0, (e - bits).to(torch.float64))
    q = (torch.round(a / step) * step).clamp(max=top)  # torch.round: half to even
    q = torch.where(torch.isnan(a), a, q)
    return torch.copysign(q, v).to(torch.float32)


def _exponent_and_fraction(x: torch.Tensor, src: int | None):
    """Each magnitude as 2**e * (1 + f): (positive, e, f > 0, f >= 1/2, NaN, inf), exactly.

    Floats through ``frexp`` of float64 (exact for every narrower float, subnormals included);
    integers by their bits, with the carrier's sign bit standing for 2**63 (uint64's top half, or
    the magnitude of int64's minimum)."""
    if x.dtype.is_floating_point:
        f = x.to(torch.float64).abs()
        nan, inf = torch.isnan(f), torch.isinf(f)
        m, e = torch.frexp(torch.where(nan | inf, torch.ones_like(f), f))  # f = m * 2**e, 1/2 <= m < 1
        positive = ~(nan | inf) & (f > 0)
        return positive, e.to(torch.int64) - 1, positive & (m != 0.5), positive & (m >= 0.75), nan, inf
    c = x.to(torch.int64)
    if src != TP.UINT64:
        c = c.abs()  # int64's minimum stays negative: 2**63 by the rule above
    top = c < 0
    low_bits = c & (2**63 - 1)
    e = torch.frexp(low_bits.to(torch.float64))[1].to(torch.int64) - 1  # may round up to the next power
    e = torch.where((low_bits > 0) & ((low_bits >> e.clamp(min=0)) == 0), e - 1, e)
    e = torch.where(top, torch.full_like(e, 63), e)
    fraction = torch.where(top, low_bits != 0, low_bits != (torch.ones_like(c) << e.clamp(min=0)))
    half = (e > 0) & (((c >> (e - 1).clamp(min=0)) & 1) == 1)
    positive = top | (low_bits > 0)
    nothing = torch.zeros_like(top)
    return positive, e, positive & fraction, positive & half, nothing, nothing


def to_float8e8m0(x: torch.Tensor, src: int | None, saturate: bool, round_mode: str) -> torch.Tensor:
    """The power of two float8e8m0 keeps of ``x`` (its exponent; the sign is dropped), as float32.

    ``up`` rounds any fraction up, ``down`` truncates, ``nearest`` rounds half up; what falls
    outside 2**-127 .. 2**127 (0 included) and +inf become E8M0_MIN / E8M0_MAX with ``saturate``,
    NaN without (Cast-24's float8e8m0 table)."""
    positive, e, fraction, half, nan, inf = _exponent_and_fraction(x, src)
    bump = {"up": fraction, "nearest": half, "down": torch.zeros_like(fraction)}[round_mode]
    e = e + bump.to(torch.int64)
    low = ~(nan | inf) & (~positive | (e < -127))
    high = inf | (~low & (e > 127))
    value = torch.pow(2.0, e.clamp(-127, 127).to(torch.float64)).to(torch.float32)
    nan_value = torch.full_like(value, float("nan"))
    value = torch.where(low, torch.full_like(value, 2.0**-127) if saturate else nan_value, value)
    value = torch.where(high, torch.full_like(value, 2.0**127) if saturate else nan_value, value)
    return torch.where(nan, nan_value, value)


def cast_to(x: torch.Tensor, src: int | None, to: int, saturate: bool = True, round_mode: str = "up",
            fnuz_inf_nan: bool = False) -> torch.Tensor:
    if to == TP.STRING or src == TP.STRING:
        raise Unsupported("torch has no string tensors (Cast to or from string)")
    if to not in dtypes.CARRIER:
        raise Unsupported(f"Cast to {dtypes.type_name(to)}")
    integral = to == TP.BOOL or to in _INT_RANGE or to in (TP.INT64, TP.UINT64)
    # uint64 to an integer type keeps the carrier's bits (wrapping is on the low bits); only a float
    # target needs the unsigned value, which float64 holds only up to 2**53
    if hasattr(TP, "FLOAT8E8M0") and to == TP.FLOAT8E8M0:
        return to_float8e8m0(x, src, saturate, round_mode)
    v = x if integral and src == TP.UINT64 else _exact_value(x, src)
    if to == TP.BOOL:
        return v != 0
    if to in _TORCH_FLOAT8:
        return to_float8(v, to, saturate, fnuz_inf_nan)
    if to in _MINIFLOAT:
        return to_minifloat(v, to)
    if to in (TP.INT4, TP.UINT4) and v.dtype.is_floating_point:
        # int4.md: "Cast to a 4 bit type is done by rounding to the nearest-integer (with ties to even)"
        v = torch.round(v.to(torch.float64))
    carrier = dtypes.CARRIER[to]
    if to in dtypes.WRAPPED or to in (TP.UINT32, TP.UINT16):
        whole = v.to(torch.int64) if v.dtype != torch.int64 else v  # floats truncate toward zero
        return dtypes.wrap(whole, to).to(carrier) if to in dtypes.WRAPPED else whole.to(carrier)
    if to == TP.UINT64 and v.dtype.is_floating_point:
        big = v >= 2.0**63
        return torch.where(big, (v - 2.0**64).to(torch.int64), v.to(torch.int64))
    if to == TP.UINT8 and v.dtype.is_floating_point:
        return v.to(torch.int64).to(torch.uint8)  # wrap like the reference's numpy astype
    return v.to(carrier)


@lowers("Cast", 6, 9, 13, 19, 21, 23, 24, 25, 28)
def cast(node, x, *, to, saturate=1, round_mode="up"):
    return cast_to(x, node.in_type(0), to, bool(saturate), round_mode, 19 <= node.since < 24)


@lowers("Cast", 1)
def cast_1(node, x, *, to):
    """Cast-1 names the target type by string ("FLOAT", "INT32", ...)."""
    name = to.decode() if isinstance(to, bytes) else to
    return cast_to(x, node.in_type(0), TP.DataType.Value(name) if isinstance(name, str) else int(name), True, "up")


@lowers("CastLike", 15, 19, 21, 23, 24, 25)
def cast_like(node, x, like, *, saturate=1, round_mode="up"):
    to = node.in_type(1) or dtypes.onnx_type_of(like)
    return cast_to(x, node.in_type(0), to, bool(saturate), round_mode, 19 <= node.since < 24)


# -- quantization ----------------------------------------------------------------------------
def _expand_param(p: torch.Tensor, x: torch.Tensor, axis: int, block_size: int) -> torch.Tensor:
    """Broadcast a per-tensor, per-axis or blocked scale / zero point to ``x``'s shape."""
    if p.dim() == 0 or p.numel() == 1 and p.dim() <= 1:
        return p.reshape(())
    a = norm_axis(axis, x.dim())
    if p.dim() == 1 and not block_size:
        shape = [1] * x.dim()
        shape[a] = p.shape[0]
        return p.reshape(shape)
    return p.repeat_interleave(block_size, dim=a).narrow(a, 0, x.shape[a])


def _quantized_type(node, y_zero_point, output_dtype):
    if output_dtype:
        return output_dtype
    if y_zero_point is not None:
        return node.in_type(2) or dtypes.onnx_type_of(y_zero_point)
    return TP.UINT8


@lowers("QuantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def quantize_linear(node, x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0, saturate=1, precision=0):
    to = _quantized_type(node, y_zero_point, output_dtype)
    scale = _expand_param(y_scale, x, axis, block_size)
    work = dtypes.carrier(precision) if precision else (scale.dtype if scale.dtype.is_floating_point else torch.float32)
    q = x.to(work) / scale.to(work)
    if to in _TORCH_FLOAT8 or to in _MINIFLOAT:
        if y_zero_point is not None:
            q = q + _expand_param(y_zero_point, x, axis, block_size).to(q.dtype)
        if to in _MINIFLOAT:  # float4.md's Cast table: NaN -> 6, the largest value (no NaN in the type)
            return to_minifloat(torch.where(torch.isnan(q), torch.full_like(q, _MINIFLOAT[to][2]), q), to)
        return to_float8(q, to, bool(saturate))
    q = torch.round(q.to(torch.float64))  # round half to even
    if y_zero_point is not None:
        q = q + _exact_value(_expand_param(y_zero_point, x, axis, block_size), to).to(torch.float64)
    if to not in _INT_RANGE:
        raise Unsupported(f"QuantizeLinear to {dtypes.type_name(to)}")
    lo, hi = _INT_RANGE[to]
    return q.clamp(lo, hi).to(torch.int64).to(dtypes.CARRIER[to])


@lowers("DequantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def dequantize_linear(node, x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    out = dtypes.carrier(output_dtype) if output_dtype else x_scale.dtype
    work = torch.float64 if out != torch.float64 else out
    v = _exact_value(x, node.in_type(0)).to(work)
    if x_zero_point is not None:
        v = v - _exact_value(_expand_param(x_zero_point, x, axis, block_size), node.in_type(2)).to(work)
    scale = _expand_param(x_scale, x, axis, block_size)
    # the product is computed in the output type (the spec), then stored in it
    return (v.to(out) * scale.to(out)).to(out)


@lowers("DynamicQuantizeLinear", 11)
def dynamic_quantize_linear(node, x):
    if x.numel() == 0:  # an empty range: y_scale 0, zero point 0 (spec-silent: 0 / 0 in the body)
        return torch.zeros(x.shape, dtype=torch.uint8), torch.zeros((), dtype=torch.float32), torch.zeros((), dtype=torch.uint8)
    lo = torch.clamp(x.min(), max=0).to(torch.float32)
    hi = torch.clamp(x.max(), min=0).to(torch.float32)
    scale = (hi - lo) / 255.0
    zp = torch.clamp(torch.round(-lo / scale), 0, 255) if float(scale) != 0 else torch.zeros((), dtype=torch.float32)
    y = torch.clamp(torch.round(x.to(torch.float32) / scale) + zp, 0, 255) if float(scale) != 0 else torch.zeros_like(x) + zp
    return y.to(torch.uint8), scale, zp.to(torch.uint8)

