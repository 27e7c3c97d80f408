"""Selection and strings: NonMaxSuppression (TensorFlow's own kernel), Unique, StringNormalizer,
StringConcat, StringSplit, RegexFullMatch (``tf.strings``, RE2 like the spec).

Batches, classes and string lists are walked when the graph is traced, so their counts must be
known then.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from .registry import lowers


def _scalar_or(t, default, dtype):
    if t is None or t.shape.num_elements() == 0:
        return tf.constant(default, dtype)
    return tf.cast(tf.reshape(t, []), dtype)


@lowers("NonMaxSuppression", 10, 11)
def non_max_suppression(node, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None, *,
                        center_point_box=0):
    """Per batch entry and class, tf.image.non_max_suppression (greedy by descending score, a box
    dropped when its IOU with a kept one exceeds ``iou_threshold``); rows [batch, class, box].
    ``center_point_box`` 1 gives [x_center, y_center, width, height], turned into corners (TF
    takes [y1, x1, y2, x2], either diagonal)."""
    batches, classes = scores.shape[0], scores.shape[1]
    if batches is None or classes is None:
        raise Unsupported(f"{node}: batch or class counts known only when the graph runs")
    limit = _scalar_or(max_output_boxes_per_class, 0, tf.int32)
    iou = _scalar_or(iou_threshold, 0.0, tf.float32)
    floor = _scalar_or(score_threshold, float("-inf"), tf.float32)
    if center_point_box:
        cx, cy, w, h = tf.unstack(boxes, axis=-1)
        boxes = tf.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=-1)
    rows = []
    for n in range(batches):
        for c in range(classes):
            kept = tf.image.non_max_suppression(tf.cast(boxes[n], tf.float32), tf.cast(scores[n, c], tf.float32), limit,
                                                iou_threshold=iou, score_threshold=floor)
            kept = tf.cast(kept, tf.int64)
            fixed = tf.fill(tf.shape(kept), tf.constant(n, tf.int64)), tf.fill(tf.shape(kept), tf.constant(c, tf.int64))
            rows.append(tf.stack([*fixed, kept], axis=1))
    return tf.concat(rows, 0) if rows else tf.zeros([0, 3], tf.int64)


def _lexicographic_order(keys, width: int):
    """The stable order sorting the rows of ``keys`` [n, m] lexicographically (column 0 first)."""
    order = tf.range(tf.shape(keys)[0])
    for col in reversed(range(width)):
        order = tf.gather(order, tf.argsort(tf.gather(keys[:, col], order), stable=True))
    return order


@lowers("Unique", 11, 28)
def unique(node, x, *, axis=None, sorted=1):  # noqa: A002 - spec name
    """tf.unique_with_counts (flattened) or UniqueWithCountsV2 (along ``axis``), in order of first
    occurrence; ``sorted`` reorders the values ascending (slices lexicographically), the inverse
    indices following."""
    if axis is None:
        data, a = tf.reshape(x, [-1]), 0
        values, inverse, counts = tf.unique_with_counts(data, out_idx=tf.int64)
    else:
        a = axis + x.shape.rank if axis < 0 else axis
        data = x
        values, inverse, counts = tf.raw_ops.UniqueWithCountsV2(x=x, axis=tf.constant([a], tf.int64), out_idx=tf.int64)
    n = tf.shape(data, out_type=tf.int64)[a]
    found = tf.shape(values, out_type=tf.int64)[a]
    first = tf.math.unsorted_segment_min(tf.range(n), inverse, found)
    if sorted:
        moved = tf.transpose(values, [a] + [d for d in range(values.shape.rank) if d != a]) if a else values
        width = 1 if axis is None else int(np.prod([d for k, d in enumerate(x.shape.as_list()) if k != a]))
        order = _lexicographic_order(tf.reshape(moved, tf.stack([found, width])), width)
        values = tf.gather(values, order, axis=a)
        first, counts = tf.gather(first, order), tf.gather(counts, order)
        inverse = tf.gather(tf.cast(tf.math.invert_permutation(order), tf.int64), inverse)
    return values, first, tf.reshape(inverse, [-1]), tf.cast(counts, tf.int64)


# -- strings ---------------------------------------------------------------------------------
@lowers("StringConcat", 20)
def string_concat(node, x, y):
    shape = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
    return tf.strings.join([tf.broadcast_to(x, shape), tf.broadcast_to(y, shape)])


@lowers("RegexFullMatch", 20)
def regex_full_match(node, x, *, pattern):
    return tf.strings.regex_full_match(x, pattern)


@lowers("StringSplit", 20)
def string_split(node, x, *, delimiter=None, maxsplit=None):
    """tf.strings.split (whitespace runs when the delimiter is unset or empty), padded with empty
    strings to the longest split; the second output counts each element's substrings."""
    parts = tf.strings.split(x, sep=delimiter or None, maxsplit=-1 if maxsplit is None else maxsplit)
    counts = tf.cast(parts.row_lengths(axis=-1), tf.int64) if x.shape.rank else tf.cast(tf.size(parts), tf.int64)
    padded = parts.to_tensor(default_value="") if x.shape.rank else parts
    return padded, counts


@lowers("StringNormalizer", 10)
def string_normalizer(node, x, *, case_change_action="NONE", is_case_sensitive=0, locale=None, stopwords=None):
    """Stop words removed (compared lowercased unless ``is_case_sensitive``), then the case changed
    (tf.strings.lower / upper on UTF-8); all removed gives one empty string."""
    if locale not in (None, "", "en_US"):
        raise Unsupported(f"{node}: locale {locale!r}")
    flat = tf.reshape(x, [-1])
    if stopwords:
        words = tf.constant(stopwords)
        probe, against = (flat, words) if is_case_sensitive else (tf.strings.lower(flat, encoding="utf-8"), tf.strings.lower(words, encoding="utf-8"))
        keep = tf.logical_not(tf.reduce_any(tf.equal(probe[:, None], against[None, :]), axis=1))
        flat = tf.boolean_mask(flat, keep)
    if case_change_action == "LOWER":
        flat = tf.strings.lower(flat, encoding="utf-8")
    elif case_change_action == "UPPER":
        flat = tf.strings.upper(flat, encoding="utf-8")
    flat = tf.cond(tf.equal(tf.size(flat), 0), lambda: tf.constant([""]), lambda: flat)
    return tf.reshape(flat, [1, -1]) if x.shape.rank == 2 else flat


@lowers("TfIdfVectorizer", 9)
def tfidf_vectorizer(node, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts, ngram_indexes,
                     pool_int64s=None, pool_strings=None, weights=None):
    """N-gram counts per row (integers or strings): the pool holds the n-grams grouped by length
    (ngram_counts[i] is where the (i+1)-grams start); for each skip s in 0..max_skip_count every
    window of n tokens s apart is compared with the pool's n-grams (unigrams are counted once,
    with no gap); IDF turns counts into 0/1, IDF and TFIDF multiply by ``weights``; the counts
    land in the output columns ngram_indexes."""
    pool = list(pool_int64s) if pool_int64s is not None else list(pool_strings)
    length = x.shape[-1]
    if length is None:
        raise Unsupported(f"{node}: a row length known only when the graph runs")
    rows = tf.reshape(x, [1, -1]) if x.shape.rank == 1 else x
    if pool_int64s is not None:
        rows = tf.cast(rows, tf.int64)
    counts = []  # one [R] count per pool n-gram, in pool order
    for i, begin in enumerate(ngram_counts):
        n = i + 1
        end = ngram_counts[i + 1] if i + 1 < len(ngram_counts) else len(pool)
        grams = [pool[at:at + n] for at in range(begin, end, n)]
        if not grams:
            continue
        total = tf.zeros([tf.shape(rows)[0], len(grams)], tf.float64)
        if min_gram_length <= n <= max_gram_length:
            table = tf.constant(grams, tf.int64 if pool_int64s is not None else tf.string)  # [g, n]
            for skip in range(max_skip_count + 1 if n > 1 else 1):
                step = skip + 1
                starts = [s for s in range(length) if s + (n - 1) * step < length]
                if not starts:
                    continue
                windows = tf.gather(rows, [[s + j * step for j in range(n)] for s in starts], axis=1)  # [R, S, n]
                hits = tf.reduce_all(tf.equal(windows[:, :, None, :], table[None, None]), axis=-1)  # [R, S, g]
                total = total + tf.reduce_sum(tf.cast(hits, tf.float64), axis=1)
        counts.append(total)
    found = tf.concat(counts, axis=1)
    if mode == "IDF":
        found = tf.cast(found > 0, tf.float64)
    if mode in ("IDF", "TFIDF") and weights is not None:
        found = found * tf.constant(weights, tf.float64)
    width = max(ngram_indexes) + 1
    out = tf.transpose(tf.scatter_nd(tf.constant(ngram_indexes, tf.int64)[:, None], tf.transpose(found),
                                     tf.stack([tf.constant(width, tf.int64), tf.cast(tf.shape(rows)[0], tf.int64)])))
    out = tf.cast(out, tf.float32)
    return tf.reshape(out, [-1]) if x.shape.rank == 1 else out


@lowers("Col2Im", 18)
def col2im(node, x, image_shape, block_shape, *, dilations=None, pads=None, strides=None):
    """Each column's block values added back at their image positions (the padded image, then the
    pads cut): one scatter-add of every (block offset, block position) pair; the image and block
    shapes may be data (their lengths are known when tracing)."""
    n = image_shape.shape[0]
    image = tf.cast(tf.reshape(image_shape, [-1]), tf.int64)
    block = tf.cast(tf.reshape(block_shape, [-1]), tf.int64)
    dilations = tf.constant(dilations or [1] * n, tf.int64)
    strides = tf.constant(strides or [1] * n, tf.int64)
    pads = tf.constant(pads or [0] * (2 * n), tf.int64)
    padded = image + pads[:n] + pads[n:]
    counts = (padded - ((block - 1) * dilations + 1)) // strides + 1
    kpos = tf.reshape(tf.stack(tf.meshgrid(*[tf.range(block[d]) for d in range(n)], indexing="ij"), -1), [-1, n])
    opos = tf.reshape(tf.stack(tf.meshgrid(*[tf.range(counts[d]) for d in range(n)], indexing="ij"), -1), [-1, n])
    at = opos[None, :, :] * strides + kpos[:, None, :] * dilations  # [K, O, n]
    place = tf.math.cumprod(padded, exclusive=True, reverse=True)  # row-major strides of the padded image
    flat = tf.reshape(tf.reduce_sum(at * place, axis=-1), [-1])  # column k * O + o
    batch = tf.shape(x, out_type=tf.int64)[0]
    channels = tf.shape(x, out_type=tf.int64)[1] // tf.reduce_prod(block)
    values = tf.reshape(x, tf.stack([batch, channels, -1]))  # [N, C, K * O]
    out = tf.transpose(tf.math.unsorted_segment_sum(tf.transpose(values, [2, 0, 1]), flat, tf.reduce_prod(padded)), [1, 2, 0])
    out = tf.reshape(out, tf.concat([tf.stack([batch, channels]), padded], 0))
    for d in range(n):
        out = tf.gather(out, tf.range(pads[d], pads[d] + image[d]), axis=2 + d)
    return out
