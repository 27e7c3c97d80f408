"""Control flow, sequences and optionals: If, Loop, Scan, Sequence*, SplitToSequence,
ConcatFromSequence, SequenceMap, Optional*.

A sequence is a Python list of tensors; an empty optional is ``None``. Subgraph attributes
arrive lowered (:class:`.lowering.Graph`); ``outer`` holds the values in scope at the node.
"""

from __future__ import annotations

import torch

from ..lowering import optional, sequence_construct, sequence_empty, sequence_map
from . import dtypes
from ._util import ints, scalar
from .registry import lowers


@lowers("If", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def if_(node, cond, *, then_branch, else_branch, outer):
    branch = then_branch if bool(scalar(cond)) else else_branch
    return tuple(branch.run({}, outer))


def _element_shape(body, j):
    """The static shape the body declares for its output ``j``, or None."""
    if body is None or j >= len(body.output_types) or not body.output_types[j].HasField("tensor_type"):
        return None
    tt = body.output_types[j].tensor_type
    if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim):
        return None
    return tuple(d.dim_value for d in tt.shape.dim)


def _stack_scan(values, node, k, body=None, j=None):
    """The iterations' values stacked on a new axis 0; with zero iterations, 0 rows of the
    element shape the body declares for its output ``j`` (Loop/Scan: the concatenation of no
    values of that shape)."""
    if values:
        return torch.stack(values, 0)
    dtype = dtypes.CARRIER.get(node.out_type(k) or 0, torch.float32)
    shape = _element_shape(body, j) if j is not None else None
    return torch.zeros((0, *(shape or ())), dtype=dtype, device=node.device)


@lowers("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def loop(node, trip_count=None, cond=None, *carried, body, outer):
    max_trips = int(scalar(trip_count)) if trip_count is not None else None
    keep_going = bool(scalar(cond)) if cond is not None else True
    state = list(carried)
    n_carried = len(state)
    scans: list[list] = []
    i = 0
    while keep_going and (max_trips is None or i < max_trips):
        feeds = dict(zip(body.inputs, [torch.tensor(i, dtype=torch.int64, device=node.device),
                                       torch.tensor(keep_going, device=node.device), *state]))
        out = body.run(feeds, outer)
        # the body's condition output counts only when the node has a condition input (Loop spec)
        keep_going = bool(scalar(out[0])) if cond is not None else True
        state = list(out[1:1 + n_carried])
        extra = out[1 + n_carried:]
        if not scans:
            scans = [[] for _ in extra]
        for bucket, value in zip(scans, extra):
            bucket.append(value)
        i += 1
    n_scan = len(node.outputs) - n_carried
    if not scans:
        scans = [[] for _ in range(n_scan)]
    return tuple(state) + tuple(_stack_scan(v, node, n_carried + k, body, 1 + n_carried + k) for k, v in enumerate(scans))


@lowers("Scan", 9, 11, 16, 19, 21, 23, 24, 25)
def scan(node, *inputs, body, num_scan_inputs, scan_input_axes=None, scan_input_directions=None,
         scan_output_axes=None, scan_output_directions=None, outer):
    n_state = len(inputs) - num_scan_inputs
    state = list(inputs[:n_state])
    xs = list(inputs[n_state:])
    in_axes = [a + x.dim() if a < 0 else a for a, x in zip(scan_input_axes or [0] * len(xs), xs)]
    in_dirs = scan_input_directions or [0] * len(xs)
    length = xs[0].shape[in_axes[0]] if xs else 0
    outs: list[list] = []
    for t in range(length):
        slices = [x.select(a, length - 1 - t if d else t) for x, a, d in zip(xs, in_axes, in_dirs)]
        result = body.run(dict(zip(body.inputs, state + slices)), outer)
        state = list(result[:n_state])
        if not outs:
            outs = [[] for _ in result[n_state:]]
        for bucket, value in zip(outs, result[n_state:]):
            bucket.append(value)
    n_out = len(node.outputs) - n_state
    out_axes = scan_output_axes or [0] * n_out
    out_dirs = scan_output_directions or [0] * n_out
    stacked = []
    for k in range(n_out):
        values = outs[k] if outs else []
        if out_dirs[k]:
            values = values[::-1]
        y = _stack_scan(values, node, n_state + k, body, n_state + k)
        axis = out_axes[k] + y.dim() if out_axes[k] < 0 else out_axes[k]
        stacked.append(y.movedim(0, axis))
    return tuple(state) + tuple(stacked)


@lowers("Scan", 8)
def scan_8(node, sequence_lens, *inputs, body, num_scan_inputs, directions=None, outer):
    """Scan-8 has a batch axis 0 in every input and output, and optional sequence_lens."""
    n_state = len(inputs) - num_scan_inputs
    batch = inputs[0].shape[0]
    lens = ints(sequence_lens) if sequence_lens is not None else None
    per_batch = []
    for b in range(batch):
        state = [s[b] for s in inputs[:n_state]]
        xs = [x[b] for x in inputs[n_state:]]
        if lens is not None:
            xs = [x[: lens[b]] for x in xs]
        per_batch.append(scan(node, *state, *xs, body=body, num_scan_inputs=num_scan_inputs,
                              scan_input_directions=directions, outer=outer))
    max_len = inputs[n_state].shape[1]
    out = []
    for k in range(len(per_batch[0])):
        rows = [r[k] for r in per_batch]
        if k >= n_state and any(r.shape[0] < max_len for r in rows):
            # "scan-outputs will have size max_sequence_length, but only first N values will be
            # meaningful": rows past a shorter sequence_lens[batch] are zero-filled
            rows = [torch.cat([r, r.new_zeros((max_len - r.shape[0], *r.shape[1:]))]) for r in rows]
        out.append(torch.stack(rows, 0))
    return tuple(out)


# -- sequences -------------------------------------------------------------------------------
lowers("SequenceEmpty", 11)(sequence_empty)
lowers("SequenceConstruct", 11)(sequence_construct)


def _position(pos, n, default, insert=False):
    """A position as an index: "Negative value means counting positions from the back"; the
    accepted range is [-n, n - 1] ([-n, n] to insert), outside it an error (never Python's
    wrap-around or list.insert's clamping)."""
    if pos is None:
        return default
    p = int(scalar(pos))
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise IndexError(f"sequence position {p} outside the accepted range [-{n}, {hi}]")
    return p + n if p < 0 else p


@lowers("SequenceInsert", 11)
def sequence_insert(node, seq, x, position=None):
    out = list(seq)
    out.insert(_position(position, len(seq), len(seq), insert=True), x)
    return out


@lowers("SequenceAt", 11)
def sequence_at(node, seq, position):
    return seq[_position(position, len(seq), 0)]


@lowers("SequenceErase", 11)
def sequence_erase(node, seq, position=None):
    if not seq:
        raise IndexError("SequenceErase of an empty sequence")
    out = list(seq)
    del out[_position(position, len(seq), len(seq) - 1)]
    return out


@lowers("SequenceLength", 11)
def sequence_length(node, seq):
    return torch.tensor(len(seq), dtype=torch.int64, device=node.device)


@lowers("ConcatFromSequence", 11)
def concat_from_sequence(node, seq, *, axis, new_axis=0):
    return torch.stack(seq, dim=axis) if new_axis else torch.cat(seq, dim=axis)


@lowers("SplitToSequence", 11, 24)
def split_to_sequence(node, x, split=None, *, axis=0, keepdims=1):
    a = axis + x.dim() if axis < 0 else axis
    if x.shape[a] == 0 and (split is None or split.dim() == 0):
        return []  # no chunk of an empty axis (torch.split would give one empty chunk)
    if split is None:
        parts = list(torch.split(x, 1, dim=a))
        return [p.squeeze(a) for p in parts] if not keepdims else parts
    if split.dim() == 0:
        return list(torch.split(x, int(split.item()), dim=a))
    return list(torch.split(x, ints(split), dim=a))


lowers("SequenceMap", 17)(sequence_map)


# -- optionals -------------------------------------------------------------------------------
lowers("Optional", 15, 28)(optional)


@lowers("OptionalHasElement", 15, 18, 28)
def optional_has_element(node, x=None):
    return torch.tensor(x is not None, device=node.device)


@lowers("OptionalGetElement", 15, 18, 28)
def optional_get_element(node, x):
    if x is None:
        raise ValueError("OptionalGetElement: the optional is empty")
    return x
