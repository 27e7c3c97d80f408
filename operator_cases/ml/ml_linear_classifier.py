"""LinearClassifier (ai.onnx.ml): class scores Z = post_transform(X W^T + intercepts) and the top
class Y (ONNX spec: LinearClassifier-1).

W is coefficients reshaped [E, F] (one weight vector per class); intercepts optional (0);
multi_class (OvR or multinomial) names how the model was trained and does not change the
evaluation. The cases always give intercepts (zeros when the model has none): onnx's shape
inference takes the number of scores from the length of intercepts and infers 0 columns without
them, so a model without them fails the checker. Y is the label of the highest score (spec-silent ``tie``: the first of tied classes).

Spec-silent ``binary``: one weight vector (E = 1) with two class labels. The spec says one score per
class and nothing of this layout (the one scikit-learn's binary models export). We take the vector
as scoring the second class and the first class as its negation, Z = transform([-s, s]) and Y the
label of the higher one: labels[1] where s > 0, labels[0] where s < 0 (the decision function's
sign), whatever a backend writes into Z. Computed readings of Z: transform([1 - s, s]) (ONNX
Runtime's layout) and [1 - t(s), t(s)]; any other Z is a mismatch.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import (ML, TRANSFORMS, class_labels, declare_tie_point, declare_transform_points, edge_matrix, ensure_2d,
                       float_out, post_transform, top_class)

op = Operator("LinearClassifier", domain=ML)


def _labels(attrs):
    return class_labels(attrs, "classlabels_ints")


def raw_scores(x, coefficients, intercepts, n_labels):
    x = ensure_2d(np.asarray(x).astype(np.float64))
    w = np.asarray(coefficients, dtype=np.float32).astype(np.float64).reshape(-1, x.shape[1])
    b = np.asarray(intercepts if intercepts is not None else [0.0] * w.shape[0], dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        s = x @ w.T + b if x.shape[0] else np.zeros((0, w.shape[0]))
    if w.shape[0] == 1 and n_labels == 2:
        s = np.concatenate([-s, s], axis=1)
    return s


@op.reference(1)
def linear_classifier(x, *, coefficients, intercepts=None, classlabels_ints=None, classlabels_strings=None, multi_class=0,
                      post_transform="NONE"):
    labels = _labels({"classlabels_ints": classlabels_ints, "classlabels_strings": classlabels_strings})
    z = post_transform_(raw_scores(x, coefficients, intercepts, labels.size), post_transform)
    z32 = float_out(z)
    return top_class(z32.astype(np.float64), labels), z32


post_transform_ = post_transform
declare_transform_points(op, (1,), 1)
declare_tie_point(op, (1,), _labels, "Classification outputs (one class per example). [...] Classification scores ([N,E] - one score for each class and example")


def _binary(inputs, attrs, expected, since):
    labels = _labels(attrs)
    if labels.size != 2 or np.size(attrs["coefficients"]) != ensure_2d(np.asarray(inputs[0])).shape[1]:
        return [None, None]
    return [np.ones(np.shape(expected[0]), dtype=bool), np.ones(np.shape(expected[1]), dtype=bool)]


def _sign_rule(c):
    s = raw_scores(c.inputs[0], c.attrs["coefficients"], c.attrs.get("intercepts"), 2)[:, 1]
    labels = _labels(c.attrs)
    y = np.asarray(c.actual[0])
    if y.shape != s.shape:
        return False
    pos, neg = s > 0, s < 0
    return bool(np.all(y[pos] == labels[1]) and np.all(y[neg] == labels[0]))


def _binary_reading(layout):
    """A reading of ``binary``: Z = layout(s, post_transform) from the one raw score s; Y as ours (the sign of s, the invariant)."""
    def reading(c):
        s = raw_scores(c.inputs[0], c.attrs["coefficients"], c.attrs.get("intercepts"), 2)[:, 1:]
        with np.errstate(all="ignore"):
            return [None, float_out(layout(s, c.attrs.get("post_transform", "NONE")))]
    return reading


op.spec_silent(
    "binary", (1,),
    spec="A collection of weights of the model(s). [...] Classification scores ([N,E] - one score for each class and example",
    expected="one weight vector for two labels scores the second label; the first scores its negation: Z = transform([-s, s]), "
             "Y = labels[1] where s > 0, labels[0] otherwise",
    where=_binary,
    invariants={"Y is the second label where the raw score is positive, the first where it is negative": _sign_rule},
    readings={"the first class scores the complement 1 - s, then the transform: Z = transform([1 - s, s]) (ONNX Runtime with NONE)":
              _binary_reading(lambda s, how: post_transform_(np.concatenate([1 - s, s], axis=1), how)),
              "the transform of s alone and its complement: Z = [1 - t(s), t(s)]":
              _binary_reading(lambda s, how: np.concatenate([1 - post_transform_(s, how), post_transform_(s, how)], axis=1))})


def _label_attrs(d, k, strings):
    if strings:
        return {"classlabels_strings": [f"c{i}" for i in range(k)]}
    return {"classlabels_ints": sorted(d(S.st.lists(S.st.integers(-5, 9), min_size=k, max_size=k, unique=True)))}


@op.strategy(1)
def draw(d, dtype, opset):
    n, f = d(S.st.integers(0, 4)), d(S.st.integers(1, 4))
    k = d(S.st.integers(2, 4))
    rows = 1 if k == 2 and d(S.st.booleans()) else k
    how = d(S.st.sampled_from(TRANSFORMS))
    lo, hi = (-1, 1) if how == "PROBIT" else (-5, 5)
    x = S.arrays(d, dtype, shape=(n, f), lo=lo, hi=hi)
    scale = 0.05 if how == "PROBIT" else 1.0
    attrs = {"coefficients": [scale * d(S.st.floats(-2, 2, width=32)) for _ in range(rows * f)], "post_transform": how,
             **_label_attrs(d, k, d(S.st.booleans()))}
    if how == "PROBIT":
        attrs["intercepts"] = [0.5] * rows
    else:
        attrs["intercepts"] = [d(S.st.floats(-1, 1, width=32)) if d(S.st.booleans()) else 0.0 for _ in range(rows)]
    if d(S.st.booleans()):
        attrs["multi_class"] = 1
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    x = edge_matrix(dtype, 2)
    plain = np.array([[1, 2], [-3, 0], [2, -1]], dtype=dt)
    three = {"coefficients": [1.0, -2.0, 0.5, 3.0, 0.0, 0.0], "intercepts": [0.5, 0.25, 0.0], "classlabels_ints": [7, 8, 9]}
    out = [Example([x], three, name="edge_values"),
           Example([np.array([[1, 1], [2, 2]], dtype=dt)], {"coefficients": [1.0, 1.0, 1.0, 1.0], "intercepts": [0.0, 0.0], "classlabels_strings": ["b", "a"]},
                   name="tie"),
           Example([plain], {"coefficients": [1.0, -1.0], "intercepts": [0.5], "classlabels_strings": ["no", "yes"]}, name="binary"),
           Example([plain], {"coefficients": [1.0, -1.0], "intercepts": [0.0], "classlabels_ints": [0, 1], "post_transform": "LOGISTIC"}, name="binary_logistic"),
           Example([np.array([1, 2], dtype=dt)], three, name="one_dim"),
           Example([np.zeros((0, 2), dtype=dt)], three, name="empty")]
    for how in TRANSFORMS:
        coef = [0.1, -0.2, 0.05, 0.3, 0.0, 0.0] if how == "PROBIT" else three["coefficients"]
        out.append(Example([plain], {**three, "coefficients": coef, "post_transform": how, "multi_class": 1}, name=f"post_{how.lower()}"))
    return out
