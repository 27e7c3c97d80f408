"""Control flow, sequences and optionals: If as ``tf.cond``, Loop and Scan as ``tf.while_loop``
(scan outputs in TensorArrays); Sequence*, SplitToSequence, ConcatFromSequence, SequenceMap,
Optional*.

Subgraphs are lowered ``Graph`` objects and read the enclosing scope (``outer``). A condition
known when tracing picks its branch directly; eagerly, tf.cond and tf.while_loop run as Python.
A sequence is a Python list of tensors and an empty optional is ``None``, both fixed when the graph
is traced: a Loop carrying a sequence or an optional runs as a Python loop, so in graph and XLA
mode its trip count and conditions must be known when tracing (else ``unsupported``, named), as
must a sequence position or a split."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from ..lowering import optional, sequence_construct, sequence_empty, sequence_map
from .lowering import tf_dtype
from .ops_tensor import static
from .registry import lowers


@lowers("If", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def if_(node, cond, *, then_branch, else_branch, outer):
    pick = tf.reshape(cond, [])
    known = tf.get_static_value(pick)
    if known is not None:
        return tuple((then_branch if known else else_branch).run({}, outer))
    if any(t.WhichOneof("value") != "tensor_type" for t in (*then_branch.output_types, *else_branch.output_types)):
        raise Unsupported(f"{node}: branches giving sequences or optionals on a condition known only when the graph runs")
    return tuple(tf.cond(pick, lambda: then_branch.run({}, outer), lambda: else_branch.run({}, outer)))


@lowers("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def loop(node, M=None, cond=None, *initial, body, outer):
    """"for (int i=0; i < max_trip_count && keepgoing; ++i)": the body takes (i, cond, state...)
    and gives (cond, state..., scan outputs...); each scan output is stacked over the iterations."""
    n_state = len(initial)
    if any(v is None or isinstance(v, list) for v in initial) or any(
            t.WhichOneof("value") != "tensor_type" for t in body.output_types):
        return _python_loop(node, M, cond, initial, body, outer)
    scan_types = [t.tensor_type.elem_type for t in body.output_types[1 + n_state:]]
    trips = tf.reshape(tf.cast(M, tf.int64), []) if M is not None else tf.constant(2**63 - 1, tf.int64)
    going = tf.reshape(tf.cast(cond, tf.bool), []) if cond is not None else tf.constant(True)
    arrays = [tf.TensorArray(tf_dtype(code), size=0, dynamic_size=True, infer_shape=False) for code in scan_types]

    def test(i, keep, *rest):
        return tf.logical_and(i < trips, keep)

    def step(i, keep, *rest):
        state, scans = rest[:n_state], rest[n_state:]
        out = body.run(dict(zip(body.inputs, [i, keep, *state])), outer)
        written = [a.write(tf.cast(i, tf.int32), v) for a, v in zip(scans, out[1 + n_state:])]
        return (i + 1, tf.reshape(tf.cast(out[0], tf.bool), []), *out[1:1 + n_state], *written)

    loop_vars = (tf.constant(0, tf.int64), going, *initial, *arrays)
    invariants = (tf.TensorShape([]), tf.TensorShape([]), *[tf.TensorShape(None)] * n_state, *[tf.TensorShape(None)] * len(arrays))
    done = tf.while_loop(test, step, loop_vars, shape_invariants=invariants)
    return tuple(done[2:2 + n_state]) + tuple(a.stack() for a in done[2 + n_state:])


def _known(node, t, what):
    """A scalar's value when tracing (a Python loop decides on it)."""
    return static(node, t, what).reshape(-1)[0]


def _python_loop(node, M, cond, initial, body, outer):
    """Loop with sequence or optional values among its state: the iterations as a Python loop."""
    n_state = len(initial)
    trips = int(_known(node, M, "the trip count")) if M is not None else None
    going = bool(_known(node, cond, "the condition")) if cond is not None else True
    state, scans, i = list(initial), [], 0
    while going and (trips is None or i < trips):
        out = body.run(dict(zip(body.inputs, [tf.constant(i, tf.int64), tf.constant(going), *state])), outer)
        going = bool(_known(node, out[0], "the body's condition")) if cond is not None else True
        state = list(out[1:1 + n_state])
        if not scans:
            scans = [[] for _ in out[1 + n_state:]]
        for bucket, value in zip(scans, out[1 + n_state:]):
            bucket.append(value)
        i += 1
    if not scans and len(node.outputs) > n_state:
        raise Unsupported(f"{node}: no iteration, so no element shape for the scan outputs")
    return tuple(state) + tuple(tf.stack(v, 0) for v in scans)


def _element_shape(body, j):
    """The shape the body declares for its output ``j`` (None entries for unknown dims), or None."""
    tt = body.output_types[j].tensor_type
    if not tt.HasField("shape"):
        return None
    return tf.TensorShape([d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim])


@lowers("Scan", 9, 11, 16, 19, 21, 23, 24, 25)
def scan(node, *inputs, body, num_scan_inputs, scan_input_axes=None, scan_input_directions=None,
         scan_output_axes=None, scan_output_directions=None, outer):
    """The body runs once per slice of the scan inputs along their axes (reversed where the
    direction is 1), carrying the state; each scan output stacks the iterations' values on a new
    axis (``scan_output_axes``; reversed for direction 1)."""
    n_state = len(inputs) - num_scan_inputs
    xs = []
    for k, x in enumerate(inputs[n_state:]):
        a = (scan_input_axes or [0] * num_scan_inputs)[k]
        a = a + x.shape.rank if a < 0 else a
        x = tf.transpose(x, [a] + [d for d in range(x.shape.rank) if d != a]) if a else x
        xs.append(tf.reverse(x, [0]) if (scan_input_directions or [0] * num_scan_inputs)[k] else x)
    length = tf.shape(xs[0])[0]
    n_out = len(body.outputs) - n_state
    arrays = [tf.TensorArray(tf_dtype(body.output_types[n_state + k].tensor_type.elem_type), size=length,
                             element_shape=_element_shape(body, n_state + k)) for k in range(n_out)]

    def step(t, *rest):
        state, outs = rest[:n_state], rest[n_state:]
        result = body.run(dict(zip(body.inputs, [*state, *[x[t] for x in xs]])), outer)
        return (t + 1, *result[:n_state], *[a.write(t, v) for a, v in zip(outs, result[n_state:])])

    invariants = (tf.TensorShape([]), *[s.shape for s in inputs[:n_state]],  # the state keeps its shape
                  *[tf.TensorShape(None)] * n_out)
    done = tf.while_loop(lambda t, *rest: t < length, step, (tf.constant(0), *inputs[:n_state], *arrays),
                         shape_invariants=invariants)
    outs = []
    for k, array in enumerate(done[1 + n_state:]):
        y = array.stack()
        if (scan_output_directions or [0] * n_out)[k]:
            y = tf.reverse(y, [0])
        a = (scan_output_axes or [0] * n_out)[k]
        a = a + y.shape.rank if a < 0 else a
        outs.append(tf.transpose(y, list(range(1, a + 1)) + [0] + list(range(a + 1, y.shape.rank))) if a else y)
    return tuple(done[1:1 + n_state]) + tuple(outs)


@lowers("Scan", 8)
def scan_8(node, sequence_lens, *inputs, body, num_scan_inputs, directions=None, outer):
    """Scan-8: a batch axis 0 in every input and output, each batch entry scanned on its own;
    with sequence_lens, only the first N of its steps ("scan-outputs will have size
    max_sequence_length, but only first N values will be meaningful": the rest zero here)."""
    n_state = len(inputs) - num_scan_inputs
    batch = inputs[0].shape[0]
    if batch is None:
        raise Unsupported(f"{node}: a batch size known only when the graph runs")
    lens = static(node, sequence_lens, "sequence_lens").reshape(-1) if sequence_lens is not None else None
    max_len = tf.shape(inputs[n_state])[1]
    per_batch = []
    for b in range(batch):
        xs = [x[b] if lens is None else x[b, :int(lens[b])] for x in inputs[n_state:]]
        per_batch.append(scan(node, *[s[b] for s in inputs[:n_state]], *xs, body=body, num_scan_inputs=num_scan_inputs,
                              scan_input_directions=directions, outer=outer))
    out = []
    for k in range(len(per_batch[0])):
        rows = [r[k] for r in per_batch]
        if k >= n_state and lens is not None:
            rows = [tf.pad(r, [[0, max_len - tf.shape(r)[0]]] + [[0, 0]] * (r.shape.rank - 1)) for r in rows]
        out.append(tf.stack(rows, 0))
    return tuple(out)


# -- sequences -------------------------------------------------------------------------------
def _position(node, pos, n, default, insert=False):
    """"Negative value means counting positions from the back"; accepted range [-n, n - 1]
    ([-n, n] to insert), outside it an error."""
    if pos is None:
        return default
    p = int(_known(node, pos, "the position"))
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise IndexError(f"{node}: sequence position {p} outside the accepted range [-{n}, {hi}]")
    return p + n if p < 0 else p


lowers("SequenceEmpty", 11)(sequence_empty)
lowers("SequenceConstruct", 11)(sequence_construct)


@lowers("SequenceInsert", 11)
def sequence_insert(node, seq, x, position=None):
    out = list(seq)
    out.insert(_position(node, position, len(seq), len(seq), insert=True), x)
    return out


@lowers("SequenceAt", 11)
def sequence_at(node, seq, position):
    return tf.identity(seq[_position(node, position, len(seq), 0)])


@lowers("SequenceErase", 11)
def sequence_erase(node, seq, position=None):
    if not seq:
        raise IndexError(f"{node}: erasing from an empty sequence")
    out = list(seq)
    del out[_position(node, position, len(seq), len(seq) - 1)]
    return out


@lowers("SequenceLength", 11)
def sequence_length(node, seq):
    return tf.constant(len(seq), tf.int64)


@lowers("ConcatFromSequence", 11)
def concat_from_sequence(node, seq, *, axis, new_axis=0):
    return tf.stack(seq, axis=axis) if new_axis else tf.concat(seq, axis=axis)


@lowers("SplitToSequence", 11, 24)
def split_to_sequence(node, x, split=None, *, axis=0, keepdims=1):
    """No split: chunks of 1 (squeezed unless keepdims); a scalar split: chunks of that length, the
    last one shorter; a 1-D split: those lengths."""
    a = axis + x.shape.rank if axis < 0 else axis
    n = x.shape[a]
    if n is None:
        raise Unsupported(f"{node}: a split axis whose length is known only when the graph runs")
    if split is None:
        parts = tf.split(x, n, axis=a) if n else []
        return [tf.squeeze(p, a) for p in parts] if not keepdims else list(parts)
    if split.shape.rank == 1 and tf.get_static_value(split) is None:  # lengths as data, their count known
        return list(tf.split(x, tf.cast(split, tf.int64), num=split.shape[0], axis=a))
    sizes = static(node, split, "split")
    if sizes.ndim == 0:
        step = int(sizes)
        sizes = [min(step, n - s) for s in range(0, n, step)]
    return list(tf.split(x, [int(v) for v in np.ravel(sizes)], axis=a)) if n else []


lowers("SequenceMap", 17)(sequence_map)


# -- optionals -------------------------------------------------------------------------------
lowers("Optional", 15, 28)(optional)


@lowers("OptionalHasElement", 15, 18, 28)
def optional_has_element(node, x=None):
    return tf.constant(x is not None)


@lowers("OptionalGetElement", 15, 18, 28)
def optional_get_element(node, x):
    if x is None:
        raise ValueError(f"{node}: the optional is empty")
    return x
