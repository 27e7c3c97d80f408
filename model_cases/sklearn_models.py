"""scikit-learn models exported with skl2onnx (ai.onnx.ml domain).

The data are generated: an exam score from study hours and hours of sleep (LinearRegression),
pass or fail from the same (LogisticRegression), a grade A/B/C from four features
(RandomForestClassifier, and a StandardScaler + LogisticRegression Pipeline), and with the other
estimator families users ship: GradientBoostingClassifier, an RBF SVC with probabilities (Platt
scaling; scikit-learn 1.9 deprecates ``probability=True``, to be removed in 1.11), k-nearest
neighbours, and a text pipeline (TfidfVectorizer + LogisticRegression on short generated film
reviews, strings of shape [N, 1]; skl2onnx tokenizes with ONNX Runtime's contrib op
``com.microsoft.Tokenizer``, so runtimes without that domain cannot load it). The oracle is
``predict`` and, for classifiers, ``predict_proba``; ZipMap is disabled so the probabilities are
a tensor and not a sequence of maps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import FLOAT32_MODEL, BuiltModel, Say, built, check_export, data_set, missing_distributions, one_line, quiet_output, shape_tags

FRAMEWORK = "sklearn"
DISTRIBUTIONS = ("scikit-learn", "skl2onnx")
#: the opsets asked of the converter; the newest it has been tested with is added at build time
OPSETS = (13, 17)
BATCHES = (1, 64, 7)
#: StringNormalizer's locale in the text pipeline. skl2onnx leaves it unset, and ONNX Runtime
#: then builds ``en_US.UTF-8``, which a machine without that locale installed (a slim container)
#: cannot construct: the session fails before computing anything. The reviews are lowercase
#: ASCII words, which every locale lowercases alike; ``C.UTF-8`` is present wherever glibc is.
TEXT_LOCALE = "C.UTF-8"
SEED = 20261122


def missing() -> str | None:
    absent = missing_distributions(DISTRIBUTIONS)
    return f"{' and '.join(absent)} not installed (pip install scikit-learn skl2onnx)" if absent else None


def _study_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    hours = rng.uniform(0, 10, n)
    sleep = rng.uniform(4, 9, n)
    score = 35 + 5.5 * hours + 2.0 * sleep + rng.normal(0, 3, n)
    return np.stack([hours, sleep], axis=1).astype(np.float32), score


def _grade_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    hours = rng.uniform(0, 10, n)
    sleep = rng.uniform(4, 9, n)
    attendance = rng.uniform(0.4, 1.0, n)
    previous = rng.uniform(30, 100, n)
    score = 10 + 4 * hours + 1.5 * sleep + 25 * attendance + 0.3 * previous + rng.normal(0, 4, n)
    grade = np.digitize(score, [60, 75]).astype(np.int64)  # 0 = C, 1 = B, 2 = A
    return np.stack([hours, sleep, attendance, previous], axis=1).astype(np.float32), grade


REVIEWS = (
    ("great", "excellent", "loved", "wonderful", "superb", "fun", "moving", "brilliant"),
    ("awful", "boring", "hated", "dull", "terrible", "slow", "weak", "clumsy"),
    ("the", "film", "plot", "acting", "was", "and", "a", "story", "cast", "ending", "very", "quite"),
)


def _review_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Short film reviews of 4..9 words drawn from positive, negative and neutral words; the
    label is the sign of positive minus negative words (ties positive). Strings, shape [N, 1]:
    the layout skl2onnx's text converters take."""
    texts, labels = [], []
    for _ in range(n):
        words = [str(w) for w in rng.choice(REVIEWS[2], rng.integers(2, 5))]
        pos, neg = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        words += [str(w) for w in rng.choice(REVIEWS[0], pos)] + [str(w) for w in rng.choice(REVIEWS[1], neg)]
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(int(pos >= neg))
    return np.array(texts, dtype=object).reshape(n, 1), np.array(labels, dtype=np.int64)


def _estimators() -> list[tuple[str, Any, str]]:
    """(name, fitted estimator, data kind)."""
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(SEED)
    x_study, score = _study_data(rng, 400)
    x_grade, grade = _grade_data(rng, 600)
    x_text, sentiment = _review_data(rng, 300)
    return [
        ("linear_regression", LinearRegression().fit(x_study, score), "study"),
        ("logistic_regression", LogisticRegression(max_iter=500).fit(x_study, (score >= 65).astype(np.int64)), "study"),
        ("random_forest", RandomForestClassifier(n_estimators=12, max_depth=5, random_state=0).fit(x_grade, grade), "grade"),
        ("pipeline_scaler_logreg", Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))]).fit(x_grade, grade), "grade"),
        ("gradient_boosting", GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(x_grade, grade), "grade"),
        ("svc_rbf_proba", Pipeline([("scale", StandardScaler()), ("svc", SVC(probability=True, random_state=0))]).fit(x_grade, grade), "grade"),
        ("knn", Pipeline([("scale", StandardScaler()), ("knn", KNeighborsClassifier(n_neighbors=5))]).fit(x_grade, grade), "grade"),
        ("tfidf_logreg", Pipeline([("tfidf", TfidfVectorizer()), ("clf", LogisticRegression(max_iter=500))]).fit(x_text.ravel(), sentiment), "text"),
    ]


def _oracle(estimator: Any, x: np.ndarray) -> list[np.ndarray]:
    if x.dtype == object:  # documents: the graph takes [N, 1] strings, the estimator a list of N
        x = x.ravel()
    if hasattr(estimator, "predict_proba"):
        return [estimator.predict(x), estimator.predict_proba(x)]
    return [estimator.predict(x)]


def _convert(skl2onnx: Any, estimator: Any, kind: str, sample: np.ndarray, opset: int, options: dict | None) -> Any:
    if kind == "text":
        from skl2onnx.common.data_types import StringTensorType

        tfidf = estimator.steps[0][1]
        return skl2onnx.to_onnx(estimator, initial_types=[("text", StringTensorType([None, 1]))], target_opset=opset,
                                options={**(options or {}), id(tfidf): {"separators": [" "], "locale": TEXT_LOCALE}})
    return skl2onnx.to_onnx(estimator, sample[:1], target_opset=opset, options=options)


def build(say: Say) -> Iterator[BuiltModel]:
    import skl2onnx
    import sklearn

    versions = {"framework_version": sklearn.__version__, "exporter": "skl2onnx", "exporter_version": skl2onnx.__version__}
    newest = int(skl2onnx.get_latest_tested_opset_version())
    opsets = sorted(set(OPSETS) | {newest})
    rng = np.random.default_rng(SEED + 1)
    for name, estimator, kind in _estimators():
        make = {"study": _study_data, "grade": _grade_data, "text": _review_data}[kind]
        input_sets = [(make(rng, n)[0],) for n in BATCHES]
        expected = [_oracle(estimator, x) for (x,) in input_sets]
        final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
        options = {id(final): {"zipmap": False}} if hasattr(final, "predict_proba") else None
        for opset in opsets:
            tags = {"suite": "models", "framework": FRAMEWORK, "model": name, "opset": opset, **versions,
                    **shape_tags(input_sets)}
            case_name = f"{name}/opset{opset}"
            try:
                with quiet_output():  # SVC's probA_/probB_ deprecation warnings (scikit-learn 1.9) as skl2onnx reads them
                    model = _convert(skl2onnx, estimator, kind, input_sets[0][0], opset, options)
                check_export(model, opset, input_sets)
                data = [data_set(model, ins, outs) for ins, outs in zip(input_sets, expected)]
            except Exception as exc:
                say(f"sklearn {case_name}: export failed: {one_line(exc, 200)}")
                yield built(case_name, None, [], tags, FLOAT32_MODEL, one_line(exc))
                continue
            yield built(case_name, model, data, tags, FLOAT32_MODEL)
