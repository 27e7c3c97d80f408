"""RoiAlign's batch index names "the index of the corresponding image in the batch": our
reference refuses one outside [0, N) (it used to wrap a negative one to an image counted from the
back), a case holding one is an oracle error the run shows, and the strategies never draw one."""

from __future__ import annotations

import numpy as np
import pytest

from harness.backends.reference import ReferenceBackend
from harness.worker import execute_case
from harness.registry import REGISTRY, Example, load_all
from harness.suites.operators import build_case, draw_examples

load_all()
X = np.arange(2 * 1 * 4 * 4, dtype=np.float32).reshape(2, 1, 4, 4)
ROIS = np.array([[0.0, 0.0, 2.0, 2.0]], np.float32)


@pytest.mark.parametrize("since", [10, 16, 22])
@pytest.mark.parametrize("index", [-1, 2])
def test_a_batch_index_outside_the_batch_is_refused(since, index):
    with pytest.raises(ValueError, match="batch index"):
        REGISTRY[("", "RoiAlign", since)].reference(X, ROIS, np.array([index], np.int64))


def test_a_case_with_a_negative_batch_index_is_an_oracle_error_shown_as_an_error():
    case = build_case(REGISTRY[("", "RoiAlign", 16)], Example([X, ROIS, np.array([-1], np.int64)], name="neg"), "float32", 16, "neg")
    assert "batch index -1" in case.tags.get("oracle_error", "")
    result = execute_case(ReferenceBackend(), case)
    assert result.outcome == "error" and "oracle error" in result.message


def test_an_index_inside_the_batch_still_selects_that_image():
    y = REGISTRY[("", "RoiAlign", 10)].reference(X, ROIS, np.array([1], np.int64), output_height=1, output_width=1)
    # 2 x 2 samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5) of image 1 (16 + 4 y + x)
    assert y.shape == (1, 1, 1, 1) and float(y.ravel()[0]) == 16 + 4 * 1.0 + 1.0


@pytest.mark.parametrize("since", [10, 16, 22])
def test_the_strategies_draw_batch_indices_inside_the_batch(since):
    for ex in draw_examples(REGISTRY[("", "RoiAlign", since)], "float32", since, 60, 0):
        x, _, b = ex.inputs
        assert b.min() >= 0 and b.max() < x.shape[0]
