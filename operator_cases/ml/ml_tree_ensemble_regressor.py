"""TreeEnsembleRegressor (ai.onnx.ml): the aggregated leaf votes of a forest per target, plus
base_values, then the post transform, in float (ONNX spec: TreeEnsembleRegressor-1, 3, 5).

Nodes are tuples (nodes_treeids, nodes_nodeids, nodes_featureids, nodes_values, nodes_modes,
nodes_truenodeids, nodes_falsenodeids, nodes_missing_value_tracks_true); the children are node ids
of the same tree; a LEAF node carries the votes (target_treeids, target_nodeids, target_ids,
target_weights) whose tree and node ids name it, "a leaf may have multiple votes". Modes BRANCH_LEQ,
_LT, _GTE, _GT, _EQ, _NEQ compare the feature with nodes_values; a NaN feature follows
nodes_missing_value_tracks_true (false by default). aggregate_function AVERAGE (the sum divided by
the number of trees), SUM, MIN, MAX; base_values "added to final prediction after applying
aggregate_function" (-3 text); then post_transform (see _ml_util). -3 adds the *_as_tensor
(double) attributes; -5 is the same op, deprecated (no valid model holds it: registered, no cases).
Computed in float64, rounded once to float32. Spec-silent: ``no_vote``, the transforms' points.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import (plain_attrs, AGGREGATES, ML, MODES, TRANSFORMS, as_str, declare_no_vote_point, declare_transform_points, decode_legacy,
                       draw_base_values, draw_rows, draw_tree, encode_legacy, float_out, forest_scores, post_transform)

op = Operator("TreeEnsembleRegressor", domain=ML)
VERSIONS = (1, 3, 5)
LEGACY_MODES = MODES[:-1]


def _scores(x, attrs):
    attrs = plain_attrs(attrs)
    trees = decode_legacy(attrs, "target")
    n_targets = int(attrs.get("n_targets", 1))
    x = np.asarray(x)
    return forest_scores(trees, x.reshape(1, -1) if x.ndim == 1 else x, n_targets, as_str(attrs.get("aggregate_function", "SUM")))


@op.reference(*VERSIONS)
def tree_ensemble_regressor(x, **attrs):
    attrs = plain_attrs(attrs)
    scores, _ = _scores(x, attrs)
    base = attrs.get("base_values_as_tensor")
    base = base if base is not None else attrs.get("base_values")
    if base is not None:
        scores = scores + np.asarray(base, dtype=np.float64 if attrs.get("base_values_as_tensor") is not None else np.float32).astype(np.float64)
    return float_out(post_transform(scores, attrs.get("post_transform", "NONE")))


declare_transform_points(op, VERSIONS, 0)
declare_no_vote_point(op, VERSIONS, lambda inputs, attrs: _scores(inputs[0], attrs)[1])


def regressor_example(rng, dtype, since, n_trees, depth, n_targets, n_features, rows, aggregate, transform, base, as_tensor, name=""):
    trees = [draw_tree(rng, n_features, n_targets, depth, LEGACY_MODES, (1, 2),
                       (0.01, 0.3) if transform == "PROBIT" else (-2.0, 2.0)) for _ in range(n_trees)]
    attrs = encode_legacy(trees, "target", as_tensor=as_tensor and since >= 3)
    attrs.update(n_targets=n_targets, aggregate_function=aggregate, post_transform=transform)
    if base:
        draw_base_values(rng, attrs, n_targets, as_tensor and since >= 3)
    return Example([draw_rows(rng, dtype, rows, n_features)], attrs, name=name)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    rng = np.random.default_rng(d(S.st.integers(0, 2**32 - 1)))
    return regressor_example(rng, dtype, opset, d(S.st.integers(1, 6)), d(S.st.integers(0, 3)), d(S.st.integers(1, 3)),
                             d(S.st.integers(1, 3)), d(S.st.integers(0, 4)), d(S.st.sampled_from(AGGREGATES)),
                             d(S.st.sampled_from(TRANSFORMS)), d(S.st.booleans()), d(S.st.booleans()))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    rng = np.random.default_rng(3)
    out = [regressor_example(rng, dtype, opset, 300, 3, 2, 3, 4, "SUM", "NONE", True, False, name="many_trees"),
           regressor_example(rng, dtype, opset, 4, 2, 2, 2, 0, "SUM", "NONE", False, False, name="empty")]
    out += [regressor_example(rng, dtype, opset, 6, 3, 3, 3, 5, agg, "NONE", True, False, name=f"aggregate_{agg.lower()}") for agg in AGGREGATES]
    out += [regressor_example(rng, dtype, opset, 5, 3, 3, 3, 5, "SUM", how, False, False, name=f"post_{how.lower()}") for how in TRANSFORMS]
    out += [regressor_example(rng, dtype, opset, 8, 2, 1, 2, 6, "SUM", "NONE", False, False, name=f"mode_{m.lower()}")
            for m in LEGACY_MODES]
    for ex, m in zip(out[-len(LEGACY_MODES):], LEGACY_MODES):  # one mode per example
        ex.attrs["nodes_modes"] = [v if v == "LEAF" else m for v in ex.attrs["nodes_modes"]]
    if opset >= 3:
        out.append(regressor_example(rng, dtype, opset, 5, 3, 2, 3, 5, "SUM", "NONE", True, True, name="as_tensor"))
    one = encode_legacy([{"leaf": [(0, 1.5)]}, {"f": 0, "v": 0.0, "mode": "BRANCH_LEQ", "nan_true": 1, "t": {"leaf": [(0, 1.0)]},
                                                "e": {"leaf": [(0, -1.0)]}}], "target")
    one.update(n_targets=1)
    out.append(Example([S.edge_values(dtype).reshape(-1, 1)], one, name="one_leaf_tree_edge_values"))
    return out
