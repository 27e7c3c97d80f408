"""Recurrent kernels: RNN, GRU, LSTM (all directions, layouts, activations, clip, sequence lengths).

The input projection ``X @ W^T + biases`` is computed for every time step in one matmul before
the recurrence; the time loop only does the (batch x hidden) @ (hidden x gates) product.
"""

from __future__ import annotations

import numpy as np

from .registry import register

# name -> (function(x, alpha, beta), default alpha, default beta)


def _sigmoid(x, a, b):
    # stable logistic: 0.5 * (1 + tanh(x / 2))
    y = np.tanh(x * 0.5)
    y += 1
    y *= 0.5
    return y


def _softplus(x, a, b):
    return np.logaddexp(x, 0).astype(x.dtype, copy=False)


_ACTS = {
    "relu": (lambda x, a, b: np.maximum(x, 0), None, None),
    "tanh": (lambda x, a, b: np.tanh(x), None, None),
    "sigmoid": (_sigmoid, None, None),
    "affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda x, a, b: np.where(x >= a, x, 0), 1.0, None),  # the RNN doc: "x if x >= alpha else 0"
    "scaledtanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda x, a, b: np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1)), 1.0, None),
    "softsign": (lambda x, a, b: x / (1 + np.abs(x)), None, None),
    "softplus": (_softplus, None, None),
}


def _activations(attrs, defaults, num_dir):
    names = attrs.get("activations")
    if not names:
        names = defaults * num_dir
    names = list(names)
    if len(names) < len(defaults) * num_dir:  # one set given for two directions
        names = names * num_dir
    # the activations' alphas and betas in order, taken by the activations that have one
    alphas = iter(attrs.get("activation_alpha") or [])
    betas = iter(attrs.get("activation_beta") or [])
    funcs = []
    for name in names:
        fn, da, db = _ACTS[name.lower()]
        a = None if da is None else next(alphas, da)
        b = None if db is None else next(betas, db)
        funcs.append((fn, a, b))
    per = len(defaults)
    return [funcs[d * per : (d + 1) * per] for d in range(num_dir)]


def _apply(act, x):
    fn, a, b = act
    return fn(x, a, b)


class _Setup:
    """Normalises inputs to (seq, batch, ...) layout and the compute dtype."""

    def __init__(self, attrs, x, layout, ngates):
        self.layout = layout
        self.dtype = np.float64 if x.dtype == np.float64 else np.float32
        self.x = x.astype(self.dtype, copy=False)
        if layout:
            self.x = self.x.transpose(1, 0, 2)
        self.seq, self.batch = self.x.shape[:2]

    def state(self, s, num_dir, H):
        if s is None:
            return np.zeros((num_dir, self.batch, H), dtype=self.dtype)
        s = s.astype(self.dtype, copy=False)
        return s.transpose(1, 0, 2) if self.layout else s


def _reverse_steps(x, lens, reverse, zero_past_end=False):
    """x (T, B, ...) with each batch entry's first lens[b] steps in reverse order when ``reverse``
    (the whole time axis without lens); identity otherwise. The steps past lens[b] hold step 0
    (an input: never read) or, ``zero_past_end``, zeros (an output)."""
    if not reverse:
        return x
    T, B = x.shape[:2]
    if lens is None:
        return x[::-1]
    src = lens[None, :] - 1 - np.arange(T)[:, None]  # (T, B)
    out = x[np.where(src >= 0, src, 0), np.arange(B)[None, :]]
    return np.where((src >= 0)[..., None], out, 0) if zero_past_end else out


def _run_recurrence(attrs, node, x, W, R, B, sequence_lens, init_states, cell, ngates, defaults):
    H = int(attrs.get("hidden_size") or R.shape[-1])
    direction = attrs.get("direction", "forward")
    num_dir = 2 if direction == "bidirectional" else 1
    layout = int(attrs.get("layout", 0))
    su = _Setup(attrs, x, layout, ngates)
    dt = su.dtype
    T, Bsz = su.seq, su.batch
    acts = _activations(attrs, defaults, num_dir)
    clip = attrs.get("clip")
    lens = None
    if sequence_lens is not None:
        lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
        if np.all(lens == T):
            lens = None
    states = [su.state(s, num_dir, H) if s is not None or k == 0 else None for k, s in enumerate(init_states)]
    Ys = []
    finals = []
    for d in range(num_dir):
        reverse = direction == "reverse" or d == 1
        Wd = W[d].astype(dt, copy=False)
        Rd = R[d].astype(dt, copy=False)
        if B is not None:
            Bd = B[d].astype(dt, copy=False)
            wb, rb = Bd[: ngates * H], Bd[ngates * H :]
        else:
            wb = rb = np.zeros(ngates * H, dtype=dt)
        xd = _reverse_steps(su.x, lens, reverse)
        xw = np.matmul(xd.reshape(T * Bsz, xd.shape[-1]), Wd.T).reshape(T, Bsz, ngates * H)  # T or batch may be 0
        ctx = dict(H=H, wb=wb, rb=rb, R=Rd, RT=np.ascontiguousarray(Rd.T), acts=acts[d], clip=clip, d=d)
        y, fin = cell(xw, [s[d] if s is not None else None for s in states], lens, ctx, dt)
        Ys.append(_reverse_steps(y, lens, reverse, zero_past_end=True))
        finals.append(fin)
    Y = np.stack(Ys, axis=1)  # (T, num_dir, B, H)
    outs = [Y]
    for k in range(len(finals[0])):
        outs.append(np.stack([f[k] for f in finals], axis=0))  # (num_dir, B, H)
    if layout:
        outs[0] = Y.transpose(2, 0, 1, 3)
        outs[1:] = [o.transpose(1, 0, 2) for o in outs[1:]]
    outs = [np.ascontiguousarray(o).astype(x.dtype, copy=False) for o in outs]
    return tuple(outs[: max(len(node.outputs), 1)])


def _clip(v, clip):
    if clip is None:
        return v
    return np.clip(v, -clip, clip)


def _step_mask(lens, t):
    if lens is None:
        return None
    return (t < lens)[:, None]


def _masked_step(lens, t, new, old):
    """Step t's hidden state and output: the new state, except past a batch entry's length,
    where the state stays ``old`` and the output is 0."""
    m = _step_mask(lens, t)
    if m is None:
        return new, new
    new = np.where(m, new, old)
    return new, np.where(m, new, 0)


# --------------------------------------------------------------------------- RNN


def _rnn_cell(xw, states, lens, ctx, dt):
    T, Bsz = xw.shape[:2]
    H = ctx["H"]
    h = states[0]
    f = ctx["acts"][0]
    RT, clip = ctx["RT"], ctx["clip"]
    xw = xw + (ctx["wb"] + ctx["rb"])
    Y = np.zeros((T, Bsz, H), dtype=dt)
    for t in range(T):
        hn = _apply(f, _clip(xw[t] + h @ RT, clip))
        h, Y[t] = _masked_step(lens, t, hn, h)
    return Y, (h,)


def _make_rnn(node, defaults):
    attrs = node.attrs

    def run(X, W, R, B=None, sequence_lens=None, initial_h=None):
        return _run_recurrence(attrs, node, X, W, R, B, sequence_lens, [initial_h], _rnn_cell, 1, defaults)

    return run


@register("RNN", since=1)
def rnn(node):
    return _make_rnn(node, ["Tanh"])


# --------------------------------------------------------------------------- GRU


def _gru_cell_factory(linear_before_reset):
    def cell(xw, states, lens, ctx, dt):
        T, Bsz = xw.shape[:2]
        H = ctx["H"]
        h = states[0]
        f, g = ctx["acts"][0], ctx["acts"][1]
        R, clip = ctx["R"], ctx["clip"]
        wb, rb = ctx["wb"], ctx["rb"]
        RzrT = np.ascontiguousarray(R[: 2 * H].T)
        RhT = np.ascontiguousarray(R[2 * H :].T)
        xw = xw.copy()
        xw[..., : 2 * H] += wb[: 2 * H] + rb[: 2 * H]
        xw[..., 2 * H :] += wb[2 * H :]
        rbh = rb[2 * H :]
        Y = np.zeros((T, Bsz, H), dtype=dt)
        for t in range(T):
            zr = _apply(f, _clip(xw[t, :, : 2 * H] + h @ RzrT, clip))
            z, r = zr[:, :H], zr[:, H:]
            if linear_before_reset:
                hh = _apply(g, _clip(xw[t, :, 2 * H :] + r * (h @ RhT + rbh), clip))
            else:
                hh = _apply(g, _clip(xw[t, :, 2 * H :] + (r * h) @ RhT + rbh, clip))
            hn = (1 - z) * hh + z * h
            h, Y[t] = _masked_step(lens, t, hn, h)
        return Y, (h,)

    return cell


@register("GRU", since=1)
def gru(node):
    attrs = node.attrs
    lbr = int(attrs.get("linear_before_reset", 0))
    cell = _gru_cell_factory(lbr)

    def run(X, W, R, B=None, sequence_lens=None, initial_h=None):
        return _run_recurrence(attrs, node, X, W, R, B, sequence_lens, [initial_h], cell, 3, ["Sigmoid", "Tanh"])

    return run


# --------------------------------------------------------------------------- LSTM


def _is_default(acts, names):
    return all(fn is _ACTS[n][0] for (fn, _, _), n in zip(acts, names))


def _lstm_fast(xw, h, c, lens, ctx, dt):
    """Default activations, no clip/peepholes: one tanh over all four gates per step.

    sigmoid(x) = 0.5 * tanh(x / 2) + 0.5, so the i, o, f columns are pre-scaled by 1/2.
    """
    T, Bsz = xw.shape[:2]
    H = ctx["H"]
    half = np.ones(4 * H, dtype=dt)
    half[: 3 * H] = 0.5
    xw = (xw + (ctx["wb"] + ctx["rb"])) * half
    RT = ctx["RT"] * half
    Y = np.zeros((T, Bsz, H), dtype=dt)
    g = np.empty((Bsz, 4 * H), dtype=dt)
    for t in range(T):
        np.matmul(h, RT, out=g)
        g += xw[t]
        np.tanh(g, out=g)
        sig = g[:, : 3 * H]
        sig *= 0.5
        sig += 0.5
        i, o, f, cc = g[:, :H], g[:, H : 2 * H], g[:, 2 * H : 3 * H], g[:, 3 * H :]
        cn = f * c
        cn += i * cc
        hn = np.tanh(cn)
        hn *= o
        if lens is not None:
            m = (t < lens)[:, None]
            hn = np.where(m, hn, h)
            cn = np.where(m, cn, c)
            Y[t] = np.where(m, hn, 0)
        else:
            Y[t] = hn
        h, c = hn, cn
    return Y, (h, c)


def _lstm_cell_factory(P, input_forget):
    def cell(xw, states, lens, ctx, dt):
        if (
            P is None
            and not input_forget
            and ctx["clip"] is None
            and _is_default(ctx["acts"], ("sigmoid", "tanh", "tanh"))
        ):
            h, c = states
            if c is None:
                c = np.zeros((xw.shape[1], ctx["H"]), dtype=dt)
            return _lstm_fast(xw, h, c, lens, ctx, dt)
        T, Bsz = xw.shape[:2]
        H = ctx["H"]
        h, c = states
        if c is None:
            c = np.zeros((Bsz, H), dtype=dt)
        f, g, hact = ctx["acts"]
        RT, clip = ctx["RT"], ctx["clip"]
        xw = xw + (ctx["wb"] + ctx["rb"])
        if P is not None:
            Pd = P[ctx["d"]].astype(dt, copy=False)
            pi, po, pf = Pd[:H], Pd[H : 2 * H], Pd[2 * H :]
        Y = np.zeros((T, Bsz, H), dtype=dt)
        for t in range(T):
            gates = xw[t] + h @ RT
            gi, go, gf, gc = gates[:, :H], gates[:, H : 2 * H], gates[:, 2 * H : 3 * H], gates[:, 3 * H :]
            if P is not None:
                gi = gi + pi * c
                gf = gf + pf * c
            i = _apply(f, _clip(gi, clip))
            if input_forget:
                fg = 1 - i
            else:
                fg = _apply(f, _clip(gf, clip))
            cc = _apply(g, _clip(gc, clip))
            cn = fg * c + i * cc
            if P is not None:
                go = go + po * cn
            o = _apply(f, _clip(go, clip))
            hn = o * _apply(hact, cn)
            m = _step_mask(lens, t)
            c = cn if m is None else np.where(m, cn, c)
            h, Y[t] = _masked_step(lens, t, hn, h)
        return Y, (h, c)

    return cell


@register("LSTM", since=1)
def lstm(node):
    attrs = node.attrs
    input_forget = int(attrs.get("input_forget", 0))

    def run(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None):
        cell = _lstm_cell_factory(P, input_forget)
        return _run_recurrence(
            attrs, node, X, W, R, B, sequence_lens, [initial_h, initial_c], cell, 4, ["Sigmoid", "Tanh", "Tanh"]
        )

    return run
