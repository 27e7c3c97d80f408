"""Inputs the operator cases used to avoid, now drawn as spec-silent points (issue 32, "draw what
is still avoided"): each point accepts our choice (pass) and its named readings (unspecified),
and any other value there is a mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from harness.execute import execute_case
from harness.registry import REGISTRY, Example, load_all
from harness.suites.operators import build_case

from .seeded_faults import _kernel, _Kernels


def fixed(op, value):
    """A backend whose ``op`` kernel returns ``value`` whatever its inputs."""
    return type(f"Fixed{op}", (_Kernels,), {"name": f"fixed-{op.lower()}", "kernels": (_kernel(op, lambda self, *a, **k: (value,)),)})()


def pow_case(base, exponent, dtype="int32", exp_dtype="int32", since=15):
    load_all()
    example = Example([np.array(base, dtype), np.array(exponent, exp_dtype)], name="edge")
    return build_case(REGISTRY[("", "Pow", since)], example, dtype, since, "edge")


BASES = [-3, -2, -1, 1, 2, 3]


@pytest.mark.parametrize("got, outcome", [
    ([0, 0, -1, 1, 0, 0], "pass"),              # the real result truncated toward zero (ours)
    ([0, -1, -1, 1, 0, 0], "unspecified"),      # rounded toward -inf
    ([0, 0, 1, 1, 0, 0], "mismatch"),           # (-1)^-1 is -1 in every reading
    ([-2147483648, 0, -1, 1, 0, 0], "mismatch"),
])
def test_pow_negative_integer_exponent(got, outcome):
    case = pow_case(BASES, -1)
    assert case.tags["spec_silent"] == ["Pow.int_negative_exponent"]
    assert execute_case(fixed("Pow", np.array(got, np.int32)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [(-2**31, "pass"), (2**31 - 1, "unspecified"), (0, "mismatch")])
def test_pow_zero_to_a_negative_exponent(got, outcome):
    case = pow_case([0], [-2], exp_dtype="float32")
    assert case.tags["spec_silent"] == ["Pow.int_zero_negative_exponent"]
    assert execute_case(fixed("Pow", np.array([got], np.int32)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [
    ([2**62, 3**39, 0], "pass"),                                      # 2^64 wraps to 0
    ([2**62, 3**39, 2**63 - 1], "unspecified"),                       # saturated
    ([2**62, 3**39, -2**63], "unspecified"),                          # through double, x86's conversion
    ([2**62, 3**39, 1], "mismatch"),
    ([2**62, 3**39 - 11, 0], "mismatch"),                             # an in-range power is exact
])
def test_pow_integer_overflow(got, outcome):
    case = pow_case([2, 3, 2], [62, 39, 64], dtype="int64", exp_dtype="int64")
    assert case.tags["spec_silent"] == ["Pow.int_overflow"]
    assert execute_case(fixed("Pow", np.array(got, np.int64)), case).outcome == outcome
