"""scikit-learn models exported with skl2onnx (ai.onnx.ml domain).

The data are generated: an exam score from study hours and hours of sleep (LinearRegression),
pass or fail from the same (LogisticRegression), a grade A/B/C from four features
(RandomForestClassifier, and a StandardScaler + LogisticRegression Pipeline). The oracle is
``predict`` and, for classifiers, ``predict_proba``; ZipMap is disabled so the probabilities are
a tensor and not a sequence of maps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import FLOAT32_MODEL, BuiltModel, Say, built, check_export, data_set, missing_distributions, one_line, shape_tags

FRAMEWORK = "sklearn"
DISTRIBUTIONS = ("scikit-learn", "skl2onnx")
#: the opsets asked of the converter; the newest it has been tested with is added at build time
OPSETS = (13, 17)
BATCHES = (1, 64, 7)
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


def _estimators() -> list[tuple[str, Any, str]]:
    """(name, fitted estimator, data kind)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(SEED)
    x_study, score = _study_data(rng, 400)
    x_grade, grade = _grade_data(rng, 600)
    return [
        ("linear_regression", LinearRegression().fit(x_study, score), "study"),
        ("logistic_regression", LogisticRegression(max_iter=500).fit(x_study, (score >= 65).astype(np.int64)), "study"),
        ("random_forest", RandomForestClassifier(n_estimators=12, max_depth=5, random_state=0).fit(x_grade, grade), "grade"),
        ("pipeline_scaler_logreg", Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))]).fit(x_grade, grade), "grade"),
    ]


def _oracle(estimator: Any, x: np.ndarray) -> list[np.ndarray]:
    if hasattr(estimator, "predict_proba"):
        return [estimator.predict(x), estimator.predict_proba(x)]
    return [estimator.predict(x)]


def build(say: Say) -> Iterator[BuiltModel]:
    import skl2onnx
    import sklearn

    versions = {"framework_version": sklearn.__version__, "exporter": "skl2onnx", "exporter_version": skl2onnx.__version__}
    newest = int(skl2onnx.get_latest_tested_opset_version())
    opsets = sorted(set(OPSETS) | {newest})
    rng = np.random.default_rng(SEED + 1)
    for name, estimator, kind in _estimators():
        make = _study_data if kind == "study" else _grade_data
        input_sets = [(make(rng, n)[0],) for n in BATCHES]
        expected = [_oracle(estimator, x) for (x,) in input_sets]
        final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
        options = {id(final): {"zipmap": False}} if hasattr(final, "predict_proba") else None
        for opset in opsets:
            tags = {"suite": "models", "framework": FRAMEWORK, "model": name, "opset": opset, **versions,
                    **shape_tags(input_sets)}
            case_name = f"{name}/opset{opset}"
            try:
                model = skl2onnx.to_onnx(estimator, input_sets[0][0][:1], target_opset=opset, options=options)
                check_export(model, opset, input_sets)
                data = [data_set(model, ins, outs) for ins, outs in zip(input_sets, expected)]
            except Exception as exc:
                say(f"sklearn {case_name}: export failed: {one_line(exc, 200)}")
                yield built(case_name, None, [], tags, FLOAT32_MODEL, one_line(exc))
                continue
            yield built(case_name, model, data, tags, FLOAT32_MODEL)
