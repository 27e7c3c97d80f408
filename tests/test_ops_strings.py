"""Strings: spec text and hand-written values against our references."""

import numpy as np

from operator_cases.regex_full_match import regex_full_match
from operator_cases.string_concat import string_concat
from operator_cases.string_normalizer import string_normalizer
from operator_cases.string_split import string_split


def s(*v):
    return np.array(v, dtype=object)


def test_split_consecutive_delimiters_and_padding():
    y, z = string_split(s("a,,b", "c"), delimiter=",")
    assert y.tolist() == [["a", "", "b"], ["c", "", ""]] and z.tolist() == [3, 1]


def test_split_whitespace_and_maxsplit():
    y, z = string_split(s("  a \t b\nc  "))
    assert y.tolist() == [["a", "b", "c"]] and z.tolist() == [3]
    y, z = string_split(s("a,b,c"), delimiter=",", maxsplit=1)
    assert y.tolist() == [["a", "b,c"]] and z.tolist() == [2]


def test_normalizer_stopwords_case_and_all_dropped():
    out = string_normalizer(s("Monday", "tuesday", "MONDAY"), stopwords=["monday"], case_change_action="UPPER")
    assert out.tolist() == ["TUESDAY"]
    out = string_normalizer(s("Monday", "tuesday", "MONDAY"), stopwords=["Monday"], is_case_sensitive=1)
    assert out.tolist() == ["tuesday", "MONDAY"]
    out = string_normalizer(s("a", "b").reshape(1, 2), stopwords=["A", "B"])
    assert out.shape == (1, 1) and out.tolist() == [[""]]


def test_regex_full_match_is_anchored():
    assert regex_full_match(s("ab", "abc", "xab"), pattern="a+b*").tolist() == [True, False, False]


def test_concat_broadcasts():
    assert string_concat(s("a", "b").reshape(2, 1), s("1", "2")).tolist() == [["a1", "a2"], ["b1", "b2"]]
