"""TfIdfVectorizer: counts of pooled n-grams (with skips) in each row, weighted by mode
(ONNX spec: TfIdfVectorizer-9).

For every n in [min_gram_length, max_gram_length] and every skip s in [0, max_skip_count] an
n-gram is ``(x[i], x[i + (s+1)], ..., x[i + (n-1)(s+1)])`` inside the row ("If the number of skips
is 2 [...] the associated 2-grams are [94, 12] and [17, 28]"). The pool (pool_strings or
pool_int64s) holds the 1-grams from ngram_counts[0], the 2-grams from ngram_counts[1], ...; the
k-th pooled n-gram is counted at Y[ngram_indexes[k]] ("An n-gram which cannot be found in
pool_strings/pool_int64s should be ignored"). TF: the count; IDF: min(count, 1) * weights[k];
TFIDF: count * weights[k] (weights default to ones). Y is [max(ngram_indexes) + 1] for a [C]
input, [N, max(ngram_indexes) + 1] for [N, C]; float32.

A 1-gram is the same item whatever the skip, so each occurrence counts once (skips only spread
the items of longer n-grams); ONNX Runtime and the spec's test data count it so too.
"""

from collections import Counter

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("TfIdfVectorizer", type_param="T")
st = S.st


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _pool(pool, counts):
    """The pooled n-grams in order, as tuples: (items from counts[k] on are (k+1)-grams)."""
    grams, bounds = [], list(counts) + [len(pool)]
    for k in range(len(counts)):
        n, lo, hi = k + 1, bounds[k], bounds[k + 1]
        if (hi - lo) % n:
            raise ValueError(f"TfIdfVectorizer: {hi - lo} pool items from {lo} are no whole number of {n}-grams")
        grams += [tuple(pool[j: j + n]) for j in range(lo, hi, n)]
    return grams


def _row_counts(row, min_n, max_n, max_skip):
    found = Counter()
    for n in range(min_n, max_n + 1):
        for s in range(0, (max_skip if n > 1 else 0) + 1):
            step = s + 1
            for i in range(len(row) - (n - 1) * step):
                found[tuple(row[i + j * step] for j in range(n))] += 1
    return found


@op.reference(9)
def tf_idf_vectorizer(x, *, max_gram_length, min_gram_length, max_skip_count, ngram_counts, ngram_indexes, mode,
                      pool_int64s=None, pool_strings=None, weights=None):
    mode = _text(mode)
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ValueError(f"TfIdfVectorizer: mode {mode!r}")
    if (pool_int64s is None) == (pool_strings is None):
        raise ValueError("TfIdfVectorizer: exactly one of pool_strings and pool_int64s")
    x = np.asarray(x)
    if x.ndim not in (1, 2):
        raise ValueError(f"TfIdfVectorizer: input rank {x.ndim}")
    pool = [int(v) for v in pool_int64s] if pool_int64s is not None else [_text(v) for v in pool_strings]
    grams = _pool(pool, list(ngram_counts))
    if len(grams) != len(ngram_indexes):
        raise ValueError(f"TfIdfVectorizer: {len(grams)} pooled n-grams, {len(ngram_indexes)} ngram_indexes")
    w = [1.0] * len(grams) if weights is None else [float(v) for v in weights]
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    width = int(max(ngram_indexes)) + 1 if len(ngram_indexes) else 0
    y = np.zeros((rows.shape[0], width), dtype=np.float64)
    for r, row in enumerate(rows):
        items = [int(v) for v in row] if pool_int64s is not None else [_text(v) for v in row]
        found = _row_counts(items, int(min_gram_length), int(max_gram_length), int(max_skip_count))
        for k, g in enumerate(grams):
            if not min_gram_length <= len(g) <= max_gram_length:
                continue
            c = found.get(g, 0)
            y[r, int(ngram_indexes[k])] = c if mode == "TF" else min(c, 1) * w[k] if mode == "IDF" else c * w[k]
    y = y.astype(np.float32)
    return y.reshape(-1) if x.ndim == 1 else y


# -- cases -----------------------------------------------------------------------------------------
_INT_POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]  # 1-grams 2 3 5 4; 2-grams (5,6) (7,8) (6,7)
_STR_POOL = ["a", "b", "c", "d", "c", "a", "a", "b", "b", "c"]  # 1-grams a b c d; 2-grams (c,a) (a,b) (b,c)
_COUNTS = [0, 4]
_INDEXES = [0, 1, 2, 3, 4, 5, 6]


def _base(dtype):
    if dtype == "string":
        return {"pool_strings": _STR_POOL}, ["a", "b", "c", "d", "e"]
    return {"pool_int64s": _INT_POOL}, [2, 3, 4, 5, 6, 7, 8, 9]


def _arr(dtype, values, shape=None):
    a = np.array(values, dtype=object if dtype == "string" else S.np_dtype(dtype))
    return a.reshape(shape) if shape is not None else a


def _attrs(dtype, mode="TF", min_n=1, max_n=2, skip=0, weights=None, indexes=None):
    pool, _ = _base(dtype)
    out = {"mode": mode, "min_gram_length": min_n, "max_gram_length": max_n, "max_skip_count": skip,
           "ngram_counts": _COUNTS, "ngram_indexes": indexes or _INDEXES, **pool}
    if weights is not None:
        out["weights"] = weights
    return out


@op.strategy(9)
def draw(d, dtype, opset):
    _, alphabet = _base(dtype)
    c = d(st.integers(0, 7))
    two_d = d(st.booleans())
    n = d(st.integers(1, 3)) if two_d else 1
    items = d(st.lists(st.sampled_from(alphabet), min_size=n * c, max_size=n * c))
    x = _arr(dtype, items, (n, c) if two_d else (c,))
    min_n = d(st.integers(1, 2))
    max_n = d(st.integers(min_n, 2))
    weights = d(st.lists(st.sampled_from([0.5, 1.0, 2.0, 0.25]), min_size=7, max_size=7)) if d(st.booleans()) else None
    indexes = d(st.permutations(list(range(7)))) if d(st.booleans()) else None
    return Example([x], _attrs(dtype, d(st.sampled_from(["TF", "IDF", "TFIDF"])), min_n, max_n, d(st.integers(0, 2)), weights, indexes))


@op.edges(9)
def edges(dtype, opset):
    _, al = _base(dtype)
    seq = [al[i] for i in (0, 1, 2, 0, 1, 1, 2, 3, 0, 1, 4)]
    w = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    out = [
        Example([_arr(dtype, seq)], _attrs(dtype, "TF", 1, 1), name="tf_unigrams"),
        Example([_arr(dtype, seq)], _attrs(dtype, "TF", 2, 2), name="tf_bigrams_only"),
        Example([_arr(dtype, seq)], _attrs(dtype, "TF", 1, 2, skip=2), name="tf_skip_2"),
        Example([_arr(dtype, seq)], _attrs(dtype, "IDF", 1, 2, skip=1, weights=w), name="idf_weights"),
        Example([_arr(dtype, seq)], _attrs(dtype, "IDF", 1, 2), name="idf_default_weights"),
        Example([_arr(dtype, seq)], _attrs(dtype, "TFIDF", 1, 2, skip=1, weights=w), name="tfidf_weights"),
        Example([_arr(dtype, seq[:10], (2, 5))], _attrs(dtype, "TFIDF", 1, 2, weights=w, indexes=[6, 5, 4, 3, 2, 1, 0]),
                name="two_rows_permuted_indexes"),
        Example([_arr(dtype, [], (0,))], _attrs(dtype, "TF", 1, 2), name="empty"),
        Example([_arr(dtype, [], (2, 0))], _attrs(dtype, "TF", 1, 2), name="empty_rows"),
        Example([_arr(dtype, seq[:1])], _attrs(dtype, "TF", 2, 2, skip=3), name="shorter_than_a_bigram"),
    ]
    if dtype != "string":
        # the spec's text: [94, 17, 36, 12, 28] with 2-grams [94, 17], [17, 36] at ngram_indexes [1, 0]
        spec = {"mode": "TF", "min_gram_length": 2, "max_gram_length": 2, "max_skip_count": 0, "ngram_counts": [0, 0],
                "ngram_indexes": [1, 0], "pool_int64s": [94, 17, 17, 36]}
        out.append(Example([_arr(dtype, [94, 17, 36, 12, 28])], spec, name="spec_example"))
        out.append(Example([_arr(dtype, [94, 17, 36, 12, 28])], {**spec, "pool_int64s": [94, 12, 17, 28], "max_skip_count": 2},
                           name="spec_example_skip_2"))
    return out
