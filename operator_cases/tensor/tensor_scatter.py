"""TensorScatter: a KV-cache update, ``update`` written into ``past_cache`` along the sequence
axis at each batch entry's write index (ONNX spec: TensorScatter-24).

The caches have shape (batch, D1, ..., max_sequence_length, ..., Dn) with the sequence dim at
``axis`` ("It cannot be 0 (the batch dimension). Default is -2"); ``update`` differs only there
(sequence_length <= max_sequence_length). For every prefix index and step s < sequence_length,
``present[prefix, w[b] + s] = update[prefix, s]`` with b = prefix[0] and w = ``write_indices``
(shape (batch,), "Assumed to be all zeros if not provided"). ``mode`` "linear" "requires
write_indices+sequence_length<=max_sequence_length"; "circular" takes the index "modulo
max_sequence_length", so a write index past the end wraps. Negative write indices are not
defined and not drawn. Every dtype of T is moved exactly (the float8, 4-bit types included).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import ints, positive_axis

op = Operator("TensorScatter", type_param="T")
st = S.st


def _mode(mode):
    m = mode.decode() if isinstance(mode, bytes) else str(mode)
    if m not in ("linear", "circular"):
        raise ValueError(f"TensorScatter: unknown mode {m!r}")
    return m


@op.reference(24)
def tensor_scatter(past_cache, update, write_indices=None, *, mode="linear", axis=-2):
    past, upd = np.asarray(past_cache), np.asarray(update)
    axis = positive_axis(axis, past.ndim)
    if axis == 0 or past.ndim != upd.ndim or any(p != u for i, (p, u) in enumerate(zip(past.shape, upd.shape)) if i != axis):
        raise ValueError(f"TensorScatter: cache {past.shape}, update {upd.shape}, axis {axis} do not fit")
    max_len, seq_len = past.shape[axis], upd.shape[axis]
    w = np.zeros(past.shape[0], np.int64) if write_indices is None else np.asarray(write_indices).astype(np.int64)
    circular = _mode(mode) == "circular"
    if w.shape != (past.shape[0],) or (w.size and w.min() < 0) or seq_len > max_len:
        raise ValueError(f"TensorScatter: write_indices {w.tolist()} for cache {past.shape}, update {upd.shape}")
    if not circular and w.size and w.max() + seq_len > max_len:
        raise ValueError("TensorScatter: linear mode requires write_indices + sequence_length <= max_sequence_length")
    out = past.copy()
    for prefix in np.ndindex(past.shape[:axis]):
        for s in range(seq_len):
            at = int(w[prefix[0]]) + s
            if circular:
                at %= max_len
            out[prefix + (at,)] = upd[prefix + (s,)]
    return out


@op.strategy(24)
def draw(d, dtype, opset):
    rank = d(st.integers(2, 4))
    shape = list(S.shapes(d, min_dims=rank, max_dims=rank, min_side=1, max_side=4))
    axis = d(st.integers(1, rank - 1))
    max_len = shape[axis]
    seq_len = d(st.integers(0 if d(st.integers(0, 9)) == 0 else 1, max_len))
    circular = d(st.booleans())
    hi = 2 * max_len if circular else max_len - seq_len
    w = d(st.lists(st.integers(0, hi), min_size=shape[0], max_size=shape[0]))
    ushape = tuple(seq_len if i == axis else s for i, s in enumerate(shape))
    attrs = {}
    if circular or d(st.booleans()):
        attrs["mode"] = "circular" if circular else "linear"
    if axis != rank - 2 or d(st.booleans()):
        attrs["axis"] = axis - rank if d(st.booleans()) else axis
    absent = not circular and not any(w) and d(st.booleans())
    return Example([S.arrays(d, dtype, shape=tuple(shape)), S.arrays(d, dtype, shape=ushape), None if absent else ints(w)], attrs)


@op.edges(24)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    cache = np.resize(ev, (2, 3, 5, 2))       # batch 2, heads 3, max_sequence_length 5, head dim 2
    upd = np.resize(ev[::-1], (2, 3, 2, 2))   # sequence_length 2
    one = np.resize(ev[::-1], (2, 3, 1, 2))
    return [
        Example([cache, upd], name="prefill_no_write_indices"),
        Example([cache, one, ints([4, 1])], name="decode_linear"),
        Example([cache, upd, ints([3, 0])], {"mode": "linear"}, name="linear_up_to_the_end"),
        Example([cache, upd, ints([4, 9])], {"mode": "circular"}, name="circular_wraps"),
        Example([cache, np.resize(ev, (2, 3, 5, 2))[:, :, ::-1].copy(), ints([2, 0])], {"mode": "circular"}, name="circular_full_length"),
        Example([np.resize(ev, (2, 4, 3)), np.resize(ev[::-1], (2, 2, 3)), ints([1, 2])], {"axis": 1}, name="axis_1"),
        Example([np.resize(ev, (2, 3, 4)), np.resize(ev[::-1], (2, 3, 3)), ints([0, 1])], {"axis": -1, "mode": "circular"}, name="axis_last_circular"),
        Example([cache, np.resize(ev, (2, 3, 0, 2)), ints([1, 2])], name="empty_update"),
        Example([np.resize(ev, (0, 3, 5, 2)), np.resize(ev, (0, 3, 2, 2)), ints([])], name="empty_batch"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param="T")
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 2 and v.shape[0] > 0 and v.shape[-2] > 0)
    if x is None:
        return None
    max_len = x.shape[-2]
    seq_len = 1 + c.pick(max_len)
    upd = c.const(c.floats(x.shape[:-2] + (seq_len,) + x.shape[-1:]))
    circular = bool(c.pick(2))
    hi = 2 * max_len if circular else max_len - seq_len
    w = c.rng.integers(0, hi + 1, size=x.shape[0])
    return Plan([x, upd, c.ints(w)], {"mode": "circular"} if circular else {})
