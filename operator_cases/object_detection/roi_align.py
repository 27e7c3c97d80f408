"""RoiAlign (ONNX spec: RoiAlign-10, 16, 22).

"in each ROI bin, the value of the sampled locations are computed directly through bilinear
interpolation": roi ``r`` = [x1, y1, x2, y2] of image ``batch_indices[r]`` is scaled by
``spatial_scale`` (and, with ``coordinate_transformation_mode`` 'half_pixel', shifted by -0.5: "to
pixel shift the input coordinates by -0.5"); it is cut into output_height x output_width bins,
each sampled on a regular grid of ``sampling_ratio`` x ``sampling_ratio`` points ("If == 0, then
an adaptive number of grid points are used (computed as ceil(roi_width / output_width), and
likewise for height)") at the centres of the grid cells; each sample is the bilinear
interpolation of X at that point, and "mode: The pooling method ... 'avg' and 'max'" pools the
samples of a bin by their mean or their largest value.

Versions: RoiAlign-10 has no coordinate_transformation_mode (it behaves as 'output_half_pixel',
no shift: RoiAlign-16 names that "backward-compatible"); RoiAlign-16 adds it, default
'half_pixel'; RoiAlign-22 adds bfloat16.

'max' mode: we pool the interpolated sample values, as the text reads and as our kernel engine
does. onnx.reference and ONNX Runtime take, per sample, the largest of the four weighted corners
``w_i * v_i`` instead (the official test_roialign_mode_max data follows them; onnx issue 4764, see
harness/expectations/kernels.toml and operator_cases/crosscheck.toml).

The drawn cases use 'avg'; 'max' is in the named edge examples ``*max*`` of every version and
dtype, so the backends that take the other reading can be classified by name.

"batch_indices: ... each element denoting the index of the corresponding image in the batch":
an index outside [0, N) names no image, so the reference raises on one (a case holding it is an
oracle error, shown) and the strategies draw indices in [0, N) only.

What the text leaves open, and the cases avoid: samples outside the feature map (implementations
clamp or zero them by their own rules), rois narrower than one cell in 'output_half_pixel' mode
(implementations widen them to 1), and rois of zero size with an adaptive grid (ceil(0) = 0
points). Drawn rois lie inside [0, size - 1] after the transformation and are at least one cell
wide; their coordinates are on a grid of 1/4 and spatial_scale a power of two, so every
coordinate, bin size and adaptive grid count is exact in every float type.
"""

import math

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back

op = Operator("RoiAlign", type_param="T1")
st = S.st
VERSIONS = (10, 16, 22)


def bilinear(img, y, x):
    """X[:, y, x] interpolated at a point inside [0, H - 1] x [0, W - 1] (img: C x H x W)."""
    h, w = img.shape[1:]
    y0, x0 = min(int(math.floor(y)), h - 1), min(int(math.floor(x)), w - 1)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    fy, fx = y - y0, x - x0
    return ((1 - fy) * (1 - fx) * img[:, y0, x0] + (1 - fy) * fx * img[:, y0, x1]
            + fy * (1 - fx) * img[:, y1, x0] + fy * fx * img[:, y1, x1])


def roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale, half_pixel):
    x = np.asarray(x)
    xw = x.astype(np.float64)
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    oh, ow, ratio = int(output_height), int(output_width), int(sampling_ratio)
    scale = float(np.float32(spatial_scale))
    r = np.asarray(rois).astype(np.float64)
    b = np.asarray(batch_indices).astype(np.int64)
    if b.size and (b.min() < 0 or b.max() >= x.shape[0]):
        # "the index of the corresponding image in the batch": one outside [0, N) names no image
        # (numpy would wrap a negative one to an image counted from the back)
        raise ValueError(f"batch index {b.min() if b.min() < 0 else b.max()} outside [0, {x.shape[0]}): no image of the batch")
    y = np.zeros((r.shape[0], x.shape[1], oh, ow))
    for k in range(r.shape[0]):
        img = xw[b[k]]
        x1, y1, x2, y2 = r[k] * scale - (0.5 if half_pixel else 0.0)
        bin_h, bin_w = (y2 - y1) / oh, (x2 - x1) / ow
        gh = ratio if ratio > 0 else math.ceil((y2 - y1) / oh)
        gw = ratio if ratio > 0 else math.ceil((x2 - x1) / ow)
        for i in range(oh):
            for j in range(ow):
                samples = np.array([bilinear(img, y1 + i * bin_h + (a + 0.5) * bin_h / gh, x1 + j * bin_w + (b + 0.5) * bin_w / gw)
                                    for a in range(gh) for b in range(gw)])
                y[k, :, i, j] = samples.max(axis=0) if mode == "max" else samples.mean(axis=0)
    return back(y, x)


@op.reference(10)
def roi_align_10(x, rois, batch_indices, *, mode="avg", output_height=1, output_width=1, sampling_ratio=0, spatial_scale=1.0):
    return roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale, False)


@op.reference(16, 22)
def roi_align_16(x, rois, batch_indices, *, coordinate_transformation_mode="half_pixel", mode="avg", output_height=1,
                 output_width=1, sampling_ratio=0, spatial_scale=1.0):
    ctm = coordinate_transformation_mode
    half = (ctm.decode() if isinstance(ctm, bytes) else str(ctm)) == "half_pixel"
    return roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale, half)


def draw_rois(d, n, h, w, count, scale, half):
    """Rois whose transformed corners lie in [0, size - 1] at least one cell apart, on a 1/4 grid."""
    off = 0.5 if half else 0.0
    out = []
    for _ in range(count):
        box = []
        for size in (w, h):
            lo = d(st.integers(0, 4 * (size - 2))) / 4
            hi = d(st.integers(int(4 * lo) + 4, 4 * (size - 1))) / 4
            box.append((lo, hi))
        (x1, x2), (y1, y2) = box
        out.append([(v + off) / scale for v in (x1, y1, x2, y2)])
    return np.array(out, dtype=np.float64).reshape(count, 4), np.array([d(st.integers(0, n - 1)) for _ in range(count)], dtype=np.int64)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    since = schema.schema_at("RoiAlign", opset).since_version
    n, c, h, w = d(st.integers(1, 2)), d(st.integers(1, 3)), d(st.integers(2, 6)), d(st.integers(2, 6))
    scale = d(st.sampled_from([1.0, 0.5, 2.0, 0.25]))
    attrs = {}
    half = False
    if since >= 16:
        ctm = d(st.sampled_from(["half_pixel", "output_half_pixel", None]))
        half = ctm != "output_half_pixel"
        if ctm:
            attrs["coordinate_transformation_mode"] = ctm
    if scale != 1.0 or d(st.booleans()):
        attrs["spatial_scale"] = scale
    if d(st.booleans()):
        attrs["mode"] = "avg"  # 'max' only in the named edges (see the docstring)
    for name, values in (("output_height", [1, 2, 3]), ("output_width", [1, 2, 3]), ("sampling_ratio", [0, 1, 2, 3])):
        if d(st.booleans()):
            attrs[name] = d(st.sampled_from(values))
    rois, idx = draw_rois(d, n, h, w, d(st.integers(1, 3)), scale, half)
    x = S.arrays(d, dtype, shape=(n, c, h, w), lo=-4, hi=4)
    return Example([x, rois.astype(S.np_dtype(dtype)), idx], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    since = schema.schema_at("RoiAlign", opset).since_version
    t = S.np_dtype(dtype)
    x = ((np.arange(2 * 2 * 5 * 5) * 7 % 13) - 6).astype(np.float64).reshape(2, 2, 5, 5)
    rois = np.array([[0.5, 0.5, 3.5, 3.5], [1.0, 0.5, 4.0, 2.5], [1.5, 1.5, 2.5, 3.5]])
    b = np.array([0, 1, 1], dtype=np.int64)
    modes = [{}] if since < 16 else [{"coordinate_transformation_mode": "half_pixel"}, {"coordinate_transformation_mode": "output_half_pixel"}]
    out = []
    for m in modes:
        tag = m.get("coordinate_transformation_mode", "default")
        shift = 0.5 if tag == "half_pixel" else 0.0
        r = (rois + shift).astype(t)
        out += [
            Example([x.astype(t), r, b], {**m, "output_height": 2, "output_width": 3}, name=f"{tag}_avg_adaptive"),
            Example([x.astype(t), r, b], {**m, "mode": "max", "output_height": 2, "output_width": 2, "sampling_ratio": 2}, name=f"{tag}_max"),
            Example([x.astype(t), (r * 2).astype(t), b], {**m, "spatial_scale": 0.5, "sampling_ratio": 3}, name=f"{tag}_scale_half"),
        ]
    shift = 0.0 if since < 16 else 0.5
    tiny = S.smallest_subnormal(dtype)
    special = x.copy()
    special[0, 0, 1, 1], special[0, 1, 2, 2], special[1, 0, 0, 0] = np.nan, np.inf, -np.inf
    special[1, 1] = np.where(np.arange(25).reshape(5, 5) % 2, tiny, -0.0)
    r = (rois + shift).astype(t)
    out += [
        Example([special.astype(t), r, b], {"output_height": 2, "output_width": 2, "sampling_ratio": 1}, name="nan_inf_subnormal"),
        Example([x.astype(t), np.zeros((0, 4), dtype=t), np.zeros((0,), dtype=np.int64)], name="no_rois"),
        Example([x.astype(t), (np.array([[0.0, 0.0, 4.0, 4.0]]) + shift).astype(t), np.array([1], dtype=np.int64)],
                {"output_height": 3, "output_width": 1, "mode": "max"}, name="whole_map_max"),
        Example([x.astype(t), (r * 2).astype(t), b], {"mode": "max", "spatial_scale": 0.5, "output_width": 3}, name="adaptive_scale_half_max"),
    ]
    return out
