"""SVMClassifier (ai.onnx.ml): a one-vs-one support vector classifier, libsvm's model layout
(ONNX spec: SVMClassifier-1).

The spec gives the attribute names only; the layout and evaluation are libsvm's (Chang & Lin,
"LIBSVM: a library for support vector machines", ACM TIST 2(3), 2011, sections 7 and 8; svm.cpp
svm_predict_values / svm_predict_probability), which the ONNX-ML converters export:
support_vectors holds the vectors grouped by class (vectors_per_class[c] of class c),
coefficients is libsvm's sv_coef, (C - 1) rows of nSV values, rho one value per pair (i < j, in
order). For the pair (i, j): d_ij = sum_{k in class i} coef[j-1][k] K(x, sv_k) + sum_{k in class j}
coef[i][k] K(x, sv_k) + rho_ij (rho added, as the converters store libsvm's -rho, the same
reading as SVMRegressor), and class i wins the vote when d_ij > 0, j otherwise.
Without prob_a/prob_b: Y is the class with the most votes (spec-silent ``vote_tie``: the first of
tied classes, libsvm's choice) and Z its raw scores, which we take as the votes per class (the
text: "Class scores (one per class per example)"; spec-silent ``raw_scores``, whose computed readings
are the runtimes' layouts where they have our shape: the pairwise decision values with three
classes, [-d, d] with two, each transformed).
With prob_a/prob_b (Platt scaling per pair): r_ij = 1 / (1 + exp(A_ij d_ij + B_ij)) clipped to
[1e-7, 1 - 1e-7], r_ji = 1 - r_ij, then the class probabilities by pairwise coupling, Wu, Lin and
Weng, "Probability estimates for multi-class classification by pairwise coupling", JMLR 5 (2004),
method 2, with libsvm's iteration (multiclass_probability: at most max(100, C) sweeps, stop when
max |Qp - pQp| < 0.005 / C); Y the most probable class. Then the post transform on Z.
Computed in float64; Z rounded once to float32.
"""


import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import (KERNELS, ML, TRANSFORMS, as_str, class_labels, declare_transform_points, ensure_2d, float_out, plain_attrs,
                       post_transform, svm_kernel)

op = Operator("SVMClassifier", domain=ML)


def _labels(attrs):
    return class_labels(attrs, "classlabels_ints")


def decisions(x, a):
    """[N, P] pairwise decision values and [N, C] votes."""
    x = ensure_2d(np.asarray(x).astype(np.float64))
    nsv = [int(v) for v in a["vectors_per_class"]]
    c, total = len(nsv), sum(nsv)
    sv = np.asarray(a["support_vectors"], dtype=np.float32).astype(np.float64).reshape(total, x.shape[1])
    coef = np.asarray(a["coefficients"], dtype=np.float32).astype(np.float64).reshape(c - 1, total)
    rho = np.asarray(a["rho"], dtype=np.float32).astype(np.float64)
    k = svm_kernel(as_str(a.get("kernel_type", "LINEAR")), a.get("kernel_params"), x, sv)
    start = np.concatenate([[0], np.cumsum(nsv)]).astype(int)
    dec, votes = [], np.zeros((x.shape[0], c))
    p = 0
    with np.errstate(all="ignore"):
        for i in range(c):
            for j in range(i + 1, c):
                si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
                d = k[:, si] @ coef[j - 1, si] + k[:, sj] @ coef[i, sj] + rho[p]
                dec.append(d)
                votes[:, i] += d > 0
                votes[:, j] += ~(d > 0)
                p += 1
    return np.stack(dec, axis=1) if dec else np.zeros((x.shape[0], 0)), votes


def _sigmoid_predict(d, a, b):
    f = d * a + b
    with np.errstate(all="ignore"):
        return np.where(f >= 0, np.exp(-f) / (1 + np.exp(-f)), 1 / (1 + np.exp(f)))


def coupling(r: np.ndarray) -> np.ndarray:
    """Wu, Lin & Weng (2004) method 2 as libsvm iterates it: the class probabilities p from the
    pairwise ones r[i][j] (r[j][i] = 1 - r[i][j])."""
    k = r.shape[0]
    q = np.zeros((k, k))
    for t in range(k):
        for j in range(t):
            q[t, t] += r[j, t] * r[j, t]
            q[t, j] = q[j, t]
        for j in range(t + 1, k):
            q[t, t] += r[j, t] * r[j, t]
            q[t, j] = -r[j, t] * r[t, j]
    p = np.full(k, 1.0 / k)
    eps = 0.005 / k
    for _ in range(max(100, k)):
        qp = q @ p
        pqp = float(p @ qp)
        if np.max(np.abs(qp - pqp)) < eps:
            break
        for t in range(k):
            diff = (-qp[t] + pqp) / q[t, t]
            p[t] += diff
            pqp = (pqp + diff * (diff * q[t, t] + 2 * qp[t])) / (1 + diff) / (1 + diff)
            qp = (qp + diff * q[t]) / (1 + diff)
            p = p / (1 + diff)
    return p


def probabilities(dec, a):
    c = len(a["vectors_per_class"])
    pa = np.asarray(a["prob_a"], dtype=np.float32).astype(np.float64)
    pb = np.asarray(a["prob_b"], dtype=np.float32).astype(np.float64)
    out = np.zeros((dec.shape[0], c))
    for n in range(dec.shape[0]):
        r = np.zeros((c, c))
        p = 0
        for i in range(c):
            for j in range(i + 1, c):
                v = min(max(float(_sigmoid_predict(dec[n, p], pa[p], pb[p])), 1e-7), 1 - 1e-7)
                r[i, j], r[j, i] = v, 1 - v
                p += 1
        out[n] = coupling(r)
    return out


@op.reference(1)
def svm_classifier(x, **attrs):
    a = plain_attrs(attrs)
    labels = _labels(a)
    dec, votes = decisions(x, a)
    if a.get("prob_a") is not None and a.get("prob_b") is not None:
        z = probabilities(dec, a)
        y = labels[np.argmax(z, axis=1)] if z.shape[0] else labels[:0]
    else:
        z = votes
        y = labels[np.argmax(votes, axis=1)] if votes.shape[0] else labels[:0]
    return y, float_out(post_transform(z, a.get("post_transform", "NONE")))


declare_transform_points(op, (1,), 1)


def _no_proba(a):
    return a.get("prob_a") is None or a.get("prob_b") is None


def _vote_tie(inputs, attrs, expected, since):
    a = plain_attrs(attrs)
    if not _no_proba(a):
        return [None, None]
    _, votes = decisions(inputs[0], a)
    if votes.shape[0] == 0:
        return [None, None]
    tied = np.sum(votes == votes.max(axis=1, keepdims=True), axis=1) > 1
    return [tied if tied.any() else None, None]


def _among_winners(c):
    a = plain_attrs(c.attrs)
    _, votes = decisions(c.inputs[0], a)
    labels = _labels(a)
    y = np.asarray(c.actual[0])
    return bool(all(as_str(y[i]) in {as_str(v) for v in labels[votes[i] == votes[i].max()]} for i in np.nonzero(c.masks[0])[0]))


op.spec_silent(
    "vote_tie", (1,),
    spec="Classification outputs (one class per example).",
    expected="the first of the classes with the most one-vs-one votes (libsvm's svm_predict_values)",
    where=_vote_tie, invariants={"the label is one of the classes with the most votes": _among_winners})


def _raw(inputs, attrs, expected, since):
    return [None, np.ones(np.shape(expected[1]), dtype=bool)] if _no_proba(plain_attrs(attrs)) else [None, None]


def _decision_scores(c, pairs: bool):
    """A reading of ``raw_scores``: Z from the decision values (None where its shape is not [N, C])."""
    a = plain_attrs(c.attrs)
    dec, votes = decisions(c.inputs[0], a)
    classes = votes.shape[1]
    if pairs and dec.shape[1] == classes:
        z = dec
    elif not pairs and classes == 2:
        z = np.concatenate([-dec, dec], axis=1)
    else:
        return [None, None]
    return [None, float_out(post_transform(z, a.get("post_transform", "NONE")))]


op.spec_silent(
    "raw_scores", (1,),
    spec="Class scores (one per class per example), if prob_a and prob_b are provided they are probabilities for each class, "
         "otherwise they are raw scores.",
    expected="the one-vs-one votes per class (one score per class, as the text asks; the decision values are one per pair of classes)",
    where=_raw, invariants={"Z has one row per example": lambda c: np.shape(c.actual[1])[:1] == np.shape(c.expected[1])[:1]},
    readings={"the pairwise decision values, one per pair in libsvm's order, then the post transform (ONNX Runtime, onnx.reference; "
              "shaped like one per class with three classes only)": lambda c: _decision_scores(c, pairs=True),
              "two classes: the decision value d as [-d, d], then the post transform (ONNX Runtime)": lambda c: _decision_scores(c, pairs=False)})


def svc_example(rng, dtype, n, f, k, per, kind, proba, how, strings, name=""):
    u = lambda lo, hi, size=None: np.float32(rng.uniform(lo, hi, size)).astype(np.float64)  # noqa: E731
    nsv = [int(v) for v in rng.integers(1, per + 1, k)]
    total = sum(nsv)
    x = u(-2, 2, (n, f))
    x = x.astype(S.np_dtype(dtype)) if S.is_float(dtype) else np.round(x).astype(S.np_dtype(dtype))
    attrs = {"vectors_per_class": nsv, "support_vectors": list(u(-2, 2, total * f)), "coefficients": list(u(-1, 1, (k - 1) * total)),
             "rho": list(u(-1, 1, k * (k - 1) // 2)), "kernel_type": kind, "post_transform": how}
    if kind != "LINEAR":
        attrs["kernel_params"] = [float(u(0.05, 0.5)), float(u(-1, 1)), float(rng.integers(1, 4))]
    if proba:
        attrs["prob_a"] = list(u(-3, -0.5, k * (k - 1) // 2))
        attrs["prob_b"] = list(u(-0.5, 0.5, k * (k - 1) // 2))
    if strings:
        attrs["classlabels_strings"] = [f"c{i}" for i in range(k)]
    else:
        attrs["classlabels_ints"] = [int(v) for v in sorted(rng.choice(np.arange(-5, 20), k, replace=False))]
    return Example([x], attrs, name=name)


@op.strategy(1)
def draw(d, dtype, opset):
    rng = np.random.default_rng(d(S.st.integers(0, 2**32 - 1)))
    return svc_example(rng, dtype, d(S.st.integers(0, 4)), d(S.st.integers(1, 3)), d(S.st.integers(2, 4)), 3, d(S.st.sampled_from(KERNELS)),
                       d(S.st.booleans()), d(S.st.sampled_from(TRANSFORMS)), d(S.st.booleans()))


@op.edges(1)
def edges(dtype, opset):
    rng = np.random.default_rng(7)
    out = [svc_example(rng, dtype, 4, 3, 3, 3, kind, proba, "NONE", proba, name=f"{kind.lower()}{'_proba' if proba else ''}")
           for kind in KERNELS for proba in (False, True)]
    out += [svc_example(rng, dtype, 3, 2, 2, 2, "RBF", True, "NONE", False, name="binary_proba"),
            svc_example(rng, dtype, 3, 2, 2, 2, "RBF", False, "NONE", True, name="binary"),
            svc_example(rng, dtype, 0, 2, 3, 2, "RBF", True, "NONE", False, name="empty"),
            svc_example(rng, dtype, 3, 2, 4, 40, "RBF", True, "NONE", False, name="many_support_vectors")]
    out += [svc_example(rng, dtype, 3, 2, 3, 2, "LINEAR", True, how, False, name=f"post_{how.lower()}") for how in TRANSFORMS]
    tie = {"vectors_per_class": [1, 1, 1], "support_vectors": [0.0, 0.0, 0.0], "coefficients": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
           "rho": [1.0, -1.0, 1.0], "kernel_type": "LINEAR", "classlabels_ints": [4, 5, 6]}
    out.append(Example([S.edge_values(dtype).reshape(-1, 1)], tie, name="vote_tie_edge_values"))
    return out
