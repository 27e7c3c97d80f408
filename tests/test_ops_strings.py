"""Strings: spec text and hand-written values against our references."""

import numpy as np

from operator_cases.text.regex_full_match import regex_full_match
from operator_cases.text.string_concat import string_concat
from operator_cases.text.string_normalizer import string_normalizer
from operator_cases.text.string_split import string_split


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


def test_tfidf_spec_skip_example_and_weight_per_pooled_ngram():
    from operator_cases.nn.tf_idf_vectorizer import tf_idf_vectorizer as tfidf

    attrs = {"max_gram_length": 2, "min_gram_length": 2, "ngram_counts": [0, 0], "ngram_indexes": [1, 0], "mode": "TF"}
    x = np.array([94, 17, 36, 12, 28], np.int64)
    # skip 2: the 2-grams [94, 12] and [17, 28] (the spec's text)
    assert tfidf(x, max_skip_count=2, pool_int64s=[94, 12, 17, 28], **attrs).tolist() == [1.0, 1.0]
    assert tfidf(x, max_skip_count=0, pool_int64s=[94, 12, 17, 28], **attrs).tolist() == [0.0, 0.0]
    # weights follow the pooled n-gram, not the output coordinate: [94, 17] (pool 0) lands at Y[1]
    attrs = {**attrs, "mode": "TFIDF"}
    assert tfidf(x, max_skip_count=0, pool_int64s=[94, 17, 17, 36], weights=[3.0, 5.0], **attrs).tolist() == [5.0, 3.0]
    # a 1-gram counts once per occurrence whatever the skips
    one = {"max_gram_length": 1, "min_gram_length": 1, "ngram_counts": [0], "ngram_indexes": [0], "mode": "TF"}
    assert tfidf(np.array([7, 7, 1]), max_skip_count=3, pool_int64s=[7], **one).tolist() == [2.0]
