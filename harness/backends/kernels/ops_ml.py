"""Operators of the ai.onnx.ml domain: tree ensembles (TreeEnsemble and the deprecated
TreeEnsembleRegressor/Classifier), linear models, SVMRegressor, label encoding, maps (ZipMap,
DictVectorizer, CastMap) and the simple feature transforms (ArrayFeatureExtractor, Binarizer,
Scaler, Normalizer, Imputer, OneHotEncoder, FeatureVectorizer, CategoryMapper).

SVMClassifier follows libsvm (one-vs-one votes, Platt-scaled pairwise probabilities coupled as
Wu, Lin & Weng 2004 describe)."""

from __future__ import annotations

import math

import numpy as np
import onnx

from .ops_elementwise import erf
from .registry import register

ML = "ai.onnx.ml"

# -- post transforms (shared by the ensembles and linear models) ------------------------------


def _erfinv(y: np.ndarray) -> np.ndarray:
    # Winitzki's closed form as a start, polished by Newton steps on erf
    a = 0.147
    ln = np.log1p(-y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    for _ in range(3):
        x = x - (erf(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def post_transform(scores: np.ndarray, how) -> np.ndarray:
    names = {0: "NONE", 1: "SOFTMAX", 2: "LOGISTIC", 3: "SOFTMAX_ZERO", 4: "PROBIT"}
    how = names.get(how, how)
    if how == "NONE":
        return scores
    if how == "LOGISTIC":
        return 1 / (1 + np.exp(-scores))
    if how == "SOFTMAX":
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if how == "SOFTMAX_ZERO":
        # zeros stay zero and take no part in the normalisation
        nz = scores != 0
        m = np.where(nz, scores, -np.inf).max(axis=1, keepdims=True)
        e = np.where(nz, np.exp(scores - np.where(np.isfinite(m), m, 0)), 0)
        s = e.sum(axis=1, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1), 0)
    if how == "PROBIT":
        return math.sqrt(2) * _erfinv(2 * scores - 1)
    raise ValueError(f"unknown post_transform {how!r}")


def _class_labels(a: dict):
    if "classlabels_strings" in a:
        return np.array(a["classlabels_strings"], dtype=object)
    return np.array(a.get("classlabels_ints", a.get("classlabels_int64s", [])), dtype=np.int64)


# -- tree ensembles ---------------------------------------------------------------------------

_MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5, "BRANCH_MEMBER": 6}


class Forest:
    """Interior nodes as parallel arrays, leaves as a dense (leaf, target) weight matrix."""

    def __init__(self, roots, feature, split, mode, true_id, true_leaf, false_id, false_leaf, nan_true, members,
                 leaf_weights, leaf_has, aggregate: str):
        self.roots = np.asarray(roots, dtype=np.int64)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.split = np.asarray(split, dtype=np.float64)
        self.mode = np.asarray(mode, dtype=np.int64)
        self.true_id = np.asarray(true_id, dtype=np.int64)
        self.true_leaf = np.asarray(true_leaf, dtype=bool)
        self.false_id = np.asarray(false_id, dtype=np.int64)
        self.false_leaf = np.asarray(false_leaf, dtype=bool)
        self.nan_true = np.asarray(nan_true, dtype=bool)
        self.members = members  # node index -> array of member values
        self.leaf_weights = leaf_weights
        self.leaf_has = leaf_has
        self.aggregate = aggregate

    def leaves(self, x: np.ndarray) -> np.ndarray:
        n, t = x.shape[0], self.roots.size
        cur = np.broadcast_to(self.roots, (n, t)).copy()
        done = np.zeros((n, t), dtype=bool)
        rows = np.broadcast_to(np.arange(n)[:, None], (n, t))
        while not done.all():
            active = ~done
            nodes = cur[active]
            v = x[rows[active], self.feature[nodes]]
            s = self.split[nodes]
            m = self.mode[nodes]
            cond = np.select(
                [m == 0, m == 1, m == 2, m == 3, m == 4, m == 5],
                [v <= s, v < s, v >= s, v > s, v == s, v != s],
                default=False,
            )
            for k in np.nonzero(m == 6)[0]:
                cond[k] = v[k] in self.members[int(nodes[k])]
            nan = np.isnan(v)
            cond = np.where(nan, self.nan_true[nodes], cond)
            cur[active] = np.where(cond, self.true_id[nodes], self.false_id[nodes])
            done[active] = np.where(cond, self.true_leaf[nodes], self.false_leaf[nodes])
        return cur

    def scores(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            x = x.reshape(1, -1)
        leaf = self.leaves(x)
        w = self.leaf_weights[leaf]  # (N, T, targets)
        has = self.leaf_has[leaf]
        agg = self.aggregate
        if agg in ("SUM", "AVERAGE"):
            out = w.sum(axis=1)
            if agg == "AVERAGE":
                out = out / self.roots.size
            return out
        if agg == "MIN":
            out = np.where(has, w, np.inf).min(axis=1)
        else:
            out = np.where(has, w, -np.inf).max(axis=1)
        return np.where(has.any(axis=1), out, 0.0)


def _leaf_matrix(n_leaves: int, n_targets: int, leaf_ids, target_ids, weights):
    w = np.zeros((n_leaves, n_targets))
    has = np.zeros((n_leaves, n_targets), dtype=bool)
    np.add.at(w, (np.asarray(leaf_ids, dtype=np.int64), np.asarray(target_ids, dtype=np.int64)), np.asarray(weights, dtype=np.float64))
    has[np.asarray(leaf_ids, dtype=np.int64), np.asarray(target_ids, dtype=np.int64)] = True
    return w, has


@register("TreeEnsemble", since=5, domain=ML)
def tree_ensemble(node):
    a = node.attrs
    modes = np.asarray(a["nodes_modes"]).astype(np.int64).reshape(-1)
    n_nodes = modes.size
    members: dict[int, np.ndarray] = {}
    if "membership_values" in a:
        sets, current = [], []
        for v in np.asarray(a["membership_values"], dtype=np.float64).reshape(-1):
            if np.isnan(v):
                sets.append(np.array(current))
                current = []
            else:
                current.append(v)
        if current:
            sets.append(np.array(current))
        for k, node_index in enumerate(np.nonzero(modes == 6)[0]):
            members[int(node_index)] = sets[k]
    leaf_weights = np.asarray(a["leaf_weights"], dtype=np.float64).reshape(-1)
    w, has = _leaf_matrix(leaf_weights.size, a["n_targets"], np.arange(leaf_weights.size), a["leaf_targetids"], leaf_weights)
    forest = Forest(
        a["tree_roots"],
        a["nodes_featureids"],
        np.asarray(a.get("nodes_splits", np.zeros(n_nodes)), dtype=np.float64).reshape(-1),
        modes,
        a["nodes_truenodeids"],
        a["nodes_trueleafs"],
        a["nodes_falsenodeids"],
        a["nodes_falseleafs"],
        a.get("nodes_missing_value_tracks_true", [0] * n_nodes),
        members,
        w,
        has,
        {0: "AVERAGE", 1: "SUM", 2: "MIN", 3: "MAX"}[a.get("aggregate_function", 1)],
    )
    how = a.get("post_transform", 0)

    def run(x):
        return (post_transform(forest.scores(x), how).astype(x.dtype),)

    return run


def _legacy_forest(a: dict, prefix: str, n_targets: int) -> Forest:
    """TreeEnsembleRegressor/Classifier attributes (node ids per tree, LEAF nodes carrying
    ``<prefix>_*`` weights) converted to a Forest."""
    tree_ids = a["nodes_treeids"]
    node_ids = a["nodes_nodeids"]
    modes = a["nodes_modes"]
    index = {(t, n): k for k, (t, n) in enumerate(zip(tree_ids, node_ids))}
    leaf_of: dict[int, int] = {}
    for k, m in enumerate(modes):
        if m == "LEAF":
            leaf_of[k] = len(leaf_of)
    feature, split, mode, tid, tleaf, fid, fleaf, nan_true = [], [], [], [], [], [], [], []
    interior: dict[int, int] = {}
    tracks = a.get("nodes_missing_value_tracks_true", [0] * len(modes))
    values = a["nodes_values_as_tensor"] if "nodes_values_as_tensor" in a else a.get("nodes_values", [0.0] * len(modes))
    for k, m in enumerate(modes):
        if m != "LEAF":
            interior[k] = len(interior)

    def target(t, n):
        k = index[(t, n)]
        return (leaf_of[k], True) if k in leaf_of else (interior[k], False)

    for k, m in enumerate(modes):
        if m == "LEAF":
            continue
        t = tree_ids[k]
        feature.append(a["nodes_featureids"][k])
        split.append(values[k])
        mode.append(_MODES[m])
        i, leaf = target(t, a["nodes_truenodeids"][k])
        tid.append(i)
        tleaf.append(leaf)
        i, leaf = target(t, a["nodes_falsenodeids"][k])
        fid.append(i)
        fleaf.append(leaf)
        nan_true.append(tracks[k])
    roots = []
    for t in sorted(set(tree_ids)):
        k = min((kk for kk, tt in enumerate(tree_ids) if tt == t), key=lambda kk: node_ids[kk])
        if k in leaf_of:  # a one-leaf tree: an always-true node pointing at the leaf
            feature.append(0)
            split.append(0.0)
            mode.append(0)
            tid.append(leaf_of[k])
            tleaf.append(True)
            fid.append(leaf_of[k])
            fleaf.append(True)
            nan_true.append(1)
            roots.append(len(feature) - 1)
        else:
            roots.append(interior[k])
    leaves = [leaf_of[index[(t, n)]] for t, n in zip(a[f"{prefix}_treeids"], a[f"{prefix}_nodeids"])]
    weights = a[f"{prefix}_weights_as_tensor"] if f"{prefix}_weights_as_tensor" in a else a[f"{prefix}_weights"]
    w, has = _leaf_matrix(len(leaf_of), n_targets, leaves, a[f"{prefix}_ids"], weights)
    return Forest(roots, feature, split, mode, tid, tleaf, fid, fleaf, nan_true, {}, w, has, a.get("aggregate_function", "SUM"))


@register("TreeEnsembleRegressor", since=1, domain=ML)
def tree_ensemble_regressor(node):
    a = node.attrs
    n_targets = a.get("n_targets", 1)
    forest = _legacy_forest(a, "target", n_targets)
    base = np.asarray(a["base_values_as_tensor"] if "base_values_as_tensor" in a else a.get("base_values", [0.0] * n_targets), dtype=np.float64)
    how = a.get("post_transform", "NONE")

    def run(x):
        return (post_transform(forest.scores(x) + base, how).astype(np.float32),)

    return run


@register("TreeEnsembleClassifier", since=1, domain=ML)
def tree_ensemble_classifier(node):
    a = node.attrs
    labels = _class_labels(a)
    class_ids = a["class_ids"]
    n_classes = max(labels.size, max(class_ids, default=0) + 1)
    forest = _legacy_forest(a, "class", n_classes)
    base = np.asarray(a["base_values_as_tensor"] if "base_values_as_tensor" in a else a.get("base_values", [0.0] * n_classes), dtype=np.float64)
    how = a.get("post_transform", "NONE")
    # each class scores the sum of its own votes, also in the binary layout (two labels, votes
    # for one class): the other class scores its base value (the spec's text; ONNX Runtime
    # derives it from the voted class instead, a convention the spec does not state)

    def run(x):
        scores = forest.scores(x)
        scores = scores + base[: scores.shape[1]] if base.size else scores
        scores = post_transform(scores, how)
        y = labels[np.argmax(scores, axis=1)]
        return (np.asarray(y, dtype=labels.dtype), scores.astype(np.float32))

    return run


# -- encoders and simple transforms -----------------------------------------------------------


def _attr_values(a: dict, kind: str):
    """The keys_* / values_* attribute that is set, as a numpy array."""
    for suffix, dtype in (("strings", object), ("int64s", np.int64), ("floats", np.float32)):
        if f"{kind}_{suffix}" in a:
            return np.array(a[f"{kind}_{suffix}"], dtype=dtype)
    if f"{kind}_tensor" in a:
        return np.asarray(a[f"{kind}_tensor"])
    return None


def _lookup_key(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"  # every NaN matches a NaN key (LabelEncoder-4 doc)
    return v


@register("LabelEncoder", since=1, domain=ML)
def label_encoder_v1(node):
    classes = node.attrs.get("classes_strings", [])
    default_int = node.attrs.get("default_int64", -1)
    default_str = node.attrs.get("default_string", "_Unused")
    to_index: dict = {}
    for i, c in enumerate(classes):
        to_index.setdefault(c, i)  # a look-up in the list finds the first occurrence

    def run(x):
        if x.dtype == object:
            return (np.array([to_index.get(s, default_int) for s in x.reshape(-1)], dtype=np.int64).reshape(x.shape),)
        out = np.empty(x.size, dtype=object)
        out[:] = [classes[i] if 0 <= i < len(classes) else default_str for i in x.reshape(-1).tolist()]
        return (out.reshape(x.shape),)

    return run


@register("LabelEncoder", since=2, domain=ML)
def label_encoder(node):
    a = node.attrs
    keys = _attr_values(a, "keys")
    values = _attr_values(a, "values")
    if "default_tensor" in a:
        default = np.asarray(a["default_tensor"]).reshape(-1)[0]
    elif values.dtype == object:
        default = a.get("default_string", "_Unused")
    elif values.dtype.kind in "iu":
        default = a.get("default_int64", -1)
    else:
        default = a.get("default_float", -0.0)
    if node.opset < 4:  # -2: "bit-wise comparison is used" (-0.0 is not 0.0); the first of repeated keys
        bits = (lambda v: np.float32(v).tobytes()) if keys.dtype.kind == "f" else (lambda v: v)
        table = {}
        for k, v in zip(keys.tolist(), values.tolist()):
            table.setdefault(bits(k), v)
        key_of = bits
    else:  # -4: NaN matches any NaN, the last repeated key wins
        table = {_lookup_key(k): v for k, v in zip(keys.tolist(), values.tolist())}
        key_of = _lookup_key

    def run(x):
        flat = [table.get(key_of(v), default) for v in x.reshape(-1).tolist()]
        out = np.empty(len(flat), dtype=values.dtype) if values.dtype == object else np.array(flat, dtype=values.dtype)
        if values.dtype == object:
            out[:] = flat
        return (out.reshape(x.shape),)

    return run


@register("ArrayFeatureExtractor", since=1, domain=ML)
def array_feature_extractor(node):
    def run(x, y):
        out = np.take(x, np.asarray(y, dtype=np.int64).reshape(-1), axis=-1)
        return (out.reshape(1, -1) if x.ndim == 1 else out,)

    return run


@register("Binarizer", since=1, domain=ML)
def binarizer(node):
    threshold = node.attrs.get("threshold", 0.0)

    def run(x):
        return ((x > threshold).astype(x.dtype),)

    return run


@register("Scaler", since=1, domain=ML)
def scaler(node):
    offset = np.asarray(node.attrs.get("offset", [0.0]), dtype=np.float32)
    scale = np.asarray(node.attrs.get("scale", [1.0]), dtype=np.float32)

    def run(x):
        return (((x.astype(np.float64) - offset.astype(np.float64)) * scale.astype(np.float64)).astype(np.float32),)

    return run


@register("Normalizer", since=1, domain=ML)
def normalizer(node):
    norm = node.attrs.get("norm", "MAX")

    def run(x):
        shape = x.shape
        x = np.atleast_2d(x.astype(np.float64))  # a float64 input is divided before rounding
        if norm == "MAX":
            d = np.max(x, axis=1, keepdims=True)
        elif norm == "L1":
            d = np.sum(np.abs(x), axis=1, keepdims=True)
        else:
            d = np.sqrt(np.sum(x * x, axis=1, keepdims=True))
        return ((x / np.where(d == 0, 1, d)).astype(np.float32).reshape(shape),)

    return run


@register("Imputer", since=1, domain=ML)
def imputer(node):
    a = node.attrs
    floats = "imputed_value_floats" in a
    imputed = np.asarray(a.get("imputed_value_floats", a.get("imputed_value_int64s", [])))
    replaced = a.get("replaced_value_float", np.nan) if floats else a.get("replaced_value_int64", 0)

    def run(x):
        target = np.isnan(x) if floats and np.isnan(replaced) else x == replaced
        fill = imputed if imputed.size > 1 else imputed.reshape(())
        return (np.where(target, fill, x).astype(x.dtype),)

    return run


@register("LinearRegressor", since=1, domain=ML)
def linear_regressor(node):
    a = node.attrs
    targets = a.get("targets", 1)
    coef = np.asarray(a.get("coefficients", []), dtype=np.float32).reshape(targets, -1)
    intercepts = np.asarray(a.get("intercepts", [0.0] * targets), dtype=np.float32)
    how = a.get("post_transform", "NONE")

    def run(x):
        y = np.atleast_2d(x.astype(np.float64)) @ coef.T.astype(np.float64) + intercepts.astype(np.float64)
        return (post_transform(y, how).astype(np.float32),)

    return run


@register("OneHotEncoder", since=1, domain=ML)
def one_hot_encoder(node):
    a = node.attrs
    cats = a.get("cats_strings", a.get("cats_int64s", []))
    index = {c: i for i, c in enumerate(cats)}
    zeros = a.get("zeros", 1)

    def run(x):
        flat = x.reshape(-1).tolist()
        if x.dtype.kind == "f":  # cast as Cast does (toward zero); NaN and infinities are no category
            flat = [int(v) if math.isfinite(v) else None for v in flat]
        out = np.zeros((len(flat), len(cats)), dtype=np.float32)
        for row, v in enumerate(flat):
            k = index.get(v)
            if k is None:
                if not zeros:
                    raise ValueError(f"OneHotEncoder: unknown category {v!r}")
                continue
            out[row, k] = 1
        return (out.reshape(x.shape + (len(cats),)),)

    return run


@register("FeatureVectorizer", since=1, domain=ML)
def feature_vectorizer(node):
    dims = node.attrs.get("inputdimensions", [])

    def run(*xs):
        cols = []
        for x, d in zip(xs, dims):
            x = np.atleast_2d(x.astype(np.float32))
            x = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
            if x.shape[1] < d:
                x = np.pad(x, ((0, 0), (0, d - x.shape[1])))
            cols.append(x[:, :d])
        return (np.concatenate(cols, axis=1),)

    return run


@register("CategoryMapper", since=1, domain=ML)
def category_mapper(node):
    a = node.attrs
    strings = a.get("cats_strings", [])
    ints = a.get("cats_int64s", [])
    to_int = dict(zip(strings, ints))
    to_str = dict(zip(ints, strings))
    default_int = a.get("default_int64", -1)
    default_str = a.get("default_string", "_Unused")

    def run(x):
        if x.dtype == object:
            return (np.array([to_int.get(s, default_int) for s in x.reshape(-1)], dtype=np.int64).reshape(x.shape),)
        out = np.empty(x.size, dtype=object)
        out[:] = [to_str.get(v, default_str) for v in x.reshape(-1).tolist()]
        return (out.reshape(x.shape),)

    return run


# -- linear models, SVM regression, maps ------------------------------------------------------


@register("LinearClassifier", since=1, domain=ML)
def linear_classifier(node):
    a = node.attrs
    labels = _class_labels(a)
    coef = np.asarray(a["coefficients"], dtype=np.float64)
    intercepts = np.asarray(a.get("intercepts", []), dtype=np.float64)
    how = a.get("post_transform", "NONE")

    def run(x):
        x = np.atleast_2d(x.astype(np.float64))
        w = coef.reshape(-1, x.shape[1])
        scores = x @ w.T + (intercepts if intercepts.size else 0)
        if w.shape[0] == 1 and labels.size == 2:
            # one weight vector for two classes: the first class scores the negation
            scores = np.concatenate([-scores, scores], axis=1)
        scores = post_transform(scores, how)
        if scores.shape[1] > 1:
            y = labels[np.argmax(scores, axis=1)]
        else:
            y = np.where(scores[:, 0] > 0, labels[-1], labels[0])
        return (np.asarray(y, dtype=labels.dtype), scores.astype(np.float32))

    return run


def _svm_kernel(kind: str, params, sv: np.ndarray, x: np.ndarray) -> np.ndarray:
    gamma, coef0, degree = (list(params) + [0.0, 0.0, 0.0])[:3]
    if kind == "LINEAR":
        return x @ sv.T
    if kind == "POLY":
        return (gamma * (x @ sv.T) + coef0) ** degree
    if kind == "RBF":
        d = (x * x).sum(1)[:, None] - 2 * (x @ sv.T) + (sv * sv).sum(1)[None, :]
        return np.exp(-gamma * d)
    if kind == "SIGMOID":
        return np.tanh(gamma * (x @ sv.T) + coef0)
    raise ValueError(f"unknown SVM kernel_type {kind!r}")


@register("SVMRegressor", since=1, domain=ML)
def svm_regressor(node):
    a = node.attrs
    n_supports = a.get("n_supports", 0)
    coef = np.asarray(a.get("coefficients", []), dtype=np.float64)
    rho = np.asarray(a.get("rho", [0.0]), dtype=np.float64)
    kind = a.get("kernel_type", "LINEAR")
    params = a.get("kernel_params", [])
    one_class = a.get("one_class", 0)
    how = a.get("post_transform", "NONE")

    def run(x):
        x = np.atleast_2d(x.astype(np.float64))
        if n_supports:
            sv = np.asarray(a["support_vectors"], dtype=np.float64).reshape(n_supports, -1)
            y = _svm_kernel(kind, params, sv, x) @ coef[:n_supports] + rho[0]
        else:  # a linear model: the coefficients are the weights
            y = x @ coef + rho[0]
        if one_class:
            y = np.where(y > 0, 1.0, -1.0)
        return (post_transform(y.reshape(-1, 1), how).astype(np.float32),)

    return run


@register("ZipMap", since=1, domain=ML)
def zip_map(node):
    labels = _class_labels(node.attrs).tolist()

    def run(x):
        rows = np.atleast_2d(x)
        return ([dict(zip(labels, (float(v) for v in row))) for row in rows],)

    return run


@register("DictVectorizer", since=1, domain=ML)
def dict_vectorizer(node):
    vocab = node.attrs.get("string_vocabulary") or node.attrs.get("int64_vocabulary", [])
    index = {k: i for i, k in enumerate(vocab)}

    def run(mapping):
        code = getattr(mapping, "value_type", None)  # a TypedMap names its value type
        values = list(mapping.values())
        if code is not None:
            dtype = np.dtype(object) if code == 8 else np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
        else:
            dtype = np.asarray(values[:1]).dtype if values else np.dtype(np.float32)
        strings = dtype.kind in "OUS"
        out = np.zeros(len(vocab), dtype=object if strings else dtype)
        if strings:
            out[:] = ""  # a string tensor's zero
        for k, v in mapping.items():
            if k in index:
                out[index[k]] = v
        return (out,)

    return run


@register("CastMap", since=1, domain=ML)
def cast_map(node):
    to = node.attrs.get("cast_to", "TO_FLOAT")
    dense = node.attrs.get("map_form", "DENSE") == "DENSE"
    max_map = node.attrs.get("max_map", 1)
    dtype = {"TO_FLOAT": np.float32, "TO_INT64": np.int64, "TO_STRING": object}[to]

    def convert(v):
        if dtype is object:  # a float as the fewest digits that read back as its float32, '3' not '3.0'
            return v if isinstance(v, str) else str(np.float32(v)).removesuffix(".0")
        return dtype(float(v))

    def run(mapping):
        keys = sorted(mapping)
        if dense:
            values = [convert(mapping[k]) for k in keys]
        else:
            default = "" if dtype is object else dtype(0)
            values = [convert(mapping[k]) if k in mapping else default for k in range(max_map)]
        out = np.empty((1, len(values)), dtype=dtype)
        out[0, :] = values
        return (out,)

    return run


# -- SVM classification ----------------------------------------------------------------------------


def _pairwise_coupling(r: np.ndarray) -> np.ndarray:
    """Class probabilities from pairwise ones (Wu, Lin & Weng 2004, method 2), iterated as libsvm's
    multiclass_probability does (at most max(100, k) sweeps, stop at 0.005 / k)."""
    k = r.shape[0]
    q = -r.T * r  # Q[t][j] = -r[j][t] * r[t][j] off the diagonal
    np.fill_diagonal(q, (r * r).sum(axis=0) - np.diag(r) ** 2)
    p = np.full(k, 1.0 / k)
    for _ in range(max(100, k)):
        qp = q @ p
        pqp = p @ qp
        if np.abs(qp - pqp).max() < 0.005 / k:
            break
        for t in range(k):
            diff = (pqp - qp[t]) / q[t, t]
            p[t] += diff
            pqp = (pqp + diff * (diff * q[t, t] + 2 * qp[t])) / (1 + diff) ** 2
            qp = (qp + diff * q[t]) / (1 + diff)
            p /= 1 + diff
    return p


@register("SVMClassifier", since=1, domain=ML)
def svm_classifier(node):
    a = node.attrs
    labels = _class_labels({**a, "classlabels_ints": a.get("classlabels_ints", [])})
    per_class = np.asarray(a["vectors_per_class"], dtype=np.int64)
    n_classes, n_sv = per_class.size, int(per_class.sum())
    coef = np.asarray(a["coefficients"], dtype=np.float64).reshape(n_classes - 1, n_sv)
    rho = np.asarray(a["rho"], dtype=np.float64)
    kind = a.get("kernel_type", "LINEAR")
    params = a.get("kernel_params", [])
    how = a.get("post_transform", "NONE")
    proba = "prob_a" in a and "prob_b" in a
    bounds = np.concatenate([[0], np.cumsum(per_class)])
    pairs = [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]

    def run(x):
        x = np.atleast_2d(x.astype(np.float64))
        sv = np.asarray(a["support_vectors"], dtype=np.float64).reshape(n_sv, x.shape[1])
        kv = _svm_kernel(kind, params, sv, x) if x.shape[0] else np.zeros((0, n_sv))
        dec = np.zeros((x.shape[0], len(pairs)))
        votes = np.zeros((x.shape[0], n_classes))
        for p, (i, j) in enumerate(pairs):
            si, sj = slice(bounds[i], bounds[i + 1]), slice(bounds[j], bounds[j + 1])
            dec[:, p] = kv[:, si] @ coef[j - 1, si] + kv[:, sj] @ coef[i, sj] + rho[p]
            wins = dec[:, p] > 0
            votes[wins, i] += 1
            votes[~wins, j] += 1
        if proba:
            f = dec * np.asarray(a["prob_a"], dtype=np.float64) + np.asarray(a["prob_b"], dtype=np.float64)
            with np.errstate(over="ignore"):
                pair_p = np.clip(np.where(f >= 0, np.exp(-f) / (1 + np.exp(-f)), 1 / (1 + np.exp(f))), 1e-7, 1 - 1e-7)
            scores = np.zeros((x.shape[0], n_classes))
            for n in range(x.shape[0]):
                r = np.zeros((n_classes, n_classes))
                for p, (i, j) in enumerate(pairs):
                    r[i, j], r[j, i] = pair_p[n, p], 1 - pair_p[n, p]
                scores[n] = _pairwise_coupling(r)
        else:
            scores = votes
        y = labels[np.argmax(scores, axis=1)] if x.shape[0] else labels[:0]
        return (np.asarray(y, dtype=labels.dtype), post_transform(scores, how).astype(np.float32))

    return run
