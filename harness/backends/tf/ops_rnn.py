"""Recurrent layers: LSTM, GRU, RNN, step by step from the spec's equations, in the input's type.

Honoured: ``direction`` (forward / reverse / bidirectional), ``layout``, ``activations`` with
``activation_alpha`` / ``activation_beta``, ``clip``, ``input_forget`` and peepholes ``P`` (LSTM),
``linear_before_reset`` (GRU) and ``sequence_lens`` (steps past a batch entry's length leave its
state unchanged and write zeros to ``Y``; the reverse direction runs over each entry's reversed
valid prefix, ``tf.reverse_sequence``). The time loop is unrolled when the graph is traced, so the
sequence length must be known then.
"""

from __future__ import annotations

import tensorflow as tf

from ..base import Unsupported
from ..lowering import rnn_activations
from .registry import lowers



def _activation(name: str, a, b):
    table = {
        "sigmoid": tf.math.sigmoid,
        "tanh": tf.math.tanh,
        "relu": tf.nn.relu,
        "softsign": lambda x: x / (1 + tf.abs(x)),
        "softplus": tf.math.softplus,
        "affine": lambda x: a * x + b,
        "leakyrelu": lambda x: tf.where(x < 0, a * x, x),
        "thresholdedrelu": lambda x: tf.where(x >= a, x, tf.zeros_like(x)),  # "x if x >= alpha else 0"
        "scaledtanh": lambda x: a * tf.math.tanh(b * x),
        "hardsigmoid": lambda x: tf.clip_by_value(a * x + b, 0, 1),
        "elu": lambda x: tf.where(x < 0, a * tf.math.expm1(x), x),
    }
    if name.lower() not in table:
        raise Unsupported(f"RNN activation {name!r}")
    return table[name.lower()]


def _activations(names, alphas, betas, per_direction: int, defaults: list[str], num_directions: int):
    def make(name, params):
        return _activation(name, *(list(params) + [None, None])[:2])

    return rnn_activations(names, alphas, betas, per_direction, defaults, num_directions, make)


def _directions(direction: str) -> list[bool]:
    # GRU-1's schema default is spelled "foward" (its doc: "forward (default)")
    table = {"forward": [False], "foward": [False], "reverse": [True], "bidirectional": [False, True]}
    if direction not in table:
        raise ValueError(f"RNN direction {direction!r}")
    return table[direction]


def _clamp(v, clip):
    return v if clip is None else tf.clip_by_value(v, -clip, clip)


def _run(node, x, cell, h0, c0, lens, reverse):
    """``cell`` over time: Y [seq, batch, hidden], the last h and c."""
    steps = x.shape[0]
    if steps is None:
        raise Unsupported(f"{node}: a sequence length known only when the graph runs")
    if reverse:
        x = tf.reverse(x, [0]) if lens is None else tf.reverse_sequence(x, lens, seq_axis=0, batch_axis=1)
    h, c, ys = h0, c0, []
    for t in range(steps):
        nh, nc = cell(x[t], h, c)
        if lens is not None:
            live = tf.reshape(t < lens, [-1, 1])
            nh = tf.where(live, nh, h)
            nc = tf.where(live, nc, c) if nc is not None else None
            ys.append(tf.where(live, nh, tf.zeros_like(nh)))
        else:
            ys.append(nh)
        h, c = nh, nc
    y = tf.stack(ys, 0) if ys else tf.zeros(tf.stack([0, tf.shape(x)[1], tf.shape(h)[-1]]), x.dtype)
    if reverse:
        y = tf.reverse(y, [0]) if lens is None else tf.reverse_sequence(y, lens, seq_axis=0, batch_axis=1)
    return y, h, c


def _layer(node, x, w, r, sequence_lens, initial, layout, direction, activations, alphas, betas, per_direction, defaults,
           make_cell, states=1):
    """The shared frame of the three layers: layout, directions, initial states, outputs."""
    x = tf.transpose(x, [1, 0, 2]) if layout else x  # to [seq, batch, input]
    hidden = r.shape[-1]
    dirs = _directions(direction)
    acts = _activations(activations, alphas, betas, per_direction, defaults, len(dirs))
    lens = tf.cast(sequence_lens, tf.int64) if sequence_lens is not None else None
    zeros = tf.zeros(tf.stack([tf.shape(x)[1], hidden]), x.dtype)
    ys, hs, cs = [], [], []
    for d, reverse in enumerate(dirs):
        h0, c0 = [(zeros if s is None else (s[:, d] if layout else s[d])) for s in initial] + [None] * (2 - len(initial))
        y, h, c = _run(node, x, make_cell(d, acts[d], hidden), h0, c0, lens, reverse)
        ys.append(y)
        hs.append(h)
        cs.append(c)
    y, y_h = tf.stack(ys, 1), tf.stack(hs, 0)  # [seq, num_dir, batch, hidden], [num_dir, batch, hidden]
    y_c = tf.stack(cs, 0) if states == 2 else None
    if layout:
        y, y_h = tf.transpose(y, [2, 0, 1, 3]), tf.transpose(y_h, [1, 0, 2])
        y_c = tf.transpose(y_c, [1, 0, 2]) if y_c is not None else None
    return (y, y_h) if y_c is None else (y, y_h, y_c)


@lowers("LSTM", 1, 7, 14, 22)
def lstm(node, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, *, activation_alpha=None,
         activation_beta=None, activations=None, clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    def make_cell(d, acts, hidden):
        f, g, h_act = acts
        wd, rd = w[d], r[d]
        bias = b[d, :4 * hidden] + b[d, 4 * hidden:] if b is not None else tf.zeros([4 * hidden], x.dtype)
        pi, po, pf = (p[d, :hidden], p[d, hidden:2 * hidden], p[d, 2 * hidden:]) if p is not None else (0, 0, 0)

        def cell(xt, h, c):
            gates = tf.matmul(xt, wd, transpose_b=True) + tf.matmul(h, rd, transpose_b=True) + bias
            gi, go, gf, gc = tf.split(gates, 4, axis=-1)
            # "clip ... is applied to the input of activations": the peephole terms are part of it
            i = f(_clamp(gi + pi * c, clip))
            ff = 1 - i if input_forget else f(_clamp(gf + pf * c, clip))
            c_new = ff * c + i * g(_clamp(gc, clip))
            o = f(_clamp(go + po * c_new, clip))
            return o * h_act(c_new), c_new
        return cell

    return _layer(node, x, w, r, sequence_lens, [initial_h, initial_c], layout, direction, activations, activation_alpha,
                  activation_beta, 3, ["Sigmoid", "Tanh", "Tanh"], make_cell, states=2)


@lowers("GRU", 1, 3, 7, 14, 22)
def gru(node, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha=None, activation_beta=None,
        activations=None, clip=None, direction="forward", hidden_size=None, layout=0, linear_before_reset=0,
        output_sequence=0):
    def make_cell(d, acts, hidden):
        f, g = acts
        wd = w[d]
        rz, rr, rh = tf.split(r[d], 3, axis=0)
        wb, rb = (b[d, :3 * hidden], b[d, 3 * hidden:]) if b is not None else (tf.zeros([3 * hidden], x.dtype),) * 2
        rbz, rbr, rbh = tf.split(rb, 3)

        def cell(xt, h, c):
            xz, xr, xh = tf.split(tf.matmul(xt, wd, transpose_b=True) + wb, 3, axis=-1)
            z = f(_clamp(xz + tf.matmul(h, rz, transpose_b=True) + rbz, clip))
            rg = f(_clamp(xr + tf.matmul(h, rr, transpose_b=True) + rbr, clip))
            if linear_before_reset:
                pre_h = xh + rg * (tf.matmul(h, rh, transpose_b=True) + rbh)
            else:
                pre_h = xh + tf.matmul(rg * h, rh, transpose_b=True) + rbh
            return (1 - z) * g(_clamp(pre_h, clip)) + z * h, None
        return cell

    return _layer(node, x, w, r, sequence_lens, [initial_h], layout, direction, activations, activation_alpha, activation_beta,
                  2, ["Sigmoid", "Tanh"], make_cell)


@lowers("RNN", 1, 7, 14, 22)
def rnn(node, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha=None, activation_beta=None,
        activations=None, clip=None, direction="forward", hidden_size=None, layout=0, output_sequence=0):
    def make_cell(d, acts, hidden):
        (f,) = acts
        wd, rd = w[d], r[d]
        bias = b[d, :hidden] + b[d, hidden:] if b is not None else tf.zeros([hidden], x.dtype)

        def cell(xt, h, c):
            return f(_clamp(tf.matmul(xt, wd, transpose_b=True) + tf.matmul(h, rd, transpose_b=True) + bias, clip)), None
        return cell

    return _layer(node, x, w, r, sequence_lens, [initial_h], layout, direction, activations, activation_alpha, activation_beta,
                  1, ["Tanh"], make_cell)
