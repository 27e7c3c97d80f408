"""SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of log(softmax(scores)) along the class
axis 1 (ONNX spec: SoftmaxCrossEntropyLoss-12, 13).

``log_prob = Log(Softmax(scores))`` over axis 1 (the optional second output), then
``l[i][d..] = -log_prob[i][c][d..] * weights[c]``, 0 where the label equals ignore_index, and the
reduction (none / sum / mean); -13 adds bfloat16. Evaluated in float64: the log-softmax as
(x - m) - log(sum(exp(x - m))) with m the class maximum (a row holding NaN or +inf is NaN
throughout, the formula's IEEE result), the loss and its sums, each output rounded once.

Spec-silent (declared in _loss_util): 'mean' where some label is ignored: the doc says
"ReduceMean(L)" without weights, the attribute "divided by the number of elements in the output",
and with weights "ReduceSum(L) / ReduceSum(W)". We divide by the summed weights of the samples not
ignored (weights all ones when absent), as NegativeLogLikelihoodLoss's attribute and PyTorch do.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Operator

from .._common import TINY, back, gamma, rounded_reach, rounds, unit, wide
from ._loss_util import _ignored, declare_loss, picked_loss

op = Operator("SoftmaxCrossEntropyLoss", type_param="T")
VERSIONS = (12, 13)


def log_softmax_classes(scores: np.ndarray) -> np.ndarray:
    x = wide(scores)
    if x.shape[1] == 0:
        return x
    with np.errstate(all="ignore"):
        m = np.max(x, axis=1, keepdims=True)
        z = x - m
        return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))


@op.reference(*VERSIONS)
def softmax_cross_entropy_loss(scores, labels, weights=None, *, ignore_index=None, reduction="mean"):
    logp = log_softmax_classes(scores)
    with np.errstate(all="ignore"):
        return back(picked_loss(logp, labels, weights, ignore_index, reduction), scores), back(logp, scores)


def rounding_bound(inputs, attrs, since) -> list[np.ndarray]:
    """Per output, how far an evaluation of the function body in T (it names no other precision:
    LogSoftmax, then NegativeLogLikelihoodLoss, every step rounded at T's unit roundoff u, 2**-11
    for float16, 2**-8 for bfloat16) lands from our value (float64, rounded once), element by
    element, to first order in u (gamma_n = n u / (1 - n u)), over the C classes of a sample (a
    step whose exact result is representable and whose operands carry no error yet rounds
    nothing, ``_common.rounds``: exp(0) = 1, a one-class softmax is 1, its log 0):

    * z_j = x_j - max: one rounding, dz_j = u |z_j|;
    * S = sum_j exp(z_j): each exponential off by e_j = dz_j + u + t / exp(z_j) relatively (t half
      T's smallest subnormal, lost where exp(z_j) is subnormal), the C - 1 additions by
      gamma_(C-1): dS / S <= sum_j p_j e_j + gamma_(C-1), p = softmax(x);
    * the spec's y = Log(p) with p = Softmax(scores) may be read literally, p_j = exp(z_j) / S
      rounded in T (off by e_j + dS / S + u relatively, and by t absolutely where p_j is
      subnormal: t / p_j relatively, the log's condition there), then its log; or as LogSoftmax,
      z_j - log(S), off by dz_j + dS / S + u |log S|: log_prob_j is within the sum of the two
      before its last rounding;
    * the loss of a sample, l = -w[t] log_prob_t (0 where ignored): |w| (that error + u |log_prob_t|)
      (the log-probability's rounding) before the product's rounding;
    * 'sum': those errors summed, plus u sum |l| (the products) and gamma_(K-1) sum |l| (the K-term
      sum); 'mean': that over |W| = |sum of the applied weights|, plus |mean| gamma_(K-1) sum |w| / |W|
      (W's own sum), before the division's rounding.

    Each output's last rounding then meets our oracle's one rounding (``_common.rounded_reach``)."""
    scores, labels = inputs[0], inputs[1]
    weights = inputs[2] if len(inputs) > 2 else None
    x = wide(scores)
    u, tiny = unit(scores), TINY[S.label_of(np.asarray(scores).dtype)] / 2
    reduction = attrs.get("reduction", "mean")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    logp = log_softmax_classes(scores)
    loss = picked_loss(logp, labels, weights, attrs.get("ignore_index"), reduction)
    c = x.shape[1]
    if c == 0 or x.size == 0:
        return [np.zeros(np.shape(loss)), np.zeros(x.shape)]
    with np.errstate(all="ignore"):
        z = x - np.max(x, axis=1, keepdims=True)
        dz = rounds(z, scores) * np.abs(z)
        e_rel = dz + rounds(np.exp(z), scores, dz) + tiny / np.exp(z)  # a subnormal exp(z) loses up to t
        p = np.exp(logp)
        d_s = np.sum(p * e_rel, axis=1, keepdims=True) + gamma(c - 1, u)
        p_rel = e_rel + d_s + rounds(p, scores, e_rel + d_s)
        log_s = z - logp
        lp_err = dz + d_s + rounds(log_s, scores, d_s) * np.abs(log_s) + p_rel + tiny / p
        t = np.asarray(labels).astype(np.int64)
        ignored = _ignored(t, attrs.get("ignore_index"))
        safe = np.where(ignored, 0, t)
        w = np.ones(t.shape) if weights is None else wide(weights)[safe]
        w = np.where(ignored, 0.0, w)
        pick = lambda a: np.take_along_axis(a, safe[:, None], axis=1)[:, 0]  # noqa: E731
        l_err = np.abs(w) * (pick(lp_err) + u * np.abs(pick(logp)))
        per = np.where(ignored, 0.0, -pick(logp) * w)
        k = per.size
        if reduction == "none":
            err = l_err
        else:
            err = np.sum(l_err) + (u + gamma(k - 1, u)) * np.sum(np.abs(per))
            if reduction == "mean":
                total = abs(float(np.sum(w)))
                err = err / total + np.abs(loss) * gamma(k - 1, u) * float(np.sum(np.abs(w))) / total
    return [rounded_reach(loss, err, scores), rounded_reach(logp, lp_err, scores)]


declare_loss(op, VERSIONS, logits=True, logp_of=lambda inputs: log_softmax_classes(inputs[0]), mean_spec={
    12: "If reduction = 'mean', the output is scalar: ReduceMean(L), or if weight is provided: ReduceSum(L) / ReduceSum(W), "
        "where tensor W is of shape (N, D1, D2, ..., Dk) and W[n][d1][d2]...[dk] = weights[labels[i][d1][d2]...[dk]].",
    13: "If reduction = 'mean', the output is scalar: ReduceMean(L), or if weight is provided: `ReduceSum(L) / ReduceSum(W)`, "
        "where tensor W is of shape `(N, D1, D2, ..., Dk)` and `W[n][d1][d2]...[dk] = weights[labels[i][d1][d2]...[dk]]`."})


def _open_samples(inputs, attrs, expected, since):
    """Samples whose class scores hold +inf or are all -inf (where exp(x - max) is inf - inf)."""
    x = wide(inputs[0])
    if x.shape[1] == 0:
        return [None] * len(expected)
    with np.errstate(all="ignore"):
        open_ = np.any(x == np.inf, axis=1) | np.all(x == -np.inf, axis=1)
    reduction = attrs.get("reduction", "mean")
    loss = open_ if reduction == "none" else np.full(np.shape(expected[0]), bool(open_.any()))
    masks = [loss]
    if len(expected) > 1:
        masks.append(np.broadcast_to(np.expand_dims(open_, 1), np.shape(expected[1])))
    return masks


op.spec_silent(
    "inf_scores", VERSIONS,
    spec="p = Softmax(scores) [...] y = Log(p)",
    expected="NaN for a sample whose class scores hold +inf or are all -inf (Softmax's exp(x - max) is exp(inf - inf)), "
             "and in every reduction over it: the formula in IEEE 754 arithmetic, as LogSoftmax's spec-silent point",
    where=_open_samples,
    invariants={"every log-probability is NaN or <= 0": lambda c: len(c.actual) < 2 or bool(np.all(
        np.isnan(np.asarray(c.actual[1]).astype(np.float64)[c.masks[1]]) | (np.asarray(c.actual[1]).astype(np.float64)[c.masks[1]] <= 0)))},
    readings={"the mathematical limit of log-softmax (+inf classes share the mass, a row of -inf is uniform; the loss "
              "of each sample, reduction 'none' only)": lambda c: _limit(c)})


def _limit(c) -> list:
    """The loss and log-probabilities with each open sample's log-softmax at its limit (computed on scores rewritten
    so that the formula gives it: +inf to 0 and the rest to -inf, or a row of -inf to 0)."""
    x = np.asarray(c.inputs[0])
    with np.errstate(all="ignore"):
        shared = np.where(np.isnan(x), x, np.where(np.isposinf(x), np.zeros((), x.dtype), np.asarray(-np.inf, x.dtype)))
        uniform = np.where(np.isneginf(x), np.zeros((), x.dtype), x)
        one, two = (c.reference(s, *c.inputs[1:], **c.attrs) for s in (shared, uniform))
    out = []
    for k, e in enumerate(c.expected):
        y1, y2 = np.asarray(one[k]).astype(np.float64), np.asarray(two[k]).astype(np.float64)
        whole = k == 1 or c.attrs.get("reduction", "mean") == "none"
        out.append(np.where(np.isnan(y1), y2, y1).astype(np.asarray(e).dtype) if whole else None)
    return out
