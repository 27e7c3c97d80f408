"""String operators: StringConcat, StringSplit, StringNormalizer, RegexFullMatch.
String tensors are numpy object arrays of Python str."""

from __future__ import annotations

import re

import numpy as np

from .registry import register

_concat = np.frompyfunc(lambda a, b: a + b, 2, 1)


def _strings(values, shape) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


@register("StringConcat", since=20)
def string_concat(node):
    def run(x, y):
        z = _concat(x, y)
        return (np.asarray(z, dtype=object),)

    return run


@register("StringSplit", since=20)
def string_split(node):
    delimiter = node.attrs.get("delimiter") or None  # unset or "": split on whitespace runs
    maxsplit = node.attrs.get("maxsplit", -1)

    def run(x):
        parts = [s.split(delimiter, maxsplit) for s in x.reshape(-1)]
        width = max((len(p) for p in parts), default=0)
        flat = [w for p in parts for w in p + [""] * (width - len(p))]
        counts = np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)
        return (_strings(flat, x.shape + (width,)), counts)

    return run


@register("StringNormalizer", since=10)
def string_normalizer(node):
    stopwords = node.attrs.get("stopwords", [])
    sensitive = bool(node.attrs.get("is_case_sensitive", 0))
    action = node.attrs.get("case_change_action", "NONE")
    stop = set(stopwords) if sensitive else {w.lower() for w in stopwords}

    def run(x):
        words = [w for w in x.reshape(-1) if (w if sensitive else w.lower()) not in stop]
        if action == "LOWER":
            words = [w.lower() for w in words]
        elif action == "UPPER":
            words = [w.upper() for w in words]
        if not words:
            words = [""]  # an all-stopword input yields one empty string (StringNormalizer doc)
        shape = (len(words),) if x.ndim == 1 else (1, len(words))
        return (_strings(words, shape),)

    return run


@register("RegexFullMatch", since=20)
def regex_full_match(node):
    pattern = re.compile(node.attrs["pattern"])

    def run(x):
        flat = [pattern.fullmatch(s) is not None for s in x.reshape(-1)]
        return (np.array(flat, dtype=bool).reshape(x.shape),)

    return run
