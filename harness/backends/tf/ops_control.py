"""Control flow: If as ``tf.cond``, Loop as ``tf.while_loop`` (scan outputs in TensorArrays).

Subgraphs are lowered ``Graph`` objects and read the enclosing scope (``outer``). A condition
known when tracing picks its branch directly; eagerly, tf.cond and tf.while_loop run as Python.
Sequence- and optional-typed values have no lowering (their graphs are unsupported before this)."""

from __future__ import annotations

import tensorflow as tf

from .lowering import tf_dtype
from .registry import lowers


@lowers("If", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def if_(node, cond, *, then_branch, else_branch, outer):
    pick = tf.reshape(cond, [])
    known = tf.get_static_value(pick)
    if known is not None:
        return tuple((then_branch if known else else_branch).run({}, outer))
    return tuple(tf.cond(pick, lambda: then_branch.run({}, outer), lambda: else_branch.run({}, outer)))


@lowers("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def loop(node, M=None, cond=None, *initial, body, outer):
    """"for (int i=0; i < max_trip_count && keepgoing; ++i)": the body takes (i, cond, state...)
    and gives (cond, state..., scan outputs...); each scan output is stacked over the iterations."""
    n_state = len(initial)
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
