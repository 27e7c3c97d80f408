"""Cast, CastLike, BitCast: conversions between every ONNX element type.

Float 8 conversion follows the saturation tables of Cast-19+; FLOAT8E8M0 follows the
``round_mode`` rules of Cast-25+; the sub-byte and narrow float types go through ml_dtypes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx

from ._util import ML_FLOATS, ML_INTS, STRING, np_dtype
from .registry import register

_F8_SATURATING = frozenset(
    np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz)
)
_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_NARROW = ML_FLOATS | ML_INTS


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """Numbers -> FLOAT8E8M0 (a bare exponent: code c means 2**(c-127), 0xFF is NaN), exactly.

    Each magnitude is 2**e * (1 + f) with 0 <= f < 1: floats through ``frexp`` of float64 (which
    holds every narrower float exactly, float32 subnormals included), integers by their bits (no
    float rounding of 2**24 + 1 or 2**60 + 1). ``up`` bumps e for any f > 0, ``nearest`` for
    f >= 1/2 (ties up), ``down`` never. Out of range (0 and below 2**-127, above 2**127, +inf):
    E8M0_MIN / E8M0_MAX with ``saturate``, else NaN (Cast-24's table). The sign is dropped: a
    negative source is "undefined behavior"."""
    if round_mode not in ("up", "down", "nearest"):
        raise ValueError(f"Cast: unknown round_mode {round_mode!r}")
    x = np.asarray(x)
    if x.dtype.kind in "iu":
        # abs of int64's minimum wraps to itself, whose uint64 view is its magnitude 2**63
        mag = x.astype(np.uint64) if x.dtype.kind == "u" else np.abs(x.astype(np.int64)).astype(np.uint64)
        positive = mag > 0
        e = np.minimum(np.frexp(mag.astype(np.float64))[1] - 1, 63)  # float64 may round up to the next power
        e = np.where(positive & ((mag >> np.maximum(e, 0).astype(np.uint64)) == 0), e - 1, e)
        shift = np.maximum(e, 0).astype(np.uint64)
        fraction = positive & (mag != (np.uint64(1) << shift))
        half = positive & (e > 0) & (((mag >> np.maximum(e - 1, 0).astype(np.uint64)) & np.uint64(1)) == 1)
        nan = inf = np.zeros(x.shape, dtype=bool)
    else:
        f = np.abs(x.astype(np.float64))
        nan, inf = np.isnan(f), np.isinf(f)
        finite = ~(nan | inf)
        m, e = np.frexp(np.where(finite, f, 1.0))  # f = m * 2**e, 1/2 <= m < 1
        e = e - 1
        positive = finite & (f > 0)
        fraction = positive & (m != 0.5)
        half = positive & (m >= 0.75)
    bump = {"up": fraction, "nearest": half, "down": np.zeros_like(fraction)}[round_mode]
    code = e.astype(np.int64) + bump + 127
    low = ~(nan | inf) & (~positive | (code < 0))
    high = inf | (~low & (code > 0xFE))
    code = np.where(low, 0 if saturate else 0xFF, np.where(high, 0xFE if saturate else 0xFF, code))
    code = np.where(nan, 0xFF, code)
    return code.astype(np.uint8).view(_E8M0)


def _format(v) -> str:
    if isinstance(v, np.floating) or type(v).__module__ == "ml_dtypes":
        f = float(v)
        if np.isnan(f):
            return "NaN"
        if np.isinf(f):
            return "INF" if f > 0 else "-INF"
    return str(v)


def _is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu" or dt in ML_INTS


def _parse(s, to: np.dtype):
    s = s.strip() if isinstance(s, str) else s.decode("utf-8").strip()
    if _is_int(to):
        try:
            return int(s)
        except ValueError:
            return int(float(s))  # "100.5" -> 100 ("may yield", Cast doc)
    return float(s)  # accepts INF, +INF, -INF, NaN in any case


def _wrap_ints(values: list[int], to: np.dtype) -> np.ndarray:
    """Python ints narrowed to ``to`` by keeping their low bits (two's complement)."""
    bits = 8 * to.itemsize if to.kind in "iu" else (4 if "4" in to.name else 2)
    low = -(1 << (bits - 1)) if to.kind == "i" or to.name.startswith("int") else 0
    span = 1 << bits
    return np.array([(v - low) % span + low for v in values], dtype=object).astype(np.int64 if low < 0 or bits < 64 else np.uint64)


_FNUZ = frozenset(np.dtype(t) for t in (ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz))
_F4 = np.dtype(ml_dtypes.float4_e2m1fn)


def cast(x: np.ndarray, to: np.dtype, saturate: bool = True, round_mode: str = "up", fnuz_inf_nan: bool = False) -> np.ndarray:
    """x converted to dtype ``to`` under the Cast rules. ``fnuz_inf_nan``: the saturating
    table of Cast-19..23 sends +-inf to NaN for the FNUZ float 8 types (FLT_MAX from Cast-24)."""
    x = np.asarray(x)
    src = x.dtype
    if to == src and to not in _F8_SATURATING:
        return x
    if to == STRING:
        # numpy scalars print the shortest string that round-trips in their own type
        flat = [_format(v) for v in x.reshape(-1)] if src != np.bool_ else [str(int(v)) for v in x.reshape(-1)]
        return np.array(flat, dtype=object).reshape(x.shape)
    if src == STRING or src.kind in "US":
        if to == np.bool_:
            flat = [float(_parse(v, np.dtype(np.float64))) != 0 for v in x.reshape(-1)]
            return np.array(flat, dtype=bool).reshape(x.shape)
        flat = [_parse(v, to) for v in x.reshape(-1)]
        if _is_int(to):
            return cast(_wrap_ints(flat, to).reshape(x.shape), to)
        return cast(np.array(flat, dtype=np.float64).reshape(x.shape), to, saturate, round_mode, fnuz_inf_nan)
    if src in _NARROW:
        # ml_dtypes converts to and from float32 everywhere (exactly, for every narrow type)
        x = x.astype(np.int32) if src in ML_INTS else x.astype(np.float32)
        src = x.dtype
    if to == np.bool_:
        return x != 0  # NaN is nonzero: True
    if to == _E8M0:
        return _to_e8m0(x, saturate, round_mode)
    if to in _F8_SATURATING:
        f = x.astype(np.float64 if src.itemsize >= 4 and src != np.float32 else np.float32)
        if saturate:
            fmax = float(ml_dtypes.finfo(to).max)
            inf = np.isinf(f)
            f = np.clip(f, -fmax, fmax)  # NaN stays NaN
            if fnuz_inf_nan and to in _FNUZ and inf.any():
                f = np.where(inf, np.nan, f)
        return f.astype(to)
    if to == _F4:
        # float4.md: round to nearest even inside [-6, 6]; beyond, and +-inf, saturate to
        # +-6. Its table also sends NaN to 6, but the official node cases
        # (test_cast_FLOAT_to_FLOAT4E2M1) expect what ml_dtypes gives, -0; we follow the cases
        f = x.astype(np.float32)
        return np.clip(f, -6, 6).astype(to)
    if to in ML_FLOATS:
        return x.astype(np.float64 if src.kind in "iu" else np.float32).astype(to)
    if to in ML_INTS:
        if src.kind == "f":
            # int4.md: "rounding to the nearest-integer (with ties to even) ... and truncating"
            x = np.rint(x.astype(np.float64)).astype(np.int64)
        return x.astype(to)
    if src.kind == "f" and to.kind in "iu":
        return _float_to_int(x, to)
    return x.astype(to)


def _float_to_int(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """Floats to a 8..64-bit integer type: truncation toward zero. Out of range is "undefined"
    (the spec-silent point Cast.float_to_int_out_of_range); the engine takes the x86-64 reading,
    written out so that it does not depend on the platform numpy runs on: through a 32-bit
    integer (64-bit for uint32 and the 64-bit types), NaN, +-inf and values outside that integer
    give its minimum, and the target keeps the low bits."""
    f = np.trunc(x.astype(np.float64))
    info = np.iinfo(to)
    width = 32 if info.bits < 32 or (info.bits == 32 and info.min < 0) else 64
    low = -(2.0 ** (width - 1))
    top_half = (f >= 2.0 ** 63) & (f < 2.0 ** 64) if to == np.uint64 else np.zeros(f.shape, dtype=bool)
    inside = (f >= low) & (f < 2.0 ** (width - 1))
    wide = np.where(inside, f, np.where(top_half, f - 2.0 ** 63, low)).astype(np.int64)
    if to == np.uint64:
        return wide.astype(np.uint64) + np.where(top_half, np.uint64(2 ** 63), np.uint64(0))
    return wide.astype(to)  # two's complement: the low bits


def _cast_attrs(node) -> tuple[bool, str, bool]:
    # the saturating table of Cast/CastLike 19..23 maps +-inf to NaN for the FNUZ types
    return bool(node.attrs.get("saturate", 1)), node.attrs.get("round_mode", "up"), 19 <= node.opset < 24


@register("Cast", since=1)
def cast_kernel(node):
    to = node.attrs["to"]
    if isinstance(to, str):  # Cast-1 named the type as a string
        to = onnx.TensorProto.DataType.Value(to.upper())
    to = np_dtype(to)
    saturate, round_mode, fnuz_inf_nan = _cast_attrs(node)

    def run(x):
        return (cast(x, to, saturate, round_mode, fnuz_inf_nan),)

    return run


@register("CastLike", since=15)
def cast_like(node):
    saturate, round_mode, fnuz_inf_nan = _cast_attrs(node)

    def run(x, like):
        return (cast(x, like.dtype, saturate, round_mode, fnuz_inf_nan),)

    return run


_NIBBLE = {np.dtype(ml_dtypes.int4): (4, True), np.dtype(ml_dtypes.uint4): (4, False), np.dtype(ml_dtypes.float4_e2m1fn): (4, None)}
_NIBBLE.update({np.dtype(ml_dtypes.int2): (2, True), np.dtype(ml_dtypes.uint2): (2, False)})


@register("BitCast", since=26)
def bit_cast(node):
    to = np_dtype(node.attrs["to"])

    def run(x):
        if x.dtype in _NIBBLE or to in _NIBBLE:
            # sub-byte types are stored one per byte; reinterpret the low bits
            width = _NIBBLE.get(to, _NIBBLE.get(x.dtype))[0]
            raw = x.view(np.uint8) & np.uint8((1 << width) - 1)
            signed = _NIBBLE.get(to, (0, False))[1]
            if signed:
                raw = np.where(raw >= (1 << (width - 1)), raw.astype(np.int16) - (1 << width), raw).astype(np.int8)
            return (raw.view(to),)
        return (np.ascontiguousarray(x).view(to).reshape(x.shape),)

    return run
