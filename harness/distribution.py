"""Tests of a random op's output against the distribution its spec gives (the comparator's
``RandomOutput`` check): goodness of fit (a Kolmogorov-Smirnov distance with the DKW bound), the
spread of a normal sample (chi-square), counts of ones (exact Poisson-binomial) and of classes
(exact binomial). Each returns its p-value and states its power: the smallest error it detects
with probability ``POWER`` at its sample size, against the faults of ``TARGETS``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: the probability with which each distribution test must detect the faults of ``TARGETS``
POWER = 0.99
#: the faults each op's tests must see with probability ``POWER`` (issue 31), as the effect its
#: statistic sees; a sample that cannot is not checked:
#: - RandomNormal at half the scale: a variance ratio of 1/4 (the mean alone, zero spread, is ratio 0);
#:   and at 1.05 times the scale (x * 1.05 + 0.01 of a right sample): a variance ratio of 1.1025 about
#:   the spec's mean (the shift 0.05 mean + 0.01 only adds its square over scale^2 to it);
#: - RandomUniform at the midpoint and RandomNormal at the mean alone: a point mass, at a
#:   Kolmogorov-Smirnov distance of 1/2 less the probability of a rounding step: 0.4 asked;
#: - Bernoulli deterministic where p > 1/2 (1 there), and Multinomial always the argmax: a rate of
#:   ones (a class's frequency) off by 1/4 where the probabilities are spread over (0, 1).
#: A sample is checked from 11,222 values (RandomNormal: the ratio 1.1025; 1/4 alone takes 115), 111 (RandomUniform), 293 elements in each
#: group of p (Bernoulli), 318 samples a row with 15 open cells (Multinomial); the strategies
#: draw more (operator_cases/_random_util.py, bernoulli.py, multinomial.py).
TARGETS = {"variance_ratio": 0.25, "variance_ratio_up": 1.1025, "ks_distance": 0.4, "rate": 0.25}


def _binomial(k: int, n: int, p: float) -> tuple[float, str]:
    """Two-sided exact binomial test, the central p-value (twice the smaller exact tail): a valid
    level-alpha test, as scipy.stats.binomtest's likelihood-ordered one is. The tails come from
    scipy.special, so that a worker judging a Dropout does not import all of scipy.stats (half a
    second a worker)."""
    from scipy import special

    tail = min(float(special.bdtr(k, n, p)), float(special.bdtrc(k - 1, n, p)) if k > 0 else 1.0)
    return min(1.0, 2 * tail), f"exact binomial test (doubled tail) of {k} kept of {n} at keep rate {p:g}"


@dataclass
class _Test:
    """One distribution test of a random output: its p-value and level (its share of ``ALPHA``),
    what it tested, whether its sample has the power ``TARGETS`` asks, and its power in words:
    the smallest error it detects with probability ``POWER`` at this sample size."""

    p: float
    level: float
    name: str
    powered: bool
    power: str


def _miss(n: int) -> float:
    """The deviation of a mean of n values in [0, 1] (an empirical CDF at one point, a rate of
    ones) from its expectation that is exceeded, against the error, with probability at most
    1 - POWER (Hoeffding, one-sided): how far beyond a test's threshold an error must lie to be
    detected with probability POWER."""
    return math.sqrt(math.log(1 / (1 - POWER)) / (2 * n))


def _fit(a: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray], dist: str, level: float) -> _Test:
    """Goodness of fit of the sample ``a`` (in its output type) to the spec's distribution (``cdf``),
    rounded to the output type by any rule that gives a neighbour (nearest, up or down): the
    largest distance D between the empirical CDF and every CDF such rounding can give. D is at
    most the Kolmogorov-Smirnov distance to the rounded distribution, so the
    Dvoretzky-Kiefer-Wolfowitz-Massart bound P(D > t) <= 2 exp(-2 n t^2) is a valid p-value for
    every output type and sample size.
    Power: a KS distance >= sqrt(ln(2 / level) / 2n) + _miss(n), plus the probability of one
    rounding step of the output type, is detected with probability POWER (at level 5e-7, n = 200:
    0.30, n = 1000: 0.135; a point mass, as a midpoint or a mean alone gives, is at distance 1/2;
    the 0.4 asked takes 115 values at level 5e-7, 111 at 1e-6)."""
    n = a.size
    srt = np.sort(a.ravel())
    x = srt.astype(np.float64)
    with np.errstate(over="ignore"):
        up = np.nextafter(srt, np.array(np.inf, srt.dtype)).astype(np.float64)
        down = np.nextafter(srt, np.array(-np.inf, srt.dtype)).astype(np.float64)
    below = np.searchsorted(x, x, side="left") / n  # F_n just below each value
    upto = np.searchsorted(x, x, side="right") / n  # F_n at each value
    with np.errstate(invalid="ignore"):
        d = float(max(0.0, np.max(upto - cdf(up)), np.max(cdf(down) - below)))
    p = min(1.0, 2 * math.exp(-2 * n * d * d))
    reach = math.sqrt(math.log(2 / level) / (2 * n)) + _miss(n)
    return _Test(p, level, f"Kolmogorov-Smirnov distance {d:.3g} to {dist} (DKW bound)", reach <= TARGETS["ks_distance"],
                 f"the fit test detects a KS distance >= {reach:.3g} (asked: {TARGETS['ks_distance']:g})")


@functools.lru_cache(maxsize=None)
def _spread_reach(n: int, level: float) -> tuple[float, float]:
    """The variance ratios (the sample's E[(x - mean)^2] over scale^2, of a normal sample) that the
    spread test at ``level`` detects with probability POWER: (<= low, >= high)."""
    from scipy import special

    low = special.chdtri(n, 1 - level / 2) / special.chdtri(n, 1 - POWER)  # chdtri: the upper-tail quantile
    high = special.chdtri(n, level / 2) / special.chdtri(n, POWER)
    return float(low), float(high)


def _spread(a: np.ndarray, mean: float, scale: float, level: float) -> _Test:
    """The spread of a normal sample: S = sum(((x - mean) / scale)^2) is chi-square with n degrees
    of freedom; two-sided, the doubled smaller tail. Each value of ``a`` (in its output type) came
    from somewhere between its two neighbours in that type (rounding by any rule that gives a
    neighbour, as in :func:`_fit`), so S is only known to lie between the smallest and the largest
    sum over those intervals: the lower tail is taken at the largest, the upper at the smallest. A
    bfloat16 value that rounded onto the mean is no zero spread (one such value alone: S in
    [0, (ulp / scale)^2], no evidence), while a sample of one value repeated n times is.
    Power: a normal sample whose variance is off by a ratio <= low or >= high (``_spread_reach``;
    at level 5e-7, n = 100: 0.33 and 2.68, n = 200: 0.46 and 2.03) is detected with probability
    POWER; half the scale (ratio 1/4) from 68 values, 1.05 times the scale (ratio 1.1025) from
    11,222 (n = 12,000: 0.909 and 1.099). The rounding intervals widen S by about 2^-7 of itself in
    bfloat16, 2^-10 in float16: far less than its spread at these sizes."""
    from scipy import special

    n = a.size
    flat = a.ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        down, up = (np.nextafter(flat, np.array(to, flat.dtype)).astype(np.float64) for to in (-np.inf, np.inf))
        near, far = np.minimum(np.abs(down - mean), np.abs(up - mean)) / scale, np.maximum(np.abs(down - mean), np.abs(up - mean)) / scale
        s_min = float(np.sum(np.where((down <= mean) & (mean <= up), 0.0, near) ** 2))  # an interval holding the mean: z may be 0
        s_max = float(np.sum(far ** 2))
    s = float(np.sum(((flat.astype(np.float64) - mean) / scale) ** 2))
    p = min(1.0, 2 * min(float(special.chdtr(n, s_max)), float(special.chdtrc(n, s_min))))
    low, high = _spread_reach(n, level)
    return _Test(p, level, f"chi-square test of the spread (sum of squared z = {s:.4g}, n = {n})", low >= TARGETS["variance_ratio"] and high <= TARGETS["variance_ratio_up"],
                 f"the spread test detects a variance ratio <= {low:.3g} or >= {high:.4g} "
                 f"(asked: <= {TARGETS['variance_ratio']:g} and >= {TARGETS['variance_ratio_up']:g})")


def _poisson_binomial_tails(probs: np.ndarray, k: int) -> tuple[float, float]:
    """P(X <= k) and P(X >= k) of a sum of independent Bernoulli(probs): exact, the binomial of
    each distinct probability convolved; past EXACT_ONES elements, Hoeffding's bounds of them."""
    from scipy import special

    if probs.size > EXACT_ONES:
        mean, m = float(probs.sum()), probs.size
        bound = lambda t: math.exp(-2 * t * t / m) if t > 0 else 1.0  # noqa: E731
        return bound(mean - k), bound(k - mean)
    pmf = np.ones(1)
    for q, c in zip(*np.unique(probs, return_counts=True)):
        j = np.arange(c + 1)
        log = special.gammaln(c + 1) - special.gammaln(j + 1) - special.gammaln(c - j + 1) + j * math.log(q) + (c - j) * math.log1p(-q)
        pmf = np.convolve(pmf, np.exp(log))
    return float(min(1.0, pmf[:k + 1].sum())), float(min(1.0, pmf[k:].sum()))


#: Bernoulli: the exact law of the count of ones up to this many elements (its convolutions grow
#: as the square), Hoeffding's bound past it (valid, weaker; the power stated is Hoeffding's anyway)
EXACT_ONES = 4096


def _ones(vals: np.ndarray, p: np.ndarray, level: float) -> list[_Test]:
    """The count of ones given p: among the elements of p in (0, 1/2], then of p in (1/2, 1) (the
    certain ones are fixed by the support check), the number of ones is tested exactly against
    its Poisson-binomial law (two-sided, the doubled smaller tail), ``level`` shared by the groups.
    Power: in a group of m elements, a rate of ones off by >= sqrt(ln(2 / level') / 2m) + _miss(m)
    (Hoeffding, which bounds the exact tails; level' the group's share) is detected with
    probability POWER (m = 400 at level 5e-7: 0.214; the 1/4 asked from 293 elements)."""
    p, vals = p.ravel(), vals.ravel()
    groups = [(name, (p > lo) & (p <= hi) & (p < 1)) for name, lo, hi in (("p in (0, 1/2]", 0.0, 0.5), ("p in (1/2, 1)", 0.5, 1.0))]
    groups = [(name, g) for name, g in groups if g.any()]
    out = []
    for name, g in groups:
        m, k, share = int(g.sum()), int(vals[g].sum()), level / len(groups)
        below, above = _poisson_binomial_tails(p[g], k)
        reach = math.sqrt(math.log(2 / share) / (2 * m)) + _miss(m)
        out.append(_Test(min(1.0, 2 * min(below, above)), share, f"exact test of the ones where {name} ({k} of {m}, expected {p[g].sum():.4g})",
                         reach <= TARGETS["rate"], f"where {name}: detects a rate of ones off by >= {reach:.3g} (asked: {TARGETS['rate']:g})"))
    return out


def _softmax(logits: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)


def _classes(probs: np.ndarray, samples: np.ndarray, level: float) -> list[_Test]:
    """Per row, the count of each class is binomial(sample_size, softmax(row)[class]): exact
    two-sided binomial tests (the doubled smaller tail), Bonferroni over the cells of probability
    in (0, 1) (a class of probability 0 or 1 is fixed by the support check).
    Power: a class frequency off by >= sqrt(ln(2 cells / level) / 2s) + _miss(s) is detected with
    probability POWER (s = 400 samples, 15 cells at level 1e-6: 0.223; the 1/4 asked from 318
    samples; always the argmax is off by 1 - its probability)."""
    from scipy import special

    open_ = (probs > 0) & (probs < 1)
    cells = int(open_.sum())
    if not cells:
        return []
    s = samples.shape[1]
    counts = np.stack([(samples == c).sum(axis=1) for c in range(probs.shape[1])], axis=1)
    upper = np.where(counts > 0, special.bdtrc(np.maximum(counts - 1, 0), s, probs), 1.0)  # P(X >= count)
    tails = np.where(open_, np.minimum(special.bdtr(counts, s, probs), upper), 1.0)
    p = float(min(1.0, 2 * tails.min() * cells))
    reach = math.sqrt(math.log(2 * cells / level) / (2 * s)) + _miss(s) if s else math.inf
    return [_Test(p, level, f"exact binomial tests of the class counts (Bonferroni over {cells})", reach <= TARGETS["rate"],
                  f"detects a class frequency off by >= {reach:.3g} (asked: {TARGETS['rate']:g})")]
