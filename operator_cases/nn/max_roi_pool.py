"""MaxRoiPool (ONNX spec: MaxRoiPool-1, 22).

"ROI max pool consumes an input tensor X and region of interests (RoIs) to apply max pooling
across each RoI, to produce output 4-D tensor of shape (num_rois, channels, pooled_shape[0],
pooled_shape[1])"; rois are (num_rois, 5) "[[batch_id, x1, y1, x2, y2], ...]", scaled by
``spatial_scale``. MaxRoiPool-22 only adds bfloat16.

The text does not say how a roi is cut into bins; we take the ROI pooling of Fast R-CNN (the
Caffe layer the operator was exported from, which onnx.reference, ONNX Runtime and our kernel
engine follow): the scaled corners are rounded to integers, the roi spans ``x2 - x1 + 1`` by
``y2 - y1 + 1`` cells (at least 1), bin ``(ph, pw)`` covers rows ``floor(ph * h / pooled_h) + y1``
up to (excluding) ``ceil((ph + 1) * h / pooled_h) + y1`` and likewise columns, clipped to the map,
and holds the max of those cells. The cases keep every roi inside the map (no empty bin, whose
value is not said) and every scaled corner an integer (how x.5 rounds is not said).

Spec-silent: NaN in a bin (as MaxPool): we propagate it; a backend may skip it.
"""

import math

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._families import max_pooling_nan

op = Operator("MaxRoiPool")
st = S.st
VERSIONS = (1, 22)
max_pooling_nan(op, VERSIONS, "apply max pooling across each RoI", "bin")


@op.reference(*VERSIONS)
def max_roi_pool(x, rois, *, pooled_shape, spatial_scale=1.0):
    x = np.asarray(x)
    ph_, pw_ = (int(v) for v in pooled_shape)
    n, c, h, w = x.shape
    scale = float(np.float32(spatial_scale))
    r = np.asarray(rois).astype(np.float64)
    y = np.zeros((r.shape[0], c, ph_, pw_), dtype=x.dtype)
    for k in range(r.shape[0]):
        b = int(r[k, 0])
        x1, y1, x2, y2 = (int(np.floor(v * scale + 0.5)) for v in r[k, 1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph_):
            hs = min(max(math.floor(i * rh / ph_) + y1, 0), h)
            he = min(max(math.ceil((i + 1) * rh / ph_) + y1, 0), h)
            for j in range(pw_):
                ws = min(max(math.floor(j * rw / pw_) + x1, 0), w)
                we = min(max(math.ceil((j + 1) * rw / pw_) + x1, 0), w)
                y[k, :, i, j] = np.max(x[b, :, hs:he, ws:we], axis=(1, 2))
    return y


def draw_rois(d, n, h, w, count, scale):
    out = []
    for _ in range(count):
        x1 = d(st.integers(0, w - 1))
        x2 = d(st.integers(x1, w - 1))
        y1 = d(st.integers(0, h - 1))
        y2 = d(st.integers(y1, h - 1))
        out.append([d(st.integers(0, n - 1))] + [v / scale for v in (x1, y1, x2, y2)])
    return np.array(out, dtype=np.float64).reshape(count, 5)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    n, c, h, w = d(st.integers(1, 2)), d(st.integers(1, 3)), d(st.integers(1, 6)), d(st.integers(1, 6))
    scale = d(st.sampled_from([1.0, 0.5, 0.25, 2.0]))
    attrs = {"pooled_shape": [d(st.integers(1, 3)), d(st.integers(1, 3))]}
    if scale != 1.0 or d(st.booleans()):
        attrs["spatial_scale"] = scale
    rois = draw_rois(d, n, h, w, d(st.integers(1, 3)), scale)
    return Example([S.arrays(d, dtype, shape=(n, c, h, w), lo=-100, hi=100), rois.astype(S.np_dtype(dtype))], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    x = ((np.arange(2 * 2 * 5 * 6) * 7 % 17) - 8).astype(np.float64).reshape(2, 2, 5, 6)
    rois = np.array([[0, 0, 0, 5, 4], [1, 1, 2, 3, 3], [1, 2, 1, 2, 1], [0, 4, 0, 5, 4]], dtype=np.float64)
    special = x.copy()
    special[0, 0, 0, 0], special[0, 1, 1, 1], special[1, 0, 2, 2] = np.nan, np.inf, -np.inf
    special[1, 1] = -0.0
    special[0, 1, 4] = S.smallest_subnormal(dtype)
    return [
        Example([x.astype(t), rois.astype(t)], {"pooled_shape": [2, 2]}, name="bins"),
        Example([x.astype(t), rois.astype(t)], {"pooled_shape": [3, 2]}, name="more_bins_than_cells"),
        Example([x.astype(t), (rois * [1, 2, 2, 2, 2]).astype(t)], {"pooled_shape": [2, 3], "spatial_scale": 0.5}, name="scale_half"),
        Example([special.astype(t), rois.astype(t)], {"pooled_shape": [1, 2]}, name="nan_inf_signed_zero_subnormal"),
        Example([x.astype(t), np.zeros((0, 5), dtype=t)], {"pooled_shape": [2, 2]}, name="no_rois"),
        Example([np.full((1, 1, 2, 2), -3.0).astype(t), np.array([[0, 0, 0, 1, 1]]).astype(t)], {"pooled_shape": [1, 1]}, name="ties"),
    ]
