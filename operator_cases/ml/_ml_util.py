"""Helpers shared by the ai.onnx.ml operator modules: the post transforms, class labels, the
top-class choice and the spec-silent points they share.

The spec names the post transforms ('NONE', 'SOFTMAX', 'LOGISTIC', 'SOFTMAX_ZERO', 'PROBIT') but
never defines them. We take the usual meanings, in float64 over one row of scores:

- LOGISTIC: 1 / (1 + exp(-s)), elementwise;
- SOFTMAX: exp(s - max) / sum(exp(s - max)) over the row;
- SOFTMAX_ZERO: the softmax of the row's nonzero scores, a score of exactly 0 staying 0 (a row of
  zeros stays zeros); spec-silent point ``softmax_zero`` (ONNX Runtime takes |s| <= 1e-7 as zero);
- PROBIT: the standard normal quantile sqrt(2) * erfinv(2s - 1) (the probit function), NaN
  outside [0, 1]; spec-silent point ``probit`` (a backend may use an approximation of erfinv).
"""

from __future__ import annotations

import math

import numpy as np

from harness import strategies as S
from harness.registry import Operator, SilentCheck

ML = "ai.onnx.ml"
TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def plain_attrs(attrs: dict) -> dict:
    """Attributes as the references read them: a TENSOR attribute (a TensorProto when they come
    from a model, as the spec-silent checks get them) as a numpy array."""
    import onnx
    from onnx import numpy_helper

    return {k: numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for k, v in attrs.items()}


def as_str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def text_array(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [as_str(v) for v in values]
    return out


def _erfinv(y: np.ndarray) -> np.ndarray:
    """erfinv in float64: a Winitzki start polished by Newton steps on math.erf (exact to a few ulp)."""
    y = np.asarray(y, dtype=np.float64)
    out = np.full(y.shape, np.nan)
    inside = np.abs(y) < 1
    out[y == 1], out[y == -1] = np.inf, -np.inf
    v = y[inside]
    a = 0.147
    ln = np.log1p(-v * v)
    t = 2 / (math.pi * a) + ln / 2
    x = np.sign(v) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(6):
        step = (erf(x) - v) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = x - np.where(np.isfinite(step), step, 0.0)
    out[inside] = x
    return out


def post_transform(scores, how) -> np.ndarray:
    """One of TRANSFORMS (or its index, TreeEnsemble-5) over the rows of ``scores`` (float64, [N, E])."""
    s = np.asarray(scores, dtype=np.float64)
    how = TRANSFORMS[how] if isinstance(how, (int, np.integer)) else as_str(how)
    with np.errstate(all="ignore"):
        if how == "NONE":
            return s
        if how == "LOGISTIC":
            return 1.0 / (1.0 + np.exp(-s))
        if how == "PROBIT":
            return math.sqrt(2.0) * _erfinv(2.0 * s - 1.0)
        if s.shape[-1] == 0:
            return s
        if how == "SOFTMAX":
            e = np.exp(s - np.max(s, axis=-1, keepdims=True))
            return e / np.sum(e, axis=-1, keepdims=True)
        if how == "SOFTMAX_ZERO":
            nz = s != 0
            m = np.max(np.where(nz, s, -np.inf), axis=-1, keepdims=True)
            e = np.where(nz, np.exp(s - np.where(np.isfinite(m), m, 0.0)), 0.0)
            total = np.sum(e, axis=-1, keepdims=True)
            return np.where(nz, e / np.where(total == 0, 1.0, total), 0.0)
    raise ValueError(f"unknown post_transform {how!r}")


def class_labels(attrs: dict, ints: str = "classlabels_int64s") -> np.ndarray:
    """The class labels: strings (object array) or int64."""
    if attrs.get("classlabels_strings") is not None:
        return text_array(attrs["classlabels_strings"])
    return np.asarray(attrs.get(ints, []), dtype=np.int64)


def top_class(z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The label of each row's highest score; the first of tied highest scores (spec-silent ``tie``)."""
    if z.shape[0] == 0:
        return labels[:0]
    return labels[np.argmax(z, axis=1)]


def transform_name(attrs: dict, default="NONE") -> str:
    how = attrs.get("post_transform", default)
    return TRANSFORMS[how] if isinstance(how, (int, np.integer)) else as_str(how)


# -- spec-silent points shared by the ops with a post transform ----------------------------------
def _rows_with(attrs: dict, expected: list, name: str, output: int) -> list:
    if transform_name(attrs) != name:
        return [None] * len(expected)
    out: list = [None] * len(expected)
    out[output] = np.ones(np.shape(expected[output]), dtype=bool)
    if output == 1:  # a classifier: the top class follows the transformed scores
        out[0] = np.ones(np.shape(expected[0]), dtype=bool)
    return out


def _probit_kept(output: int):
    def holds(c: SilentCheck) -> bool:
        z = np.asarray(c.actual[output]).astype(np.float64)
        e = np.asarray(c.expected[output]).astype(np.float64)
        if z.shape != e.shape:
            return False
        # the quantile is increasing and 0 at 0.5: its sign is that of (score - 0.5), finite inside (0, 1)
        fin = np.isfinite(e)
        return bool(np.all(np.sign(z[fin]) == np.sign(e[fin])) and np.all(np.isfinite(z[fin]))
                    and np.allclose(z[fin], e[fin], rtol=1e-2, atol=1e-2))

    return holds


def _softmax_zero_kept(output: int):
    def holds(c: SilentCheck) -> bool:
        z = np.asarray(c.actual[output]).astype(np.float64)
        e = np.asarray(c.expected[output]).astype(np.float64)
        if z.shape != e.shape or z.ndim != 2:
            return False
        sums = z.sum(axis=1)
        return bool(np.all((z >= 0) & (z <= 1)) and np.all(np.isclose(sums, 1, atol=1e-5) | (sums == 0))
                    and np.allclose(z, e, atol=1e-3))

    return holds


def declare_transform_points(op: Operator, versions: tuple[int, ...], output: int) -> None:
    """The post transforms the spec names and never defines: PROBIT and SOFTMAX_ZERO (the spec
    text quoted is the post_transform attribute's description, all there is)."""
    from harness import schema

    words = {v: " ".join(schema.schema_at(op.name, v, ML).attributes["post_transform"].description.split()) for v in versions}
    op.spec_silent(
        "probit", versions,
        spec=words,
        expected="the probit function, the standard normal quantile sqrt(2) * erfinv(2s - 1), computed in float64 "
                 "(NaN outside [0, 1], -inf/+inf at 0/1): its textbook meaning; a backend may approximate erfinv",
        where=lambda inputs, attrs, expected, since: _rows_with(attrs, expected, "PROBIT", output),
        invariants={"the value is within 1e-2 of the quantile, with its sign (that of score - 0.5)": _probit_kept(output)})
    op.spec_silent(
        "softmax_zero", versions,
        spec=words,
        expected="a softmax over the row's nonzero scores, a score of exactly 0 staying 0 and a row of zeros staying zeros "
                 "(the name's meaning); ONNX Runtime counts |score| <= 1e-7 as zero",
        where=lambda inputs, attrs, expected, since: _rows_with(attrs, expected, "SOFTMAX_ZERO", output),
        invariants={"each value is in [0, 1], each row sums to 1 or is all zeros, and within 1e-3 of ours": _softmax_zero_kept(output)})


def _tied_rows(expected: list, output: int = 1):
    z = np.asarray(expected[output]).astype(np.float64)
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] == 0:
        return None
    with np.errstate(invalid="ignore"):
        top = np.max(z, axis=1, keepdims=True)
        return (np.sum(z == top, axis=1) > 1) | np.isnan(z).any(axis=1)


def declare_tie_point(op: Operator, versions: tuple[int, ...], labels_of, spec: str) -> None:
    """Two classes sharing the highest score, or a NaN among the scores: the spec does not say which label wins."""

    def where(inputs, attrs, expected, since):
        tied = _tied_rows(expected)
        return [tied, None] if tied is not None and tied.any() else [None, None]

    def holds(c: SilentCheck) -> bool:
        # the backend's own scores where it gives them (its label must agree with its scores)
        z = np.asarray(c.actual[1] if np.shape(c.actual[1]) == np.shape(c.expected[1]) else c.expected[1]).astype(np.float64)
        labels = labels_of(c.attrs)
        y = np.asarray(c.actual[0])
        for i in np.nonzero(c.masks[0])[0]:
            winners = {as_str(v) for v in (labels if np.isnan(z[i]).any() else labels[z[i] == z[i].max()])}
            if as_str(y[i]) not in winners:
                return False
        return True

    op.spec_silent(
        "tie", versions,
        spec=spec,
        expected="the first of the classes sharing the highest score (numpy.argmax; the order of the class labels); "
                 "a row of scores holding NaN gives the class of the first NaN (numpy.argmax, NaN propagating as in a max)",
        where=where, invariants={"the label is one of the classes with the highest score (any label for a row holding NaN)": holds})


def ensure_2d(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x.reshape(1, -1) if x.ndim == 1 else x.reshape(x.shape[0], -1) if x.ndim > 2 else x


def float_out(y) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(y, dtype=np.float64).astype(np.float32)


def features(d, dtype: str, rows: tuple[int, int] = (0, 4), cols: tuple[int, int] = (1, 4), lo=-5, hi=5,
             nan: bool = False) -> np.ndarray:
    """A [N, F] input of ``dtype`` (a few rows; NaN allowed on request for floats)."""
    n = d(S.st.integers(*rows))
    f = d(S.st.integers(*cols))
    return S.arrays(d, dtype, shape=(n, f), lo=lo, hi=hi, allow_nan=nan and S.is_float(dtype))


def edge_matrix(dtype: str, cols: int) -> np.ndarray:
    """The edge values of ``dtype`` laid out as [N, cols] (padded with zeros)."""
    v = S.edge_values(dtype)
    n = -(-v.size // cols)
    out = np.zeros(n * cols, dtype=v.dtype)
    out[: v.size] = v
    return out.reshape(n, cols)


# -- tree ensembles ---------------------------------------------------------------------------------
# A tree is nested dicts: a leaf {"leaf": [(target, weight), ...]} or an interior node
# {"f": feature, "v": threshold, "mode": "BRANCH_LEQ", "nan_true": 0 or 1, "t": node, "e": node,
#  "members": [...] (BRANCH_MEMBER)}. The references decode the attributes into this form (as the
# spec describes them) and walk it; the strategies draw it and encode it.
MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER")
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
GRID = (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def goes_true(node: dict, v: float) -> bool:
    if np.isnan(v):  # 'if a value is missing (NaN), use the 'true' or 'false' branch based on the value in this array'
        return bool(node["nan_true"])
    m, s = node["mode"], node["v"]
    if m == "BRANCH_LEQ":
        return v <= s
    if m == "BRANCH_LT":
        return v < s
    if m == "BRANCH_GTE":
        return v >= s
    if m == "BRANCH_GT":
        return v > s
    if m == "BRANCH_EQ":
        return v == s
    if m == "BRANCH_NEQ":
        return v != s
    if m == "BRANCH_MEMBER":
        return v in node["members"]
    raise ValueError(f"unknown node mode {m!r}")


def leaf_of(tree: dict, row: np.ndarray) -> dict:
    node = tree
    for _ in range(100000):
        if "leaf" in node:
            return node
        node = node["t"] if goes_true(node, float(row[node["f"]])) else node["e"]
    raise ValueError("tree walk does not end (a cycle in the node ids)")


def forest_scores(trees: list, x: np.ndarray, n_targets: int, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """[N, n_targets] aggregated leaf weights (float64) and the mask of (row, target) some tree voted for.
    SUM and AVERAGE add every vote (AVERAGE then divides by the number of trees); MIN and MAX take the
    least and the largest vote; a target no tree voted for scores 0 (spec-silent ``no_vote``)."""
    x = np.asarray(x).astype(np.float64)
    n = x.shape[0]
    out = np.zeros((n, n_targets))
    voted = np.zeros((n, n_targets), dtype=bool)
    for i in range(n):
        per = [[] for _ in range(n_targets)]
        for tree in trees:
            contrib: dict[int, float] = {}
            for t, w in leaf_of(tree, x[i])["leaf"]:
                contrib[t] = contrib.get(t, 0.0) + w
            for t, w in contrib.items():
                per[t].append(w)
        for t, ws in enumerate(per):
            if not ws:
                continue
            voted[i, t] = True
            if aggregate in ("SUM", "AVERAGE"):
                out[i, t] = math.fsum(ws)
            elif aggregate == "MIN":
                out[i, t] = min(ws)
            elif aggregate == "MAX":
                out[i, t] = max(ws)
            else:
                raise ValueError(f"unknown aggregate_function {aggregate!r}")
    if aggregate == "AVERAGE" and trees:
        out = out / len(trees)
    return out, voted


# drawing --------------------------------------------------------------------------------------
def draw_tree(rng: np.random.Generator, n_features: int, n_targets: int, depth: int, modes: tuple[str, ...],
              targets_per_leaf: tuple[int, int] = (1, 2), weights=(-2.0, 2.0)) -> dict:
    if depth == 0 or rng.random() < 0.2:
        k = int(rng.integers(targets_per_leaf[0], min(targets_per_leaf[1], n_targets) + 1))
        ts = rng.choice(n_targets, size=k, replace=False)
        return {"leaf": [(int(t), float(np.float32(rng.uniform(*weights)))) for t in ts]}
    mode = str(rng.choice(modes))
    node = {"f": int(rng.integers(0, n_features)), "v": float(rng.choice(GRID)), "mode": mode, "nan_true": int(rng.integers(0, 2))}
    if mode == "BRANCH_MEMBER":
        node["members"] = [float(v) for v in rng.choice(GRID, size=int(rng.integers(1, 4)), replace=False)]
    node["t"] = draw_tree(rng, n_features, n_targets, depth - 1, modes, targets_per_leaf, weights)
    node["e"] = draw_tree(rng, n_features, n_targets, depth - 1, modes, targets_per_leaf, weights)
    return node


def draw_rows(rng: np.random.Generator, dtype: str, n: int, f: int, nan: bool = True) -> np.ndarray:
    """Rows on the thresholds' grid (ties with the splits) mixed with other values, NaN among them."""
    vals = rng.choice(np.array(GRID + (0.25, -3.0, 3.0)), size=(n, f))
    if S.is_float(dtype):
        vals = np.where(rng.random((n, f)) < 0.3, rng.uniform(-3, 3, (n, f)), vals)
        if nan:
            vals = np.where(rng.random((n, f)) < 0.1, np.nan, vals)
        return vals.astype(S.np_dtype(dtype))
    return np.round(vals).astype(S.np_dtype(dtype))


def draw_base_values(rng: np.random.Generator, attrs: dict, n: int, as_tensor: bool) -> None:
    """The legacy tree ensembles' ``n`` base values, float32 numbers, into ``attrs``: as
    ``base_values_as_tensor`` (double) where ``as_tensor`` (version 3 on), else ``base_values``."""
    values = [float(np.float32(v)) for v in rng.uniform(-1, 1, n)]
    if as_tensor:
        attrs["base_values_as_tensor"] = np.asarray(values, dtype=np.float64)
    else:
        attrs["base_values"] = values


def _walk(tree: dict):
    """(node, id) in breadth-first order, ids from 0 within the tree."""
    order, queue = [], [tree]
    while queue:
        node = queue.pop(0)
        order.append(node)
        if "leaf" not in node:
            queue += [node["t"], node["e"]]
    return {id(n): k for k, n in enumerate(order)}, order


def encode_legacy(trees: list, prefix: str, as_tensor: bool = False) -> dict:
    """TreeEnsembleRegressor/Classifier attributes (prefix 'target' or 'class')."""
    a: dict = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes",
                               "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                               f"{prefix}_treeids", f"{prefix}_nodeids", f"{prefix}_ids", f"{prefix}_weights")}
    for t, tree in enumerate(trees):
        ids, order = _walk(tree)
        for node in order:
            k = ids[id(node)]
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(k)
            if "leaf" in node:
                a["nodes_featureids"].append(0)
                a["nodes_values"].append(0.0)
                a["nodes_modes"].append("LEAF")
                a["nodes_truenodeids"].append(0)
                a["nodes_falsenodeids"].append(0)
                a["nodes_missing_value_tracks_true"].append(0)
                for target, w in node["leaf"]:
                    a[f"{prefix}_treeids"].append(t)
                    a[f"{prefix}_nodeids"].append(k)
                    a[f"{prefix}_ids"].append(target)
                    a[f"{prefix}_weights"].append(w)
            else:
                a["nodes_featureids"].append(node["f"])
                a["nodes_values"].append(node["v"])
                a["nodes_modes"].append(node["mode"])
                a["nodes_truenodeids"].append(ids[id(node["t"])])
                a["nodes_falsenodeids"].append(ids[id(node["e"])])
                a["nodes_missing_value_tracks_true"].append(node["nan_true"])
    if as_tensor:
        a["nodes_values_as_tensor"] = np.asarray(a.pop("nodes_values"), dtype=np.float64)
        a[f"{prefix}_weights_as_tensor"] = np.asarray(a.pop(f"{prefix}_weights"), dtype=np.float64)
    return a


def decode_legacy(a: dict, prefix: str) -> list:
    """The trees of TreeEnsembleRegressor/Classifier attributes: nodes by (tree id, node id), the
    children ids within the node's tree, the votes ({prefix}_*) at LEAF nodes."""
    a = plain_attrs(a)
    values = a.get("nodes_values_as_tensor")
    values = np.asarray(values if values is not None else a.get("nodes_values", []), dtype=np.float64).reshape(-1)
    weights = a.get(f"{prefix}_weights_as_tensor")
    weights = np.asarray(weights if weights is not None else a.get(f"{prefix}_weights", []), dtype=np.float64).reshape(-1)
    treeids, nodeids = list(a["nodes_treeids"]), list(a["nodes_nodeids"])
    modes = [as_str(m) for m in a["nodes_modes"]]
    nan_true = list(a.get("nodes_missing_value_tracks_true") or [0] * len(modes))
    nodes: dict = {}
    for k, (t, n) in enumerate(zip(treeids, nodeids)):
        if modes[k] == "LEAF":
            nodes[(t, n)] = {"leaf": []}
        else:
            nodes[(t, n)] = {"f": int(a["nodes_featureids"][k]), "v": float(values[k]), "mode": modes[k], "nan_true": int(nan_true[k])}
    for k, (t, n) in enumerate(zip(treeids, nodeids)):
        if modes[k] != "LEAF":
            nodes[(t, n)]["t"] = nodes[(t, int(a["nodes_truenodeids"][k]))]
            nodes[(t, n)]["e"] = nodes[(t, int(a["nodes_falsenodeids"][k]))]
    for t, n, c, w in zip(a[f"{prefix}_treeids"], a[f"{prefix}_nodeids"], a[f"{prefix}_ids"], weights):
        nodes[(t, n)]["leaf"].append((int(c), float(w)))
    roots = []
    for t in sorted(set(treeids)):  # the root: the node no other node of its tree points at
        inside = {n for (tt, n) in nodes if tt == t}
        children = {int(c) for k, tt in enumerate(treeids) if tt == t and modes[k] != "LEAF"
                    for c in (a["nodes_truenodeids"][k], a["nodes_falsenodeids"][k])}
        (root,) = sorted(inside - children)[:1]
        roots.append(nodes[(t, root)])
    return roots


def encode_v5(trees: list, dtype: str) -> dict:
    """TreeEnsemble-5 attributes: interior nodes and leaves in their own arrays; a one-leaf tree is an
    interior node whose two branches name the same leaf (the spec's own rule)."""
    dt = S.np_dtype(dtype)
    f, s, m, tid, tleaf, fid, fleaf, nan, members = [], [], [], [], [], [], [], [], []
    lt, lw, roots = [], [], []

    def leaf(node):
        first = len(lt)
        for target, w in node["leaf"][:1]:  # TreeEnsemble-5: one (target, weight) per leaf
            lt.append(target)
            lw.append(w)
        return first

    def interior(node):
        k = len(f)
        f.append(node["f"]), s.append(node["v"]), m.append(MODES.index(node["mode"])), nan.append(node["nan_true"])
        tid.append(0), tleaf.append(0), fid.append(0), fleaf.append(0)
        if node["mode"] == "BRANCH_MEMBER":
            members.append(node["members"])
        for branch, ids, leafs in (("t", tid, tleaf), ("e", fid, fleaf)):
            child = node[branch]
            if "leaf" in child:
                ids[k], leafs[k] = leaf(child), 1
            else:
                ids[k], leafs[k] = interior(child), 0
        return k

    for tree in trees:
        if "leaf" in tree:
            k = len(f)
            f.append(0), s.append(0.0), m.append(0), nan.append(0)
            j = leaf(tree)
            tid.append(j), tleaf.append(1), fid.append(j), fleaf.append(1)
            roots.append(k)
        else:
            roots.append(interior(tree))
    a = {"tree_roots": roots, "nodes_featureids": f, "nodes_splits": np.asarray(s, dtype=dt), "nodes_modes": np.asarray(m, dtype=np.uint8),
         "nodes_truenodeids": tid, "nodes_trueleafs": tleaf, "nodes_falsenodeids": fid, "nodes_falseleafs": fleaf,
         "nodes_missing_value_tracks_true": nan, "leaf_targetids": lt, "leaf_weights": np.asarray(lw, dtype=dt)}
    if members:
        flat = []
        for k, group in enumerate(members):
            flat += group + ([float("nan")] if k < len(members) - 1 else [])
        a["membership_values"] = np.asarray(flat, dtype=dt)
    return a


def decode_v5(a: dict) -> list:
    """The trees of TreeEnsemble-5 attributes (interior nodes, leaves, roots; BRANCH_MEMBER sets in
    node order from membership_values split at NaN)."""
    a = plain_attrs(a)
    modes = [int(v) for v in np.asarray(a["nodes_modes"]).reshape(-1)]
    splits = np.asarray(a["nodes_splits"]).astype(np.float64).reshape(-1)
    nan_true = list(a.get("nodes_missing_value_tracks_true") or [0] * len(modes))
    sets: list = []
    if a.get("membership_values") is not None:
        current: list = []
        for v in np.asarray(a["membership_values"]).astype(np.float64).reshape(-1):
            if np.isnan(v):
                sets.append(current)
                current = []
            else:
                current.append(float(v))
        sets.append(current)
    member_of = {}
    for k, mode in enumerate(modes):
        if mode == 6:
            member_of[k] = sets[len(member_of)]
    weights = np.asarray(a["leaf_weights"]).astype(np.float64).reshape(-1)
    leaves = [{"leaf": [(int(t), float(w))]} for t, w in zip(a["leaf_targetids"], weights)]
    nodes = [{"f": int(a["nodes_featureids"][k]), "v": float(splits[k]), "mode": MODES[modes[k]], "nan_true": int(nan_true[k]),
              "members": member_of.get(k, [])} for k in range(len(modes))]
    for k, node in enumerate(nodes):
        node["t"] = leaves[a["nodes_truenodeids"][k]] if a["nodes_trueleafs"][k] else nodes[a["nodes_truenodeids"][k]]
        node["e"] = leaves[a["nodes_falsenodeids"][k]] if a["nodes_falseleafs"][k] else nodes[a["nodes_falsenodeids"][k]]
    return [nodes[r] for r in a["tree_roots"]]


def declare_no_vote_point(op: Operator, versions: tuple[int, ...], voted_of, output: int = 0) -> None:
    """MIN/MAX over the trees when no tree votes for a target: the spec gives no value."""

    def where(inputs, attrs, expected, since):
        agg = attrs.get("aggregate_function", "SUM")
        agg = AGGREGATES[agg] if isinstance(agg, (int, np.integer)) else as_str(agg)
        if agg not in ("MIN", "MAX"):
            return [None] * len(expected)
        voted = voted_of(inputs, attrs)
        out: list = [None] * len(expected)
        if voted is not None and (~voted).any():
            out[output] = ~voted
        return out

    op.spec_silent(
        "no_vote", versions,
        spec="Defines how to aggregate leaf values within a target.",
        expected="a target no tree votes for scores 0 before base values and the post transform (an empty sum's value; "
                 "the MIN or MAX of no vote has none)",
        where=where,
        invariants={"the output keeps its shape": lambda c: np.shape(c.actual[output]) == np.shape(c.expected[output])})


# -- support vector machines --------------------------------------------------------------------------
KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def svm_kernel(kind: str, params, x: np.ndarray, sv: np.ndarray) -> np.ndarray:
    """[N, S] kernel values, libsvm's definitions (Chang & Lin, LIBSVM: a library for support vector
    machines, ACM TIST 2011, section 2): linear x.v, polynomial (gamma x.v + coef0)^degree,
    RBF exp(-gamma |x - v|^2), sigmoid tanh(gamma x.v + coef0); kernel_params = [gamma, coef0, degree]."""
    p = [float(np.float32(v)) for v in (list(params or []) + [0.0, 0.0, 0.0])[:3]]
    gamma, coef0, degree = p
    with np.errstate(all="ignore"):
        dot = x @ sv.T if x.shape[0] and sv.shape[0] else np.zeros((x.shape[0], sv.shape[0]))
        if kind == "LINEAR":
            return dot
        if kind == "POLY":
            return (gamma * dot + coef0) ** degree
        if kind == "RBF":
            d2 = np.array([[np.sum((xi - v) ** 2) for v in sv] for xi in x]).reshape(x.shape[0], sv.shape[0])
            return np.exp(-gamma * d2)
        if kind == "SIGMOID":
            return np.tanh(gamma * dot + coef0)
    raise ValueError(f"unknown kernel_type {kind!r}")
