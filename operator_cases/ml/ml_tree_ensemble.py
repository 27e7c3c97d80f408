"""TreeEnsemble (ai.onnx.ml): the aggregated leaf weights of a forest per target, then the post
transform, in the input's type (ONNX spec: TreeEnsemble-5).

Interior nodes and leaves are separate arrays: each interior node compares feature
nodes_featureids[i] with nodes_splits[i] by nodes_modes[i] (0 BRANCH_LEQ x <= s, 1 BRANCH_LT,
2 BRANCH_GTE, 3 BRANCH_GT, 4 BRANCH_EQ, 5 BRANCH_NEQ, 6 BRANCH_MEMBER: x in its set, the sets listed
in membership_values in node order, delimited by NaN), and follows its true or false branch, a
node or (nodes_*leafs = 1) a leaf. A NaN feature follows nodes_missing_value_tracks_true (false by
default), whatever the mode. Each leaf adds leaf_weights[j] to target leaf_targetids[j];
aggregate_function 0 AVERAGE (the sum over the trees divided by their number), 1 SUM, 2 MIN,
3 MAX; post_transform 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT (see _ml_util).
Computed in float64 (the splits, weights and input compared exactly), rounded once to T.
Spec-silent: ``no_vote`` (MIN/MAX of a target no tree reaches) and the transforms' points.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import (plain_attrs, AGGREGATES, ML, MODES, TRANSFORMS, declare_no_vote_point, declare_transform_points, decode_v5,
                       draw_rows, draw_tree, encode_v5, forest_scores, post_transform)

op = Operator("TreeEnsemble", domain=ML)


def _scores(x, attrs):
    attrs = plain_attrs(attrs)
    trees = decode_v5(attrs)
    return forest_scores(trees, np.asarray(x), int(attrs["n_targets"]), AGGREGATES[int(attrs.get("aggregate_function", 1))])


@op.reference(5)
def tree_ensemble(x, **attrs):
    attrs = plain_attrs(attrs)
    scores, _ = _scores(x, attrs)
    with np.errstate(all="ignore"):
        return post_transform(scores, int(attrs.get("post_transform", 0))).astype(np.asarray(x).dtype)


declare_transform_points(op, (5,), 0)
declare_no_vote_point(op, (5,), lambda inputs, attrs: _scores(inputs[0], attrs)[1])


def forest_example(rng, dtype, n_trees, depth, n_targets, n_features, rows, aggregate, transform, modes=MODES, name=""):
    trees = [draw_tree(rng, n_features, n_targets, depth, modes, (1, 1),
                       (0.01, 0.3) if transform == "PROBIT" else (-2.0, 2.0)) for _ in range(n_trees)]
    attrs = encode_v5(trees, dtype)
    attrs.update(n_targets=n_targets, aggregate_function=AGGREGATES.index(aggregate), post_transform=TRANSFORMS.index(transform))
    return Example([draw_rows(rng, dtype, rows, n_features)], attrs, name=name)


@op.strategy(5)
def draw(d, dtype, opset):
    rng = np.random.default_rng(d(S.st.integers(0, 2**32 - 1)))
    return forest_example(rng, dtype, d(S.st.integers(1, 6)), d(S.st.integers(0, 3)), d(S.st.integers(1, 3)), d(S.st.integers(1, 3)),
                          d(S.st.integers(0, 4)), d(S.st.sampled_from(AGGREGATES)), d(S.st.sampled_from(TRANSFORMS)))


@op.edges(5)
def edges(dtype, opset):
    rng = np.random.default_rng(5)
    out = [forest_example(rng, dtype, 300, 3, 2, 3, 4, "SUM", "NONE", name="many_trees"),
           forest_example(rng, dtype, 4, 2, 2, 2, 0, "SUM", "NONE", name="empty")]
    out += [forest_example(rng, dtype, 6, 3, 3, 3, 5, agg, "NONE", name=f"aggregate_{agg.lower()}") for agg in AGGREGATES]
    out += [forest_example(rng, dtype, 5, 3, 3, 3, 5, "SUM", how, name=f"post_{how.lower()}") for how in TRANSFORMS]
    out += [forest_example(rng, dtype, 8, 2, 1, 2, 6, "SUM", "NONE", modes=(mode,), name=f"mode_{mode.lower()}") for mode in MODES]
    one_leaf = encode_v5([{"leaf": [(0, 1.5)]}, {"f": 0, "v": 0.0, "mode": "BRANCH_LEQ", "nan_true": 1, "t": {"leaf": [(0, 1.0)]},
                                                "e": {"leaf": [(0, -1.0)]}}], dtype)
    one_leaf.update(n_targets=1)
    x = S.edge_values(dtype).reshape(-1, 1)
    out.append(Example([x], one_leaf, name="one_leaf_tree_edge_values"))
    return out
