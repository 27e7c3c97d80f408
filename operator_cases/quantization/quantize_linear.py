"""QuantizeLinear: y = saturate((x / y_scale) + y_zero_point) (ONNX spec: QuantizeLinear-10, 13,
19, 21, 23, 24, 25, 28).

* "For (x / y_scale), it's rounding to the nearest even"; integer targets saturate to their
  range (QuantizeLinear-21 lists uint16 [0, 65535] ... int4 [-8, 7]). The zero point is added
  after the rounding (an integer), so saturation sees round(x / y_scale) + y_zero_point.
* Output type: ``output_dtype`` (21 on) if given, else y_zero_point's type, else uint8.
* Small float targets (float8 from 19, float4e2m1 from 23): "the quantization formula remains the
  same": x / y_scale + y_zero_point converted by Cast's rules ("All cases are fully described in
  two tables": the float 8 tables of Cast, with ``saturate``; float 4 saturates always). Cast-19
  to 23 write +-inf -> NaN for the FNUZ types under saturation, Cast-24 +-FLT_MAX: each version
  reads the Cast table of its own opset (a spec-silent point, the tables are not in this text).
* Granularity: a scalar scale per tensor; a 1-D scale along ``axis`` (13 on, negative counts
  from the back); blocked (21 on): the scale has the input's rank, one axis in blocks of
  ``block_size``. Per axis and blocked are drawn for rank >= 2 only: for rank 1 the text says
  "per-tensor quantization is applied" while a 1-D scale of the axis' length is per axis.
* Precision of the division: 23 on "The type of y_scale determines the precision of the division
  operation between x and y_scale, unless the precision attribute is specified"; before, the
  text names none. We take x and y_scale as values of that type and round their quotient once
  to it (IEEE division), float32 for QuantizeLinear-10/13 (every scale is float), the scale's type
  for 19/21. Where the choice (exact quotient, x not converted first, or the precision's) changes
  the result, the element is a spec-silent point (``division_precision``): a backend must give
  one of those results. An int32 scale (19/21 with int32 x; 23 on, T2 holds int32) makes the
  division an integer one the text does not define: exact quotient rounded half to even is ours,
  truncation the other candidate.
* NaN to an integer target: "saturate(NaN)" is not defined (spec-silent ``nan_to_int``); we give
  0, as our Cast reference does for NaN to an integer (Cast.float_to_int_out_of_range): the
  value a C conversion of NaN through a saturating clamp gives; any value is allowed.
  +-inf saturates to the type's ends; a scale of 0 gives x / 0 = +-inf (saturated) or NaN (0 / 0).
* NaN to float6e2m3 / float6e3m2 (28), types with no NaN: spec-silent ``nan_to_float6``; ours is
  the largest value as for Cast, ml_dtypes' -0 (onnx.reference's) the other reading.

Fuzz template (float32 graphs): a pool value quantized per tensor to uint8 or int8, its scale a
fraction of its largest magnitude (so the integers span tens of steps), the zero point near the
middle of the type; the output is a quantized value (``harness.fuzz_api.QUANT``) that only
DequantizeLinear and the QDQ patterns of harness/generated/patterns.py take. The rounding jumps:
an element within its error of a half step is not drawn (``jumps``).
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from harness import schema
from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator, SilentCheck

from .._quant_util import (SMALL_FLOATS, draw_scale_values, draw_units, WholeReadings, expand, f64, in_type, per_axis_choice,
                          to_quantized, type_max, values)

op = Operator("QuantizeLinear")
st = S.st
VERSIONS = (10, 13, 19, 21, 23, 24, 25, 28)


# -- reference --------------------------------------------------------------------------------
def target_of(y_zero_point, output_dtype: int) -> str:
    if output_dtype:
        return S.label_of(int(output_dtype))
    if y_zero_point is not None:
        return S.label_of(np.asarray(y_zero_point).dtype)
    return "uint8"


def precision_of(since: int, y_scale, precision: int) -> str:
    if since >= 23 and precision:
        return S.label_of(int(precision))
    if since < 19:
        return "float32"
    return S.label_of(np.asarray(y_scale).dtype)


def quotients(x, s, p: str) -> list[np.ndarray]:
    """x / s: ours first (x and s as values of precision ``p``, the quotient rounded once to
    ``p``; for an integer ``p`` the exact quotient), then the other readings: the exact
    quotient, the exact quotient rounded to ``p`` (x not converted first), integer truncation."""
    x64, s64 = f64(x), f64(s)
    with np.errstate(all="ignore"):
        exact = x64 / s64
        if not S.is_float(p):
            trunc = np.where(np.isfinite(exact), np.trunc(exact), exact)
            return [exact, trunc]
        ours = in_type(in_type(x64, p) / in_type(s64, p), p)
        return [ours, exact, in_type(exact, p)]


def quantize(x, y_scale, y_zero_point, *, since: int, axis=1, block_size=0, output_dtype=0, saturate=1, precision=0,
             quotient: int = 0) -> np.ndarray:
    x = np.asarray(x)
    to = target_of(y_zero_point, output_dtype)
    p = precision_of(since, y_scale, precision)
    s = expand(y_scale, x.shape, axis, block_size)
    q = quotients(x, s, p)[quotient]
    zp = expand(y_zero_point, x.shape, axis, block_size) if y_zero_point is not None else np.zeros(x.shape)
    if S.is_int(to):
        with np.errstate(all="ignore"):
            r = np.rint(q) + zp
        return to_quantized(r, to, nan_to=0.0)
    with np.errstate(all="ignore"):
        v = q + zp
    return to_quantized(v, to, saturate, fnuz_inf_nan=since < 24)


def _register(since: int):
    @op.reference(since)
    def reference(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0, saturate=1, precision=0):
        return quantize(x, y_scale, y_zero_point, since=since, axis=axis, block_size=block_size, output_dtype=output_dtype,
                        saturate=saturate, precision=precision)

    return reference


for _v in VERSIONS:
    _register(_v)


# -- spec-silent points -----------------------------------------------------------------------
def _attrs(attrs: dict) -> dict:
    return {k: attrs[k] for k in ("axis", "block_size", "output_dtype", "saturate", "precision") if k in attrs}


def _candidates(inputs: list, attrs: dict, since: int) -> list[np.ndarray]:
    x, s = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    n = len(quotients(np.zeros(()), np.ones(()), precision_of(since, s, attrs.get("precision", 0))))
    return [quantize(x, s, zp, since=since, quotient=k, **_attrs(attrs)) for k in range(n)]


_PRECISION = WholeReadings(_candidates)


op.spec_silent(
    "division_precision", VERSIONS,
    spec={10: "For (x / y_scale), it's rounding to the nearest even.",
          21: "For `(x / y_scale)`, it rounds to the nearest even.",
          23: "The type of `y_scale` determines the precision of the division operation between `x` and `y_scale`, "
              "unless the `precision` attribute is specified."},
    expected="x and y_scale taken as values of the precision type (float32 before 19, the scale's type for 19/21, "
             "the precision attribute or the scale's type from 23) and their quotient rounded once to it, as IEEE "
             "division in that type; with an integer scale the exact quotient. The text never says whether x is "
             "converted to that type first, nor (before 23) which type that is",
    where=_PRECISION.where,
    invariants={"each such element is the result of one of the readings: exact quotient, quotient rounded to the "
                "precision type, x and y_scale converted first (or integer truncation for an int32 scale)":
                _PRECISION.one_of},
    readings={"the exact quotient (x / y_scale in real arithmetic)": _PRECISION.reading(1)})


def _nan_to_int(inputs, attrs, expected, since):
    x, s = f64(inputs[0]), inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    to = target_of(zp, attrs.get("output_dtype", 0))
    if not S.is_int(to) or x.size == 0:
        return [None]
    with np.errstate(all="ignore"):
        q = x / expand(s, x.shape, attrs.get("axis", 1), attrs.get("block_size", 0))
    m = np.isnan(q)
    return [m if m.any() else None]


def _zero_zp_or_end(c: SilentCheck) -> bool:
    a = f64(c.actual[0])
    label = S.label_of(np.asarray(c.expected[0]).dtype)
    lo, hi = S.finite_range(label)
    zp = c.inputs[2] if len(c.inputs) > 2 and c.inputs[2] is not None else None
    z = expand(zp, a.shape, c.attrs.get("axis", 1), c.attrs.get("block_size", 0)) if zp is not None else np.zeros(a.shape)
    ok = (a == 0) | (a == z) | (a == lo) | (a == hi)
    return bool(ok[c.masks[0]].all())


op.spec_silent(
    "nan_to_int", VERSIONS,
    spec={10: "The quantization formula is y = saturate ((x / y_scale) + y_zero_point). For saturation, it saturates "
              "to [0, 255] if it's uint8, or [-128, 127] if it's int8.",
          19: "The quantization formula is `y = saturate ((x / y_scale) + y_zero_point)`. For saturation, it saturates "
              "to [0, 255] if it's uint8, or [-128, 127] if it's int8.",
          21: "The quantization formula is `y = saturate((x / y_scale) + y_zero_point)`."},
    expected="0, as Cast.float_to_int_out_of_range takes NaN to an integer: saturate() names no NaN rule; x = NaN, "
             "or x = 0 with a scale of 0 (0 / 0), reach it",
    where=_nan_to_int,
    invariants={"each such element is 0, the zero point, or an end of the output type's range": _zero_zp_or_end},
    readings={"the type's minimum (NaN converted as C does on x86-64, the 'integer indefinite' saturated)":
              lambda c: [np.full_like(np.asarray(c.expected[0]), S.finite_range(S.label_of(np.asarray(c.expected[0]).dtype))[0])]})


def _nan_to_float6(inputs, attrs, expected, since):
    """Open: a NaN quotient quantized to float6e2m3 / float6e3m2, types with no NaN."""
    x = f64(inputs[0])
    zp = inputs[2] if len(inputs) > 2 else None
    if target_of(zp, attrs.get("output_dtype", 0)) not in ("float6e2m3", "float6e3m2") or x.size == 0:
        return [None]
    with np.errstate(all="ignore"):
        m = np.isnan(x / expand(inputs[1], x.shape, attrs.get("axis", 1), attrs.get("block_size", 0)))
    return [m if m.any() else None]


def _zero_or_largest(c: SilentCheck) -> bool:
    a = np.abs(f64(c.actual[0])[c.masks[0]])
    return bool(np.all((a == 0) | (a == type_max(S.label_of(np.asarray(c.expected[0]).dtype)))))


def _nan_by_ml_dtypes(c: SilentCheck) -> list:
    """QuantizeLinear.nan_to_float6 as ml_dtypes converts a float32 NaN (to -0): our expected values with
    the open elements replaced."""
    e = np.asarray(c.expected[0])
    return [np.where(c.masks[0], np.float32(np.nan), e.astype(np.float32)).astype(e.dtype)]


op.spec_silent(
    "nan_to_float6", (28,),
    spec="`y_zero_point` is usually not used for quantization to float8 and 4bit types, but the quantization formula "
         "remains the same for consistency",
    expected="the type's largest value, as Cast.nan_to_float6 (float6 has no NaN; the text names no result)",
    where=_nan_to_float6,
    invariants={"a NaN becomes +-0 or +-the type's largest magnitude": _zero_or_largest},
    readings={"ml_dtypes' conversion through float32 (NaN to -0), as onnx.reference computes it": _nan_by_ml_dtypes})


def _fnuz_inf(inputs, attrs, expected, since):
    x = f64(inputs[0])
    zp = inputs[2] if len(inputs) > 2 else None
    to = target_of(zp, attrs.get("output_dtype", 0))
    if not to.endswith("fnuz") or not int(attrs.get("saturate", 1)) or x.size == 0:
        return [None]
    with np.errstate(all="ignore"):
        q = x / expand(inputs[1], x.shape, attrs.get("axis", 1), attrs.get("block_size", 0))
    m = np.isinf(q)
    return [m if m.any() else None]


def _nan_or_max(c: SilentCheck) -> bool:
    a = f64(c.actual[0])[c.masks[0]]
    fmax = type_max(S.label_of(np.asarray(c.expected[0]).dtype))
    return bool(np.all(np.isnan(a) | (np.abs(a) == fmax)))


def _fnuz_flt_max(c: SilentCheck) -> list:
    """QuantizeLinear.fnuz_inf under Cast-24's table: an infinite quotient becomes FLT_MAX of its sign."""
    e = np.asarray(c.expected[0])
    with np.errstate(all="ignore"):
        q = f64(c.inputs[0]) / expand(c.inputs[1], e.shape, c.attrs.get("axis", 1), c.attrs.get("block_size", 0))
    return [(np.sign(np.nan_to_num(q)) * type_max(S.label_of(e.dtype))).astype(e.dtype)]


op.spec_silent(
    "fnuz_inf", (19, 21, 23, 24, 25, 28),
    spec={19: "'y_zero_point' is usually not used for quantization to float8e4m3fn, float8e4m3fnuz, float8e5m2, "
              "float8e5m2fnuz, but the quantization formula remains the same for consistency",
          21: "`y_zero_point` is usually not used for quantization to float8 types, but the quantization formula remains "
              "the same for consistency",
          23: "`y_zero_point` is usually not used for quantization to float8 and 4bit types, but the quantization "
              "formula remains the same for consistency"},
    expected="Cast's table of the same opset (the saturate attribute refers to 'two tables inserted in the operator "
             "description', which QuantizeLinear's text does not hold): with saturate, +-inf "
             "becomes NaN in float8e4m3fnuz / float8e5m2fnuz up to opset 23 (Cast-19/21/23), +-FLT_MAX from 24 (Cast-24)",
    where=_fnuz_inf,
    invariants={"each such element is NaN or +-FLT_MAX of the type": _nan_or_max},
    readings={"NaN (the saturating table of Cast-19/21/23)": lambda c: [np.full_like(np.asarray(c.expected[0]), np.nan)],
              "+-FLT_MAX (the saturating table of Cast-24 on)": _fnuz_flt_max})



# -- strategy ---------------------------------------------------------------------------------
def targets(since: int) -> list[str]:
    sch = onnx.defs.get_schema("QuantizeLinear", since)
    param = sch.outputs[0].type_str
    labels = [S.label_from_type_str(t) for t in schema.allowed_types(sch)[param]]
    return [t for t in labels if t]


def scale_types(since: int, dtype: str) -> list[str]:
    """Scale types drawn: the schema's before 23 (float, or x's type); from 23, where x and
    y_scale may differ, float32 and float16 beside x's own float type. An int32 or bfloat16
    scale under a float32 x, and every ``precision`` but float32 / float16, are named edges
    (``int32_scale``, ``bfloat16_scale``, ``precision_*``), so that a runtime lacking that
    combination is known by name."""
    if since < 19:
        return ["float32"]
    if since < 23:
        return [dtype]
    return sorted({"float32", "float16", dtype} - {"int32"})


def _range_of(to: str) -> tuple[float, float]:
    if S.is_int(to):
        lo, hi = S.finite_range(to)
        return float(lo), float(hi)
    m = type_max(to)
    return -m, m


def _draw_zero_point(d, to: str, pshape) -> np.ndarray:
    n = int(np.prod(pshape)) if pshape else 1
    if S.is_int(to):
        lo, hi = S.finite_range(to)
        mid = (lo + hi) // 2
        span = max(1, min(hi - lo, 40) // 2)
        vals = d(st.lists(st.integers(max(lo, mid - span), min(hi, mid + span)) | st.sampled_from([lo, hi, 0 if lo <= 0 else lo]),
                          min_size=n, max_size=n))
        return values(to, vals, pshape)
    return values(to, [0.0] * n, pshape)  # "usually not used": a non-zero one is the edge to_*_nonzero_zero_point


def _scale_array(d, label: str, pshape) -> np.ndarray:
    n = int(np.prod(pshape)) if pshape else 1
    if S.is_int(label):
        return values(label, d(st.lists(st.sampled_from([1, 2, 3, 4, -2]), min_size=n, max_size=n)), pshape)
    return values(label, draw_scale_values(d, n), pshape)


def _x_from_units(units: np.ndarray, scale: np.ndarray, dtype: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        v = units * scale
    if S.is_int(dtype):
        lo, hi = S.finite_range(dtype)
        return np.clip(np.rint(v), lo, hi).astype(np.int64).astype(S.np_dtype(dtype))
    return values(dtype, v)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = opset
    to = d(st.sampled_from([t for t in targets(since) if t != "float4e2m1"]))  # float4e2m1: the named edges to_float4e2m1*
    shape = S.shapes(d, max_dims=3, max_side=4)
    axis, pshape, bs = per_axis_choice(d, shape, blocked=since >= 21, per_axis=since >= 13)
    stype = d(st.sampled_from(scale_types(since, dtype)))
    scale = _scale_array(d, stype, pshape)
    mode = d(st.sampled_from(["zp", "zp", "none"] + (["output_dtype", "both"] if since >= 21 else [])))
    zp = _draw_zero_point(d, to, pshape) if mode in ("zp", "both") or to != "uint8" and mode == "none" else None
    if mode == "none" and zp is not None and since < 21:
        mode = "zp"
    lo, hi = _range_of(to)
    zp0 = 0.0 if zp is None or zp.size == 0 else float(np.mean(f64(zp)))
    n = int(np.prod(shape)) if shape else 1
    units = draw_units(d, n, max(lo, -300.0) - zp0, min(hi, 300.0) - zp0).reshape(shape)
    x = _x_from_units(units, expand(scale, shape, axis if axis is not None else 1, bs), dtype)
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    elif since >= 13 and d(st.integers(0, 5)) == 0:
        attrs["axis"] = d(st.integers(-max(1, len(shape)), max(0, len(shape) - 1)))  # ignored per tensor
    if bs:
        attrs["block_size"] = bs
    if mode in ("output_dtype", "both") or (mode == "none" and to != "uint8"):
        attrs["output_dtype"] = S.onnx_code(to)
        if mode == "none":
            zp = None
    if since >= 19 and (to in SMALL_FLOATS or d(st.integers(0, 5)) == 0):
        sat = d(st.sampled_from([None, 0, 1]))
        if sat is not None:
            attrs["saturate"] = sat
    if since >= 23 and d(st.integers(0, 3)) == 0:
        attrs["precision"] = S.onnx_code(d(st.sampled_from(["float32", "float16"])))
    return Example([x, scale, zp], attrs)


# -- edge examples ----------------------------------------------------------------------------
def _ex(x, s, zp, attrs, name, since):
    attrs = dict(attrs)
    if since < 21:
        attrs.pop("output_dtype", None)
        attrs.pop("block_size", None)
    if since < 19:
        attrs.pop("saturate", None)
    return Example([x, s, zp], attrs, name=name)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = opset
    stype = scale_types(since, dtype)[0]
    flt = S.is_float(dtype)
    sv = lambda v, shape=None: values(stype, v, shape)  # noqa: E731
    xv = lambda v, shape=None: values(dtype, v, shape)  # noqa: E731
    u8 = lambda v, shape=None: values("uint8", v, shape)  # noqa: E731
    i8 = lambda v, shape=None: values("int8", v, shape)  # noqa: E731
    half = 0.5 if S.is_float(stype) else 1
    out = []
    # ties x / scale = k + 0.5 reach both neighbours' even one (scale 0.5: exact in every type)
    if flt:
        ties = xv([0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 1.75, 63.75, -64.25, 0.0, -0.0])
        out.append(_ex(ties, sv(0.5), u8(128), {}, "ties_to_even_uint8", since))
        out.append(_ex(ties, sv(0.5), i8(-3), {}, "ties_to_even_int8", since))
        out.append(_ex(xv([1.5, 2.5, -1.5, -2.5, 0.5, -0.5]), sv(1.0), None, {}, "ties_default_uint8", since))
    else:
        out.append(_ex(xv([1, 3, 5, -1, -3, 7, 255, 257]), sv(2), u8(100), {}, "ties_to_even_uint8", since))
        out.append(_ex(xv([1, 3, 5, -1, -3, -5, 0]), sv(2), i8(0), {}, "ties_to_even_int8", since))
    # saturation at both ends (a zero point pushes it further)
    big = [1e4, -1e4, 300.0, -300.0, 127.0, 128.0, -128.0, -129.0, 255.0, 256.0] if flt else [2**31 - 1, -(2**31), 300, -300, 127, 128, -129, 255, 256]
    out.append(_ex(xv(big), sv(1.0 if flt else 1), u8(10), {}, "saturate_uint8", since))
    out.append(_ex(xv(big), sv(1.0 if flt else 1), i8(-10), {}, "saturate_int8", since))
    out.append(_ex(xv(big[:4]), sv(-half * 2), i8(5), {}, "negative_scale", since))
    if flt:
        specials = xv([math.nan, math.inf, -math.inf, 1.0, -0.0, float(S.smallest_subnormal(dtype)),
                       -float(S.smallest_subnormal(dtype))])
        out.append(_ex(specials, sv(0.25), u8(7), {}, "nan_inf_uint8", since))
        out.append(_ex(specials, sv(0.25), i8(0), {}, "nan_inf_int8", since))
        out.append(_ex(xv([1.0, -1.0, 0.0, 5.0]), sv(0.0), u8(3), {}, "scale_zero", since))
        sub = float(S.smallest_subnormal(dtype))
        out.append(_ex(xv([sub, 2 * sub, 3 * sub, -sub]), sv(2.0 ** -20 if stype != "float16" else 2.0 ** -24), i8(0), {},
                       "subnormal_x", since))
    out.append(_ex(xv(np.zeros((2, 0))), sv(0.5 if flt else 2), u8(1), {}, "empty", since))
    out.append(_ex(xv(np.zeros((0,))), sv(0.5 if flt else 2), None, {}, "empty_default_zero_point", since))
    rank0 = xv(3.0 if flt else 3)
    out.append(_ex(rank0, sv(2.0 if flt else 2), i8(1), {}, "rank0", since))
    if since >= 13:
        x = xv(np.arange(-6, 6).reshape(2, 3, 2) * (0.75 if flt else 1))
        out.append(_ex(x, sv([0.5, 1.0, 2.0] if flt else [1, 2, 3]), u8([100, 120, 140]), {"axis": 1}, "per_axis", since))
        out.append(_ex(x, sv([0.5, 0.25] if flt else [1, 2]), i8([0, -4]), {"axis": -1}, "per_axis_negative_axis", since))
        out.append(_ex(x, sv([1.0, 0.5] if flt else [1, 2]), i8([1, 2]), {"axis": -3}, "per_axis_axis_minus_rank", since))
        out.append(_ex(x, sv(0.5 if flt else 2), i8(0), {"axis": 2}, "per_tensor_axis_ignored", since))
    if since >= 21:
        x = xv(np.arange(-10, 10).reshape(4, 5) * (0.5 if flt else 3))
        sb = sv(np.array([[0.5, 1.0], [2.0, 0.25], [1.0, 1.0], [4.0, 0.5]] if flt else [[1, 2], [3, 1], [2, 2], [4, 1]]))
        zb = i8(np.array([[0, 1], [-1, 2], [3, -3], [0, 0]]))
        out.append(_ex(x, sb, zb, {"axis": 1, "block_size": 3}, "blocked_ragged_last_block", since))
        out.append(_ex(x, sv(np.array([[0.5, 1.0, 2.0, 0.25, 1.0]] * 2) if flt else np.array([[1, 2, 3, 1, 2]] * 2)),
                       u8(np.array([[10, 20, 30, 40, 50]] * 2)), {"axis": -2, "block_size": 2}, "blocked_negative_axis", since))
        out.append(_ex(x, sv(0.5 if flt else 2), None, {"output_dtype": S.onnx_code("int8")}, "output_dtype_no_zero_point", since))
        out.append(_ex(x, sv(0.5 if flt else 2), i8(2), {"output_dtype": S.onnx_code("int8")}, "output_dtype_and_zero_point", since))
    for to in targets(since):
        if to in ("uint8", "int8"):
            continue
        lo, hi = _range_of(to)
        if S.is_int(to):
            vals = [lo - 1, lo, lo + 0.5, -0.5, 0.5, 1.5, 2.5, hi - 0.5, hi, hi + 1, 0]
            vals = [v for v in vals if not S.is_int(dtype) or v == int(v)]
            zp = values(to, 0 if lo == 0 else -1)
            out.append(_ex(xv([v * (1 if S.is_int(dtype) else 1.0) for v in vals]), sv(1.0 if flt else 1), zp, {},
                           f"to_{to}", since))
            continue
        fmax = hi
        ulp_top = fmax / 2 ** (4 if to != "float4e2m1" else 2)
        vals = [0.0, 1.0, -1.0, 0.5, 1.0625, 1.125, 1.1875, fmax, -fmax, fmax + ulp_top / 2, fmax * 2, -fmax * 2]
        if flt:
            vals += [math.inf, -math.inf, math.nan]
        else:
            vals = [float(int(v)) for v in vals]
        x = xv(vals)
        zp0 = values(to, 0.0)
        for sat in ((1, 0) if to in S.FLOAT8 else (None,)):
            attrs = {} if sat is None else {"saturate": sat}
            out.append(_ex(x, sv(1.0 if flt else 1), zp0, attrs, f"to_{to}" + ("" if sat is None else f"_saturate{sat}"), since))
        if since >= 21:
            out.append(_ex(x[:4], sv(0.5 if flt else 1), None, {"output_dtype": S.onnx_code(to)}, f"to_{to}_output_dtype", since))
        out.append(_ex(xv([1.0, 2.0, -3.0, 0.0] if flt else [1, 2, -3, 0]), sv(1.0 if flt else 1), values(to, 1.0), {},
                       f"to_{to}_nonzero_zero_point", since))
    if since >= 23:
        x = xv([1.0, 2.5, 3.0, -7.5, 1000.0] if flt else [1, 5, 3, -15, 1000])
        for ptype in ("float32", "float16", "bfloat16"):
            out.append(_ex(x, values("float32", 2.0), i8(0), {"precision": S.onnx_code(ptype)}, f"precision_{ptype}", since))
        out.append(_ex(x, values("int32", 2), i8(0), {}, "int32_scale", since))
        out.append(_ex(x, values("float16", 0.5), u8(0), {}, "float16_scale", since))
        out.append(_ex(x, values("bfloat16", 0.5), u8(0), {}, "bfloat16_scale", since))
        out.append(_ex(x, values("int32", 2), u8(0), {"precision": S.onnx_code("float32")}, "int32_scale_precision_float32", since))
        # float4e2m1 is not drawn (see draw): ties, per axis and blocked here
        f4 = xv(np.array([0.25, 0.75, 1.25, 2.5, 5.0, 7.0, -0.25, -1.75, -2.5, 3.5, 0.0, -0.0]).reshape(3, 4) if flt else
                np.array([1, 3, 5, 10, 20, 28, -1, -7, -10, 14, 0, 2]).reshape(3, 4))
        f4s = sv([0.5, 1.0, 2.0] if flt else [1, 2, 4])
        out.append(_ex(f4, f4s, values("float4e2m1", [0.0, 0.0, 0.0]), {"axis": 0}, "to_float4e2m1_per_axis_ties", since))
        out.append(_ex(f4, sv(np.array([[0.5, 1.0]] * 3) if flt else np.array([[2, 4]] * 3)), values("float4e2m1", np.zeros((3, 2))),
                       {"axis": -1, "block_size": 2}, "to_float4e2m1_blocked", since))
    return out


# -- fuzz template ----------------------------------------------------------------------------
def fuzz_params(c: Ctx, x: np.ndarray, to: str, steps: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A finite float32 scale (x's largest finite magnitude over ``steps`` quantization steps,
    drawn when not given) and a zero point of type ``to`` near the middle of its range, for
    quantizing ``x``."""
    finite = np.abs(np.asarray(x, dtype=np.float64))
    finite = finite[np.isfinite(finite)]  # an edge-value graph's +-inf or NaN: no scale of inf
    top = float(np.max(finite)) if finite.size else 1.0
    steps = steps or c.choice([20.0, 50.0, 100.0])
    scale = np.float32(min(max(top, 0.1) / steps, float(np.finfo(np.float32).max)))
    mid = {"uint8": 128, "uint16": 32768}.get(to, 0)
    return np.array(scale, dtype=np.float32), np.array(mid + c.pick(21) - 10, dtype=S.np_dtype(to))


@op.fuzz(jumps=True, type_param="T1")
def fuzz(c: Ctx) -> Plan | None:
    if c.dtype != "float32":
        return None
    x = c.take("float", 0, lambda v: v.size > 0)
    if x is None:
        return None
    scale, zp = fuzz_params(c, x.wide, c.choice(["uint8", "int8"]))
    return Plan([x, c.const(scale), c.const(zp)])
