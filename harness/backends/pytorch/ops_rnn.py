"""Recurrent layers: LSTM, GRU, RNN, written step by step from the spec's equations.

All attributes are honoured: ``direction`` (forward / reverse / bidirectional), ``layout``,
``activations`` with ``activation_alpha`` / ``activation_beta``, ``clip``, ``input_forget``
(LSTM), peepholes ``P`` (LSTM), ``linear_before_reset`` (GRU) and ``sequence_lens`` (steps past
a batch entry's length leave its state unchanged and write zeros to ``Y``).
"""

from __future__ import annotations

import torch

from ..base import Unsupported
from ..lowering import rnn_activations
from ._util import ints
from .registry import lowers



def _activation(name: str, params: tuple[float, ...]):
    key = name.lower()
    a, b = (list(params) + [None, None])[:2]
    table = {
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "relu": torch.relu,
        "softsign": lambda x: x / (1 + x.abs()),
        "softplus": lambda x: torch.logaddexp(x, torch.zeros_like(x)),  # log(1 + e^x) without overflowing e^x
        "affine": lambda x: a * x + b,
        "leakyrelu": lambda x: torch.where(x < 0, a * x, x),
        "thresholdedrelu": lambda x: torch.where(x >= a, x, torch.zeros_like(x)),  # the RNN doc: "x if x >= alpha else 0"
        "scaledtanh": lambda x: a * torch.tanh(b * x),
        "hardsigmoid": lambda x: torch.clamp(a * x + b, 0, 1),
        "elu": lambda x: torch.where(x < 0, a * torch.expm1(x), x),
    }
    if key not in table:
        raise Unsupported(f"RNN activation {name!r}")
    return table[key]


def _activations(names, alphas, betas, per_direction: int, defaults: list[str], num_directions: int):
    return rnn_activations(names, alphas, betas, per_direction, defaults, num_directions, _activation)


_WIDE = (torch.float16, torch.bfloat16)


def _prepare(x, layout):
    return x.transpose(0, 1) if layout else x  # to [seq, batch, input]


def _widen(*ts):
    """float16 / bfloat16 evaluated in float32 (the recurrence compounds a narrow type's rounding
    at every step), other types as they are."""
    return [t.float() if t is not None and t.dtype in _WIDE else t for t in ts]


def _narrow(outs, like):
    return tuple(o.to(like.dtype) for o in outs)


def _reverse_prefix(x, lens):
    """Reverse time (dim 0) within each batch entry's first ``lens[b]`` steps."""
    if lens is None:
        return x.flip(0)
    out = x.clone()
    for b, n in enumerate(lens):
        out[:n, b] = x[:n, b].flip(0)
    return out


def _run(x, cell, h0, c0, lens, reverse):
    """Run ``cell`` over time; returns Y [seq, batch, hidden], last h, last c.

    The reverse direction is the forward recurrence over each entry's reversed valid prefix.
    """
    if reverse:
        x = _reverse_prefix(x, lens)
    h, c = h0, c0
    ys = []
    lens_t = torch.tensor(lens, device=x.device).reshape(-1, 1) if lens is not None else None
    for t in range(x.shape[0]):
        nh, nc = cell(x[t], h, c)
        if lens_t is not None:
            live = t < lens_t
            nh = torch.where(live, nh, h)
            if nc is not None:
                nc = torch.where(live, nc, c)
            ys.append(torch.where(live, nh, torch.zeros_like(nh)))
        else:
            ys.append(nh)
        h, c = nh, nc
    y = torch.stack(ys, 0) if ys else x.new_zeros((0, x.shape[1], h.shape[-1]))
    if reverse:
        y = _reverse_prefix(y, lens)
    return y, h, c


def _outputs(node, ys, hs, cs, layout):
    y = torch.stack(ys, 1)  # [seq, num_dir, batch, hidden]
    y_h = torch.stack(hs, 0)
    y_c = torch.stack(cs, 0) if cs is not None else None
    if layout:
        y = y.permute(2, 0, 1, 3)
        y_h = y_h.transpose(0, 1)
        y_c = y_c.transpose(0, 1) if y_c is not None else None
    return (y, y_h) if y_c is None else (y, y_h, y_c)


def _directions(direction):
    if isinstance(direction, bytes):
        direction = direction.decode()
    # GRU-1's schema default is spelled "foward" (its doc: "forward (default)")
    table = {"forward": [False], "foward": [False], "reverse": [True], "bidirectional": [False, True]}
    if direction not in table:
        raise ValueError(f"RNN direction {direction!r}")
    return table[direction]


@lowers("LSTM", 1, 7, 14, 22)
def lstm(node, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, *, activation_alpha=None,
         activation_beta=None, activations=None, clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    like = x
    x, w, r, b, initial_h, initial_c, p = _widen(x, w, r, b, initial_h, initial_c, p)
    x = _prepare(x, layout)
    hidden = r.shape[-1]
    dirs = _directions(direction)
    acts = _activations(activations, activation_alpha, activation_beta, 3, ["Sigmoid", "Tanh", "Tanh"], len(dirs))
    batch = x.shape[1]
    lens = ints(sequence_lens) if sequence_lens is not None else None
    ys, hs, cs = [], [], []
    for d, reverse in enumerate(dirs):
        f, g, h_act = acts[d]
        wd, rd = w[d], r[d]
        bias = (b[d, : 4 * hidden] + b[d, 4 * hidden:]) if b is not None else torch.zeros(4 * hidden, dtype=x.dtype, device=x.device)
        pi, po, pf = (p[d, :hidden], p[d, hidden:2 * hidden], p[d, 2 * hidden:]) if p is not None else (0, 0, 0)
        h0 = _initial(initial_h, layout, d, batch, hidden, x)
        c0 = _initial(initial_c, layout, d, batch, hidden, x)

        def cell(xt, h, c, wd=wd, rd=rd, bias=bias, pi=pi, po=po, pf=pf, f=f, g=g, h_act=h_act):
            gates = xt @ wd.T + h @ rd.T + bias
            gi, go, gf, gc = gates.split(hidden, dim=-1)
            # "clip ... is applied to the input of activations": the peephole terms are part of that input
            i = f(_clamp(gi + pi * c, clip))
            ff = 1 - i if input_forget else f(_clamp(gf + pf * c, clip))
            cc = g(_clamp(gc, clip))
            c_new = ff * c + i * cc
            o = f(_clamp(go + po * c_new, clip))
            return o * h_act(c_new), c_new

        y, h_last, c_last = _run(x, cell, h0, c0, lens, reverse)
        ys.append(y)
        hs.append(h_last)
        cs.append(c_last)
    return _narrow(_outputs(node, ys, hs, cs, layout), like)


@lowers("GRU", 1, 3, 7, 14, 22)
def gru(node, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha=None, activation_beta=None,
        activations=None, clip=None, direction="forward", hidden_size=None, layout=0, linear_before_reset=0,
        output_sequence=0):
    like = x
    x, w, r, b, initial_h = _widen(x, w, r, b, initial_h)
    x = _prepare(x, layout)
    hidden = r.shape[-1]
    dirs = _directions(direction)
    acts = _activations(activations, activation_alpha, activation_beta, 2, ["Sigmoid", "Tanh"], len(dirs))
    batch = x.shape[1]
    lens = ints(sequence_lens) if sequence_lens is not None else None
    ys, hs = [], []
    for d, reverse in enumerate(dirs):
        f, g = acts[d]
        wd, rd = w[d], r[d]
        zero = torch.zeros(3 * hidden, dtype=x.dtype, device=x.device)
        wb, rb = (b[d, : 3 * hidden], b[d, 3 * hidden:]) if b is not None else (zero, zero)
        h0 = _initial(initial_h, layout, d, batch, hidden, x)
        rz, rr, rh = rd.split(hidden, dim=0)

        def cell(xt, h, c, wd=wd, rz=rz, rr=rr, rh=rh, wb=wb, rb=rb, f=f, g=g):
            xw = xt @ wd.T + wb
            xz, xr, xh = xw.split(hidden, dim=-1)
            rbz, rbr, rbh = rb.split(hidden)
            pre_z = xz + h @ rz.T + rbz
            pre_r = xr + h @ rr.T + rbr
            if clip is not None:
                pre_z, pre_r = pre_z.clamp(-clip, clip), pre_r.clamp(-clip, clip)
            z, rg = f(pre_z), f(pre_r)
            if linear_before_reset:
                pre_h = xh + rg * (h @ rh.T + rbh)
            else:
                pre_h = xh + (rg * h) @ rh.T + rbh
            if clip is not None:
                pre_h = pre_h.clamp(-clip, clip)
            hh = g(pre_h)
            return (1 - z) * hh + z * h, None

        y, h_last, _ = _run(x, cell, h0, None, lens, reverse)
        ys.append(y)
        hs.append(h_last)
    return _narrow(_outputs(node, ys, hs, None, layout), like)


@lowers("RNN", 1, 7, 14, 22)
def rnn(node, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha=None, activation_beta=None,
        activations=None, clip=None, direction="forward", hidden_size=None, layout=0, output_sequence=0):
    like = x
    x, w, r, b, initial_h = _widen(x, w, r, b, initial_h)
    x = _prepare(x, layout)
    hidden = r.shape[-1]
    dirs = _directions(direction)
    acts = _activations(activations, activation_alpha, activation_beta, 1, ["Tanh"], len(dirs))
    batch = x.shape[1]
    lens = ints(sequence_lens) if sequence_lens is not None else None
    ys, hs = [], []
    for d, reverse in enumerate(dirs):
        (f,) = acts[d]
        wd, rd = w[d], r[d]
        bias = (b[d, :hidden] + b[d, hidden:]) if b is not None else torch.zeros(hidden, dtype=x.dtype, device=x.device)
        h0 = _initial(initial_h, layout, d, batch, hidden, x)

        def cell(xt, h, c, wd=wd, rd=rd, bias=bias, f=f):
            pre = xt @ wd.T + h @ rd.T + bias
            if clip is not None:
                pre = pre.clamp(-clip, clip)
            return f(pre), None

        y, h_last, _ = _run(x, cell, h0, None, lens, reverse)
        ys.append(y)
        hs.append(h_last)
    return _narrow(_outputs(node, ys, hs, None, layout), like)


def _clamp(v, clip):
    return v if clip is None else v.clamp(-clip, clip)


def _initial(state, layout, d, batch, hidden, x):
    if state is None:
        return torch.zeros(batch, hidden, dtype=x.dtype, device=x.device)
    return state[:, d] if layout else state[d]
