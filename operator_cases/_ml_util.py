"""Helpers shared by the ai.onnx.ml operator modules: the post transforms, class labels, the
top-class choice and the spec-silent points they share.

The spec names the post transforms ('NONE', 'SOFTMAX', 'LOGISTIC', 'SOFTMAX_ZERO', 'PROBIT') but
never defines them. We take the usual meanings, in float64 over one row of scores:

- LOGISTIC: 1 / (1 + exp(-s)), elementwise;
- SOFTMAX: exp(s - max) / sum(exp(s - max)) over the row;
- SOFTMAX_ZERO: the softmax of the row's nonzero scores, a score of exactly 0 staying 0 (a row of
  zeros stays zeros); spec-silent point ``softmax_zero`` (ONNX Runtime takes |s| <= 1e-7 as zero);
- PROBIT: the standard normal quantile sqrt(2) * erfinv(2s - 1) (the probit function), NaN
  outside [0, 1]; spec-silent point ``probit`` (a backend may use an approximation of erfinv).
"""

from __future__ import annotations

import math

import numpy as np

from harness import strategies as S
from harness.registry import Operator, SilentCheck

ML = "ai.onnx.ml"
TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def as_str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def text_array(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [as_str(v) for v in values]
    return out


def _erfinv(y: np.ndarray) -> np.ndarray:
    """erfinv in float64: a Winitzki start polished by Newton steps on math.erf (exact to a few ulp)."""
    y = np.asarray(y, dtype=np.float64)
    out = np.full(y.shape, np.nan)
    inside = np.abs(y) < 1
    out[y == 1], out[y == -1] = np.inf, -np.inf
    v = y[inside]
    a = 0.147
    ln = np.log1p(-v * v)
    t = 2 / (math.pi * a) + ln / 2
    x = np.sign(v) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(6):
        step = (erf(x) - v) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = x - np.where(np.isfinite(step), step, 0.0)
    out[inside] = x
    return out


def post_transform(scores, how) -> np.ndarray:
    """One of TRANSFORMS (or its index, TreeEnsemble-5) over the rows of ``scores`` (float64, [N, E])."""
    s = np.asarray(scores, dtype=np.float64)
    how = TRANSFORMS[how] if isinstance(how, (int, np.integer)) else as_str(how)
    with np.errstate(all="ignore"):
        if how == "NONE":
            return s
        if how == "LOGISTIC":
            return 1.0 / (1.0 + np.exp(-s))
        if how == "PROBIT":
            return math.sqrt(2.0) * _erfinv(2.0 * s - 1.0)
        if s.shape[-1] == 0:
            return s
        if how == "SOFTMAX":
            e = np.exp(s - np.max(s, axis=-1, keepdims=True))
            return e / np.sum(e, axis=-1, keepdims=True)
        if how == "SOFTMAX_ZERO":
            nz = s != 0
            m = np.max(np.where(nz, s, -np.inf), axis=-1, keepdims=True)
            e = np.where(nz, np.exp(s - np.where(np.isfinite(m), m, 0.0)), 0.0)
            total = np.sum(e, axis=-1, keepdims=True)
            return np.where(nz, e / np.where(total == 0, 1.0, total), 0.0)
    raise ValueError(f"unknown post_transform {how!r}")


def class_labels(attrs: dict, ints: str = "classlabels_int64s") -> np.ndarray:
    """The class labels: strings (object array) or int64."""
    if attrs.get("classlabels_strings") is not None:
        return text_array(attrs["classlabels_strings"])
    return np.asarray(attrs.get(ints, []), dtype=np.int64)


def top_class(z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The label of each row's highest score; the first of tied highest scores (spec-silent ``tie``)."""
    if z.shape[0] == 0:
        return labels[:0]
    return labels[np.argmax(z, axis=1)]


def transform_name(attrs: dict, default="NONE") -> str:
    how = attrs.get("post_transform", default)
    return TRANSFORMS[how] if isinstance(how, (int, np.integer)) else as_str(how)


# -- spec-silent points shared by the ops with a post transform ----------------------------------
def _rows_with(attrs: dict, expected: list, name: str, output: int) -> list:
    if transform_name(attrs) != name:
        return [None] * len(expected)
    out: list = [None] * len(expected)
    out[output] = np.ones(np.shape(expected[output]), dtype=bool)
    if output == 1:  # a classifier: the top class follows the transformed scores
        out[0] = np.ones(np.shape(expected[0]), dtype=bool)
    return out


def _probit_kept(output: int):
    def holds(c: SilentCheck) -> bool:
        z = np.asarray(c.actual[output]).astype(np.float64)
        e = np.asarray(c.expected[output]).astype(np.float64)
        if z.shape != e.shape:
            return False
        # the quantile is increasing and 0 at 0.5: its sign is that of (score - 0.5), finite inside (0, 1)
        fin = np.isfinite(e)
        return bool(np.all(np.sign(z[fin]) == np.sign(e[fin])) and np.all(np.isfinite(z[fin]))
                    and np.allclose(z[fin], e[fin], rtol=1e-2, atol=1e-2))

    return holds


def _softmax_zero_kept(output: int):
    def holds(c: SilentCheck) -> bool:
        z = np.asarray(c.actual[output]).astype(np.float64)
        e = np.asarray(c.expected[output]).astype(np.float64)
        if z.shape != e.shape or z.ndim != 2:
            return False
        sums = z.sum(axis=1)
        return bool(np.all((z >= 0) & (z <= 1)) and np.all(np.isclose(sums, 1, atol=1e-5) | (sums == 0))
                    and np.allclose(z, e, atol=1e-3))

    return holds


def declare_transform_points(op: Operator, versions: tuple[int, ...], output: int) -> None:
    """The post transforms the spec names and never defines: PROBIT and SOFTMAX_ZERO."""
    op.spec_silent(
        "probit", versions,
        spec="post_transform: 'Indicates the transform to apply to the score. One of 'NONE,' 'SOFTMAX,' 'LOGISTIC,' 'SOFTMAX_ZERO,' or 'PROBIT'' (no formula)",
        expected="the probit function, the standard normal quantile sqrt(2) * erfinv(2s - 1), computed in float64 "
                 "(NaN outside [0, 1], -inf/+inf at 0/1): its textbook meaning; a backend may approximate erfinv",
        where=lambda inputs, attrs, expected, since: _rows_with(attrs, expected, "PROBIT", output),
        invariants={"the value is within 1e-2 of the quantile, with its sign (that of score - 0.5)": _probit_kept(output)})
    op.spec_silent(
        "softmax_zero", versions,
        spec="post_transform: 'One of 'NONE,' 'SOFTMAX,' 'LOGISTIC,' 'SOFTMAX_ZERO,' or 'PROBIT'' (no formula)",
        expected="a softmax over the row's nonzero scores, a score of exactly 0 staying 0 and a row of zeros staying zeros "
                 "(the name's meaning); ONNX Runtime counts |score| <= 1e-7 as zero",
        where=lambda inputs, attrs, expected, since: _rows_with(attrs, expected, "SOFTMAX_ZERO", output),
        invariants={"each value is in [0, 1], each row sums to 1 or is all zeros, and within 1e-3 of ours": _softmax_zero_kept(output)})


def _tied_rows(expected: list, output: int = 1):
    z = np.asarray(expected[output]).astype(np.float64)
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] == 0:
        return None
    top = np.max(z, axis=1, keepdims=True)
    return (np.sum(z == top, axis=1) > 1)


def declare_tie_point(op: Operator, versions: tuple[int, ...], labels_of) -> None:
    """Two classes sharing the highest score: the spec does not say which label wins."""

    def where(inputs, attrs, expected, since):
        tied = _tied_rows(expected)
        return [tied, None] if tied is not None and tied.any() else [None, None]

    def holds(c: SilentCheck) -> bool:
        z = np.asarray(c.expected[1]).astype(np.float64)
        labels = labels_of(c.attrs)
        y = np.asarray(c.actual[0])
        for i in np.nonzero(c.masks[0])[0]:
            winners = {as_str(v) for v in labels[z[i] == z[i].max()]}
            if as_str(y[i]) not in winners:
                return False
        return True

    op.spec_silent(
        "tie", versions,
        spec="Y: 'Classification outputs (one class per example)'; Z: 'Classification scores ([N,E] - one score for each class and example)'",
        expected="the first of the classes sharing the highest score (numpy.argmax; the order of the class labels)",
        where=where, invariants={"the label is one of the classes with the highest score": holds})


def ensure_2d(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x.reshape(1, -1) if x.ndim == 1 else x.reshape(x.shape[0], -1) if x.ndim > 2 else x


def float_out(y) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(y, dtype=np.float64).astype(np.float32)


def features(d, dtype: str, rows: tuple[int, int] = (0, 4), cols: tuple[int, int] = (1, 4), lo=-5, hi=5,
             nan: bool = False) -> np.ndarray:
    """A [N, F] input of ``dtype`` (a few rows; NaN allowed on request for floats)."""
    n = d(S.st.integers(*rows))
    f = d(S.st.integers(*cols))
    return S.arrays(d, dtype, shape=(n, f), lo=lo, hi=hi, allow_nan=nan and S.is_float(dtype))


def edge_matrix(dtype: str, cols: int) -> np.ndarray:
    """The edge values of ``dtype`` laid out as [N, cols] (padded with zeros)."""
    v = S.edge_values(dtype)
    n = -(-v.size // cols)
    out = np.zeros(n * cols, dtype=v.dtype)
    out[: v.size] = v
    return out.reshape(n, cols)
