"""Pow: Z = X ** Y, elementwise (ONNX spec: Pow-1, 7, 12, 13, 15).

Pow-1 broadcasts Y with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Pow-7 on broadcast multidirectionally. Up to Pow-7 base and exponent share the float type T;
Pow-12 splits them: the base type T (int32, int64, floats; bfloat16 from Pow-13) is swept and the
exponent type T1 is drawn from the schema's T1 list (bfloat16 joins T1 in Pow-15).

Float results are computed in float64 (C pow semantics, IEEE 754 specials) and rounded to T.
The spec does not say how an integer base with a fractional or negative exponent gives an
integer, nor what happens on integer overflow: integer bases get non-negative integral
exponents only (also when T1 is a float type) and results that fit in T, computed exactly.
A negative float base is only raised to integral exponents (a fractional power of a negative
number is NaN in C and in numpy, but the ONNX text never says so).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, finite
from harness.registry import Example, Operator

from ._binary_util import (
    broadcast_shapes,
    ints,
    legacy_rhs,
    legacy_shapes,
    shape_edges,
    wrap,
)
from ._common import back

op = Operator("Pow")
st = S.st


def power(x, y):
    label = S.label_of(x.dtype)
    if S.is_int(label):
        exponent = np.vectorize(int, otypes=[object])(y) if y.size else ints(y)
        return wrap(np.power(ints(x), exponent), label)
    with np.errstate(all="ignore"):
        return back(np.power(x.astype(np.float64), y.astype(np.float64)), x)


@op.reference(1)
def pow_1(x, y, *, broadcast=0, axis=None):
    return power(x, legacy_rhs(x, y, broadcast, axis))


@op.reference(7, 12, 13, 15)
def pow_7(x, y):
    return power(x, y)


def exponent_types(dtype, opset):
    """The exponent types: the schema's T1 from Pow-12, the base type before."""
    allowed = schema.allowed_types(schema.schema_at("Pow", opset))
    if "T1" not in allowed:
        return [dtype]
    return [S.label_from_type_str(t) for t in allowed["T1"]]


def _draw(d, dtype, t1, shapes):
    sa, sb = shapes
    if S.is_int(dtype):
        base = S.arrays(d, dtype, shape=sa, lo=-6, hi=6)
        exp = S.arrays(d, t1, shape=sb, lo=0, hi=7)  # 6**7 fits in int32
        return base, _integral(exp)
    base = S.arrays(d, dtype, shape=sa, lo=-4, hi=4)
    if S.is_int(t1):
        return base, S.arrays(d, t1, shape=sb, lo=-3, hi=5)
    exp = S.arrays(d, t1, shape=sb, lo=-3, hi=3)
    if d(st.booleans()):
        return base, _integral(exp)
    return np.asarray(np.abs(base)), exp


def _integral(a):
    return np.asarray(np.trunc(a.astype(np.float64))).astype(a.dtype) if S.is_float(S.label_of(a.dtype)) else a


@op.strategy(1)
def draw_1(d, dtype, opset):
    sa, sb, attrs = legacy_shapes(d)
    return Example(list(_draw(d, dtype, dtype, (sa, sb))), attrs)


@op.strategy(7, 12, 13, 15)
def draw_7(d, dtype, opset):
    t1 = d(st.sampled_from(exponent_types(dtype, opset)))
    return Example(list(_draw(d, dtype, t1, broadcast_shapes(d, 2))))


def _edges(dtype, opset, legacy):
    """Edge bases raised to scalar exponents (broadcast=1 in the legacy version), edge
    exponents of base 2, and the broadcasting/empty/rank-0 shapes."""
    t1s = exponent_types(dtype, opset)
    t1 = dtype if dtype in t1s else "float32"
    scalar = lambda v: np.array(v, dtype=S.np_dtype(t1))  # noqa: E731
    x = S.edge_values(dtype)
    if S.is_int(dtype):
        out = [Example([x, scalar(0)], name="pow0"), Example([x, scalar(1)], name="pow1"),
               Example([np.arange(-6, 7).astype(x.dtype), scalar(3)], name="cube")]
    else:
        no_neg_inf = x[~np.isneginf(x.astype(np.float64))]  # C gives pow(-inf, 0.5) = +inf; ONNX says nothing
        exps = S.edge_values(t1)
        out = [
            Example([x, scalar(2)], name="square"),
            Example([x, scalar(3)], name="cube"),
            Example([no_neg_inf, scalar(0.5)], name="sqrt"),
            Example([np.full(exps.shape, 2, dtype=x.dtype), exps], name="edge_exponents"),
        ]
    if legacy:
        out = [Example(e.inputs, {"broadcast": 1} if e.inputs[1].ndim == 0 else {}, name=e.name) for e in out]
    for e in shape_edges(dtype, legacy):
        out.append(Example([e.inputs[0], e.inputs[1].astype(S.np_dtype(t1))], e.attrs, name=e.name))
    return out


@op.edges(1)
def edges_1(dtype, opset):
    return _edges(dtype, opset, legacy=True)


@op.edges(7, 12, 13, 15)
def edges_7(dtype, opset):
    return _edges(dtype, opset, legacy=False)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=8.0, type_param="T",
          # a negative base only with the constant exponent 2 (the LayerNorm pattern's square)
          guard=lambda ins: bool(np.all(finite(ins[0]) > 0) or (np.size(ins[1]) == 1 and float(np.ravel(ins[1])[0]) == 2.0)))
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: not v.has_nan and v.size and bool(np.all(v.wide > 0)))
    if a is None:
        return None
    if c.pick(2):
        b = c.const(np.array(c.choice([2.0, 0.5, 3.0, -1.0, 1.5, -0.5])))
    else:
        b = c.operand(a, 1, lo=-2.0, hi=2.0)
    return Plan([a, b])
