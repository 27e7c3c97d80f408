"""Normalizer (ai.onnx.ml): each row of an [N, C] input (or the [C] input) divided by its MAX,
L1 or L2 norm, in float (ONNX spec: Normalizer-1).

The spec's formulas: "Max: Y = X / max(X)", "L1: Y = X / sum(X)", "L2: Y = sqrt(X^2 / sum(X^2))",
and "if the divisor is zero, Y == X". We read them as the usual norms: max(X) is the row's largest
value (not of |X|: the text says max), L1's sum is of |X| (the L1 norm; the text's sum(X) without
the bars) and L2 keeps the sign of X (X / sqrt(sum(X^2)), the L2 normalization; the text's
sqrt(X^2/...) would drop it). The output has the input's shape ([C] stays [C]). Spec-silent points: ``l1_sign`` (a row with negative values: sum(X)
or sum(|X|)) and ``l2_sign`` (the sign of a negative value). Computed in float64, rounded once.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, as_str, edge_matrix, float_out

op = Operator("Normalizer", domain=ML)


@op.reference(1)
def normalizer(x, *, norm="MAX"):
    x = np.asarray(x).astype(np.float64)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    norm = as_str(norm)
    with np.errstate(all="ignore"):
        if rows.shape[-1] == 0:
            return float_out(x)
        if norm == "MAX":
            div = np.max(rows, axis=-1, keepdims=True)
        elif norm == "L1":
            div = np.sum(np.abs(rows), axis=-1, keepdims=True)
        else:
            div = np.sqrt(np.sum(rows * rows, axis=-1, keepdims=True))
        y = _divided(rows, div)
    return float_out(y.reshape(x.shape))


def _divided(rows, div):
    """'if the divisor is zero, Y == X'."""
    with np.errstate(all="ignore"):
        return np.where(div == 0, rows, rows / np.where(div == 0, 1.0, div))


def _literal(norm):
    """The spec's formula for ``norm`` read literally, in float64: L1 X / sum(X); L2 sqrt(X^2 / sum(X^2))."""
    def reading(c):
        x = np.asarray(c.inputs[0]).astype(np.float64)
        rows = x.reshape(1, -1) if x.ndim == 1 else x
        with np.errstate(all="ignore"):
            if norm == "L1":
                y = _divided(rows, np.sum(rows, axis=-1, keepdims=True))
            else:
                div = np.sum(rows * rows, axis=-1, keepdims=True)
                y = np.where(div == 0, rows, np.sqrt(rows * rows / np.where(div == 0, 1.0, div)))
        return [float_out(y.reshape(x.shape))]
    return reading


def _negative_rows(name):
    def where(inputs, attrs, expected, since):
        if as_str(attrs.get("norm", "MAX")) != name:
            return [None]
        x = np.asarray(inputs[0]).astype(np.float64)
        rows = x.reshape(1, -1) if x.ndim == 1 else x
        return [np.broadcast_to(np.any(rows < 0, axis=-1, keepdims=True), rows.shape).reshape(x.shape) if rows.size else None]
    return where


op.spec_silent(
    "l1_sign", (1,),
    spec="L1:  Y = X / sum(X)",
    expected="X / sum(|X|), the L1 norm the mode is named after (sum(X) without the bars would not be a norm, and can be 0 or change the sign)",
    where=_negative_rows("L1"),
    invariants={"the output has the shape of the input": lambda c: np.shape(c.actual[0]) == np.shape(c.expected[0])},
    readings={"the formula read literally: X / sum(X) (X where the sum is 0)": _literal("L1")})
op.spec_silent(
    "l2_sign", (1,),
    spec="L2:  Y = sqrt(X^2 / sum(X^2)}",
    expected="X / sqrt(sum(X^2)), the L2 normalization the mode is named after (the sign of X kept)",
    where=_negative_rows("L2"),
    invariants={"|Y| is the same whatever the sign choice": lambda c: bool(np.allclose(
        np.abs(np.asarray(c.actual[0]).astype(np.float64))[c.masks[0]], np.abs(np.asarray(c.expected[0]).astype(np.float64))[c.masks[0]],
        rtol=1e-5, atol=1e-6, equal_nan=True))},
    readings={"the formula read literally: sqrt(X^2 / sum(X^2)), the sign dropped (X where the sum is 0)": _literal("L2")})


@op.strategy(1)
def draw(d, dtype, opset):
    shape = (d(S.st.integers(0, 4)), d(S.st.integers(1, 4))) if d(S.st.booleans()) else (d(S.st.integers(1, 5)),)
    x = S.arrays(d, dtype, shape=shape, lo=-20, hi=20)
    return Example([x], {"norm": d(S.st.sampled_from(["MAX", "L1", "L2"]))})


@op.edges(1)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    x = edge_matrix(dtype, 3)
    zero_rows = np.array([[0, 0, 0], [1, 2, 2], [-1, 0, 1]], dtype=dt)
    positive = np.array([[1, 2, 5], [3, 3, 4]], dtype=dt)
    out = []
    for norm in ("MAX", "L1", "L2"):
        out += [Example([x], {"norm": norm}, name=f"edge_values_{norm}"),
                Example([zero_rows], {"norm": norm}, name=f"zero_rows_{norm}"),
                Example([positive], {"norm": norm}, name=f"positive_{norm}"),
                Example([np.zeros((0, 3), dtype=dt)], {"norm": norm}, name=f"empty_{norm}")]
    return out
