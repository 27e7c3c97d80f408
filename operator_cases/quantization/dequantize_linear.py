"""DequantizeLinear: y = (x - x_zero_point) * x_scale (ONNX spec: DequantizeLinear-10, 13, 19, 21,
23, 24, 25, 28).

* The zero point is optional ("Zero point is 0 when it's not specified") and has x's type; "In the
  case of dequantizing int32, there's no zero point (zero point is supposed to be 0)": int32 x is
  drawn without one (an explicit 0 is an edge).
* Output type: x_scale's type (float32 before 19; float32, float16 or bfloat16 from 19); from 23
  ``output_dtype`` if given: "The output type also determines the precision of the
  multiplication operation".
* Granularity as QuantizeLinear's: scalar, 1-D along ``axis`` (13 on, negative counts from the
  back), blocked (21 on, the scale has x's rank, ``block_size`` inputs per entry along ``axis``).
* x - x_zero_point is exact (an integer, or a difference of two float 8 / float 4 values, which
  float64 holds exactly; NaN and +-inf of float8e5m2 follow IEEE). The product: we take both
  factors as values of the output type and round their product once to it (IEEE
  multiplication in the output type, as the text says from 23 and as the output being x_scale's
  type implies before). Where x - x_zero_point is not a value of the output type (an int16 or
  int32 difference beyond float16's or bfloat16's 11 or 8 bits, an int32 one beyond float32's
  24) or, from 23, the scale is not (a float32 scale with output_dtype float16), other readings
  give other results: the product of the exact factors rounded once, or a float32 product
  rounded again. Those elements are the spec-silent point ``multiplication_precision``: a
  backend must give one of those results.
* Drawn: scales and outputs of float32 and float16, non-empty shapes; a bfloat16 scale or output
  and the empty tensor are named edges (``*bfloat16*``, ``empty``), so that a runtime lacking one
  is known by name.
* A float8e8m0 scale (24 on, the MX formats: powers of two and NaN) is a named edge set
  (``float8e8m0_scale*``: per tensor, per axis, blocked, 2^127 and NaN), each with an
  ``output_dtype`` (float8e8m0 is no output type: without one the model is invalid); the drawn
  cases keep their float32 and float16 scales (their frozen ids).

Fuzz template (float32 graphs): a quantized pool value (``harness.fuzz_api.QUANT``, what
QuantizeLinear's template gives) dequantized per tensor with a scale and zero point of its own.
"""

from __future__ import annotations


import numpy as np
import onnx

from harness import schema
from harness import strategies as S
from harness.fuzz_api import QUANT, Ctx, Plan
from harness.registry import Example, Operator

from .._quant_util import WholeReadings, expand, f64, in_type, per_axis_choice, values

op = Operator("DequantizeLinear")
st = S.st
VERSIONS = (10, 13, 19, 21, 23, 24, 25, 28)


def output_of(x_scale, output_dtype: int, since: int) -> str:
    if since >= 23 and output_dtype:
        return S.label_of(int(output_dtype))
    return S.label_of(np.asarray(x_scale).dtype)


def products(a: np.ndarray, s: np.ndarray, out: str) -> list[np.ndarray]:
    """(x - zp) * scale rounded to ``out``: ours (factors as values of ``out``, one rounding),
    then the exact factors rounded once, then a float32 product rounded to ``out``."""
    with np.errstate(all="ignore"):
        ours = in_type(in_type(a, out) * in_type(s, out), out)
        exact = in_type(a * s, out)
        via32 = in_type(in_type(in_type(a, "float32") * in_type(s, "float32"), "float32"), out)
    return [ours, exact, via32]


def dequantize(x, x_scale, x_zero_point=None, *, since: int, axis=1, block_size=0, output_dtype=0, reading: int = 0):
    x = np.asarray(x)
    out = output_of(x_scale, output_dtype, since)
    s = expand(x_scale, x.shape, axis, block_size)
    zp = expand(x_zero_point, x.shape, axis, block_size) if x_zero_point is not None else np.zeros(x.shape)
    with np.errstate(all="ignore"):
        a = f64(x) - zp
    y = products(a, s, out)[reading]
    with np.errstate(all="ignore"):
        return y.astype(S.np_dtype(out)).reshape(x.shape)


def _register(since: int):
    @op.reference(since)
    def reference(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
        return dequantize(x, x_scale, x_zero_point, since=since, axis=axis, block_size=block_size, output_dtype=output_dtype)

    return reference


for _v in VERSIONS:
    _register(_v)


# -- spec-silent point ------------------------------------------------------------------------
def _readings(inputs: list, attrs: dict, since: int) -> list[np.ndarray]:
    kw = {k: attrs[k] for k in ("axis", "block_size", "output_dtype") if k in attrs}
    zp = inputs[2] if len(inputs) > 2 else None
    return [dequantize(inputs[0], inputs[1], zp, since=since, reading=k, **kw) for k in range(3)]


_PRECISION = WholeReadings(_readings)


op.spec_silent(
    "multiplication_precision", VERSIONS,
    spec={10: "The dequantization formula is y = (x - x_zero_point) * x_scale.",
          13: "The dequantization formula is `y = (x - x_zero_point) * x_scale`.",
          23: "The output type is determined by the attribute `output_dtype`. If `output_dtype` is not supplied then the "
              "output type is the same as `x_scale`. The output type also determines the precision of the multiplication "
              "operation."},
    expected="both factors taken as values of the output type and their product rounded once to it (IEEE multiplication "
             "in that type); the text does not say how x - x_zero_point (an integer beyond the output type's precision) "
             "or a wider scale enter that type",
    where=_PRECISION.where,
    invariants={"each such element is one of the readings: factors in the output type, exact factors rounded once, "
                "a float32 product rounded to the output type": _PRECISION.one_of},
    readings={"the exact product of the exact factors, rounded once to the output type": _PRECISION.reading(1),
              "a float32 product rounded to the output type": _PRECISION.reading(2)})


# -- strategy ---------------------------------------------------------------------------------
def _types(since: int, index: int, io: str = "in") -> list[str]:
    sch = onnx.defs.get_schema("DequantizeLinear", since)
    arg = sch.inputs[index] if io == "in" else sch.outputs[index]
    allowed = schema.allowed_types(sch)
    strs = allowed.get(arg.type_str, [arg.type_str])
    return [t for t in (S.label_from_type_str(s) for s in strs) if t]


def draw_x(d, dtype: str, shape) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        if dtype == "int32":
            lo, hi = -(2**26), 2**26
        edge = st.sampled_from([lo, hi, 0, lo + 1, hi - 1])
        return values(dtype, d(st.lists(st.integers(lo, hi) | edge, min_size=n, max_size=n)), shape)
    bits = d(st.lists(st.integers(0, 255 if dtype != "float4e2m1" else 15), min_size=n, max_size=n))
    if dtype == "float4e2m1":  # ml_dtypes' float4 is stored one per byte: its values from the 16 codes
        table = np.arange(16, dtype=np.uint8).view(S.np_dtype(dtype))
        return table[np.array(bits, dtype=np.int64)].reshape(shape) if n else np.zeros(shape, S.np_dtype(dtype))
    return np.array(bits, dtype=np.uint8).view(S.np_dtype(dtype)).reshape(shape)  # every code, NaN and inf too


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = opset
    shape = S.shapes(d, max_dims=3, min_side=1, max_side=4)  # empty tensors: the edge "empty"
    axis, pshape, bs = per_axis_choice(d, shape, blocked=since >= 21, per_axis=since >= 13)
    # bfloat16 and float8e8m0 scales are named edges (*bfloat16*, float8e8m0_scale*): the drawn cases keep their ids
    stype = d(st.sampled_from([t for t in _types(since, 1) if t not in ("bfloat16", "float8e8m0")]))
    n = int(np.prod(pshape)) if pshape else 1
    mags = d(st.lists(st.tuples(st.integers(-8, 4), st.sampled_from([1.0, 1.0, 1.25, 1.1, 0.75]), st.integers(0, 7)),
                      min_size=n, max_size=n))
    scale = values(stype, [2.0**e * m * (-1 if k == 0 else 1) for e, m, k in mags], pshape)
    x = draw_x(d, dtype, shape)
    zp = None
    if dtype != "int32" and d(st.booleans()):
        if S.is_int(dtype):
            lo, hi = S.finite_range(dtype)
            zp = values(dtype, d(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), pshape)
        else:
            zp = values(dtype, [0.0] * n, pshape)  # "usually not used": a non-zero one is an edge
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if bs:
        attrs["block_size"] = bs
    if since >= 23 and d(st.booleans()):
        attrs["output_dtype"] = S.onnx_code(d(st.sampled_from([t for t in _types(since, 0, "out") if t != "bfloat16"])))
    return Example([x, scale, zp], attrs)


# -- edge examples ----------------------------------------------------------------------------
@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = opset
    f32 = lambda v, shape=None: values("float32", v, shape)  # noqa: E731
    xv = lambda v, shape=None: values(dtype, v, shape)  # noqa: E731
    out = []
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        ext = xv([lo, lo + 1, -1 if lo < 0 else 0, 0, 1, hi - 1, hi])
        zps = [None] if dtype == "int32" else [None, xv(lo), xv(hi)]
        for k, zp in enumerate(zps):
            name = ["extremes", "extremes_zero_point_low", "extremes_zero_point_high"][k]
            out.append(Example([ext, f32(0.5), zp], name=name))
        if dtype == "int32":
            out.append(Example([ext, f32(0.5), xv(0)], name="int32_zero_point_0"))
            out.append(Example([xv([2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**31 - 1]), f32(1.0)], name="beyond_float32_mantissa"))
        mid = xv([lo + (hi - lo) // 2, lo + (hi - lo) // 2 + 1])
        out.append(Example([mid, f32(-0.25), None if dtype == "int32" else xv(lo + (hi - lo) // 2)], name="negative_scale"))
        out.append(Example([ext, f32(0.0)], name="scale_zero"))
    else:
        info_codes = np.arange(16 if dtype == "float4e2m1" else 256, dtype=np.uint8)
        allv = info_codes.view(S.np_dtype(dtype)) if dtype != "float4e2m1" else info_codes.view(S.np_dtype(dtype))
        out.append(Example([allv.copy(), f32(1.0)], name="every_code"))
        out.append(Example([allv.copy(), f32(-3.0), values(dtype, 0.0)], name="every_code_negative_scale"))
        out.append(Example([xv([1.0, -2.0, 0.5, 0.0]), f32(1.0), xv(1.0)], name="nonzero_zero_point"))
        out.append(Example([allv.copy(), f32(2.0**-100)], name="tiny_scale_underflow"))
        out.append(Example([allv.copy(), f32(0.0)], name="scale_zero"))
    zero = xv(0 if S.is_int(dtype) else 0.0)
    out.append(Example([xv(np.zeros((2, 0))), f32(0.5), None if dtype == "int32" else zero], name="empty"))
    out.append(Example([xv(3 if S.is_int(dtype) else 1.5), f32(0.5)], name="rank0"))
    base = np.array([[1, 2, 3, 4, -1], [0, -2, 2, 1, 3], [4, 3, -1, 0, 1], [2, 2, 1, -2, 0]])
    if dtype.startswith("uint"):
        base = base + 2
    if dtype == "float4e2m1":
        base = base / 2
    x2 = xv(base)
    zp3 = None if dtype == "int32" else xv([0, 1, 0, 1] if S.is_int(dtype) else [0.0] * 4)
    if since >= 13:
        out.append(Example([x2, f32([0.5, 1.0, 2.0, 0.25]), zp3], {"axis": 0}, name="per_axis"))
        out.append(Example([x2, f32([0.5, 1.0, 2.0, 0.25, 4.0]), None], {"axis": -1}, name="per_axis_negative_axis"))
        out.append(Example([x2, f32([0.5, 1.0, 2.0, 0.25]), zp3], {"axis": -2}, name="per_axis_axis_minus_rank"))
        out.append(Example([x2, f32(0.5), None], {"axis": 0}, name="per_tensor_axis_ignored"))
    if since >= 19:
        for stype in ("float16", "bfloat16"):
            out.append(Example([x2, values(stype, 0.375)], name=f"{stype}_scale"))
        if S.is_int(dtype) and S.finite_range(dtype)[1] > 2048:
            big = xv([2049, 2051, 4097, 300, -2049] if dtype.startswith("int") else [2049, 2051, 4097, 300, 65535])
            out.append(Example([big, values("float16", 1.0)], name="beyond_float16_mantissa"))
            out.append(Example([big, values("bfloat16", 1.0)], name="beyond_bfloat16_mantissa"))
    if since >= 21:
        sb = f32([[0.5, 1.0], [2.0, 0.25], [1.0, 1.0], [4.0, 0.5]])
        zb = None if dtype == "int32" else xv([[0, 1], [1, 0], [0, 0], [1, 1]] if S.is_int(dtype) else np.zeros((4, 2)))
        out.append(Example([x2, sb, zb], {"axis": 1, "block_size": 3}, name="blocked_ragged_last_block"))
        out.append(Example([x2, f32(np.array([[0.5, 1.0, 2.0, 0.25, 1.0]] * 2)), None], {"axis": -2, "block_size": 2},
                           name="blocked_negative_axis"))
    if since >= 23:
        for to in _types(since, 0, "out"):
            out.append(Example([x2, f32(0.3)], {"output_dtype": S.onnx_code(to)}, name=f"output_dtype_{to}"))
        out.append(Example([x2, values("float16", 0.3)], {"output_dtype": S.onnx_code("float32")}, name="float16_scale_float32_output"))
    if since >= 24:  # float8e8m0 scales (MX): powers of two, NaN; always with an output_dtype
        e8 = lambda v, shape=None: values("float8e8m0", v, shape)  # noqa: E731
        code = S.onnx_code
        zp4 = None if dtype == "int32" else xv([0, 1, 0, 1] if S.is_int(dtype) else [0.0] * 4)
        out += [
            Example([x2, e8(0.5)], {"output_dtype": code("float32")}, name="float8e8m0_scale"),
            Example([x2, e8([0.125, 1.0, 16.0, 0.5]), zp4], {"axis": 0, "output_dtype": code("float16")}, name="float8e8m0_scale_per_axis"),
            Example([x2, e8([[0.5, 1.0], [2.0, 0.25], [1.0, 4.0], [8.0, 0.5]])], {"axis": 1, "block_size": 3, "output_dtype": code("bfloat16")},
                    name="float8e8m0_scale_blocked"),
            Example([x2, e8(2.0 ** 127)], {"output_dtype": code("float32")}, name="float8e8m0_scale_largest"),
            Example([x2, e8(2.0 ** -127)], {"output_dtype": code("float32")}, name="float8e8m0_scale_smallest"),
            Example([x2, e8(np.nan)], {"output_dtype": code("float32")}, name="float8e8m0_scale_nan"),
        ]
    return out


# -- fuzz template ----------------------------------------------------------------------------
@op.fuzz(type_param=None)
def fuzz(c: Ctx) -> Plan | None:
    if c.dtype != "float32":
        return None
    x = c.take(QUANT, 0, lambda v: v.size > 0 and v.wide.dtype in (np.uint8, np.int8))
    if x is None:
        return None
    scale = np.array(c.choice([0.01, 0.05, 0.25]), dtype=np.float32)
    zp = np.array(c.pick(7) - 3 + (128 if x.wide.dtype == np.uint8 else 0), dtype=x.wide.dtype)
    return Plan([x, c.const(scale), c.const(zp)])
