"""The comparator: it judges, it never formats.

``Comparator.compare(expected, actual, tolerance) -> Verdict``. Shapes and dtypes must match
exactly; integers, booleans and strings must be equal; floats pass within rtol/atol or within a
number of units in the last place, with NaN in the same places and infinities of the same sign.
Sequences, maps and optionals are compared element by element. An output of a random op (one
``RandomOutput`` per graph output, decided by ``harness.worker.random_outputs`` from the model and
the data set) is checked on its own by shape, dtype, the support its spec gives and tests of its
distribution at false-alarm rate ``ALPHA``, each with its power stated (a sample too small for
the power ``POWER`` against the faults of ``TARGETS``, both in :mod:`harness.distribution`, is ``skip``, "not checked", never a pass,
unless a test already fails it); an output
that depends on a random op only through other nodes is checked by shape and dtype, and a pass
says so in its message. ``Comparator.spec_silent`` judges a mismatch again where the spec is
silent: ``unspecified`` when only the open elements differ, each matching our value or one
computed reading of a point opening it, and every invariant of the points holds (a differing open
element no reading computes is accepted but flagged ``unchecked`` in the evidence).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import ml_dtypes
import numpy as np

from .case import Tolerance
from .distribution import POWER, _binomial, _classes, _fit, _ones, _softmax, _spread, _Test
from .evidence import window as value_window
from .values import dtype_name

PASS, MISMATCH, WRONG_SHAPE, WRONG_DTYPE = "pass", "mismatch", "wrong-shape", "wrong-dtype"
#: a difference only where the spec is silent, every invariant of the point kept
UNSPECIFIED = "unspecified"
#: false-alarm rate of each distribution test of a random output (a correct backend fails one
#: such test once in a million)
ALPHA = 1e-6
#: Dropout: fewer values than this: support only, said in the verdict
MIN_SAMPLES = 10
#: a random output whose sample is too small to have the power asked below: "not checked" (shown
#: apart from pass, outside the pass rate), unless one of its tests already fails it
NOT_CHECKED = "skip"


@dataclass
class RandomOutput:
    """How one graph output of a random op is judged (never by value).

    ``op`` is the random op that made it, or "" when it depends on ``via`` through other nodes
    (shape and dtype only). ``inputs`` are the op's inputs whose values are known before the run
    (graph inputs, initializers, constants), None where computed inside the graph. For Dropout,
    ``output`` is 0 (data) or 1 (mask) and ``partner`` the graph output holding the mask."""

    op: str
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: list[Any] = field(default_factory=list)
    output: int = 0
    partner: int | None = None
    via: str = ""
    #: Dropout: the drop ratio, None when it is computed inside the graph
    ratio: float | None = None


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
    #: an ``unspecified`` verdict (or a broken invariant): the point, its spec text, both values
    spec_silent: dict[str, Any] | None = None
    #: the failing output's expected and actual values around the first bad element, the bad
    #: ones marked (``harness.evidence.window``): what a report shows, bounded
    window: dict[str, Any] | None = None

    def __bool__(self) -> bool:
        return self.outcome == PASS

    def to_dict(self) -> dict[str, Any]:
        if self.spec_silent is None and self.window is None:  # plain numbers and text: no deep copy to make
            return {f.name: getattr(self, f.name) for f in fields(self)}
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
    window: dict[str, Any] | None = None


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


@dataclass(frozen=True)
class _Elementwise:
    """One output's tolerance: the case's rtol, atol and ulp, plus its derived allowance per
    element (``Tolerance.bound``); None where the output has none."""

    base: Tolerance
    elementwise: Any

    rtol = property(lambda self: self.base.rtol)
    atol = property(lambda self: self.base.atol)
    ulp = property(lambda self: self.base.ulp)


class Comparator:
    def compare(self, expected: list[Any], actual: list[Any], tolerance: Tolerance,
                random: Sequence[RandomOutput | None] | None = None) -> Verdict:
        """``random``: one entry per output, None for an output compared by value."""
        verdict = Verdict()
        if len(actual) != len(expected):
            return Verdict(MISMATCH, f"returned {len(actual)} outputs, expected {len(expected)}")
        random = list(random or [])
        notes = []
        if tolerance.bound is not None and len(tolerance.bound) != len(expected):
            raise ValueError(f"a tolerance bound for {len(tolerance.bound)} outputs, the case has {len(expected)}")
        for k, (e, a) in enumerate(zip(expected, actual)):
            spec = random[k] if k < len(random) else None
            mask = actual[spec.partner] if spec is not None and spec.partner is not None and spec.partner < len(actual) else None
            tol = tolerance if tolerance.bound is None else _Elementwise(tolerance, tolerance.bound[k])
            res = self._value(e, a, tol, spec, mask)
            verdict._merge_stats(res.stats)
            # a failure of a later output outranks an earlier output left not checked
            if res.outcome != PASS and (verdict.outcome == PASS or (verdict.outcome == NOT_CHECKED and res.outcome != NOT_CHECKED)):
                verdict.outcome, verdict.output, verdict.first_bad = res.outcome, k, res.first_bad
                verdict.window = res.window
                verdict.message = f"output {k}: {res.message}"
            elif res.outcome == PASS and res.message:
                notes.append(f"output {k}: {res.message}")
        if verdict.outcome == PASS and notes:  # what a pass of a random output did not check
            verdict.message = "; ".join(notes)
        return verdict

    def spec_silent(self, verdict: Verdict, points: Sequence[Any], inputs: list[Any], attrs: dict[str, Any],
                    expected: list[Any], actual: list[Any], tolerance: Tolerance, since: int = 0,
                    reference: Callable[..., Any] | None = None) -> Verdict:
        """Judge a ``mismatch`` again on a case that reaches spec-silent points (each a
        ``registry.SpecSilentPoint``: the elements where the spec is silent, its readings, its
        invariants; the op-version's ``since`` and ``reference`` are handed to both).
        The elements the spec fixes must still match (else the mismatch stands, said for those
        elements). At every open element the actual value must match, within the tolerance (NaN
        matching NaN), our expected value or the value of one reading of a point opening that
        element (else ``mismatch`` naming the point and saying it matched none of its readings);
        then every invariant of every point reached must hold on the actual output (else
        ``mismatch`` naming the broken invariant); then the verdict is ``unspecified``, naming the
        point, its spec text, the readings that matched and both values at the first open
        element that differs. Open elements that differ from ours where no reading computes the
        output (a point without readings) cannot be checked: the verdict's ``spec_silent``
        evidence says ``unchecked`` and the run counts it as such."""
        from .registry import SilentCheck

        if verdict.outcome != MISMATCH:
            return verdict
        reached = []
        open_ = [None] * len(expected)
        for point in points:
            masks = point.masks(inputs, attrs, expected, since)
            if any(m is not None and m.any() for m in masks):
                reached.append((point, masks))
                open_ = [m if o is None else (o if m is None else o | m) for o, m in zip(open_, masks)]
        if not reached:
            return verdict
        fixed = [a if m is None else np.where(m, np.asarray(e), np.asarray(a)).astype(np.asarray(a).dtype)
                 for e, a, m in zip(expected, actual, open_)]
        rest = self.compare(expected, fixed, tolerance)
        ids = ", ".join(p.id for p, _ in reached)
        if rest.outcome != PASS:
            rest.message = f"{rest.message} (outside the elements left open by {ids})"
            return rest
        info = _first_open_difference(expected, actual, open_)
        checks = [(point, SilentCheck(inputs, attrs, expected, actual, masks, since, reference)) for point, masks in reached]
        judged = self._readings(checks, expected, actual, tolerance)
        if "unmatched" in judged:
            point, k, idx, values = judged["unmatched"]
            a = np.asarray(actual[k])
            named = "; ".join(f"{name} {v}" for name, v in values) or "none computes this output"
            where = f"[{','.join(map(str, idx))}]"
            verdict.message = (f"{verdict.message}; spec-silent point {point.id}: output {k} {where}: got {_fmt(a[idx])}, "
                               f"matched none of its readings (ours {_fmt(np.asarray(expected[k])[idx])}; {named})")
            verdict.spec_silent = {**_point_info(point, since), **info, "unmatched": {"output": k, "index": where}}
            return verdict
        for point, check in checks:
            for sentence, invariant in point.invariants.items():
                with np.errstate(all="ignore"):
                    kept = bool(invariant(check))
                if not kept:
                    verdict.message = f"{verdict.message}; breaks an invariant of spec-silent point {point.id}: {sentence}"
                    verdict.spec_silent = {**_point_info(point, since), **info, "broken_invariant": sentence}
                    return verdict
        first = reached[0][0]
        matched, unchecked = judged["matched"], judged["unchecked"]
        unspecified = Verdict(UNSPECIFIED, output=info.get("output"), first_bad=info.get("index"))
        unspecified._merge_stats(verdict)
        unspecified.spec_silent = {**_point_info(first, since), **info, "points": [p.id for p, _ in reached],
                                   "readings": matched, "unchecked": unchecked}
        where = f"output {info['output']} {info['index']}: " if info else ""
        said = (f"matches the reading {' and '.join(repr(m) for m in matched)}" if matched else "matches no computed reading")
        if unchecked:
            said += f"; unchecked: {unchecked} differing open element(s) no reading computes"
        unspecified.message = (f"spec-silent point {ids}: {where}got {info.get('actual')}, our choice {info.get('expected')} "
                               f"({first.expected}); {said}; invariants kept: {'; '.join(first.invariants) or 'none stated'}")
        return unspecified

    def _readings(self, checks: list[tuple[Any, Any]], expected: list[Any], actual: list[Any], tol: Tolerance) -> dict[str, Any]:
        """Per output, each open element whose actual value differs from ours must match one
        reading of a point opening it. Returns ``matched`` (reading names, most elements first),
        ``unchecked`` (differing open elements that no reading of their points computes) and,
        when an element matched none, ``unmatched``: (point, output, index, [(reading, value)])."""
        votes: dict[str, int] = {}
        unchecked = 0
        for k, (e, a) in enumerate(zip(expected, actual)):
            if e is None or isinstance(e, (list, dict)):
                continue  # sequences and maps: opened as a whole, judged by their invariants
            e, a = np.asarray(e), np.asarray(a)
            tol_k = tol if tol.bound is None else _Elementwise(tol, tol.bound[k])  # as compare() judges output k
            differ = ~_close(e, a, tol_k)
            accepted = np.zeros(e.shape, bool)
            uncovered = np.zeros(e.shape, bool)  # open by a point none of whose readings computes this output
            values: dict[str, np.ndarray] = {}
            for point, check in checks:
                m = check.masks[k]
                if m is None or not (m & differ).any():
                    continue
                computed = False
                for name, reading in point.readings.items():
                    with np.errstate(all="ignore"):
                        got = list(reading(check))
                    r = got[k] if k < len(got) else None
                    if r is None:
                        continue
                    r = np.broadcast_to(np.asarray(r).astype(e.dtype) if e.dtype.kind not in "OUS" else np.asarray(r), e.shape)
                    values[f"{point.id}: {name}"] = r
                    computed = True
                    hit = m & differ & _close(r, a, tol_k)
                    votes[name] = votes.get(name, 0) + int(hit.sum())
                    accepted |= hit
                if not computed:
                    uncovered |= m
            open_k = _any_mask([c.masks[k] for _, c in checks], e.shape)
            bad = differ & open_k & ~uncovered & ~accepted
            unchecked += int((differ & uncovered & ~accepted).sum())
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
                point = next(p for p, c in checks if c.masks[k] is not None and c.masks[k][idx])
                shown = [(name, _fmt(v[idx])) for name, v in values.items() if name.startswith(point.id + ":")]
                return {"unmatched": (point, k, idx, [(n.split(": ", 1)[1], v) for n, v in shown])}
        matched = [name for name, n in sorted(votes.items(), key=lambda kv: -kv[1]) if n]
        return {"matched": matched, "unchecked": unchecked}

    # -- values ---------------------------------------------------------------------------
    def _value(self, e: Any, a: Any, tol: Tolerance, spec: RandomOutput | None, mask: Any = None) -> _Result:
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
                r = self._value(ei, ai, tol, spec)
                out.stats._merge_stats(r.stats)
                if r.outcome != PASS and out.outcome == PASS:
                    out.outcome, out.message, out.first_bad = r.outcome, f"element {i}: {r.message}", f"[{i}]{r.first_bad or ''}"
                    out.window = r.window and {**r.window, "element": i}
                elif r.outcome == PASS and r.message and out.outcome == PASS:
                    out.message = r.message
            return out
        if isinstance(e, dict):
            if not isinstance(a, dict):
                return _Result(WRONG_DTYPE, f"expected a map, got {type(a).__name__}")
            if set(e) != set(a):
                return _Result(WRONG_SHAPE, f"map keys differ: {sorted(set(e) ^ set(a))[:5]}")
            # a binding gives map values as Python scalars: they take the expected value's type
            got = [np.asarray(a[k], dtype=np.asarray(e[k]).dtype) if type(a[k]) in (float, int) else a[k] for k in sorted(e)]
            return self._value([e[k] for k in sorted(e)], got, tol, spec)
        return self._array(np.asarray(e), np.asarray(a), tol, spec, mask)

    def _array(self, e: np.ndarray, a: np.ndarray, tol: Tolerance, spec: RandomOutput | None, mask: Any = None) -> _Result:
        e_str, a_str = e.dtype.kind in "OUS", a.dtype.kind in "OUS"
        if e_str != a_str or (not e_str and e.dtype != a.dtype):
            return _Result(WRONG_DTYPE, f"dtype {dtype_name(a.dtype)}, expected {dtype_name(e.dtype)}")
        if e.shape != a.shape:
            return _Result(WRONG_SHAPE, f"shape {list(a.shape)}, expected {list(e.shape)}")
        stats = Verdict(total=int(e.size))
        if spec is not None:
            if not spec.op:
                return _Result(message=f"depends on {spec.via} through other nodes: shape and dtype checked, not values", stats=stats)
            if e.size == 0:
                return _Result(stats=stats)
            return self._random(e, a, spec, stats, tol, mask)
        if e.size == 0:
            return _Result(stats=stats)
        if e_str:
            bad = _as_str(e) != _as_str(a)
            return self._finish(bad, stats, "strings differ", e, a)
        if not _is_float(e.dtype):
            bad = e != a
            exact = None
            if bad.any():
                diff = _int_diff(e[bad], a[bad])
                exact = int(diff.max())
                stats.max_abs = float(exact)  # a float like every statistic; the message shows it exactly
                with np.errstate(divide="ignore", invalid="ignore"):
                    mag = np.abs(e[bad].astype(np.float64))
                    rel = np.where(mag > 0, diff.astype(np.float64) / mag, np.inf)
                stats.max_rel = float(rel.max())
            res = self._finish(bad, stats, "values differ", e, a)
            if exact is not None:
                res.message += f"; max abs difference {exact}, max rel {stats.max_rel:.3g}"
            return res
        return self._float(e, a, tol, stats)

    def _float(self, e: np.ndarray, a: np.ndarray, tol: Tolerance, stats: Verdict) -> _Result:
        if _identical_floats(e, a, tol):  # most float outputs: every statistic is 0, nothing is bad
            stats.max_abs = stats.max_rel = stats.max_ulp = 0.0
            return _Result(stats=stats)
        bad, nan_bad, inf_bad, diff, rel, ulps = _float_bad(e, a, tol)
        # a NaN or an infinity where the other side differs is an infinite error, counted and shown
        special_bad = nan_bad | inf_bad
        stats.max_abs = float(np.where(special_bad, np.inf, diff).max())
        stats.max_rel = float(np.where(special_bad, np.inf, rel).max())
        stats.max_ulp = float(np.where(special_bad, np.inf, ulps).max())
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
            extra = getattr(tol, "elementwise", None)
            plus = f", plus a derived bound per element up to {float(np.max(extra, initial=0.0)):.3g}" if extra is not None else ""
            msg += f"; max abs {stats.max_abs:.3g}, max rel {stats.max_rel:.3g}, max ulp {stats.max_ulp:.3g} (rtol {tol.rtol:g}, atol {tol.atol:g}{plus})"
        return _Result(MISMATCH, msg, first, stats, value_window(e, a, bad))

    # -- random outputs -------------------------------------------------------------------
    def _random(self, e: np.ndarray, a: np.ndarray, spec: RandomOutput, stats: Verdict, tol: Tolerance, mask: Any) -> _Result:
        """One output of a random op, by its spec: the support of its values (the value itself
        where the spec fixes it), then tests of their distribution sharing the false-alarm rate
        ``ALPHA`` (Bonferroni). A failed test is a mismatch, whatever the sample size; with every
        test passed the output passes only if each test had the power ``TARGETS`` asks of it,
        else it is not checked (``NOT_CHECKED``), as is an output whose distribution is unknown
        before the run."""
        from scipy import special

        op, attrs, x = spec.op, spec.attrs, (spec.inputs[0] if spec.inputs else None)
        with np.errstate(invalid="ignore", over="ignore"):
            vals = a.astype(np.float64)
        finite = np.isfinite(vals)
        tests: Callable[[float], list[_Test]] | None = None  # alpha -> the tests at that rate
        note = ""
        if op == "Bernoulli":
            bad = (vals != 0) & (vals != 1)
            what = "outside {0, 1}"
            if x is not None and np.shape(x) == a.shape:
                p = np.asarray(x).astype(np.float64)
                bad |= ((p == 0) & (vals != 0)) | ((p == 1) & (vals != 1))
                what = "outside {0, 1}, or not the certain outcome where p is 0 or 1"
                tests = lambda alpha: _ones(vals, p, alpha)  # noqa: E731
                if not np.all((p >= 0) & (p <= 1)):  # "probabilities p (a value in the range [0,1])"
                    note = "a probability outside [0, 1] (or NaN): the spec gives no distribution"
            else:
                note = "probabilities computed in the graph: support checked, not the distribution"
        elif op in ("RandomUniform", "RandomUniformLike"):
            low, high = float(attrs.get("low", 0.0)), float(attrs.get("high", 1.0))
            bad = ~finite | (vals < low) | (vals > high)
            what = f"outside [{low:g}, {high:g}]"  # low == high: every value is low, checked here
            if high > low:
                tests = lambda alpha: [_fit(a, lambda v: np.clip((v - low) / (high - low), 0.0, 1.0), f"uniform[{low:g}, {high:g}]", alpha)]  # noqa: E731
        elif op in ("RandomNormal", "RandomNormalLike"):
            mean, scale = float(attrs.get("mean", 0.0)), float(attrs.get("scale", 1.0))
            bad, what = ~finite, "not finite"
            if scale > 0:
                tests = lambda alpha: [_fit(a, lambda v: special.ndtr((v - mean) / scale), f"normal({mean:g}, {scale:g}^2)", alpha / 2),  # noqa: E731
                                       _spread(a, mean, scale, alpha / 2)]
            elif scale == 0:  # "scale: The standard deviation of the normal distribution": 0 puts every value at the mean
                at = np.asarray(mean).astype(a.dtype).astype(np.float64)
                bad, what = vals != at, f"not the mean {mean:g} (scale 0)"
            else:
                note = f"scale {scale:g} < 0: the spec gives no distribution"
        elif op == "Multinomial":
            bad = ~finite | (vals < 0) | (vals != np.floor(vals))
            what = "not a class index"
            if x is not None and np.ndim(x) == 2 and a.ndim == 2 and np.shape(x)[0] == a.shape[0]:
                probs = _softmax(np.asarray(x).astype(np.float64))
                classes = probs.shape[1]
                bad |= vals >= classes
                drawn = np.where(bad, 0, vals).astype(np.int64)
                bad |= np.take_along_axis(probs, drawn, axis=1) == 0
                what = f"not a class index in [0, {classes}) of probability > 0"
                tests = lambda alpha: _classes(probs, vals, alpha)  # noqa: E731
                if np.isnan(probs).any():
                    note = "a row of log-probabilities with no softmax (NaN, every class -inf, or +inf): the spec gives no distribution"
            else:
                note = "class probabilities computed in the graph: checked for non-negative integers only"
        elif op == "Dropout":
            return self._dropout(e, a, spec, stats, tol, mask)
        else:
            raise ValueError(f"no random check for {op}")  # a harness bug: random_outputs named an op we cannot judge
        res = self._finish(bad, stats, f"{op} value {what}", e, a)
        if res.outcome != PASS:
            return res
        if note:
            res.outcome, res.message = NOT_CHECKED, f"{op}: not checked: {note}"
            return res
        done = tests(ALPHA) if tests is not None else []
        failed = [t for t in done if t.p < t.level]
        if not done:  # every value fixed (scale 0, p 0 or 1, one class of probability 1): the support check saw them all
            res.message = f"{op}: every value fixed by the spec, checked"
        elif failed:
            t = failed[0]
            res.outcome = MISMATCH
            res.message = f"{op}: values do not follow its distribution: {t.name}: p = {t.p:.3g} < {t.level:.3g} ({a.size} values)"
        elif all(t.powered for t in done):
            res.message = f"{op}: {a.size} values, false-alarm rate {ALPHA:g}; " + "; ".join(t.power for t in done)
        else:
            res.outcome = NOT_CHECKED
            res.message = (f"{op}: not checked: {a.size} values, too few for the power {POWER:g} against "
                           f"the faults it must see: " + "; ".join(t.power for t in done if not t.powered))
        return res

    def _distribution(self, res: _Result, test: Callable[[], tuple[float, str]] | None, n: int, op: str, note: str) -> _Result:
        if test is None:
            res.message = note or f"{op}: support checked; its distribution is degenerate or unknown"
        elif n < MIN_SAMPLES:
            res.message = f"{op}: {n} values, too few for a distribution test (< {MIN_SAMPLES}): support checked only"
        else:
            p, name = test()
            if p < ALPHA:
                res.outcome = MISMATCH
                res.message = f"{op}: values do not follow its distribution: {name} p = {p:.3g} < alpha {ALPHA:g} ({n} values)"
        return res

    def _dropout(self, e: np.ndarray, a: np.ndarray, spec: RandomOutput, stats: Verdict, tol: Tolerance, mask: Any) -> _Result:
        """Dropout in training mode with ratio r: each element is dropped (output 0, mask false)
        or kept (output x / (1 - r), mask true), kept with probability 1 - r."""
        r, x = spec.ratio, (spec.inputs[0] if spec.inputs else None)
        if spec.output == 1:  # the mask
            kept = a.astype(bool)
            test = (lambda: _binomial(int(kept.sum()), kept.size, 1 - r)) if r is not None else None
            return self._distribution(_Result(stats=stats), test, a.size, "Dropout mask",
                                      "" if r is not None else "Dropout mask: ratio computed in the graph: dtype and shape checked only")
        if x is None or r is None or np.shape(x) != a.shape or r >= 1:
            return _Result(stats=stats, message="Dropout: input or ratio computed in the graph (or ratio >= 1): shape and dtype checked only")
        scaled = np.asarray(x).astype(np.float64) / (1.0 - r)
        y = a.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            as_kept = (np.abs(y - scaled) <= tol.atol + tol.rtol * np.abs(scaled)) | (y == scaled) | (np.isnan(y) & np.isnan(scaled))
        as_dropped = y == 0
        if mask is not None and np.shape(mask) == a.shape:
            m = np.asarray(mask).astype(bool)
            bad = np.where(m, ~as_kept, ~as_dropped)
            what = "Dropout output is not x / (1 - ratio) where the mask is true and 0 where it is false"
            kept, n = int(m.sum()), m.size
        else:
            bad = ~(as_kept | as_dropped)
            what = "Dropout output is neither 0 nor x / (1 - ratio)"
            # where x / (1 - r) is within tolerance of 0, a kept and a dropped element look the same
            informative = np.abs(scaled) > tol.atol + tol.rtol * np.abs(scaled)
            kept, n = int((as_kept & informative).sum()), int(informative.sum())
        res = self._finish(bad, stats, what, e, a)
        if res.outcome != PASS:
            return res
        return self._distribution(res, lambda: _binomial(kept, n, 1 - r), n, "Dropout", "")


def _int_diff(e: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Exact absolute differences of integers or booleans, as uint64: the difference of two
    64-bit integers always fits, and modular uint64 arithmetic computes it without the float64
    rounding that makes neighbours near the int64 limits look equal."""
    if e.dtype.kind not in "iu":  # bool, and ml_dtypes' int4/uint4/int2
        e, a = e.astype(np.int64), a.astype(np.int64)
    hi, lo = np.maximum(e, a), np.minimum(e, a)
    return hi.astype(np.uint64) - lo.astype(np.uint64)


def _point_info(point: Any, since: int) -> dict[str, Any]:
    return {"point": point.id, "op_version": f"{point.op}-{since}", "spec": point.spec_at(since), "choice": point.expected,
            "invariants": list(point.invariants)}


def _first_open_difference(expected: list[Any], actual: list[Any], masks: list[Any]) -> dict[str, Any]:
    """Output, index and both values of the first open element where actual differs (NaN equal to NaN)."""
    for k, (e, a, m) in enumerate(zip(expected, actual, masks)):
        if m is None:
            continue
        e, a = np.asarray(e), np.asarray(a)
        both_nan = (np.isnan(e.astype(np.float64)) & np.isnan(a.astype(np.float64))) if _is_float(e.dtype) else False
        with np.errstate(invalid="ignore"):
            same = (e == a) | both_nan
        differ = np.asarray(m & ~same)
        if differ.any():
            idx = tuple(int(i) for i in np.argwhere(differ)[0]) if differ.ndim else ()
            return {"output": k, "index": f"[{','.join(map(str, idx))}]", "expected": _fmt(e[idx]), "actual": _fmt(a[idx])}
    return {}


@np.errstate(invalid="ignore", over="ignore")
def _identical_floats(e: np.ndarray, a: np.ndarray, tol: Tolerance) -> bool:
    """Whether ``a`` holds exactly ``e``'s values (NaN where it has NaN, -0 and +0 alike: 0 ulps
    apart) in a numpy float dtype, judged without a per-element bound and with tolerances that
    accept a difference of 0: then :func:`_float_bad` would find every difference 0 and nothing bad."""
    if not (e.dtype.kind == "f" and getattr(tol, "elementwise", None) is None and tol.atol >= 0 and tol.rtol >= 0):
        return False
    # equal without NaN (one comparison), else equal with NaN where both have it (four more passes)
    return bool(np.array_equal(e, a)) or bool(np.array_equal(e, a, equal_nan=True))


def _float_bad(e: np.ndarray, a: np.ndarray, tol: Tolerance) -> tuple[np.ndarray, ...]:
    """Floats of one dtype: per element, bad (outside rtol/atol and ulp, NaN against a number, an
    infinity against another value), then NaN-bad, infinity-bad, abs and rel difference, ulps.
    Most outputs hold no NaN or infinity on either side: they skip the masking."""
    e64, a64 = e.astype(np.float64), a.astype(np.float64)
    if np.isfinite(e64).all() and np.isfinite(a64).all():
        finite = None
        nan_bad, inf_bad = np.zeros(e.shape, bool), np.zeros(e.shape, bool)
        diff, ez, az = np.abs(a64 - e64), e, a
    else:
        e_nan, a_nan = np.isnan(e64), np.isnan(a64)
        nan_bad = e_nan != a_nan
        e_inf, a_inf = np.isinf(e64), np.isinf(a64)
        inf_bad = (e_inf | a_inf) & ~(e_nan | a_nan) & (e64 != a64)
        finite = ~(e_nan | a_nan | e_inf | a_inf)
        diff = np.where(finite, np.abs(a64 - e64), 0.0)
        e64 = np.where(finite, e64, 0.0)
        ez, az = np.where(finite, e, 0).astype(e.dtype), np.where(finite, a, 0).astype(a.dtype)
    allowed = tol.atol + tol.rtol * np.abs(e64)
    extra = getattr(tol, "elementwise", None)  # a bound derived per element (harness/tolerances.py)
    if extra is not None:
        if np.shape(extra) != e.shape:
            raise ValueError(f"a tolerance bound of shape {list(np.shape(extra))} for an output of shape {list(e.shape)}")
        extra = np.asarray(extra, dtype=np.float64)
        allowed = allowed + (extra if finite is None else np.where(finite, extra, 0.0))
    close = diff <= allowed
    ulps = np.zeros(e.shape)
    if e.size and (finite is None or finite.any()):
        ulps = ulp_distance(ez, az) if finite is None else np.where(finite, ulp_distance(ez, az), 0.0)
        if tol.ulp is not None:
            close |= ulps <= tol.ulp
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # over a subnormal a difference is inf relative
        rel = np.where(e64 != 0, diff / np.abs(e64), np.where(diff > 0, np.inf, 0.0))
    bad = nan_bad | inf_bad | (~close if finite is None else finite & ~close)
    return bad, nan_bad, inf_bad, diff, rel, ulps


def _any_mask(masks: list[Any], shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, bool)
    for m in masks:
        if m is not None:
            out |= m
    return out


def _close(e: np.ndarray, a: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Per element, whether ``a`` matches ``e`` as ``Comparator.compare`` judges it (floats within
    the tolerance, NaN matching NaN; other types equal); all False when shape or dtype differ."""
    if e.shape != a.shape or (e.dtype.kind in "OUS") != (a.dtype.kind in "OUS") or (e.dtype.kind not in "OUS" and e.dtype != a.dtype):
        return np.zeros(e.shape, bool)
    if e.dtype.kind in "OUS":
        return _as_str(e) == _as_str(a)
    if not _is_float(e.dtype):
        return e == a
    return ~_float_bad(e, a, tol)[0]


def _as_str(x: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v), otypes=[object])(x)


def _fmt(v: Any) -> str:
    """A value printed at its own precision (float32 3.1 prints as 3.1)."""
    if isinstance(v, np.generic):
        return str(v) if v.dtype.kind != "O" else repr(v)
    return repr(v)
