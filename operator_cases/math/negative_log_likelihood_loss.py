"""NegativeLogLikelihoodLoss: the (weighted) negative of the log-probability of each target
class, reduced (ONNX spec: NegativeLogLikelihoodLoss-12, 13, 22).

``loss[n][d..] = -input[n][c][d..] * weight[c]`` with ``c = target[n][d..]``; "loss is zero for
the case when target-value equals ignore_index" (any integer, negative included); reduction
none / sum / mean ("the sum of the output will be divided by the sum of applied weights"). -13
changes nothing we can see, -22 adds bfloat16. Evaluated in float64 (picked values, products and
sums) and rounded once.

Spec-silent (declared in _loss_util): 'mean' where some target is ignored. The doc's formula says
"mean(loss)" without weights (every element counted), the attribute "divided by the sum of applied
weights" (ignored samples weigh 0). We take the latter, as PyTorch's NLLLoss, which the doc cites.
"""

import numpy as np

from harness.registry import Operator

from .._common import back, wide
from ._loss_util import declare_loss, picked_loss

op = Operator("NegativeLogLikelihoodLoss", type_param="T")
VERSIONS = (12, 13, 22)


@op.reference(*VERSIONS)
def negative_log_likelihood_loss(x, target, weight=None, *, ignore_index=None, reduction="mean"):
    with np.errstate(all="ignore"):
        return back(picked_loss(wide(x), target, weight, ignore_index, reduction), x)


declare_loss(op, VERSIONS, logits=False, logp_of=lambda inputs: wide(inputs[0]),
             mean_spec="If \"reduction\" attribute is set to \"mean\" (the default attribute value), the output loss is "
                       "(weight) averaged: [...] mean(loss), if \"weight\" is not provided, [...] sum(loss) / "
                       "sum(weight[target[n][d_1][d_2]...[d_k]]]), for all samples.")
