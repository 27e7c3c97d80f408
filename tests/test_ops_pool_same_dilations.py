"""MaxPool and AveragePool with auto_pad SAME_* and dilations: the output shape and the windows
the text fixes (ONNX Runtime and onnx.reference both derive the SAME pads from the undilated
kernel, often to the same wrong shape: operator_cases/crosscheck.toml decides for the text).

MaxPool-10/12 and AveragePool-19: 'SAME_UPPER or SAME_LOWER: output_spatial_shape[i] =
ceil(input_spatial_shape[i] / strides_spatial_shape[i])' and 'pad_shape[i] =
(output_spatial_shape[i] - 1) * strides_spatial_shape[i] + ((kernel_spatial_shape[i] - 1) *
dilations[i] + 1) - input_spatial_shape[i]', the odd cell of padding at the end for SAME_UPPER
and at the beginning for SAME_LOWER."""

import itertools

import numpy as np
import pytest

from operator_cases.nn import average_pool, max_pool

REFS = {
    "max": lambda x, **a: (max_pool.max_pool_10(x, **a)[0], max_pool.max_pool_22(x, **a)[0]),
    "average": lambda x, **a: (average_pool.average_pool_19(x, **a), average_pool.average_pool_22(x, **a)),
}


def by_the_text(x, kernel, dilation, stride, mode, how):
    """One spatial axis, written out from the text: the padded cells are left out (MaxPool:
    'exclude pad'; AveragePool: count_include_pad 0)."""
    size = x.shape[-1]
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size)
    begin = total // 2 if mode == "SAME_UPPER" else total - total // 2
    y = []
    for o in range(out):
        cells = [o * stride - begin + j * dilation for j in range(kernel)]
        vals = [x[..., c] for c in cells if 0 <= c < size]
        if not vals:
            return None  # a window of padding only: the max or mean of no element, which the text leaves open
        y.append(np.max(vals, axis=0) if how == "max" else np.mean(vals, axis=0))
    return np.stack(y, axis=-1)


def test_the_findings_example_gives_two_windows():
    x = np.array([[[[1.0, 2.0, 3.0, 4.0, 5.0]]]], dtype=np.float32)
    attrs = {"kernel_shape": [1, 2], "dilations": [1, 2], "strides": [1, 3], "auto_pad": "SAME_LOWER"}
    for y in REFS["max"](x, **attrs):
        assert y.tolist() == [[[[2.0, 5.0]]]]
    for y in REFS["average"](x, **attrs):
        assert y.tolist() == [[[[2.0, 4.0]]]]


@pytest.mark.parametrize("how", ["max", "average"])
@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
def test_same_with_dilations_follows_the_text_shape_and_windows(how, mode):
    rng = np.random.default_rng(7)
    checked = 0
    for size, kernel, dilation, stride in itertools.product(range(1, 8), (1, 2, 3), (1, 2, 3), (1, 2, 3)):
        if (-(-size // stride) - 1) * stride + (kernel - 1) * dilation + 1 - size < 0:
            continue  # a negative total padding: ambiguous, never drawn (see _window_util)
        x = rng.permutation(2 * size).reshape(1, 2, 1, size).astype(np.float64)
        attrs = {"kernel_shape": [1, kernel], "dilations": [1, dilation], "strides": [1, stride], "auto_pad": mode}
        want = by_the_text(x, kernel, dilation, stride, mode, how)
        if want is None:
            continue
        for y in REFS[how](x, **attrs):
            assert y.shape == (1, 2, 1, -(-size // stride)), (size, kernel, dilation, stride)
            np.testing.assert_allclose(y, want, rtol=1e-15, err_msg=str((size, kernel, dilation, stride)))
        checked += 1
    assert checked > 100
