"""Miscellaneous NN kernels: DepthToSpace, SpaceToDepth, CenterCropPad, NonMaxSuppression,
TfIdfVectorizer."""

from __future__ import annotations

import numpy as np

from .registry import register

# --------------------------------------------------------------------------- DepthToSpace / SpaceToDepth


@register("DepthToSpace", since=1)
def depth_to_space(node):
    bs = int(node.attrs["blocksize"])
    mode = node.attrs.get("mode", "DCR")

    def run(x):
        b, c, h, w = x.shape
        cc = c // (bs * bs)
        if mode == "CRD":
            t = x.reshape(b, cc, bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
        else:
            t = x.reshape(b, bs, bs, cc, h, w).transpose(0, 3, 4, 1, 5, 2)
        return (np.ascontiguousarray(t).reshape(b, cc, h * bs, w * bs),)

    return run


@register("SpaceToDepth", since=1)
def space_to_depth(node):
    bs = int(node.attrs["blocksize"])
    mode = node.attrs.get("mode", "DCR")

    def run(x):
        b, c, h, w = x.shape
        t = x.reshape(b, c, h // bs, bs, w // bs, bs)
        if mode == "CRD":
            t = t.transpose(0, 1, 3, 5, 2, 4)
        else:
            t = t.transpose(0, 3, 5, 1, 2, 4)
        return (np.ascontiguousarray(t).reshape(b, c * bs * bs, h // bs, w // bs),)

    return run


# --------------------------------------------------------------------------- CenterCropPad


@register("CenterCropPad", since=18)
def center_crop_pad(node):
    axes_attr = node.attrs.get("axes")

    def run(x, shape):
        r = x.ndim
        axes = [a % r for a in axes_attr] if axes_attr else list(range(r))
        target = [int(v) for v in np.asarray(shape).reshape(-1)]
        out_shape = list(x.shape)
        src = [slice(None)] * r
        dst = [slice(None)] * r
        for a, t in zip(axes, target):
            n = x.shape[a]
            out_shape[a] = t
            if n >= t:
                s = (n - t) // 2
                src[a] = slice(s, s + t)
            else:
                s = (t - n) // 2
                dst[a] = slice(s, s + n)
        y = np.zeros(out_shape, dtype=x.dtype)
        y[tuple(dst)] = x[tuple(src)]
        return (y,)

    return run


# --------------------------------------------------------------------------- NonMaxSuppression


def _corners(boxes, center_point_box):
    if center_point_box:
        xc, yc, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
        y1, y2 = yc - h / 2, yc + h / 2
        x1, x2 = xc - w / 2, xc + w / 2
    else:
        a, b, c, d = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
        y1, y2 = np.minimum(a, c), np.maximum(a, c)
        x1, x2 = np.minimum(b, d), np.maximum(b, d)
    return y1, x1, y2, x2


@register("NonMaxSuppression", since=10)
def non_max_suppression(node):
    cpb = int(node.attrs.get("center_point_box", 0))

    def run(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None):
        max_out = 0 if max_output_boxes_per_class is None else int(np.asarray(max_output_boxes_per_class).reshape(-1)[0]) if np.asarray(max_output_boxes_per_class).size else 0
        iou_t = 0.0 if iou_threshold is None or np.asarray(iou_threshold).size == 0 else float(np.asarray(iou_threshold).reshape(-1)[0])
        score_t = None if score_threshold is None or np.asarray(score_threshold).size == 0 else float(np.asarray(score_threshold).reshape(-1)[0])
        selected = []
        if max_out <= 0:
            return (np.zeros((0, 3), dtype=np.int64),)
        bx = boxes.astype(np.float64)
        y1, x1, y2, x2 = _corners(bx, cpb)
        area = (y2 - y1) * (x2 - x1)
        B, C, S = scores.shape
        for b in range(B):
            for c in range(C):
                sc = scores[b, c].astype(np.float64)
                order = np.argsort(-sc, kind="stable")
                if score_t is not None:
                    order = order[sc[order] >= score_t]  # "score less than score_threshold are removed"
                keep = []
                alive = np.ones(order.shape[0], dtype=bool)
                for k in range(order.shape[0]):
                    if not alive[k]:
                        continue
                    i = order[k]
                    keep.append(i)
                    if len(keep) >= max_out:
                        break
                    rest = order[k + 1 :]
                    iy1 = np.maximum(y1[b, i], y1[b, rest])
                    ix1 = np.maximum(x1[b, i], x1[b, rest])
                    iy2 = np.minimum(y2[b, i], y2[b, rest])
                    ix2 = np.minimum(x2[b, i], x2[b, rest])
                    inter = np.clip(iy2 - iy1, 0, None) * np.clip(ix2 - ix1, 0, None)
                    union = area[b, i] + area[b, rest] - inter
                    with np.errstate(divide="ignore", invalid="ignore"):
                        iou = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
                    alive[k + 1 :] &= ~(iou > iou_t)
                selected.extend((b, c, int(i)) for i in keep)
        if not selected:
            return (np.zeros((0, 3), dtype=np.int64),)
        return (np.asarray(selected, dtype=np.int64),)

    return run


# --------------------------------------------------------------------------- TfIdfVectorizer


@register("TfIdfVectorizer", since=9)
def tfidf_vectorizer(node):
    attrs = node.attrs
    mode = attrs.get("mode", "TF")
    min_n = int(attrs["min_gram_length"])
    max_n = int(attrs["max_gram_length"])
    max_skip = int(attrs["max_skip_count"])
    counts = [int(v) for v in attrs["ngram_counts"]]
    indexes = [int(v) for v in attrs["ngram_indexes"]]
    weights = attrs.get("weights")
    weights = np.asarray(weights if weights is not None and len(weights) else np.ones(len(indexes)), dtype=np.float32)
    if attrs.get("pool_strings") is not None and len(attrs.get("pool_strings")):
        pool = [s.decode() if isinstance(s, bytes) else str(s) for s in attrs["pool_strings"]]
    else:
        pool = [int(v) for v in attrs["pool_int64s"]]
    out_size = max(indexes) + 1 if indexes else 0
    # pool position -> n-gram tuple, grouped by n (ngram_counts holds each group's start)
    table: dict = {}
    bounds = counts + [len(pool)]
    pos = 0
    for g in range(len(counts)):
        n = g + 1
        start = bounds[g]
        end = bounds[g + 1] if g + 1 < len(bounds) else len(pool)
        k = start
        while k + n <= end:
            table[tuple(pool[k : k + n])] = pos
            pos += 1
            k += n

    def count_row(row):
        y = np.zeros(out_size, dtype=np.float32)
        L = len(row)
        for n in range(min_n, max_n + 1):
            skips = range(max_skip + 1) if n > 1 else range(1)
            for s in skips:
                step = s + 1
                span = (n - 1) * step
                for i in range(L - span):
                    key = tuple(row[i : i + span + 1 : step])
                    p = table.get(key)
                    if p is not None:
                        y[indexes[p]] += 1
        return y

    def run(x):
        x2 = x.reshape(1, -1) if x.ndim == 1 else x
        rows = []
        for r in x2:
            vals = [v.decode() if isinstance(v, bytes) else v for v in r.tolist()]
            rows.append(count_row(vals))
        y = np.stack(rows) if rows else np.zeros((0, out_size), dtype=np.float32)
        if mode in ("IDF", "TFIDF"):
            w = np.zeros(out_size, dtype=np.float32)
            w[np.asarray(indexes)] = weights
            if mode == "IDF":
                y = np.minimum(y, 1)
            y = y * w
        y = y.astype(np.float32)
        return (y.reshape(-1) if x.ndim == 1 else y,)

    return run
