"""The spec-silent points of Mish, HardSwish and Softsign at infinity: at an infinite input
the function's limit (our choice) and the formula read literally (NaN) are both accepted, as
``pass`` and ``unspecified``; any other value there is a mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from harness.worker import execute_case
from harness.registry import REGISTRY, Example, load_all
from harness.suites.operators import build_case

from .seeded_faults import _kernel, _Kernels

INF = np.inf

CASES = [  # op, since, input, our value, its function
    ("Mish", 18, [-INF, 1.0], [0.0, 1.0 * np.tanh(np.log1p(np.e))]),
    ("HardSwish", 14, [-INF, 1.0], [0.0, 1.0 * (1.0 / 6.0 + 0.5)]),
    ("Softsign", 22, [-INF, INF, 1.0], [-1.0, 1.0, 0.5]),
]
#: the point each op declares at infinity (Mish and HardSwish: at -inf, literal_at_infinity)
POINT = {"Mish": "Mish.neg_inf", "HardSwish": "HardSwish.neg_inf", "Softsign": "Softsign.infinity"}


def backend_giving(op: str, value: float) -> _Kernels:
    """A backend whose ``op`` is right at finite inputs and gives ``value`` at infinite ones."""
    load_all()

    def run(self, x, **_):
        finite = REGISTRY[("", op, 22)].reference(np.where(np.isinf(x), 0, x))
        return np.where(np.isinf(x), value, np.asarray(finite)).astype(x.dtype),

    return type(f"{op}-{value}", (_Kernels,), {"name": f"{op.lower()}-gives-{value}",
                                              "kernels": (_kernel(op, run),)})()


def case_for(op: str, since: int, x: list[float]):
    load_all()
    return build_case(REGISTRY[("", op, since)], Example([np.array(x, np.float32)], name="inf"), "float32", since, "inf")


@pytest.mark.parametrize("op,since,x,ours", CASES)
def test_a_case_at_infinity_is_tagged_and_our_limit_passes(op, since, x, ours):
    case = case_for(op, since, x)
    assert case.tags["spec_silent"] == [POINT[op]]
    limits = [v for v, xi in zip(ours, x) if np.isinf(xi)]
    result = execute_case(backend_giving(op, limits[0]) if len(set(limits)) == 1 else _limit_backend(op), case)
    assert result.outcome == "pass", result.message


def _limit_backend(op: str) -> _Kernels:
    """Softsign's two limits: -1 at -inf, +1 at +inf."""
    def run(self, x, **_):
        with np.errstate(invalid="ignore"):
            return np.where(np.isinf(x), np.sign(x), x / (1 + np.abs(x))).astype(x.dtype),

    return type("softsign-limits", (_Kernels,), {"name": "softsign-limits", "kernels": (_kernel(op, run),)})()


@pytest.mark.parametrize("op,since,x,ours", CASES)
def test_the_literal_formula_nan_is_unspecified(op, since, x, ours):
    result = execute_case(backend_giving(op, np.nan), case_for(op, since, x))
    assert result.outcome == "unspecified", result.message
    assert result.verdict["spec_silent"]["point"] == POINT[op]


@pytest.mark.parametrize("op,since,x,ours", CASES)
@pytest.mark.parametrize("wrong", [5.0, INF, 0.5])
def test_any_other_value_at_infinity_is_a_mismatch(op, since, x, ours, wrong):
    result = execute_case(backend_giving(op, wrong), case_for(op, since, x))
    assert result.outcome == "mismatch", result.message
    assert "matched none of its readings" in result.message, result.message
