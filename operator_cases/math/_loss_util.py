"""Shared by NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the loss of picked
log-probabilities, its reductions, the drawn and named examples, the spec-silent mean."""

from __future__ import annotations

import functools

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import ints

st = S.st
REDUCTIONS = ("none", "sum", "mean")


def _ignored(target: np.ndarray, ignore_index) -> np.ndarray:
    return target == int(ignore_index) if ignore_index is not None else np.zeros(target.shape, dtype=bool)


def picked_loss(logp: np.ndarray, target, weight=None, ignore_index=None, reduction="mean") -> np.ndarray:
    """``loss[n][d..] = -logp[n][c][d..] * weight[c]`` (0 where target == ignore_index), then the
    reduction; ``logp`` is float64 (the sums accumulate there), the result float64."""
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction {reduction!r} not one of {REDUCTIONS}")
    t = np.asarray(target).astype(np.int64)
    if logp.ndim < 2 or t.shape != (logp.shape[0],) + logp.shape[2:]:
        raise ValueError(f"input {logp.shape} and target {t.shape}: target must be (N, d1, ..., dk) of input (N, C, d1, ..., dk)")
    c = logp.shape[1]
    ignored = _ignored(t, ignore_index)
    if np.any(~ignored & ((t < 0) | (t >= c))):
        raise ValueError(f"a target outside [0, {c}) that is not ignore_index {ignore_index}")
    safe = np.where(ignored, 0, t)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w = np.ones(t.shape) if weight is None else np.asarray(weight).astype(np.float64)[safe]
    w = np.where(ignored, 0.0, w)
    loss = np.where(ignored, 0.0, -picked * w)  # "loss is zero" where ignored, whatever input holds there
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum())
    return np.asarray(loss.sum() / w.sum())  # the sum of applied weights (see the spec-silent point)


def mean_with_ignored(inputs, attrs, expected, since):
    """Where the spec's two readings of 'mean' differ: some target equals ignore_index."""
    reduction = attrs.get("reduction", "mean")
    t = np.asarray(inputs[1])
    hit = reduction == "mean" and bool(_ignored(t, attrs.get("ignore_index")).any())
    return [np.full(np.shape(e), hit) for e in expected[:1]] + [None] * (len(expected) - 1)


def _means(logp_of, c) -> list:
    """The mean reduction's three readings: the sum of the losses over the weights of the samples
    not ignored, over all the weights, over the element count."""
    logp = logp_of(c.inputs)
    t = np.asarray(c.inputs[1]).astype(np.int64)
    weight = c.inputs[2] if len(c.inputs) > 2 else None
    total = picked_loss(logp, t, weight, c.attrs.get("ignore_index"), "sum")
    ignored = _ignored(t, c.attrs.get("ignore_index"))
    w = np.ones(t.shape) if weight is None else np.asarray(weight).astype(np.float64)[np.where(ignored, 0, t)]
    with np.errstate(all="ignore"):
        return [total / np.where(ignored, 0.0, w).sum(), total / w.sum(), total / t.size]


def _either_mean(logp_of):
    def check(c) -> bool:
        got = float(np.asarray(c.actual[0]).astype(np.float64))
        return any(abs(got - o) <= 1e-2 * max(1.0, abs(o)) or (np.isnan(got) and np.isnan(o)) for o in _means(logp_of, c))
    return check


def _mean_over(logp_of, k: int):
    """The mean reduction's k-th reading (as ``_means`` lists them)."""
    def reading(c) -> list:
        value = _means(logp_of, c)[k]
        return [np.asarray(value).astype(np.asarray(c.expected[0]).dtype).reshape(np.shape(c.expected[0]))]
    return reading


def declare_loss(op: Operator, versions: tuple[int, ...], *, logits: bool, mean_spec: str | dict[int, str], logp_of) -> None:
    """NegativeLogLikelihoodLoss (``logits`` False: the inputs are log-probabilities) and
    SoftmaxCrossEntropyLoss (scores, ``logp_of`` their log-softmax): strategies, edges and the
    spec-silent mean over ignored samples, whose text in each version is ``mean_spec``."""
    op.spec_silent(
        "mean_with_ignored", versions, spec=mean_spec,
        expected="the sum of the losses divided by the sum of the weights of the samples not ignored "
                 "(ignored samples weigh 0, as the attribute's 'sum of applied weights' says and PyTorch's NLLLoss does); "
                 "NaN (0/0) when every sample is ignored",
        where=mean_with_ignored,
        invariants={"the output is the sum over the non-ignored weights, over all the weights, or over the element count":
                    _either_mean(logp_of)},
        readings={"the sum over all the weights (ignored samples weigh theirs)": _mean_over(logp_of, 1),
                  "the sum over the element count": _mean_over(logp_of, 2)})
    op.strategy(*versions)(functools.partial(_draw, logits=logits))
    op.edges(*versions)(functools.partial(_edges, logits=logits))


def _draw(d, dtype, opset, *, logits):
    return draw_example(d, dtype, opset, logits=logits)


def _edges(dtype, opset, *, logits):
    return edge_examples(dtype, logits=logits)


# -- examples ---------------------------------------------------------------------------------
def draw_example(d, dtype: str, opset: int, logits: bool) -> Example:
    """Input (N, C, d1..dk) with k in 0..2, target in [0, C) (sometimes ignore_index), weights,
    every reduction. ``logits``: scores of any sign (SCE); else log-probabilities (<= 0)."""
    n, c = d(st.integers(1, 3)), d(st.integers(1, 4))
    extra = tuple(d(st.lists(st.integers(1, 3), max_size=2)))
    x = S.arrays(d, dtype, shape=(n, c) + extra, lo=-8.0, hi=8.0 if logits else 0.0)
    tshape = (n,) + extra
    size = int(np.prod(tshape))
    attrs: dict = {}
    ignore = None
    if d(st.booleans()):
        ignore = d(st.sampled_from([-1, -100, 0, c - 1, c]))
        attrs["ignore_index"] = ignore
    pool = list(range(c)) + ([ignore] if ignore is not None and not 0 <= ignore < c else [])
    t = np.array(d(st.lists(st.sampled_from(pool), min_size=size, max_size=size)), dtype=np.int64).reshape(tshape)
    if d(st.integers(0, 3)):
        attrs["reduction"] = d(st.sampled_from(REDUCTIONS))
    weight = S.arrays(d, dtype, shape=(c,), lo=0.0, hi=2.0) if d(st.booleans()) else None
    out = None
    if logits and d(st.booleans()):
        out = 2  # log_prob too
    inputs = [x, ints(t, d(st.sampled_from(["int64", "int32"]))), weight]
    return Example(inputs, attrs, outputs=out)


def edge_examples(dtype: str, logits: bool) -> list[Example]:
    ev = S.edge_values(dtype)
    finite = ev[np.isfinite(ev.astype(np.float64))]
    x_spec = np.array([[[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]], [[0.0, 1.0], [2.0, 2.0], [1.0, 2]]]).astype(S.np_dtype(dtype))
    if not logits:
        x_spec = -x_spec
    t_spec = ints([[2, 1], [0, 2]])
    w_spec = np.array([0.2, 0.3, 0.1]).astype(S.np_dtype(dtype))
    specials = np.resize(ev, (len(ev), 2)) if logits else -np.abs(np.resize(ev, (len(ev), 2)))
    specials_t = ints(np.arange(len(ev)) % 2)
    two = 2 if logits else None
    out = []
    for red in REDUCTIONS:
        out += [Example([x_spec, t_spec], {"reduction": red}, name=f"spec_example_{red}", outputs=two),
                Example([x_spec, t_spec, w_spec], {"reduction": red}, name=f"spec_weighted_{red}", outputs=two),
                Example([x_spec, ints([[2, -1], [-1, 2]]), w_spec], {"reduction": red, "ignore_index": -1},
                        name=f"negative_ignore_index_{red}", outputs=two),
                Example([specials, specials_t], {"reduction": red}, name=f"specials_{red}", outputs=two)]
    big = np.resize(finite, (4, 3)) if logits else -np.abs(np.resize(finite, (4, 3)))
    out += [
        Example([x_spec, t_spec, w_spec], {"reduction": "mean", "ignore_index": 1}, name="ignore_index_in_range"),
        Example([x_spec, ints([[5, 5], [5, 5]]), w_spec], {"ignore_index": 5}, name="all_ignored_mean"),  # 0/0
        Example([x_spec, ints([[5, 5], [5, 5]])], {"ignore_index": 5, "reduction": "sum"}, name="all_ignored_sum"),
        Example([x_spec, ints([[2, 1], [0, 2]], "int32"), w_spec], {"ignore_index": 2, "reduction": "none"}, name="int32_target_ignore"),
        Example([big, ints([0, 1, 2, 0])], {"reduction": "sum"}, name="extremes_sum"),
        Example([big, ints([0, 1, 2, 0]), np.zeros(3, dtype=S.np_dtype(dtype))], {"reduction": "mean"}, name="zero_weights_mean"),
        Example([np.zeros((0, 3), S.np_dtype(dtype)), np.zeros((0,), np.int64)], {"reduction": "none"}, name="empty_batch_none"),
        Example([np.zeros((0, 3), S.np_dtype(dtype)), np.zeros((0,), np.int64)], {"reduction": "sum"}, name="empty_batch_sum"),
        Example([np.zeros((2, 3, 0), S.np_dtype(dtype)), np.zeros((2, 0), np.int64)], {"reduction": "none"}, name="empty_spatial"),
        Example([np.resize(x_spec, (1, 3, 2, 2, 1)), ints([[[[0], [2]], [[1], [1]]]])], {"reduction": "mean"}, name="rank5"),
    ]
    if logits:
        out.append(Example([x_spec, t_spec], {"reduction": "none"}, name="log_prob_only_loss", outputs=1))
    return out
