"""Hardmax: 1 at the first maximum, 0 elsewhere (ONNX spec: Hardmax-1, 11, 13).

Hardmax-1 and 11 coerce the input to 2-D at ``axis`` (default 1): the maximum is taken over
each row of that view, i.e. over all the dimensions from ``axis`` on together, so one element
per row is 1. Hardmax-13 takes it along the single dimension ``axis`` (default -1) and adds
bfloat16. Ties pick the first maximum in row-major order; -0.0 and 0.0 tie.

Spec-silent: a row holding NaN ("the first maximum value" does not say how NaN compares). We
take numpy's argmax (a NaN is the maximum, as IEEE 754-2019 maximum propagates it): the 1 at
the first NaN. Whatever a backend does, a row has exactly one 1 and zeros elsewhere, and the 1
stands at a NaN or at the largest non-NaN value.
"""

import numpy as np

from harness.registry import Operator

from .._silent_util import nan_ignored
from .._reduce_util import gaps_ok, hardmax_rows, register_softmax_like, row_mask, rows_hold, softmax_template

op = Operator("Hardmax")
register_softmax_like(op, hardmax_rows)


def one_hot(x, y):
    return ((y == 1).sum(-1) == 1) & ((y == 0).sum(-1) == y.shape[-1] - 1)


def at_nan_or_max(x, y):
    with np.errstate(all="ignore"):
        best = np.nanmax(np.where(np.isnan(x), -np.inf, x), axis=-1, keepdims=True, initial=-np.inf)
        return ((y == 1) & ~(np.isnan(x) | (x == best))).sum(-1) == 0


op.spec_silent(
    "nan_row", (1, 11, 13),
    spec={1: "The operator computes the hardmax (1 for the first maximum value, and 0 for all others) values for each layer in the batch",
          13: "Hardmax(element in input, axis) = 1 if the element is the first maximum value along the specified axis, 0 otherwise"},
    expected="1 at the first NaN of a row holding one: a NaN is the maximum (IEEE 754-2019 maximum, numpy.argmax)",
    where=lambda inputs, attrs, expected, since: [row_mask(inputs[0], attrs, since, lambda r: np.isnan(r).any(-1))],
    invariants={"a row has exactly one 1, zeros elsewhere": lambda c: rows_hold(c, one_hot),
                "the 1 stands at a NaN or at the largest non-NaN value": lambda c: rows_hold(c, at_nan_or_max)},
    readings=nan_ignored(-np.inf))


# how it enters a generated graph (harness.suites.generated)
softmax_template(op, jumps=True, ulps=0.0, stable=lambda ins, attrs, u: gaps_ok(ins[0], attrs.get("axis", -1), u))
