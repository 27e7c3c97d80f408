"""The comparator: it judges, it never formats.

``Comparator.compare(expected, actual, tolerance) -> Verdict``. Shapes and dtypes must match
exactly; integers, booleans and strings must be equal; floats pass within rtol/atol or within a
number of units in the last place, with NaN in the same places and infinities of the same sign.
Sequences, maps and optionals are compared element by element. Outputs of ops that are random
by definition are checked by shape, dtype and range, never by value.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from .case import Tolerance
from .values import dtype_name

PASS, MISMATCH, WRONG_SHAPE, WRONG_DTYPE = "pass", "mismatch", "wrong-shape", "wrong-dtype"


@dataclass
class Verdict:
    outcome: str = PASS
    message: str = ""
    #: index of the first output that failed, and where in it
    output: int | None = None
    first_bad: str | None = None
    bad_count: int = 0
    total: int = 0
    max_abs: float | None = None
    max_rel: float | None = None
    max_ulp: float | None = None
    nan_mismatch: int = 0

    def __bool__(self) -> bool:
        return self.outcome == PASS

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def _merge_stats(self, other: Verdict) -> None:
        for name in ("max_abs", "max_rel", "max_ulp"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs is not None and (mine is None or theirs > mine):
                setattr(self, name, theirs)
        self.bad_count += other.bad_count
        self.total += other.total
        self.nan_mismatch += other.nan_mismatch


@dataclass
class _Result:
    outcome: str = PASS
    message: str = ""
    first_bad: str | None = None
    stats: Verdict = field(default_factory=Verdict)


def _is_float(dtype: np.dtype) -> bool:
    if dtype.kind == "f":
        return True
    if dtype.kind == "V":
        try:
            ml_dtypes.finfo(dtype)
            return True
        except (ValueError, TypeError):
            return False
    return False


@functools.lru_cache(maxsize=None)
def _rank_table(dtype: np.dtype) -> np.ndarray:
    """Sorted distinct finite values of a narrow float format (bfloat16, float8, float4)."""
    bits = np.arange(1 << (8 * dtype.itemsize), dtype=np.uint16 if dtype.itemsize == 2 else np.uint8)
    with np.errstate(invalid="ignore"):
        vals = bits.view(dtype).astype(np.float64)
    return np.unique(vals[np.isfinite(vals)])


def ulp_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Units in the last place between finite values of the same float dtype (-0 == +0)."""
    dtype = expected.dtype
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8):
        width = {2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize]

        def ordered(x: np.ndarray) -> np.ndarray:
            i = np.ascontiguousarray(x).reshape(x.shape).view(width).astype(np.int64)  # keep 0-d as 0-d
            return np.where(i < 0, np.iinfo(width).min - i, i)

        return np.abs(ordered(actual).astype(np.float64) - ordered(expected).astype(np.float64))
    table = _rank_table(dtype)
    rank = lambda x: np.searchsorted(table, x.astype(np.float64))  # noqa: E731
    return np.abs(rank(actual) - rank(expected)).astype(np.float64)


class Comparator:
    def compare(self, expected: list[Any], actual: list[Any], tolerance: Tolerance, random_op: str | None = None, attrs: dict | None = None) -> Verdict:
        verdict = Verdict()
        if len(actual) != len(expected):
            return Verdict(MISMATCH, f"returned {len(actual)} outputs, expected {len(expected)}")
        for k, (e, a) in enumerate(zip(expected, actual)):
            res = self._value(e, a, tolerance, random_op, attrs or {})
            verdict._merge_stats(res.stats)
            if res.outcome != PASS and verdict.outcome == PASS:
                verdict.outcome, verdict.output, verdict.first_bad = res.outcome, k, res.first_bad
                verdict.message = f"output {k}: {res.message}"
        return verdict

    # -- values ---------------------------------------------------------------------------
    def _value(self, e: Any, a: Any, tol: Tolerance, random_op: str | None, attrs: dict) -> _Result:
        if e is None or a is None:
            if e is None and a is None:
                return _Result()
            return _Result(MISMATCH, "expected an empty optional" if e is None else "got an empty optional, expected a value")
        if isinstance(e, list):
            if not isinstance(a, (list, tuple)):
                return _Result(WRONG_DTYPE, f"expected a sequence, got {type(a).__name__}")
            if len(a) != len(e):
                return _Result(WRONG_SHAPE, f"sequence of {len(a)} elements, expected {len(e)}")
            out = _Result()
            for i, (ei, ai) in enumerate(zip(e, a)):
                r = self._value(ei, ai, tol, random_op, attrs)
                out.stats._merge_stats(r.stats)
                if r.outcome != PASS and out.outcome == PASS:
                    out.outcome, out.message, out.first_bad = r.outcome, f"element {i}: {r.message}", f"[{i}]{r.first_bad or ''}"
            return out
        if isinstance(e, dict):
            if not isinstance(a, dict):
                return _Result(WRONG_DTYPE, f"expected a map, got {type(a).__name__}")
            if set(e) != set(a):
                return _Result(WRONG_SHAPE, f"map keys differ: {sorted(set(e) ^ set(a))[:5]}")
            return self._value([e[k] for k in sorted(e)], [a[k] for k in sorted(e)], tol, random_op, attrs)
        return self._array(np.asarray(e), np.asarray(a), tol, random_op, attrs)

    def _array(self, e: np.ndarray, a: np.ndarray, tol: Tolerance, random_op: str | None, attrs: dict) -> _Result:
        e_str, a_str = e.dtype.kind in "OUS", a.dtype.kind in "OUS"
        if e_str != a_str or (not e_str and e.dtype != a.dtype):
            return _Result(WRONG_DTYPE, f"dtype {dtype_name(a.dtype)}, expected {dtype_name(e.dtype)}")
        if e.shape != a.shape:
            return _Result(WRONG_SHAPE, f"shape {list(a.shape)}, expected {list(e.shape)}")
        stats = Verdict(total=int(e.size))
        if e.size == 0:
            return _Result(stats=stats)
        if random_op:
            return self._random(e, a, random_op, attrs, stats)
        if e_str:
            bad = _as_str(e) != _as_str(a)
            return self._finish(bad, stats, "strings differ", e, a)
        if not _is_float(e.dtype):
            bad = e != a
            if bad.any():
                diff = np.abs(e.astype(np.float64) - a.astype(np.float64))
                stats.max_abs = float(diff.max())
            return self._finish(bad, stats, "values differ", e, a)
        return self._float(e, a, tol, stats)

    @np.errstate(invalid="ignore", over="ignore")
    def _float(self, e: np.ndarray, a: np.ndarray, tol: Tolerance, stats: Verdict) -> _Result:
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        e_nan, a_nan = np.isnan(e64), np.isnan(a64)
        nan_bad = e_nan != a_nan
        e_inf, a_inf = np.isinf(e64), np.isinf(a64)
        inf_bad = (e_inf | a_inf) & ~(e_nan | a_nan) & (e64 != a64)
        finite = ~(e_nan | a_nan | e_inf | a_inf)
        diff = np.where(finite, np.abs(a64 - e64), 0.0)
        allowed = tol.atol + tol.rtol * np.abs(np.where(finite, e64, 0.0))
        close = diff <= allowed
        ulps = None
        if finite.any():
            ez, az = e.copy(), a.copy()
            ez[~finite] = 0
            az[~finite] = 0
            ulps = np.where(finite, ulp_distance(ez, az), 0.0)
            stats.max_ulp = float(ulps.max())
            if tol.ulp is not None:
                close |= ulps <= tol.ulp
            stats.max_abs = float(diff.max())
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(finite & (e64 != 0), diff / np.abs(e64), np.where(diff > 0, np.inf, 0.0))
            stats.max_rel = float(rel.max())
        bad = nan_bad | inf_bad | (finite & ~close)
        stats.nan_mismatch = int(nan_bad.sum())
        what = "values differ"
        if stats.nan_mismatch:
            what = f"NaN in {stats.nan_mismatch} different place(s)"
        elif inf_bad.any():
            what = f"infinity differs in {int(inf_bad.sum())} place(s)"
        return self._finish(bad, stats, what, e, a, tol)

    def _finish(self, bad: np.ndarray, stats: Verdict, what: str, e: np.ndarray, a: np.ndarray, tol: Tolerance | None = None) -> _Result:
        stats.bad_count = int(np.count_nonzero(bad))
        if not stats.bad_count:
            return _Result(stats=stats)
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        first = f"[{','.join(map(str, idx))}]"
        msg = f"{what}: {stats.bad_count}/{stats.total} bad, first at {first}: got {_fmt(a[idx])}, expected {_fmt(e[idx])}"
        if stats.max_abs is not None and tol is not None:
            msg += f"; max abs {stats.max_abs:.3g}, max rel {stats.max_rel:.3g}, max ulp {stats.max_ulp:.3g} (rtol {tol.rtol:g}, atol {tol.atol:g})"
        return _Result(MISMATCH, msg, first, stats)

    def _random(self, e: np.ndarray, a: np.ndarray, op: str, attrs: dict, stats: Verdict) -> _Result:
        """Random ops: same shape and dtype (checked above), finite, and inside the range the
        spec gives the distribution (Bernoulli: {0, 1}; Uniform: [low, high]; Multinomial:
        [0, classes))."""
        vals = a.astype(np.float64)
        bad = ~np.isfinite(vals) if _is_float(a.dtype) else np.zeros(a.shape, bool)
        if op == "Bernoulli":
            bad |= (vals != 0) & (vals != 1)
        elif op.startswith("RandomUniform"):
            bad |= (vals < attrs.get("low", 0.0)) | (vals > attrs.get("high", 1.0))
        elif op == "Multinomial":
            bad |= (vals < 0) | (vals != np.floor(vals))
        return self._finish(bad, stats, f"outside the range of {op}", e, a)


def _as_str(x: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v), otypes=[object])(x)


def _fmt(v: Any) -> str:
    """A value printed at its own precision (float32 3.1 prints as 3.1)."""
    if isinstance(v, np.generic):
        return str(v) if v.dtype.kind != "O" else repr(v)
    return repr(v)
