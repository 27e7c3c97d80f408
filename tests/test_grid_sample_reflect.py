"""GridSample's reflection in our reference, checked against points reflected by hand from the spec's rule.

The spec (GridSample): "reflection: use values at locations reflected by the border for out-of-bound
grid locations. [...] For location far away from the border, it will keep being reflected until
becoming in bound. If pixel location x = -3.5 reflects by border -1 and becomes x' = 1.5, then
reflects by border 1 and becomes x'' = 0.5."  Every expected value below was reflected by hand,
one border at a time, and is written as a literal.
"""

import numpy as np
import pytest

from operator_cases.tensor.grid_sample import _reflect

CASES = [
    # the spec's own example: borders -1 and 1
    (-3.5, -1.0, 1.0, 0.5),    # by -1: 1.5; by 1: 0.5
    # align_corners=0 on an axis of 4 pixels: borders -0.5 and 3.5
    (1.25, -0.5, 3.5, 1.25),   # in bound: unchanged
    (-0.5, -0.5, 3.5, -0.5),   # on the border
    (3.5, -0.5, 3.5, 3.5),     # on the other border
    (-1.0, -0.5, 3.5, 0.0),    # by -0.5: 0.0
    (4.0, -0.5, 3.5, 3.0),     # by 3.5: 3.0
    (8.0, -0.5, 3.5, 0.0),     # by 3.5: -1.0; by -0.5: 0.0
    (-5.0, -0.5, 3.5, 3.0),    # by -0.5: 4.0; by 3.5: 3.0
    (11.5, -0.5, 3.5, 3.5),    # by 3.5: -4.5; by -0.5: 3.5 (lands on the border)
    (-9.0, -0.5, 3.5, 0.0),    # by -0.5: 8.0; by 3.5: -1.0; by -0.5: 0.0
    # align_corners=1 on an axis of 3 pixels: borders 0 and 2
    (-1.0, 0.0, 2.0, 1.0),     # "the reflected value at index -1 will be the same as the value at index 1"
    (2.5, 0.0, 2.0, 1.5),      # by 2: 1.5
    (5.0, 0.0, 2.0, 1.0),      # by 2: -1.0; by 0: 1.0
    (-4.0, 0.0, 2.0, 0.0),     # by 0: 4.0; by 2: 0.0
    # one pixel with align_corners=1: the borders coincide, only the border remains
    (7.0, 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize("x, lo, hi, expected", CASES)
def test_reflect_matches_hand_reflection(x, lo, hi, expected):
    got = _reflect(np.array([x]), lo, hi)
    assert got.tolist() == [expected]


def test_reflect_keeps_a_nonfinite_location_out_of_every_pixel():
    # an infinite location is reflected without end and never comes in bound; NaN stays NaN
    got = _reflect(np.array([np.inf, -np.inf, np.nan]), -0.5, 3.5)
    assert np.isnan(got).all()
