"""NonMaxSuppression (ONNX spec: NonMaxSuppression-10, NonMaxSuppression-11).

"Filter out boxes that have high intersection-over-union (IOU) overlap with previously selected
boxes. Bounding boxes with score less than score_threshold are removed. ... Boxes are suppressed
if their IOU with a previously selected box is strictly greater than iou_threshold (i.e., boxes
with IOU exactly equal to the threshold are kept)." Per batch and class, the boxes whose score is
not below ``score_threshold`` are taken in descending score order; a box is selected unless its
IoU with an already selected box exceeds ``iou_threshold``, until ``max_output_boxes_per_class``
are selected ("Default to 0, which means no output"; ``iou_threshold`` defaults to 0, an absent
``score_threshold`` removes nothing). Boxes: center_point_box=0 "[y1, x1, y2, x2] where (y1, x1)
and (y2, x2) are the coordinates of any diagonal pair of box corners" (either order), 1 "[x_center,
y_center, width, height]". The output rows are [batch_index, class_index, box_index], batches then
classes in order, each class's boxes in the order they are selected. Version 11 only rewords
iou_threshold; the behaviour is the same, both versions are registered explicitly.

Computed in float64 (the inputs are float32: exact there). Spec-silent points: the order of the
rows (``order``: the output is "a set of integers"; we list them as selected), and which of two
boxes of equal score is taken first (``score_ties``: it decides which survives when they overlap).

The drawn cases give every optional input as a 1-element tensor (absent inputs, a 0-d
max_output_boxes_per_class and score_threshold equal to a score are named edges: onnx.reference
and ONNX Runtime fail those, see harness/expectations/), hold distinct scores, boxes of positive size on a grid of 1/4 and a threshold
that no IoU comes within 1e-5 of (an IoU is a quotient: float32 and float64 may round it to
either side of a threshold that close); exact equalities (an IoU equal to the threshold, a score
equal to score_threshold) are in the named edges, built from exactly representable quotients.
Boxes of zero area (IoU 0/0) and NaN coordinates are left out: the count of selected boxes then
depends on the implementation, which no element-wise comparison can judge.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("NonMaxSuppression")
st = S.st
VERSIONS = (10, 11)


def _corners(boxes, center_point_box):
    b = np.asarray(boxes, dtype=np.float64)
    if center_point_box:
        xc, yc, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        return yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
    y1, x1, y2, x2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)


def iou(corners, b, i, j):
    y1, x1, y2, x2 = corners
    ih = max(0.0, min(y2[b, i], y2[b, j]) - max(y1[b, i], y1[b, j]))
    iw = max(0.0, min(x2[b, i], x2[b, j]) - max(x1[b, i], x1[b, j]))
    inter = ih * iw
    union = (y2[b, i] - y1[b, i]) * (x2[b, i] - x1[b, i]) + (y2[b, j] - y1[b, j]) * (x2[b, j] - x1[b, j]) - inter
    return inter / union if union > 0 else 0.0


def _scalar(v, default):
    if v is None or np.size(v) == 0:
        return default
    return np.asarray(v).reshape(-1)[0]


def _order(scores):
    """Descending score, the lower index first among equals (spec-silent point score_ties); a
    NaN score last."""
    s = np.asarray(scores, dtype=np.float64)
    return sorted(range(s.shape[0]), key=lambda i: (np.isnan(s[i]), -s[i] if not np.isnan(s[i]) else 0.0, i))


def select(boxes, scores, max_out, iou_t, score_t, center_point_box, order=None):
    """Per (batch, class) the selected box indices, in selection order."""
    corners = _corners(boxes, center_point_box)
    sc = np.asarray(scores, dtype=np.float64)
    n_b, n_c = sc.shape[:2]
    out = {}
    for b in range(n_b):
        for c in range(n_c):
            chosen = []
            for i in (order or _order)(sc[b, c]):
                if len(chosen) >= max_out:
                    break
                if score_t is not None and not sc[b, c, i] >= score_t:  # "score less than score_threshold are removed"
                    continue
                if any(iou(corners, b, i, j) > iou_t for j in chosen):
                    continue
                chosen.append(i)
            out[(b, c)] = chosen
    return out


def nms(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None, *, center_point_box=0):
    max_out = int(_scalar(max_output_boxes_per_class, 0))
    iou_t = float(_scalar(iou_threshold, 0.0))
    st_raw = _scalar(score_threshold, None)
    score_t = None if st_raw is None else float(st_raw)
    chosen = select(boxes, scores, max_out, iou_t, score_t, int(center_point_box))
    rows = [[b, c, i] for (b, c), idx in sorted(chosen.items()) for i in idx]
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


@op.reference(*VERSIONS)
def non_max_suppression(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None, *,
                        center_point_box=0):
    return nms(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, center_point_box=center_point_box)


# -- spec-silent points ------------------------------------------------------------------------
def _rows(a):
    a = np.asarray(a)
    return sorted(map(tuple, a.reshape(-1, 3).tolist())) if a.size else []


def _order_where(inputs, attrs, expected, since):
    y = np.asarray(expected[0])
    return [np.ones(y.shape, dtype=bool) if y.shape[0] > 1 else None]


def _same_rows(c):
    return _rows(c.actual[0]) == _rows(c.expected[0])


op.spec_silent(
    "order", VERSIONS,
    spec="The selected_indices output is a set of integers indexing into the input collection of bounding boxes "
         "representing the selected boxes.",
    expected="batches then classes in order, each class's boxes in the order they are selected (descending score), as "
             "the greedy selection the text describes produces them",
    where=_order_where,
    invariants={"the rows are the expected rows, in some order": _same_rows},
    readings={"a NaN score ranks first (above every number)": lambda c: [_rows_in_order(c, lambda s: sorted(
        range(len(s)), key=lambda i: (not np.isnan(s[i]), -s[i] if not np.isnan(s[i]) else 0.0, i)))]})


def _rows_in_order(c, order) -> np.ndarray:
    """The selected rows with each class's boxes taken in ``order`` (a function of the class's scores)."""
    boxes, scores, max_out, iou_t, score_t = (list(c.inputs) + [None] * 5)[:5]
    st_raw = _scalar(score_t, None)
    chosen = select(boxes, scores, int(_scalar(max_out, 0)), float(_scalar(iou_t, 0.0)), None if st_raw is None else float(st_raw),
                    int(c.attrs.get("center_point_box", 0)), order=lambda s: order(np.asarray(s, dtype=np.float64)))
    rows = [[b, k, i] for (b, k), idx in sorted(chosen.items()) for i in idx]
    e = np.asarray(c.expected[0])
    out = np.asarray(rows, dtype=e.dtype).reshape(-1, 3)
    return out if out.shape == e.shape else np.full(e.shape, -1, e.dtype)


def _params(inputs, attrs):
    boxes, scores = inputs[0], inputs[1]
    rest = list(inputs[2:]) + [None] * (5 - len(inputs))
    max_out = int(_scalar(rest[0], 0))
    iou_t = float(_scalar(rest[1], 0.0))
    raw = _scalar(rest[2], None)
    return boxes, scores, max_out, iou_t, None if raw is None else float(raw), int(attrs.get("center_point_box", 0))


def _ties_where(inputs, attrs, expected, since):
    boxes, scores, max_out, iou_t, score_t, cpb = _params(inputs, attrs)
    y = np.asarray(expected[0])
    if y.shape[0] == 0:
        return [None]
    sc = np.asarray(scores, dtype=np.float64)
    tied = set()
    for b in range(sc.shape[0]):
        for c in range(sc.shape[1]):
            s = sc[b, c]
            s = s[~np.isnan(s)] if score_t is None else s[s >= score_t]
            if len(np.unique(s)) < len(s):
                tied.add((b, c))
    mask = np.array([(int(r[0]), int(r[1])) in tied for r in y])[:, None]
    return [np.broadcast_to(mask, y.shape) if mask.any() else None]


def _valid_greedy(c):
    """Each class's selection is a greedy NMS result for some order of the tied boxes: within
    the limit, no selected pair above the threshold, no selected box below score_threshold, and
    every left-out candidate suppressed by a selected box of no lower score (or the limit reached)."""
    boxes, scores, max_out, iou_t, score_t, cpb = _params(c.inputs, c.attrs)
    corners = _corners(boxes, cpb)
    sc = np.asarray(scores, dtype=np.float64)
    got: dict = {}
    for b, k, i in _rows(c.actual[0]):
        got.setdefault((b, k), []).append(i)
    for b in range(sc.shape[0]):
        for k in range(sc.shape[1]):
            sel = got.get((b, k), [])
            s = sc[b, k]
            if len(sel) > max_out or len(set(sel)) != len(sel):
                return False
            if score_t is not None and any(not s[i] >= score_t for i in sel):
                return False
            if any(iou(corners, b, i, j) > iou_t for i in sel for j in sel if i != j):
                return False
            if len(sel) < max_out:
                for i in range(s.shape[0]):
                    if i in sel or (score_t is not None and not s[i] >= score_t):
                        continue
                    if not any(iou(corners, b, i, j) > iou_t and s[j] >= s[i] for j in sel):
                        return False
    return True


op.spec_silent(
    "score_ties", VERSIONS,
    spec="Boxes are suppressed if their IOU with a previously selected box is strictly greater than iou_threshold",
    expected="among equal scores the lower box index is taken first (a stable sort by descending score); which box is "
             "'previously selected' among equals is not named",
    where=_ties_where,
    invariants={"every class's selection is a greedy NMS result for some order of its tied boxes": _valid_greedy})


# -- strategy --------------------------------------------------------------------------------
THRESHOLDS = (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 1.0)


def _draw_boxes(d, n_b, n_s, cpb):
    """Boxes of positive size with corners on a 1/4 grid in [-2, 6] (center format: centres on
    1/8, sizes on 1/4); corners in either order for center_point_box=0."""
    out = np.zeros((n_b, n_s, 4))
    for b in range(n_b):
        for i in range(n_s):
            y1, x1 = d(st.integers(-8, 20)) / 4, d(st.integers(-8, 20)) / 4
            h, w = d(st.integers(1, 10)) / 4, d(st.integers(1, 10)) / 4
            if cpb:
                out[b, i] = [x1 + w / 2, y1 + h / 2, w, h]
            else:
                y2, x2 = y1 + h, x1 + w
                if d(st.booleans()):
                    y1, y2 = y2, y1
                if d(st.booleans()):
                    x1, x2 = x2, x1
                out[b, i] = [y1, x1, y2, x2]
    return out.astype(np.float32)


def _ious(boxes, cpb):
    corners = _corners(boxes, cpb)
    n_b, n_s = np.shape(boxes)[:2]
    return [iou(corners, b, i, j) for b in range(n_b) for i in range(n_s) for j in range(i + 1, n_s)]


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    n_b, n_c, n_s = d(st.integers(1, 2)), d(st.integers(1, 3)), d(st.integers(0, 6))
    cpb = d(st.integers(0, 1))
    boxes = _draw_boxes(d, n_b, n_s, cpb)
    # distinct scores per class (ties: the edges), multiples of 1/64 in [0, 1)
    scores = np.zeros((n_b, n_c, n_s), dtype=np.float32)
    for b in range(n_b):
        for c in range(n_c):
            scores[b, c] = np.array(d(st.permutations(range(64)))[:n_s], dtype=np.float64) / 64
    attrs = {"center_point_box": cpb} if cpb or d(st.booleans()) else {}
    max_out = d(st.sampled_from([0, 1, 2, 3, n_s, 1000, 2**40]))
    ious = _ious(boxes, cpb)
    far = [t for t in THRESHOLDS if all(abs(v - t) > 1e-5 for v in ious)]
    iou_t = d(st.sampled_from(far)) if far else next(t / 100 for t in range(101) if all(abs(v - t / 100) > 1e-5 for v in ious))
    # a score threshold between two drawn scores (scores are multiples of 1/64): equality is in the edges
    score_t = (d(st.integers(0, 63)) + 0.5) / 64
    inputs = [boxes, scores, np.array([max_out], dtype=np.int64), np.array([iou_t], dtype=np.float32),
              np.array([score_t], dtype=np.float32)]
    return Example(inputs, attrs)


# -- edges -----------------------------------------------------------------------------------
# the ONNX backend tests' boxes (onnx/backend/test/case/node/nonmaxsuppression.py): three
# near-identical boxes at y = 0, two at y = 10, one at y = 100
SPEC_BOXES = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
                        [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]], dtype=np.float32)
SPEC_SCORES = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], dtype=np.float32)


def _i64(v):
    return np.array([v], dtype=np.int64)


def _f32(v):
    return np.array([v], dtype=np.float32)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    b, s = SPEC_BOXES, SPEC_SCORES
    flipped = b[..., [2, 3, 0, 1]]  # the other diagonal pair of corners
    center = np.stack([(b[..., 1] + b[..., 3]) / 2, (b[..., 0] + b[..., 2]) / 2, b[..., 3] - b[..., 1], b[..., 2] - b[..., 0]], -1)
    out = [
        Example([b, s, _i64(3), _f32(0.5), _f32(0.0)], name="spec_suppress_by_iou"),
        Example([flipped, s, _i64(3), _f32(0.5), _f32(0.0)], name="spec_flipped_corners"),
        Example([center.astype(np.float32), s, _i64(3), _f32(0.5), _f32(0.0)], {"center_point_box": 1}, name="spec_center_point_box"),
        Example([b, s, _i64(3), _f32(0.5), _f32(0.4)], name="spec_score_threshold"),
        Example([b, s, _i64(2), _f32(0.5), _f32(0.0)], name="spec_limit_output_size"),
        Example([b[:, :1], s[:, :, :1], _i64(3), _f32(0.5), _f32(0.0)], name="spec_single_box"),
        Example([np.concatenate([b, b[:, :1]], 1), np.concatenate([s, s[:, :, :1] * 0 + 0.1], 2), _i64(3), _f32(0.5)],
                name="identical_boxes"),
        Example([b, s], name="max_output_absent"),
        Example([b, s, _i64(0), _f32(0.5)], name="max_output_zero"),
        Example([b, s, _i64(2**40), _f32(0.5)], name="max_output_large"),
        Example([b, s, np.array(3, dtype=np.int64)], name="iou_threshold_absent_scalar_max"),
        Example([b, s, _i64(10), None, _f32(0.6)], name="score_threshold_without_iou"),
        Example([b, s, _i64(10), _f32(1.0)], name="iou_threshold_one"),
        Example([b, s, _i64(10), _f32(0.0)], name="iou_threshold_zero"),
        Example([np.zeros((1, 0, 4), np.float32), np.zeros((1, 1, 0), np.float32), _i64(3), _f32(0.5)], name="zero_boxes"),
        Example([np.zeros((0, 0, 4), np.float32), np.zeros((0, 2, 0), np.float32), _i64(3)], name="zero_batches"),
    ]
    # IoU exactly at the threshold: [0,0,1,2] (area 2) and [0,0,1,1] (area 1) meet in area 1, union 2: IoU 0.5
    eq = np.array([[[0.0, 0.0, 1.0, 2.0], [0.0, 0.0, 1.0, 1.0]]], dtype=np.float32)
    eqs = np.array([[[0.9, 0.8]]], dtype=np.float32)
    out += [Example([eq, eqs, _i64(5), _f32(0.5)], name="iou_equal_threshold_kept"),
            Example([eq, eqs, _i64(5), _f32(np.nextafter(np.float32(0.5), np.float32(0)))], name="iou_just_above_threshold"),
            Example([eq, eqs, _i64(5), _f32(0.5), _f32(0.8)], name="score_equal_threshold_kept"),
            Example([eq, eqs, _i64(5), _f32(0.5), _f32(np.nextafter(np.float32(0.8), np.float32(1)))], name="score_just_below_threshold")]
    # several batches and classes, class scores in opposite orders
    b2 = np.concatenate([b, b[:, ::-1] * np.float32(2)], 0)
    s2 = np.stack([np.concatenate([s[0], s[0, :, ::-1]], 0), np.concatenate([s[0, :, ::-1], s[0]], 0)], 0)
    out.append(Example([b2, s2.astype(np.float32), _i64(2), _f32(0.5), _f32(0.2)], name="batches_and_classes"))
    # equal scores: apart (only the order is open) and overlapping (which survives is open)
    ties = np.array([[[0.0, 0.0, 1.0, 1.0], [5.0, 5.0, 6.0, 6.0], [0.0, 0.0, 1.0, 1.0], [5.0, 5.0, 6.0, 6.5]]], dtype=np.float32)
    out.append(Example([ties[:, :2], np.array([[[0.5, 0.5]]], np.float32), _i64(5), _f32(0.5)], name="tied_scores_apart"))
    out.append(Example([ties, np.array([[[0.5, 0.7, 0.5, 0.7]]], np.float32), _i64(5), _f32(0.5)], name="tied_scores_overlapping"))
    # reflecting the coordinate system selects the same boxes ("invariant to orthogonal transformations")
    out.append(Example([-b, s, _i64(3), _f32(0.5), _f32(0.0)], name="reflected_coordinates"))
    # a NaN score with no score_threshold, its box apart from the others (where it sorts is open: order)
    nan_s = s.copy()
    nan_s[0, 0, 5] = np.nan
    out.append(Example([b, nan_s, _i64(10), _f32(0.5)], name="nan_score_apart"))
    # infinite scores (no threshold): +inf is the highest, -inf the lowest; the boxes lie apart
    inf_s = s.copy()
    inf_s[0, 0, 5], inf_s[0, 0, 4] = np.inf, -np.inf
    out.append(Example([b, inf_s, _i64(10), _f32(0.5)], name="inf_scores"))
    # -0.0, subnormal and huge coordinates
    odd = np.array([[[-0.0, -0.0, 1e-45, 1e-45], [-0.0, 0.0, 2.0, 2.0], [3e38, 3e38, 3.4e38, 3.4e38]]], dtype=np.float32)
    out.append(Example([odd, np.array([[[0.3, 0.2, 0.1]]], np.float32), _i64(5), _f32(0.5)], name="odd_coordinates"))
    return out
