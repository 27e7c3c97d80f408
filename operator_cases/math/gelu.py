"""Gelu: y = 0.5 * x * (1 + erf(x / sqrt(2))), or with approximate = "tanh"
y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), elementwise (ONNX spec: Gelu-20).

Computed in float64 in forms free of cancellation for negative x: 1 + erf(z) = erfc(-z) and
0.5 * (1 + tanh(z)) = sigmoid(2z). At -inf both formulas read literally give -inf * 0 = NaN,
while the functions tend to 0; we take the limit, and test -inf in an example of its own
("neg_inf"). ``approximate`` is drawn from absent / "none" / "tanh"; inputs from [-10, 10].
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import at_infinity, elementwise, erfc, literal_at_infinity, sigmoid, unary_template

op = Operator("Gelu")


def gelu(x, approximate="none"):
    if isinstance(approximate, bytes):
        approximate = approximate.decode()
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            y = x * sigmoid(2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))
        elif approximate == "none":
            y = 0.5 * x * erfc(-x / math.sqrt(2.0))
        else:
            raise ValueError(f"Gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return at_infinity(x, y, neg=0.0)


def draw_attrs(d, dtype):
    choice = d(S.st.sampled_from([None, "none", "tanh"]))
    return {} if choice is None else {"approximate": choice}


elementwise(op, (20,), gelu, lo=-10.0, hi=10.0, attrs=draw_attrs, edge_attrs=[{}, {"approximate": "tanh"}],
            isolate={"neg_inf": np.isneginf})


def gelu_literal(x, approximate="none"):
    """Gelu's formulas as written, in IEEE float64 (at -inf: -inf * 0 = NaN)."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2)))


literal_at_infinity(op, "neg_inf", (20,), gelu_literal, lambda x, attrs: np.isneginf(x),
                    expected="0, the limit of the function at -inf")


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"approximate": "tanh"}], nan=NAN_IEEE, ulps=16.0, bound=with_input)
