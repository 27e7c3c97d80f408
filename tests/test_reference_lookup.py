"""The judge hands a spec-silent point's invariants the op-version's own reference: for an
ai.onnx.ml op too (it was looked up in the ai.onnx domain, so ai.onnx.ml ops got None)."""

from __future__ import annotations

import numpy as np

from harness.compare import Comparator, Verdict
from harness.worker import _spec_silent
from harness.registry import REGISTRY, Example, load_all
from harness.suites.operators import build_case


class _Spy(Comparator):
    """Records the reference ``spec_silent`` is handed."""

    def spec_silent(self, verdict, points, inputs, attrs, expected, actual, tolerance, since=0, reference=None):
        self.reference = reference
        return verdict


def _judged_reference(domain, op, since, x):
    load_all()
    opv = REGISTRY[(domain, op, since)]
    case = build_case(opv, Example([x], name="nan"), "float32", since, "nan")
    assert case.tags.get("spec_silent"), case.tags  # the case reaches a point: the judge is called
    model, (ds,) = case.load_model(), case.load_data(case.load_model())
    spy = _Spy()
    _spec_silent(spy, Verdict("mismatch"), case, model, ds, [np.full_like(ds.expected[0], 7)], None)
    return spy.reference, opv.reference


def test_an_ai_onnx_ml_point_is_handed_its_op_versions_reference():
    got, want = _judged_reference("ai.onnx.ml", "Binarizer", 1, np.array([np.nan, 1.0, -1.0], np.float32))
    assert got is want and got is not None


def test_an_ai_onnx_point_is_handed_its_op_versions_reference():
    got, want = _judged_reference("", "Max", 8, np.array([np.nan, 1.0], np.float32))
    assert got is want and got is not None
