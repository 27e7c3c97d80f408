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

from harness.registry import Operator

from ._common import back, wide
from ._loss_util import declare_loss, picked_loss

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
