"""MeanVarianceNormalization (ONNX spec: MeanVarianceNormalization-9, 13).

"Perform mean variance normalization on the input tensor X using formula: (X-EX)/sqrt(E(X-EX)^2)",
the expectations taken over ``axes`` (default [0, 2, 3]: "Two variables with the same
C-coordinate are associated with the same mean and variance"). MeanVarianceNormalization-13 only
adds bfloat16.

Evaluated in float64 and rounded once, as the formula reads. The versions' function bodies
compute it otherwise: ``Variance = E(X^2) - (EX)^2`` and ``(X - EX) / (Sqrt(Variance) + 1e-9)``;
for the well-conditioned, centred groups the strategies draw (variance >= 0.25, mean near 0) that
differs from the formula by about 1e-9 relative, well within the float32 tolerance.

Only float32 is swept: for float16, double and bfloat16 the function body's float32 Epsilon
constant makes ``Add(STD, Epsilon)`` ill-typed, so onnx 1.23's strict shape inference rejects
every such model ("(op_type:Pow): Y has inconsistent type tensor(float)"), as do ONNX Runtime and
onnx.reference; T allows them, so the spec contradicts itself there.

Every case writes ``axes`` out (the default [0, 2, 3] too): with the attribute left out, the
function body's ``axes = Constant <value_ints: ints = @axes>`` has no value for onnx 1.23's strict
shape inference ("One and only one of the attributes 'value', 'value_*' or 'sparse_value' must be
specified for a Constant node"), so such a model fails onnx's own checks though the schema gives
the default.

Spec-silent: a constant group. The formula gives (X - EX) / 0 = 0 / 0, NaN in IEEE arithmetic
(our expected value), the function body's epsilon gives 0; the invariant is "0 or NaN".
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator, SilentCheck

from .._common import back, wide
from ._norm_util import arr, channel_norm_template, specials, spread, standardize

op = Operator("MeanVarianceNormalization")
st = S.st
VERSIONS = (9, 13)
# float32 only: the versions' function body adds 'Epsilon = Constant <value: tensor = float {1e-09}>'
# to a T value, so for float16, double and bfloat16 the model is ill-typed and onnx's own strict
# shape inference (and ONNX Runtime, and onnx.reference) refuses it: a defect of the spec's function
# body for three of the four types its T allows (see the module docstring)
op.restrict(*VERSIONS, dtypes=("float32",))


def _axes(x, attrs):
    return tuple(int(a) % np.ndim(x) for a in attrs.get("axes", (0, 2, 3)))


def constant_groups(inputs, attrs, expected, since):
    """Open: the elements of a group without NaN or inf whose values are all equal."""
    x = wide(np.asarray(inputs[0]))
    if x.size == 0:
        return [None]
    axes = _axes(x, attrs)
    finite = np.isfinite(x).all(axis=axes, keepdims=True)
    flat = np.ptp(np.where(np.isfinite(x), x, 0.0), axis=axes, keepdims=True) == 0
    return [np.broadcast_to(finite & flat, x.shape)]


def zero_or_nan(c: SilentCheck) -> bool:
    got = np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]
    return bool(np.all(np.isnan(got) | (got == 0)))


op.spec_silent(
    "constant_group", VERSIONS,
    spec="using formula: [...](X-EX)/sqrt(E(X-EX)^2)",
    expected="NaN: the formula's 0 / 0 in IEEE arithmetic (the function body adds 1e-9 to the deviation and gives 0)",
    where=constant_groups,
    invariants={"a constant group normalizes to 0 or NaN": zero_or_nan},
    readings={"0 (the schema's function body: 1e-9 added to the deviation)": lambda c: [np.zeros_like(np.asarray(c.expected[0]))]})


# -- squares beyond float32 (a kernel campaign: x = 2e21; onnx.reference and PyTorch NaN, ONNX Runtime 0) ----------
def _in_float32(x: np.ndarray, axes: tuple[int, ...], body: bool) -> np.ndarray:
    """Every step in float32: the versions' function body (``body``: E(X^2) - (EX)^2, then
    (X - EX) / (Sqrt(Variance) + 1e-9)), or the formula's two passes (E((X - EX)^2))."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(all="ignore"):
        ex = np.mean(x, axis=axes, keepdims=True, dtype=np.float32)
        d = x - ex
        if body:
            var = np.mean(x * x, axis=axes, keepdims=True, dtype=np.float32) - ex * ex
            return d / (np.sqrt(var) + np.float32(1e-9))
        return d / np.sqrt(np.mean(d * d, axis=axes, keepdims=True, dtype=np.float32))


def overflowing_groups(inputs, attrs, expected, since):
    """Open: the float32 groups where the function body, in float32, departs from the formula:
    its squares overflow (not finite where ours is), or E(X^2) - (EX)^2 cancels (off by more than
    2^-10 relative: a group of tiny variance beside its mean; a kernel campaign met 1.4 %)."""
    x = np.asarray(inputs[0])
    if x.dtype != np.float32 or x.size == 0:
        return [None]
    axes = _axes(x, attrs)
    e = np.asarray(expected[0], dtype=np.float64)
    body = _in_float32(x, axes, body=True).astype(np.float64)
    with np.errstate(all="ignore"):
        lost = np.isfinite(e) & (~np.isfinite(body) | (np.abs(body - e) > 2.0 ** -10 * np.maximum(np.abs(e), 1.0)))
    return [np.broadcast_to(lost.any(axis=axes, keepdims=True), x.shape)]


op.spec_silent(
    "float32_squares", VERSIONS,
    spec={9: "Perform mean variance normalization on the input tensor X using formula: <br/> ``` (X-EX)/sqrt(E(X-EX)^2) ```",
          13: "Perform mean variance normalization on the input tensor X using formula: `(X-EX)/sqrt(E(X-EX)^2)`"},
    expected="the formula's value, evaluated wide and rounded once: finite wherever X is, though X^2 overflows float32 "
             "or E(X^2) - (EX)^2 cancels there (the text names no working precision)",
    where=overflowing_groups,
    invariants={"no element is +-inf (the formula's value is finite there; a float32 evaluation gives a finite value or NaN)": lambda c: _no_inf(c)},
    readings={"the function body in float32: E(X^2) overflows, inf - inf = NaN (onnx.reference, PyTorch)":
              lambda c: [_in_float32(c.inputs[0], _axes(c.inputs[0], c.attrs), body=True)],
              "two passes in float32: E((X-EX)^2) overflows, (X-EX) / inf = 0 (ONNX Runtime)":
              lambda c: [_in_float32(c.inputs[0], _axes(c.inputs[0], c.attrs), body=False)]})


def _no_inf(c: SilentCheck) -> bool:
    return not np.isinf(np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]).any()


@op.reference(*VERSIONS)
def mean_variance_normalization(x, *, axes=(0, 2, 3)):
    x = np.asarray(x)
    return back(standardize(wide(x), _axes(x, {"axes": axes}), None), x)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    rank = d(st.sampled_from([4, 3, 2, 4]))
    shape = tuple(d(st.integers(1, 4)) for _ in range(rank))
    if rank == 4 and d(st.booleans()):
        axes = (0, 2, 3)
    else:
        axes = tuple(sorted(d(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank))))
    attrs = {"axes": list(axes)}  # always written out: see the docstring
    if int(np.prod([shape[a] for a in axes])) < 2:
        shape = tuple(2 if i == axes[-1] else s for i, s in enumerate(shape))
    x = spread(S.arrays(d, dtype, shape=shape, lo=-4, hi=4), axes, dtype).astype(np.float64)
    # each group centred near 0 (its mean rounded to an integer and taken off, exactly): the
    # function body's E(X^2) - (EX)^2 cancels less, so a literal evaluation in float16 stays
    # within the tolerance; the groups keep their spread
    x = x - np.round(x.mean(axis=axes, keepdims=True))
    return Example([x.astype(S.np_dtype(dtype))], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    a = arr(dtype)
    sp = specials(dtype, (2, 3, 2, 2))
    default = {"axes": [0, 2, 3]}  # the default, written out: see the docstring
    out = [Example([v], default, name=k) for k, v in sp.items() if k not in ("constant_channel", "subnormal_signed_zero")]
    x = sp["plain"]
    tiny = S.smallest_subnormal(dtype)
    # subnormals and -0.0 among ordinary values (a group of subnormals only has a variance that
    # underflows in the input type, and the formula has no epsilon: an accumulation-width question)
    mixed = np.where(np.arange(x.size).reshape(x.shape) % 4 == 1, np.where(x > 0, tiny, -0.0), x).astype(x.dtype)
    out += [
        Example([x], {"axes": [2, 3]}, name="axes_spatial"),
        Example([x], {"axes": [1]}, name="axes_channel"),
        Example([x], {"axes": [0, 1, 2, 3]}, name="axes_all"),
        Example([x.reshape(2, 3, 4)], {"axes": [0, 2]}, name="rank3"),
        Example([x.reshape(6, 4)], {"axes": [1]}, name="rank2"),
        Example([a(np.zeros((2, 0, 2, 2)))], default, name="empty_channels"),
        Example([sp["constant_channel"]], {"axes": [2, 3]}, name="constant_group"),
        Example([mixed], default, name="subnormal_signed_zero"),
        # one value whose square overflows float32 (MeanVarianceNormalization.float32_squares)
        Example([np.where(np.arange(x.size).reshape(x.shape) == 5, 2e21, x).astype(x.dtype)], default, name="float32_squares"),
        # a group of tiny spread beside its mean: E(X^2) - (EX)^2 cancels in float32 (the same point)
        Example([a(1000.0 + np.arange(24).reshape(2, 3, 2, 2) % 4 * 2.0 ** -10)], default, name="float32_cancellation"),
    ]
    return out


def _build(c, x):
    # float32 graphs only: the function body is ill-typed for the other T (see the docstring);
    # axes always explicit: with the default, the function body's Constant(value_ints=@axes) has
    # no value and onnx's strict shape inference refuses the graph
    if c.dtype != "float32":
        return None
    return [x], {"axes": list(range(2, x.rank)) if c.pick(2) else [0] + list(range(2, x.rank))}


# how it enters a generated graph (harness.suites.generated)
channel_norm_template(op, axes_of=_axes, build=_build)
