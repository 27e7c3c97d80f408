"""Pad (ONNX spec: Pad-1, 2, 11, 13, 18, 19, 21, 23, 24, 25).

Pads are laid out ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``.

- Pad-1: attribute ``paddings`` (non-negative: "the padding element count"), ``value`` (float,
  default 0) and ``mode`` constant | reflect | edge. Its example shows ``paddings = [0, 0, 2, 0]``
  for two columns in front of a 2-D tensor, which contradicts the layout stated in the
  attribute text; we follow the attribute text (Pad-2 corrected the example to [0, 2, 0, 0]).
- Pad-2: the attribute is named ``pads`` and may be negative: "the number of padding elements
  to add or remove (if negative)".
- Pad-11: ``pads`` (int64) and ``constant_value`` (optional scalar of T, default 0) are inputs;
  the integer types are added. Pad-13 adds bfloat16, string and bool (default constant "0,
  empty string, or False").
- Pad-18: optional input ``axes`` (int32/int64, negative counts from the back): ``pads`` then
  has 2 * len(axes) entries for those axes only; axes not named are not padded.
- Pad-19: mode ``wrap``, "wrap-around padding as if the data tensor forms a torus" (a pad wider
  than the axis wraps around more than once). Pad-21/23/24/25 only widen the types (float 8,
  int4/uint4, float4e2m1; float8e8m0 and int2/uint2 have no dtype label here, so are not swept).

``reflect`` mirrors on the first and last values (numpy's "reflect": the edge value is not
repeated), which needs a pad of at most dim - 1 on that axis; ``edge`` repeats the edge values.

Negative pads crop. The spec does not say whether cropping happens before or after padding on
the same axis; the two orders agree for ``constant`` as long as an axis is not cropped beyond its
size, and for the other modes as long as an axis is not both cropped and padded. The cases stay
inside those bounds; the reference crops first. A float ``value`` attribute is stored as a 32-bit
float, so the cases draw values exact in float32. Data movement only: the output is the input's
dtype with its exact values.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Pad")
st = S.st
MAX_OUT = 256
V_ATTR = (1, 2)
V_INPUT = (11, 13)
V_AXES = (18, 19, 21, 23, 24, 25)


def _default_constant(dtype):
    label = S.label_of(dtype)
    if label == "string":
        return ""
    if label == "bool":
        return False
    if label == "float8e8m0":  # no 0 in the type: the zero bit pattern, 2^-127 (Pad.default_value_float8e8m0)
        return np.zeros((), dtype)
    return 0


def _source_index(j, n, mode):
    """Index into an axis of length n for output position j (j < 0: before the start)."""
    if mode == "edge":
        return min(max(j, 0), n - 1)
    if mode == "wrap":
        return j % n
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        k = j % period
        return k if k < n else period - k
    raise ValueError(f"Pad: unknown mode {mode!r}")


def pad(data, pads, mode="constant", value=None, axes=None):
    x = np.asarray(data)
    if isinstance(mode, bytes):
        mode = mode.decode()
    r = x.ndim
    pads = [int(p) for p in np.asarray(pads).reshape(-1)]
    if axes is None:
        axes = list(range(r))
    else:
        axes = [int(a) + r if int(a) < 0 else int(a) for a in np.asarray(axes).reshape(-1)]
    if len(pads) != 2 * len(axes) or len(set(axes)) != len(axes):
        raise ValueError(f"Pad: {len(pads)} pads for axes {axes}")
    begin, end = [0] * r, [0] * r
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[len(axes) + i]
    # crop (negative pads) first
    crop = tuple(slice(max(-b, 0), x.shape[a] - max(-e, 0)) for a, (b, e) in enumerate(zip(begin, end)))
    if any(s.start > s.stop for s in crop):
        raise ValueError("Pad: cropped beyond the axis size")
    y = x[crop]
    b = [max(v, 0) for v in begin]
    e = [max(v, 0) for v in end]
    if mode == "constant":
        fill = np.asarray(_default_constant(x.dtype) if value is None else value, dtype=x.dtype).reshape(())
        shape = tuple(n + bb + ee for n, bb, ee in zip(y.shape, b, e))
        out = np.empty(shape, dtype=x.dtype)
        out[...] = fill
        out[tuple(slice(bb, bb + n) for bb, n in zip(b, y.shape))] = y
        return out
    for a in range(r):
        if b[a] == 0 and e[a] == 0:
            continue
        n = y.shape[a]
        if n == 0:
            raise ValueError(f"Pad: mode {mode} cannot pad an empty axis")
        if mode == "reflect" and max(b[a], e[a]) > n - 1:
            raise ValueError("Pad: a reflect pad is at most dim - 1")
        idx = [_source_index(j, n, mode) for j in range(-b[a], n + e[a])]
        y = np.take(y, idx, axis=a)
    return y.copy()


@op.reference(1)
def pad_1(data, *, paddings, mode="constant", value=0.0):
    return pad(data, paddings, mode, np.float32(value))


@op.reference(2)
def pad_2(data, *, pads, mode="constant", value=0.0):
    return pad(data, pads, mode, np.float32(value))


@op.reference(*V_INPUT, *V_AXES)
def pad_11(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return pad(data, pads, mode, constant_value, axes)


# -- where the spec is silent ------------------------------------------------------------------
def _default_e8m0(inputs, attrs, expected, since):
    """The padded elements of a constant-mode Pad of float8e8m0 data with no constant_value."""
    data = np.asarray(inputs[0])
    mode = attrs.get("mode", "constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if S.label_of(data.dtype) != "float8e8m0" or mode != "constant" or (len(inputs) > 2 and inputs[2] is not None):
        return [None]
    axes = inputs[3] if len(inputs) > 3 else None
    return [pad(np.zeros(data.shape, bool), inputs[1], "constant", True, axes)]


def _zero_pattern_or_nan(c):
    """Every padded element is 2^-127 (the zero bit pattern) or NaN (0 rounded to nearest): the
    two readings of a default 0 in a type without 0."""
    got = np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]
    return bool(np.all((got == 2.0**-127) | np.isnan(got)))


op.spec_silent(
    "default_value_float8e8m0", (24, 25),
    spec="(Optional) A scalar value to be used if the mode chosen is `constant` (by default it is 0, empty string or False).",
    expected="2^-127, the bit pattern 0: float8e8m0 holds powers of two only, no 0, and Cast-24's table gives 0 -> '0' "
             "(the zero pattern) under its default saturate + round up ('non-saturate + nearest' gives NaN, what ml_dtypes "
             "does); Pad does not say which conversion its default 0 takes",
    where=_default_e8m0,
    invariants={"every padded element is 2^-127 (the zero pattern) or NaN": _zero_pattern_or_nan},
    readings={"NaN: 0 converted by Cast-24's non-saturate + nearest row (ml_dtypes)":
              lambda c: [np.full(np.shape(c.expected[0]), np.nan).astype(np.asarray(c.expected[0]).dtype)]})


# -- strategies ------------------------------------------------------------------------------------
def _modes(since):
    return ["constant", "reflect", "edge"] + (["wrap"] if since >= 19 else [])


def _axis_pads(d, n, mode, negative):
    """(begin, end) for an axis of size n under ``mode`` (see the module docstring's bounds)."""
    if negative and d(st.integers(0, 3)) == 1 and n > 0:
        # crop only: both <= 0, at most the axis size in all (one element left outside constant)
        room = n if mode == "constant" else n - 1
        b = d(st.integers(0, room))
        e = d(st.integers(0, room - b))
        return -b, -e
    if mode == "constant":
        return d(st.integers(0, 3)), d(st.integers(0, 3))
    if n == 0:
        return 0, 0
    if mode == "reflect":
        return d(st.integers(0, n - 1)), d(st.integers(0, n - 1))
    if mode == "edge":
        return d(st.integers(0, 3)), d(st.integers(0, 3))
    return d(st.integers(0, n)), d(st.integers(0, n))  # wrap


def _size_after(shape, begin, end):
    return int(np.prod([s + b + e for s, b, e in zip(shape, begin, end)])) if shape else 1


def _draw_common(d, dtype, since):
    x = S.arrays(d, dtype, min_dims=1, max_dims=3, min_side=0 if d(st.integers(0, 9)) == 5 else 1, max_side=4)
    mode = d(st.sampled_from(_modes(since)))
    if mode != "constant" and x.size == 0:
        mode = "constant"
    for _ in range(4):
        pads = [_axis_pads(d, n, mode, since >= 2) for n in x.shape]
        begin, end = [p[0] for p in pads], [p[1] for p in pads]
        if _size_after(x.shape, begin, end) <= MAX_OUT:
            return x, mode, begin, end
    return x, mode, [0] * x.ndim, [0] * x.ndim


def _float_value(d, dtype):
    # exact in float32 (the attribute's type) and in the narrowest float type swept
    return d(st.sampled_from([0.0, 1.5, -2.0, 0.25, -0.5, 3.0, 100.0]))


@op.strategy(*V_ATTR)
def draw_attr(d, dtype, opset):
    since = 1 if opset < 2 else 2
    x, mode, begin, end = _draw_common(d, dtype, since)
    attrs = {"paddings" if since == 1 else "pads": begin + end}
    if mode != "constant" or d(st.booleans()):
        attrs["mode"] = mode
    if mode == "constant" and d(st.booleans()):
        attrs["value"] = _float_value(d, dtype)
    return Example([x], attrs)


def _scalar(d, dtype):
    return S.arrays(d, dtype, shape=(), lo=-100, hi=100)


@op.strategy(*V_INPUT)
def draw_input(d, dtype, opset):
    x, mode, begin, end = _draw_common(d, dtype, 11)
    attrs = {"mode": mode} if mode != "constant" or d(st.booleans()) else {}
    value = _scalar(d, dtype) if mode == "constant" and d(st.booleans()) else None
    return Example([x, np.array(begin + end, dtype=np.int64), value], attrs)


@op.strategy(*V_AXES)
def draw_axes(d, dtype, opset):
    from harness import schema

    since = schema.schema_at("Pad", opset).since_version
    x, mode, begin, end = _draw_common(d, dtype, since)
    attrs = {"mode": mode} if mode != "constant" or d(st.booleans()) else {}
    value = _scalar(d, dtype) if mode == "constant" and d(st.booleans()) else None
    if d(st.booleans()):
        return Example([x, np.array(begin + end, dtype=np.int64), value], attrs)
    r = x.ndim
    # name some axes (in a drawn order, some negative); the others keep pads 0
    chosen = d(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True))
    named = chosen + [a for a in range(r) if a not in chosen and (begin[a] or end[a])]
    axes = [a - r if d(st.booleans()) else a for a in named]
    pads = [begin[a] for a in named] + [end[a] for a in named]
    itype = d(st.sampled_from([np.int64, np.int32]))
    return Example([x, np.array(pads, dtype=np.int64), value, np.array(axes, dtype=itype)], attrs)


# -- edge examples ----------------------------------------------------------------------------------
def _grid(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


def _const(dtype, v):
    label = dtype
    if label == "string":
        return np.array("pad", dtype=object)
    if label == "bool":
        return np.array(True)
    return np.array(v).astype(S.np_dtype(dtype))


@op.edges(*V_ATTR)
def edges_attr(dtype, opset):
    key = "paddings" if opset < 2 else "pads"
    x = _grid(dtype, (3, 4))
    out = [
        Example([x], {key: [0, 2, 0, 0]}, name="spec_example"),
        Example([x], {key: [2, 3, 2, 3], "mode": "reflect"}, name="reflect_max_width"),
        Example([x], {key: [1, 0, 2, 5], "mode": "edge"}, name="edge_mode"),
        Example([x], {key: [1, 1, 1, 1], "value": 1.5}, name="constant_value"),
        Example([_grid(dtype, (0, 3))], {key: [1, 0, 1, 2], "value": -2.0}, name="empty_input"),
    ]
    if opset >= 2:
        out += [Example([x], {key: [-1, 0, 0, -2]}, name="negative_pads"),
                Example([x], {key: [-1, -2, 0, -1], "mode": "reflect"}, name="negative_pads_reflect"),
                Example([x], {key: [0, -4, 1, 0]}, name="crop_to_empty")]
    if _has_nan(dtype):  # NaN in the data (a 3 x 5 grid of the edge values ends with it) and as the pad value
        out.append(Example([_grid(dtype, (3, 5))], {key: [1, 0, 0, 1], "value": float("nan")}, name="nan_value_and_data"))
    return out


def _has_nan(dtype):
    return S.is_float(dtype) and bool(np.isnan(_const(dtype, np.nan).astype(np.float64)))


@op.edges(*V_INPUT, *V_AXES)
def edges_input(dtype, opset):
    from harness import schema

    since = schema.schema_at("Pad", opset).since_version
    i64 = lambda *v: np.array(v, dtype=np.int64)
    x = _grid(dtype, (3, 4))
    cv = _const(dtype, 3)
    out = [
        Example([x, i64(0, 2, 0, 0)], name="spec_example"),
        Example([x, i64(2, 3, 2, 3)], {"mode": "reflect"}, name="reflect_max_width"),
        Example([x, i64(1, 0, 2, 5)], {"mode": "edge"}, name="edge_mode"),
        Example([x, i64(1, 1, 1, 1), cv], name="constant_value"),
        Example([x, i64(1, 1, 1, 1), cv], {"mode": "edge"}, name="constant_value_ignored_by_edge"),
        Example([_grid(dtype, (0, 3)), i64(1, 0, 1, 2), cv], name="empty_input"),
        Example([x, i64(-1, 0, 0, -2)], name="negative_pads"),
        Example([x, i64(-1, -2, 0, -1)], {"mode": "reflect"}, name="negative_pads_reflect"),
        Example([x, i64(0, -4, 1, 0)], name="crop_to_empty"),
        Example([_grid(dtype, (2, 1, 3)), i64(0, 0, 0, 0, 0, 0)], {"mode": "reflect"}, name="zero_pads"),
    ]
    if since >= 18:
        out += [Example([x, i64(1, 2), None, i64(-1)], name="axes_negative"),
                Example([x, i64(1, 0, 0, 2), cv, np.array([1, 0], dtype=np.int32)], name="axes_reordered_int32")]
    if since >= 19:
        y = _grid(dtype, (3, 2))
        out += [Example([y, i64(2, 1, 1, 1)], {"mode": "wrap"}, name="wrap"),
                Example([y, i64(4, 0, 0, 5)], {"mode": "wrap"}, name="wrap_past_dim"),
                Example([y, i64(-1, 1, 0, 1)], {"mode": "wrap"}, name="wrap_crop_other_axis")]
    if _has_nan(dtype):
        out.append(Example([_grid(dtype, (3, 5)), i64(1, 0, 0, 1), _const(dtype, np.nan)], name="nan_value_and_data"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and min(v.shape) > 1)
    if x is None:
        return None
    mode = c.choice(["constant", "reflect", "edge"])
    limit = 1 if mode == "reflect" else 2
    pads = [c.pick(limit + 1) for _ in range(2 * x.rank)]
    ins = [x, c.ints(pads)]
    attrs = {} if mode == "constant" else {"mode": mode}
    if mode == "constant" and c.pick(2):
        ins.append(c.const(np.array(c.choice([1.5, -0.5]))))
    return Plan(ins, attrs)
