"""TreeEnsembleClassifier (ai.onnx.ml): class scores Z (the forest's summed votes per class plus
base_values, then the post transform) and the top class Y (ONNX spec: TreeEnsembleClassifier-1,
3, 5).

The nodes as in TreeEnsembleRegressor; the votes are class_treeids/class_nodeids/class_ids/
class_weights, "class_ids are indices into" the labels (classlabels_int64s or _strings). The
classifier has no aggregate_function: votes add up (SUM). Z is [N, E], E the number of labels;
Y the label of the highest score (spec-silent ``tie``: the first). -3 adds the *_as_tensor (double)
attributes; -5 is deprecated (registered, no cases).

Spec-silent ``binary``: two labels and every vote for one class. The text gives each class its sum of
votes, so the other class scores 0 (plus its base value): we take that literal reading,
Z = transform([0 + base0, s + base1]) (or mirrored), Y its argmax. ONNX Runtime (and scikit-learn
converters) instead derive the other score from the voted one (1 - s, or -s) and pick the label by
s > 0.5 or s > 0: a convention the spec does not state. The point's computed readings: the other
class scoring -s (a decision value) or 1 - s (a probability), transformed, Y the higher; any
other output (zeros, scores that ignore the votes) is a mismatch.
The binary_class0 examples vote for class 0 only: ONNX Runtime and onnx.reference move those votes
to the second label (scikit-learn converters' convention); the text ("The class_ids are indices
into this list") keeps them with the first, so that is no reading (see operator_cases/crosscheck.toml).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import (plain_attrs, ML, MODES, TRANSFORMS, class_labels, declare_tie_point, declare_transform_points, decode_legacy,
                       draw_base_values, draw_rows, draw_tree, encode_legacy, float_out, forest_scores, post_transform, top_class)

op = Operator("TreeEnsembleClassifier", domain=ML)
VERSIONS = (1, 3, 5)
LEGACY_MODES = MODES[:-1]


def _labels(attrs):
    return class_labels(attrs, "classlabels_int64s")


def _raw_scores(x, attrs):
    """[N, E] float64: each class's summed votes plus its base value, before the post transform."""
    attrs = plain_attrs(attrs)
    x = np.asarray(x)
    scores, _ = forest_scores(decode_legacy(attrs, "class"), x.reshape(1, -1) if x.ndim == 1 else x, _labels(attrs).size, "SUM")
    base = attrs.get("base_values_as_tensor")
    if base is not None:
        scores = scores + np.asarray(base, dtype=np.float64)
    elif attrs.get("base_values") is not None:
        scores = scores + np.asarray(attrs["base_values"], dtype=np.float32).astype(np.float64)
    return scores


def _finish(scores, attrs):
    z = float_out(post_transform(scores, plain_attrs(attrs).get("post_transform", "NONE")))
    return top_class(z.astype(np.float64), _labels(attrs)), z


@op.reference(*VERSIONS)
def tree_ensemble_classifier(x, **attrs):
    return _finish(_raw_scores(x, attrs), attrs)


declare_transform_points(op, VERSIONS, 1)
declare_tie_point(op, VERSIONS, _labels, "N, Top class for each point [...] The class score for each class, for each point, a tensor of shape [N,E].")


def _binary(inputs, attrs, expected, since):
    if _labels(attrs).size != 2 or len(set(attrs.get("class_ids", []))) != 1:
        return [None, None]
    return [np.ones(np.shape(e), dtype=bool) for e in expected]


def _binary_reading(other):
    """Scores [other(s), s] (mirrored when the votes are for class 0), s the voted class's votes plus its base
    value, then the post transform; Y the label of the higher score."""
    def reading(c):
        raw = _raw_scores(c.inputs[0], c.attrs)
        voted = int(next(iter(set(plain_attrs(c.attrs)["class_ids"]))))
        raw[:, 1 - voted] = other(raw[:, voted])
        return list(_finish(raw, c.attrs))
    return reading


op.spec_silent(
    "binary", VERSIONS,
    spec="Similarly, all fields prefixed with 'class_' are tuples of votes at the leaves. A leaf may have multiple votes, where each vote "
         "is weighted by the associated class_weights index. [...] The class_ids are indices into this list.",
    expected="each class scores the sum of its own votes: with two labels and votes for one class only, the other scores 0 "
             "(plus its base value); Y is the label of the higher transformed score",
    where=_binary,
    invariants={"Y is one of the two labels": lambda c: bool(np.all(np.isin(np.asarray(c.actual[0]).astype(object),
                                                                             _labels(c.attrs).astype(object))))},
    readings={"one decision value: the other class scores its negation (scikit-learn converters' binary layout)": _binary_reading(lambda s: -s),
              "one probability: the other class scores its complement 1 - s": _binary_reading(lambda s: 1.0 - s)})


def classifier_example(rng, dtype, since, n_trees, depth, n_classes, n_features, rows, transform, base, as_tensor, strings,
                       binary=False, name="", voted=1):
    trees = [draw_tree(rng, n_features, n_classes, depth, LEGACY_MODES, (1, n_classes),
                       (0.01, 0.3) if transform == "PROBIT" else (-2.0, 2.0)) for _ in range(n_trees)]
    if binary:  # every vote for one class (the layout binary models use: class 1; class 0 in the binary_class0 examples)
        for tree in trees:
            _retarget(tree, voted)
    attrs = encode_legacy(trees, "class", as_tensor=as_tensor and since >= 3)
    attrs["post_transform"] = transform
    if strings:
        attrs["classlabels_strings"] = [f"c{k}" for k in range(n_classes)]
    else:
        attrs["classlabels_int64s"] = sorted(int(v) for v in rng.choice(np.arange(-5, 20), size=n_classes, replace=False))
    if base:
        draw_base_values(rng, attrs, n_classes, as_tensor and since >= 3)
    return Example([draw_rows(rng, dtype, rows, n_features)], attrs, name=name)


def _retarget(node, target):
    if "leaf" in node:
        node["leaf"] = [(target, sum(w for _, w in node["leaf"]))]
    else:
        _retarget(node["t"], target)
        _retarget(node["e"], target)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    rng = np.random.default_rng(d(S.st.integers(0, 2**32 - 1)))
    k = d(S.st.integers(2, 4))
    return classifier_example(rng, dtype, opset, d(S.st.integers(1, 6)), d(S.st.integers(0, 3)), k, d(S.st.integers(1, 3)),
                              d(S.st.integers(0, 4)), d(S.st.sampled_from(TRANSFORMS)), d(S.st.booleans()), d(S.st.booleans()),
                              d(S.st.booleans()), binary=k == 2 and d(S.st.booleans()))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    rng = np.random.default_rng(4)
    out = [classifier_example(rng, dtype, opset, 300, 3, 3, 3, 4, "NONE", True, False, False, name="many_trees"),
           classifier_example(rng, dtype, opset, 3, 2, 3, 2, 0, "NONE", False, False, True, name="empty")]
    out += [classifier_example(rng, dtype, opset, 5, 3, 3, 3, 5, how, False, False, k % 2 == 0, name=f"post_{how.lower()}")
            for k, how in enumerate(TRANSFORMS)]
    out += [classifier_example(rng, dtype, opset, 5, 2, 2, 2, 5, how, base, False, False, binary=True, name=f"binary_{how.lower()}{'_base' if base else ''}")
            for how in ("NONE", "LOGISTIC") for base in (False, True)]
    if opset >= 3:
        out.append(classifier_example(rng, dtype, opset, 5, 3, 3, 3, 5, "NONE", True, True, True, name="as_tensor"))
    tie = encode_legacy([{"leaf": [(0, 1.0), (1, 1.0)]}], "class")
    tie.update(classlabels_strings=["b", "a"])
    out.append(Example([S.edge_values(dtype).reshape(-1, 1)], tie, name="tie_edge_values"))
    rng = np.random.default_rng(40)  # its own stream: the examples above stay as they were
    out += [classifier_example(rng, dtype, opset, 5, 2, 2, 2, 5, how, False, False, False, binary=True, voted=0,
                               name=f"binary_class0_{how.lower()}") for how in ("NONE", "LOGISTIC")]
    return out
