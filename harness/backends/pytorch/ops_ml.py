"""Classic-ML operators: Binarizer and ArrayFeatureExtractor (ai.onnx.ml), and TfIdfVectorizer
over integer tokens (ai.onnx). The rest of ai.onnx.ml works on strings, maps or tree
ensembles and is not lowered."""

from __future__ import annotations

import torch

from ..lowering import membership_sets
from .registry import lowers

_DOMAIN = "ai.onnx.ml"


@lowers("Binarizer", 1, domain=_DOMAIN)
def binarizer(node, x, *, threshold=0.0):
    return (x > threshold).to(x.dtype)


@lowers("ArrayFeatureExtractor", 1, domain=_DOMAIN)
def array_feature_extractor(node, x, indices):
    # selects along the last axis; a 1-D input keeps a leading axis of 1 (the reference's layout)
    out = x.index_select(x.dim() - 1, indices.reshape(-1).to(torch.int64))
    return out.reshape(1, -1) if x.dim() == 1 else out


@lowers("TfIdfVectorizer", 9)
def tfidf_vectorizer(node, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts, ngram_indexes,
                     pool_int64s=None, pool_strings=None, weights=None):
    if pool_int64s is None:
        from ..base import Unsupported

        raise Unsupported("TfIdfVectorizer over strings: torch has no string tensors")
    # the pool holds the n-grams grouped by length; ngram_counts[i] is where the (i+1)-grams start
    grams: dict[tuple[int, ...], int] = {}
    k = 0
    for i, begin in enumerate(ngram_counts):
        end = ngram_counts[i + 1] if i + 1 < len(ngram_counts) else len(pool_int64s)
        n = i + 1
        for at in range(begin, end, n):
            grams[tuple(pool_int64s[at:at + n])] = k
            k += 1
    width = max(ngram_indexes) + 1
    rows = x.reshape(1, -1) if x.dim() == 1 else x
    counts = torch.zeros((rows.shape[0], k), dtype=torch.float64)
    for r, row in enumerate(rows.tolist()):
        for skip in range(max_skip_count + 1):
            step = skip + 1
            # unigrams have no gaps: they are counted once, with the first step only
            shortest = min_gram_length if skip == 0 else max(min_gram_length, 2)
            for start in range(len(row)):
                for n in range(shortest, max_gram_length + 1):
                    last = start + (n - 1) * step
                    if last >= len(row):
                        break
                    hit = grams.get(tuple(row[start:last + 1:step]))
                    if hit is not None:
                        counts[r, hit] += 1
    if mode == "IDF":
        counts = (counts > 0).to(torch.float64)
    if mode in ("IDF", "TFIDF") and weights is not None:
        counts = counts * torch.tensor(weights, dtype=torch.float64)
    out = torch.zeros((rows.shape[0], width), dtype=torch.float64)
    out[:, torch.tensor(ngram_indexes, dtype=torch.int64)] = counts
    out = out.to(torch.float32)
    return out.reshape(-1) if x.dim() == 1 else out


@lowers("TreeEnsemble", 5, domain=_DOMAIN)
def tree_ensemble(node, x, *, aggregate_function=1, leaf_targetids, leaf_weights, n_targets, nodes_falseleafs,
                  nodes_falsenodeids, nodes_featureids, nodes_modes, nodes_splits, nodes_trueleafs, nodes_truenodeids,
                  tree_roots, post_transform=0, membership_values=None, nodes_missing_value_tracks_true=None,
                  nodes_hitrates=None):
    modes = [int(m) for m in nodes_modes.reshape(-1).tolist()]
    splits = [float(s) for s in nodes_splits.reshape(-1).tolist()]
    weights = [float(w) for w in leaf_weights.reshape(-1).tolist()]
    missing_true = list(nodes_missing_value_tracks_true or [0] * len(modes))
    # BRANCH_MEMBER nodes take their sets, in order, from membership_values split at NaNs
    sets: dict[int, set[float]] = {}
    if membership_values is not None:
        members = iter(membership_sets(membership_values.reshape(-1).tolist()))
        for i, m in enumerate(modes):
            if m == 6:
                sets[i] = set(next(members, []))

    def goes_true(i, v):
        if v != v:
            return bool(missing_true[i])
        m, s = modes[i], splits[i]
        return {0: v <= s, 1: v < s, 2: v >= s, 3: v > s, 4: v == s, 5: v != s}.get(m, v in sets.get(i, ()))

    rows = x.to(torch.float64).tolist()
    out = torch.zeros((len(rows), n_targets), dtype=torch.float64)
    for r, row in enumerate(rows):
        per_target: list[list[float]] = [[] for _ in range(n_targets)]
        for root in tree_roots:
            i = root
            while True:
                if goes_true(i, row[nodes_featureids[i]]):
                    leaf, i = (nodes_truenodeids[i], None) if nodes_trueleafs[i] else (None, nodes_truenodeids[i])
                else:
                    leaf, i = (nodes_falsenodeids[i], None) if nodes_falseleafs[i] else (None, nodes_falsenodeids[i])
                if leaf is not None:
                    per_target[leaf_targetids[leaf]].append(weights[leaf])
                    break
        for t, values in enumerate(per_target):
            if not values:
                continue
            if aggregate_function == 0:
                out[r, t] = sum(values) / len(tree_roots)
            elif aggregate_function == 2:
                out[r, t] = min(values)
            elif aggregate_function == 3:
                out[r, t] = max(values)
            else:
                out[r, t] = sum(values)
    if post_transform == 1:
        out = torch.softmax(out, dim=1)
    elif post_transform == 2:
        out = torch.sigmoid(out)
    elif post_transform == 3:  # softmax over the nonzero scores only
        nz = out != 0
        e = torch.where(nz, torch.exp(out - torch.where(nz, out, torch.full_like(out, -torch.inf)).amax(1, keepdim=True)), torch.zeros_like(out))
        out = e / e.sum(1, keepdim=True).clamp(min=1e-300)
    elif post_transform == 4:
        out = torch.sqrt(torch.tensor(2.0, dtype=torch.float64)) * torch.erfinv(2 * out - 1)
    return out.to(x.dtype)
