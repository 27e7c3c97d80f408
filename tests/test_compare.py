import ml_dtypes
import numpy as np
import pytest

from harness.case import Tolerance
from harness.compare import Comparator, ulp_distance

C = Comparator()
TOL = Tolerance(rtol=1e-3, atol=1e-7)


def verdict(e, a, tol=TOL, **kw):
    return C.compare([e], [a], tol, **kw)


def test_equal_floats_pass():
    x = np.array([1.0, 2.5, -3.0], np.float32)
    v = verdict(x, x.copy())
    assert v and v.outcome == "pass" and v.max_abs == 0


def test_values_off_are_a_mismatch_with_statistics():
    e = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    a = e.copy()
    a[2] = 3.1
    v = verdict(e, a)
    assert not v and v.outcome == "mismatch"
    assert v.bad_count == 1 and v.first_bad == "[2]"
    assert v.max_abs == pytest.approx(0.1, rel=1e-5)
    assert v.max_rel == pytest.approx(0.1 / 3, rel=1e-4)
    assert "got 3.1" in v.message and "expected 3.0" in v.message


def test_nan_must_be_in_the_same_places():
    e = np.array([np.nan, 1.0], np.float32)
    assert verdict(e, e.copy())
    v = verdict(e, np.array([0.0, 1.0], np.float32))
    assert v.outcome == "mismatch" and v.nan_mismatch == 1 and "NaN" in v.message
    assert not verdict(np.array([1.0], np.float32), np.array([np.nan], np.float32))


def test_infinities_need_the_same_sign():
    e = np.array([np.inf, -np.inf], np.float32)
    assert verdict(e, e.copy())
    v = verdict(e, np.array([np.inf, np.inf], np.float32))
    assert v.outcome == "mismatch" and "infinity" in v.message
    assert not verdict(np.array([np.inf], np.float32), np.array([3.4e38], np.float32))


def test_negative_zero_equals_zero_and_is_zero_ulps_away():
    e = np.array([0.0], np.float32)
    a = np.array([-0.0], np.float32)
    assert verdict(e, a, Tolerance(0, 0))
    assert ulp_distance(e, a)[0] == 0


def test_ulp_distance_and_ulp_tolerance():
    e = np.array([1.0], np.float32)
    a = np.nextafter(np.nextafter(e, np.float32(2)), np.float32(2))
    assert ulp_distance(e, a)[0] == 2
    assert ulp_distance(np.array([-1.0], np.float32), np.array([1.0], np.float32))[0] == 2 * 0x3F800000
    strict = Tolerance(rtol=0, atol=0, ulp=1)
    assert not verdict(e, a, strict)
    assert verdict(e, a, Tolerance(rtol=0, atol=0, ulp=2))
    assert verdict(e, a, strict).max_ulp == 2


def test_float16_and_bfloat16():
    e16 = np.array([1.0, 2.0], np.float16)
    a16 = np.array([1.0, np.nextafter(np.float16(2), np.float16(3))], np.float16)
    v = verdict(e16, a16, Tolerance(0, 0, ulp=0))
    assert v.outcome == "mismatch" and v.max_ulp == 1
    bf = ml_dtypes.bfloat16
    e = np.array([1.0, 1.5, -2.0], bf)
    a = np.array([1.0, 1.5078125, -2.0], bf)  # one bfloat16 step above 1.5
    v = verdict(e, a, Tolerance(0, 0, ulp=1))
    assert v and v.max_ulp == 1
    assert verdict(e, a, Tolerance(0, 0, ulp=0)).outcome == "mismatch"
    assert verdict(e, e.astype(np.float32)).outcome == "wrong-dtype"


def test_float8_ulps_use_the_format_itself():
    f8 = ml_dtypes.float8_e4m3fn
    e = np.array([1.0], f8)
    a = np.array([1.125], f8)  # the next representable e4m3 value
    assert ulp_distance(e, a)[0] == 1


def test_integers_bools_and_strings_are_exact():
    assert verdict(np.array([1, 2], np.int64), np.array([1, 2], np.int64))
    v = verdict(np.array([1, 2], np.int64), np.array([1, 3], np.int64), Tolerance(rtol=1, atol=10))
    assert v.outcome == "mismatch" and v.bad_count == 1
    assert verdict(np.array([True]), np.array([False])).outcome == "mismatch"
    s = np.array(["a", "b"], dtype=object)
    assert verdict(s, np.array(["a", "b"], dtype=object))
    assert verdict(s, np.array([b"a", b"b"], dtype=object))
    assert verdict(s, np.array(["a", "c"], dtype=object)).outcome == "mismatch"


def test_dtype_and_shape_are_exact():
    e = np.zeros((2, 3), np.float32)
    assert verdict(e, np.zeros((2, 3), np.float64)).outcome == "wrong-dtype"
    assert verdict(e, np.zeros((3, 2), np.float32)).outcome == "wrong-shape"
    assert verdict(np.zeros((), np.float32), np.zeros((1,), np.float32)).outcome == "wrong-shape"
    assert verdict(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))


def test_sequences_and_optionals():
    seq = [np.array([1.0], np.float32), np.array([2.0, 3.0], np.float32)]
    assert verdict(seq, [s.copy() for s in seq])
    v = verdict(seq, [seq[0], np.array([2.0, 4.0], np.float32)])
    assert v.outcome == "mismatch" and v.message.startswith("output 0: element 1")
    assert verdict(seq, seq[:1]).outcome == "wrong-shape"
    assert verdict(None, None)
    assert verdict(None, np.array([1.0], np.float32)).outcome == "mismatch"
    assert verdict(np.array([1.0], np.float32), None).outcome == "mismatch"


def test_output_count_must_match():
    x = np.array([1.0], np.float32)
    assert C.compare([x], [x, x], TOL).outcome == "mismatch"


def test_random_ops_are_checked_by_range_not_value():
    e = np.array([0.0, 1.0, 1.0], np.float32)
    assert verdict(e, np.array([1.0, 0.0, 0.0], np.float32), random_op="Bernoulli")
    assert verdict(e, np.array([0.5, 0.0, 0.0], np.float32), random_op="Bernoulli").outcome == "mismatch"
    u = np.array([0.2, 0.4], np.float32)
    assert verdict(u, np.array([0.9, 0.1], np.float32), random_op="RandomUniform", attrs={"low": 0.0, "high": 1.0})
    assert not verdict(u, np.array([1.5, 0.1], np.float32), random_op="RandomUniform", attrs={"low": 0.0, "high": 1.0})
