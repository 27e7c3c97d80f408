"""Shared by RNN, GRU and LSTM: the recurrence written from the spec's equations (evaluated in
float64, each output rounded once to T), the activation table with its alpha/beta defaults, the
drawn and named examples, the spec-silent points and the fuzz template.

The spec's notation (RNN-7 on; the version-1 texts write ``Ht-1*Ri`` for the same product):

* RNN:  ``Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi)`` (default f = Tanh)
* GRU:  ``zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz)``, ``rt`` likewise, ``ht = g(Xt*(Wh^T) +
  (rt (.) Ht-1)*(Rh^T) + Rbh + Wbh)`` (linear_before_reset = 0) or ``g(Xt*(Wh^T) + (rt (.)
  (Ht-1*(Rh^T) + Rbh)) + Wbh)`` (!= 0), ``Ht = (1 - zt) (.) ht + zt (.) Ht-1`` (f = Sigmoid, g = Tanh)
* LSTM: ``it = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Pi (.) Ct-1 + Wbi + Rbi)``, ``ft`` likewise with Pf,
  ``ct = g(Xt*(Wc^T) + Ht-1*(Rc^T) + Wbc + Rbc)``, ``Ct = ft (.) Ct-1 + it (.) ct``, ``ot =
  f(Xt*(Wo^T) + Ht-1*(Ro^T) + Po (.) Ct + Wbo + Rbo)``, ``Ht = ot (.) h(Ct)`` (f = Sigmoid,
  g = h = Tanh); input_forget = 1 couples the gates: ``ft = 1 - it``.

Gate blocks are stacked along W's and R's dim 1 in the spec's order (RNN i; GRU z, r, h; LSTM
i, o, f, c), B is ``[Wb, Rb]``, P is ``[Pi, Po, Pf]``; a bidirectional node holds the forward
direction at index 0 and the reverse one at 1. ``clip`` bounds "the input of activations" (every
gate's pre-activation, peephole terms included). Activations follow the table of the doc (note
ThresholdedRelu there is "x if x >= alpha else 0"); activation_alpha / activation_beta "are
consumed in the order of activation functions": each function that takes an alpha (beta) takes
the next one of the list, and the default of the ONNX operator of that name once the list is
used up. The version-1 texts write the recurrence as ``Ht-1*Ri`` (no transpose); R's shape is
stated as W's (``[num_directions, gates*hidden_size, hidden_size]``, one row per gate unit, W
being applied as ``Xt*(Wi^T)``), and RNN-7 writes ``Ht-1*(Ri^T)``: we read every version with
the transpose. ``output_sequence`` (version 1, GRU-3) only says whether Y may be left out; a
requested Y is the sequence.

Sequence lengths: ``sequence_lens[b]`` steps of batch entry b are processed (the reverse
direction from step ``len - 1`` down to 0); Y_h (Y_c) is the state after the entry's last
processed step.

Spec-silent points (declared by ``declare_points``):

* ``padding``: what Y holds past an entry's length, and Y_h of an entry of length 0 (or of
  every entry when seq_length is 0): zeros in Y (as ONNX Runtime and cuDNN), the initial state;
* ``scaled_tanh_defaults``: ScaledTanh's alpha and beta when not given (the retired operator
  had no defaults): 1.0 and 1.0;
* ``clip_cell`` (LSTM): whether "Cell clip [...] applied to the input of activations" reaches
  h's input Ct (or the cell state itself): we clip the gates' pre-activations only.

Each declares as its invariant that a backend's outputs are those of one of the readings.

Drawn examples always pad (an entry shorter than seq_length, its effect visible in the
outputs), set hidden_size and use layout 0, and give every alpha / beta an activation takes;
layout 1, hidden_size absent, no or full sequence_lens, the parameters' defaults, NaN, inf,
empty shapes and the ThresholdedRelu tie are named edges. So what a backend lacks (ONNX
Runtime: layout 1, the defaults; onnx.reference: sequence_lens, activations, clip) is known
by case id and recorded in its expectations, not by what happened to be drawn.
"""

from __future__ import annotations

from typing import Any

import hypothesis
import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF
from harness.registry import Example, Operator

from .._common import TINY, gamma, rounds

st = S.st

#: op -> (number of gate blocks in W and R, default activations of one direction)
KINDS = {"RNN": (1, ("Tanh",)), "GRU": (3, ("Sigmoid", "Tanh")), "LSTM": (4, ("Sigmoid", "Tanh", "Tanh"))}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _sigmoid(x, a, b):
    return 1.0 / (1.0 + np.exp(-x))


#: spec name -> (fn(x, alpha, beta), default alpha or None when it takes none, default beta or None)
#: (defaults: "the same as of corresponding ONNX operators": LeakyRelu 0.01, ThresholdedRelu 1.0,
#: HardSigmoid 0.2 / 0.5, Elu 1.0, and the retired Affine 1.0 / 0.0 and ScaledTanh 1.0 / 1.0)
ACTIVATIONS: dict[str, tuple[Any, float | None, float | None]] = {
    "Relu": (lambda x, a, b: np.maximum(x, 0.0), None, None),
    "Tanh": (lambda x, a, b: np.tanh(x), None, None),
    "Sigmoid": (_sigmoid, None, None),
    "Affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "LeakyRelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "ThresholdedRelu": (lambda x, a, b: np.where(x >= a, x, 0.0), 1.0, None),
    "ScaledTanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "HardSigmoid": (lambda x, a, b: np.minimum(np.maximum(a * x + b, 0.0), 1.0), 0.2, 0.5),
    "Elu": (lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0.0))), 1.0, None),
    "Softsign": (lambda x, a, b: x / (1.0 + np.abs(x)), None, None),
    "Softplus": (lambda x, a, b: np.logaddexp(0.0, x), None, None),
}
_BY_LOWER = {k.lower(): k for k in ACTIVATIONS}


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def activation_functions(kind: str, attrs: dict, num_dir: int, defaults: dict | None = None) -> list[list[tuple[Any, float, float]]]:
    """Per direction, the (fn, alpha, beta) of each activation slot (``defaults``: name ->
    (alpha, beta) in place of the table's, for the spec-silent points' invariants)."""
    per = len(KINDS[kind][1])
    names = [_text(n) for n in (attrs.get("activations") or [])]
    if not names:
        names = list(KINDS[kind][1]) * num_dir
    elif len(names) == per and num_dir == 2:
        raise ValueError(f"{kind}: {per} activations for a bidirectional node (the spec asks {2 * per})")
    if len(names) < per * num_dir:
        raise ValueError(f"{kind}: {len(names)} activations, {per * num_dir} needed")
    alphas = [float(v) for v in attrs.get("activation_alpha") or []]
    betas = [float(v) for v in attrs.get("activation_beta") or []]
    out = []
    for name in names[: per * num_dir]:
        key = _BY_LOWER.get(name.lower())
        if key is None:
            raise ValueError(f"{kind}: activation {name!r} is not one the spec lists")
        fn, da, db = ACTIVATIONS[key]
        if defaults and key in defaults:
            da, db = defaults[key]
        a = (alphas.pop(0) if alphas else da) if da is not None else 0.0
        b = (betas.pop(0) if betas else db) if db is not None else 0.0
        out.append((fn, a, b))
    return [out[d * per:(d + 1) * per] for d in range(num_dir)]


def _act(slot, x, clip):
    fn, a, b = slot
    if clip is not None:
        x = np.clip(x, -clip, clip)
    return fn(x, a, b)


def recurrence(kind: str, X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
               attrs: dict, layout: int = 0, transpose_r: bool = True, defaults: dict | None = None,
               clip_cell: str = "", bound_u: float | None = None) -> list[np.ndarray]:
    """[Y, Y_h] (LSTM: [Y, Y_h, Y_c]) in float64 (the caller rounds to T). ``defaults`` and
    ``clip_cell`` ("" ours: h(Ct) unclipped; "h": h(clip(Ct)); "state": Ct itself clipped) give
    the other readings of the spec-silent points. ``bound_u`` (RNN only): also the error bound of
    Y and Y_h before their last rounding, for every step rounded at that unit roundoff
    (``rnn_step_error``): [Y, Y_h, its bound, its bound]."""
    gates, _ = KINDS[kind]
    direction = _text(attrs.get("direction", "forward"))
    if direction == "foward":  # GRU-1's schema default is spelled so; its doc says forward (default)
        direction = "forward"
    if direction not in DIRECTIONS:
        raise ValueError(f"{kind}: direction {direction!r}")
    num_dir = 2 if direction == "bidirectional" else 1
    x = np.asarray(X, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"{kind}: X of rank {x.ndim}")
    if layout:
        x = x.transpose(1, 0, 2)
    T, Bsz, _ = x.shape
    w, r = np.asarray(W, dtype=np.float64), np.asarray(R, dtype=np.float64)
    H = r.shape[-1]
    if attrs.get("hidden_size") is not None and int(attrs["hidden_size"]) != H:
        raise ValueError(f"{kind}: hidden_size {attrs['hidden_size']} but R is {r.shape}")
    if w.shape[:2] != (num_dir, gates * H) or r.shape != (num_dir, gates * H, H) or w.shape[2] != x.shape[2]:
        raise ValueError(f"{kind}: W {w.shape}, R {r.shape} for X {x.shape}, {num_dir} direction(s), hidden {H}")
    b = np.zeros((num_dir, 2 * gates * H)) if B is None else np.asarray(B, dtype=np.float64)
    p = np.zeros((num_dir, 3 * H)) if P is None else np.asarray(P, dtype=np.float64)

    def state(s):
        if s is None:
            return np.zeros((num_dir, Bsz, H))
        s = np.asarray(s, dtype=np.float64)
        return s.transpose(1, 0, 2) if layout else s

    h0, c0 = state(initial_h), state(initial_c)
    lens = np.full(Bsz, T, dtype=np.int64) if sequence_lens is None else np.asarray(sequence_lens).astype(np.int64).reshape(-1)
    if lens.shape != (Bsz,) or np.any(lens < 0) or np.any(lens > T):
        raise ValueError(f"{kind}: sequence_lens {lens} for seq_length {T}, batch {Bsz}")
    acts = activation_functions(kind, attrs, num_dir, defaults)
    clip = attrs.get("clip")
    clip = None if clip is None else float(clip)
    ys, hs, cs, eys, ehs = [], [], [], [], []
    cols = np.arange(Bsz)
    names = {v[0]: k for k, v in ACTIVATIONS.items()}
    for d in range(num_dir):
        reverse = direction == "reverse" or d == 1
        wd, rd = w[d], r[d]
        if not transpose_r:  # the version-1 text read literally: Ht-1 * Ri with Ri the [H, H] block as stored
            rd = np.concatenate([blk.T for blk in np.split(rd, gates, axis=0)], axis=0)
        wb, rb = b[d, :gates * H], b[d, gates * H:]
        h, c = h0[d].copy(), c0[d].copy()
        y = np.zeros((T, Bsz, H))
        e, eh, ey = np.zeros((Bsz, H)), np.zeros((Bsz, H)), np.zeros((T, Bsz, H))  # the state's error (initial_h is exact), Y_h's, Y's
        for k in range(T):
            live = k < lens
            t = np.where(live, (lens - 1 - k) if reverse else k, 0)
            xt = x[t, cols]
            xw = xt @ wd.T + wb
            hr = h @ rd.T
            if kind == "RNN":
                hn, cn = _act(acts[d][0], xw + hr + rb, clip), c
                if bound_u is not None:
                    fn, a, b_ = acts[d][0]
                    dots = (np.abs(xt) @ np.abs(wd).T, np.abs(h) @ np.abs(rd).T)
                    parts = (xt @ wd.T, hr, np.broadcast_to(wb, hr.shape), np.broadcast_to(rb, hr.shape))
                    en = rnn_step_error(names[fn], a, b_, xw + hr + rb, dots, parts, e @ np.abs(rd).T, (x.shape[2], H), X, hn)
                    ey[t[live], cols[live]] = en[live]
                    e = np.where(live[:, None], en + rounds(hn, X, en) * np.abs(hn), e)  # and the state's own rounding
                    eh = np.where(live[:, None], en, eh)
            elif kind == "GRU":
                f, g = acts[d]
                z = _act(f, xw[:, :H] + hr[:, :H] + rb[:H], clip)
                rg = _act(f, xw[:, H:2 * H] + hr[:, H:2 * H] + rb[H:2 * H], clip)
                if int(attrs.get("linear_before_reset", 0)):
                    pre = xw[:, 2 * H:] + rg * (hr[:, 2 * H:] + rb[2 * H:])
                else:
                    rh = rd[2 * H:]
                    pre = xw[:, 2 * H:] + (rg * h) @ rh.T + rb[2 * H:]
                hh = _act(g, pre, clip)
                hn, cn = (1.0 - z) * hh + z * h, c
            else:
                f, g, ha = acts[d]
                pre = xw + hr + rb
                pi, po, pf = p[d, :H], p[d, H:2 * H], p[d, 2 * H:]
                i = _act(f, pre[:, :H] + pi * c, clip)
                fg = 1.0 - i if int(attrs.get("input_forget", 0)) else _act(f, pre[:, 2 * H:3 * H] + pf * c, clip)
                cc = _act(g, pre[:, 3 * H:], clip)
                cn = fg * c + i * cc
                if clip_cell == "state" and clip is not None:
                    cn = np.clip(cn, -clip, clip)
                o = _act(f, pre[:, H:2 * H] + po * cn, clip)
                hn = o * _act(ha, cn, clip if clip_cell == "h" else None)
            m = live[:, None]
            h, c = np.where(m, hn, h), np.where(m, cn, c)
            y[t[live], cols[live]] = hn[live]
        ys.append(y)
        hs.append(h)
        cs.append(c)
        eys.append(ey)
        ehs.append(eh)
    Y, Y_h, Y_c = np.stack(ys, 1), np.stack(hs, 0), np.stack(cs, 0)
    E, E_h = np.stack(eys, 1), np.stack(ehs, 0)
    if layout:
        Y, Y_h, Y_c = Y.transpose(2, 0, 1, 3), Y_h.transpose(1, 0, 2), Y_c.transpose(1, 0, 2)
        E, E_h = E.transpose(2, 0, 1, 3), E_h.transpose(1, 0, 2)
    if bound_u is not None:
        return [Y, Y_h, E, E_h]
    return [Y, Y_h, Y_c] if kind == "LSTM" else [Y, Y_h]


#: an upper bound of |f'| of each activation (alpha a, beta b): how far it moves an error of its argument
LIPSCHITZ = {"Relu": lambda a, b: 1.0, "Tanh": lambda a, b: 1.0, "Sigmoid": lambda a, b: 0.25, "Affine": lambda a, b: abs(a),
             "LeakyRelu": lambda a, b: max(1.0, abs(a)), "ThresholdedRelu": lambda a, b: 1.0, "ScaledTanh": lambda a, b: abs(a * b),
             "HardSigmoid": lambda a, b: abs(a), "Elu": lambda a, b: max(1.0, abs(a)), "Softsign": lambda a, b: 1.0,
             "Softplus": lambda a, b: 1.0}


def rnn_step_error(name: str, a: float, b: float, pre: np.ndarray, dots: tuple, parts: tuple, carried: np.ndarray,
                   lengths: tuple[int, int], like: np.ndarray, hn: np.ndarray) -> np.ndarray:
    """How far one RNN step's Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi), evaluated in T (unit
    roundoff u), lands before its last rounding from the exact one, to first order:

    * the two dot products (lengths I and H) accumulate in float32 or wider where T is narrower
      (the accumulation width is not named; a sum accumulated in bfloat16 is not a reading we
      accept: its worst case, gamma_(I+H+2) at 2**-8, is several % of an output and could not tell
      one 5 % off): a product of two narrow values is exact there, the I - 1 and H - 1 additions
      give gamma_(I-1) and gamma_(H-1) at that unit times the sums of |terms| (``dots``), then each
      is rounded to T: u |Xt Wi^T|, u |Ht-1 Ri^T|;
    * the three additions of the four parts (``parts``, in any order): each rounds a partial sum,
      at most u M, M the largest |sum| of a subset of the parts: 3 u M;
    * a step whose exact result is representable in T and whose operands carry no error yet
      rounds nothing (``_common.rounds``): an exact step stays exact;
    * the previous state's error carried through |Ri| (``carried``);
    * the activation moves that by at most its Lipschitz constant (``LIPSCHITZ``;
      ThresholdedRelu jumps by its threshold where the argument may cross it), and a faithful
      evaluation of it adds u |Ht|. The state passed on adds Ht's rounding (the caller);
    * each of the 6 roundings in T may underflow, losing up to t, half T's smallest subnormal;
      an infinite pre-activation is infinite in any order, and Tanh or Sigmoid of it exact."""
    u = ROUNDOFF[S.label_of(np.asarray(like).dtype)]
    u_acc = min(u, ROUNDOFF["float32"])
    xw, hr, wb, rb = (np.asarray(p_) for p_ in parts)
    with np.errstate(all="ignore"):
        stack = np.stack([xw, hr, wb, rb])
        m = np.maximum(np.sum(np.where(stack > 0, stack, 0.0), axis=0), -np.sum(np.where(stack < 0, stack, 0.0), axis=0))
        d_xw, d_hr = gamma(lengths[0] - 1, u_acc) * dots[0], gamma(lengths[1] - 1, u_acc) * dots[1]
        up = d_xw + d_hr + rounds(xw, like, d_xw) * np.abs(xw) + rounds(hr, like, d_hr) * np.abs(hr) + carried
        adds = np.maximum.reduce([rounds(xw + hr, like, up), rounds(xw + hr + wb, like, up), rounds(pre, like, up)])
        t = TINY[S.label_of(np.asarray(like).dtype)] / 2
        da = up + 3 * adds * m
        da = da + np.where(da > 0, 5 * t, 0.0)  # each of the 5 roundings in T may underflow (an exact step loses nothing)
        r_h = rounds(np.asarray(hn), like, da)
        out = LIPSCHITZ[name](a, b) * da + r_h * np.abs(hn) + np.where(r_h > 0, t, 0.0)
        # an infinite argument is infinite in every evaluation: a saturated activation of it is exact
        out = np.where(np.isinf(pre) & np.isfinite(hn), 0.0, out)
        if name == "ThresholdedRelu":
            out = out + np.where((da > 0) & (np.abs(pre - a) <= da), abs(a) + da, 0.0)  # exact at the threshold: no jump
    return out


def make_reference(kind: str, transpose_r: bool = True):
    """The reference of one op-version: inputs positional, attributes by spec name."""

    def reference(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, **attrs):
        layout = int(attrs.pop("layout", 0))
        attrs.pop("output_sequence", None)  # says only whether Y may be left out
        with np.errstate(all="ignore"):
            outs = recurrence(kind, X, W, R, B, sequence_lens, initial_h, initial_c, P, attrs=attrs, layout=layout,
                              transpose_r=transpose_r)
            return [o.astype(np.asarray(X).dtype) for o in outs]

    reference.__name__ = kind.lower()
    return reference


# -- spec-silent points --------------------------------------------------------------------------
def _padded(inputs, attrs, expected, since):
    """Y past each entry's length (and Y_h, Y_c of an entry of length 0)."""
    lens = inputs[4] if len(inputs) > 4 else None
    x = np.asarray(inputs[0])
    layout = int(attrs.get("layout", 0))
    T, Bsz = (x.shape[1], x.shape[0]) if layout else x.shape[:2]
    if lens is None and T == 0:  # seq_length 0: every entry has length 0
        lens = np.zeros(Bsz, dtype=np.int64)
    if lens is None or not expected:
        return [None] * len(expected)
    lens = np.asarray(lens).astype(np.int64).reshape(-1)
    pad = np.arange(T)[:, None] >= lens[None, :]  # (T, B)
    masks: list[Any] = []
    shape_y = np.shape(expected[0])
    if layout:
        masks.append(np.broadcast_to(pad.T[:, :, None, None], shape_y))
    else:
        masks.append(np.broadcast_to(pad[:, None, :, None], shape_y))
    zero = lens == 0
    for e in expected[1:]:
        masks.append(np.broadcast_to(zero[:, None, None] if layout else zero[None, :, None], np.shape(e)))
    return masks


def _padding_invariant(c) -> bool:
    """Padded Y elements are 0 or that entry's final hidden state (carried); a length-0 entry's
    final state is its initial state or 0."""
    if not c.actual or len(c.actual) != len(c.expected):
        return False
    y = np.asarray(c.actual[0]).astype(np.float64)
    if y.shape != np.shape(c.expected[0]):
        return False
    layout = int(c.attrs.get("layout", 0))
    m = c.masks[0]
    ok = (y == 0) | ~m
    if len(c.actual) > 1:
        yh = np.asarray(c.actual[1]).astype(np.float64)
        carried = yh[:, None] if layout else yh[None]  # [B, 1, D, H] or [1, D, B, H]
        ok |= np.isclose(y, carried, rtol=1e-2, atol=1e-3)
        init = [c.inputs[k] if len(c.inputs) > k else None for k in (5, 6)]
        for out, start, mask in zip(c.actual[1:], init, c.masks[1:]):
            a = np.asarray(out).astype(np.float64)
            s = np.zeros_like(a) if start is None else np.asarray(start).astype(np.float64)
            if not np.all(((a == 0) | np.isclose(a, s, rtol=1e-2, atol=1e-3))[mask]):
                return False
    return bool(np.all(ok))


def declare_padding(op: Operator, versions: tuple[int, ...]) -> None:
    op.spec_silent(
        "padding", versions,
        spec="`t` - time step (t-1 means previous time step)",
        expected="(the doc names no padding; sequence_lens says only 'Optional tensor specifying lengths of the sequences in a batch') zeros in Y at the steps past an entry's length (ONNX Runtime and cuDNN write zeros there); an entry of length 0 "
                 "(or every entry when seq_length is 0) keeps its initial state as Y_h (Y_c): no step is processed, and 'The last "
                 "output value of the hidden' of no step is the state the recurrence starts from",
        where=_padded,
        invariants={"a padded element of Y is 0 or the entry's final hidden state; Y_h (Y_c) of a length-0 entry is its initial state or 0":
                    _padding_invariant},
        readings={"Y_h (Y_c) of a length-0 entry is 0 (ONNX Runtime)":
                  lambda c: [None] + [np.zeros_like(np.asarray(e)) for e in c.expected[1:]]})


def _variants_of(kind: str, inputs: list, attrs: dict, readings: list[dict]) -> list[list[np.ndarray]]:
    """The outputs (float64) under other readings of a spec-silent point (keywords of recurrence)."""
    a = dict(attrs)
    layout = int(a.pop("layout", 0))
    a.pop("output_sequence", None)
    ins = list(inputs) + [None] * (8 - len(inputs))
    with np.errstate(all="ignore"):
        return [recurrence(kind, *ins[:8], attrs=a, layout=layout, **r) for r in readings]


def _close(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.isclose(a, b, rtol=1e-2, atol=1e-3) | (np.isnan(a) & np.isnan(b))


def declare_readings(op: Operator, kind: str, name: str, versions: tuple[int, ...], *, spec: str, expected: str,
                     applies, readings: list[dict], invariant: str) -> None:
    """A spec-silent point whose alternatives are other readings of the text: the open elements
    are those where some reading differs from ours; a backend keeps the invariant when its
    outputs are, as a whole, those of one of the readings (ours included)."""

    def where(inputs, attrs, expected_, since):
        if not applies(inputs, attrs) or not expected_:
            return [None] * len(expected_)
        ours = _variants_of(kind, inputs, attrs, [{}])[0]
        masks = [np.zeros(np.shape(e), dtype=bool) for e in expected_]
        for other in _variants_of(kind, inputs, attrs, readings):
            for k, e in enumerate(expected_):
                masks[k] |= ~_close(ours[k], other[k])
        return masks

    def keeps(c) -> bool:
        if len(c.actual) != len(c.expected):
            return False
        for outs in _variants_of(kind, c.inputs, c.attrs, [{}] + readings):
            if all(np.shape(a) == np.shape(e) and bool(np.all(_close(a, o))) for a, o, e in zip(c.actual, outs, c.expected)):
                return True
        return False

    def reading(r: dict):
        return lambda c: [np.asarray(o).astype(np.asarray(e).dtype) for o, e in zip(_variants_of(kind, c.inputs, c.attrs, [r])[0], c.expected)]

    op.spec_silent(name, versions, spec=spec, expected=expected, where=where, invariants={invariant: keeps},
                   readings={", ".join(f"{k} {v}" for k, v in r.items()): reading(r) for r in readings})


def _uses_default(name: str, slot_kind: str):
    """The node uses activation ``name`` with its alpha (or beta) left to the default."""

    def applies(inputs, attrs) -> bool:
        names = [_text(n).lower() for n in attrs.get("activations") or []]
        if name.lower() not in names:
            return False
        takers = [n for n in names if _BY_LOWER[n] in (ALPHA_RANGE if slot_kind == "alpha" else BETA_RANGE)]
        given = len(attrs.get("activation_alpha" if slot_kind == "alpha" else "activation_beta") or [])
        return any(n == name.lower() for n in takers[given:])

    return applies


def declare_points(op: Operator, kind: str, versions: tuple[int, ...]) -> None:
    """Every spec-silent point of ``kind``: padding; ScaledTanh's defaults; (LSTM) clip and h."""
    declare_padding(op, versions)
    st_default = _uses_default("ScaledTanh", "alpha")
    declare_readings(
        op, kind, "scaled_tanh_defaults", versions,
        spec="Below are optional [...] ScaledTanh(x)",
        expected="(activation_alpha / activation_beta: 'Default values are the same as of corresponding ONNX operators', and the "
                 "retired ScaledTanh operator gave its alpha and beta no default) alpha = 1.0 and beta = 1.0 (Tanh itself, as the other scale defaults of the table, Affine's alpha, Elu's, "
                 "ThresholdedRelu's, are 1.0)",
        applies=lambda ins, at: st_default(ins, at) or _uses_default("ScaledTanh", "beta")(ins, at),
        readings=[{"defaults": {"ScaledTanh": (a, b)}} for a, b in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0))],
        invariant="the outputs are those of ScaledTanh with default alpha and beta each 1.0 or 0.0 (an unset float attribute)")
    if kind == "LSTM":
        declare_readings(
            op, kind, "clip_cell", versions,
            spec="Ct = ft (.) Ct-1 + it (.) ct [...] Ht = ot (.) h(Ct)",
            expected="(clip: 'Cell clip threshold. Clipping bounds the elements of a tensor in the range of [-threshold, +threshold] "
                     "and is applied to the input of activations.') the gates' pre-activations are clipped (it, ft, ct, ot, peephole terms included); Ct, the input of h in "
                     "Ht = ot (.) h(Ct), is not (ONNX Runtime's reading); 'Cell clip' may also mean h(clip(Ct)) or a clipped "
                     "cell state (cuDNN's cell clip)",
            applies=lambda ins, at: at.get("clip") is not None,
            readings=[{"clip_cell": "h"}, {"clip_cell": "state"}],
            invariant="the outputs are those of one reading: h's input unclipped, h's input clipped, or the cell state clipped")


# -- examples ----------------------------------------------------------------------------------
ALPHA_RANGE = {"Affine": (-1.0, 1.0), "LeakyRelu": (0.0, 1.0), "ThresholdedRelu": (-1.0, 1.0), "ScaledTanh": (-2.0, 2.0),
               "HardSigmoid": (0.0, 1.0), "Elu": (0.0, 2.0)}
BETA_RANGE = {"Affine": (-1.0, 1.0), "ScaledTanh": (-2.0, 2.0), "HardSigmoid": (0.0, 1.0)}


def n_outputs(kind: str) -> int:
    return 3 if kind == "LSTM" else 2


def min_outputs(kind: str, since: int) -> int:
    return 2 if kind == "GRU" and since == 1 else 1  # GRU-1's Y_h is not optional


def _cast(a: np.ndarray, dtype: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(a, dtype=np.float64).astype(S.np_dtype(dtype))


def inputs_list(kind: str, X, W, R, B=None, lens=None, h0=None, c0=None, P=None) -> list:
    ins = [X, W, R, B, lens, h0]
    if kind == "LSTM":
        ins += [c0, P]
    return ins


def draw_example(kind: str, since: int, d, dtype: str) -> Example:
    """Drawn: every direction, a padded batch (sequence_lens with some entry shorter than
    seq_length), optional inputs present or absent, every activation with its alpha / beta given,
    clip, input_forget, linear_before_reset, the optional outputs. hidden_size is always set and
    layout is 0: layout 1, hidden_size absent, sequence_lens absent or all full and the
    parameters' defaults are named edges, so that what a backend lacks (ONNX Runtime: layout 1;
    onnx.reference: sequence_lens) is known by case id, not by what was drawn."""
    gates, defaults = KINDS[kind]
    direction = d(st.sampled_from(DIRECTIONS))
    nd = 2 if direction == "bidirectional" else 1
    T, Bsz, I, H = d(st.integers(2, 4)), d(st.integers(1, 3)), d(st.integers(1, 3)), d(st.integers(1, 3))
    attrs: dict[str, Any] = {"hidden_size": H}
    if direction != "forward" or d(st.booleans()):
        attrs["direction"] = direction
    if since >= 14 and d(st.booleans()):
        attrs["layout"] = 0
    X = S.arrays(d, dtype, shape=(T, Bsz, I), lo=-2.0, hi=2.0)
    W = S.arrays(d, dtype, shape=(nd, gates * H, I), lo=-1.0, hi=1.0)
    R = S.arrays(d, dtype, shape=(nd, gates * H, H), lo=-1.0, hi=1.0)
    B = S.arrays(d, dtype, shape=(nd, 2 * gates * H), lo=-1.0, hi=1.0) if d(st.booleans()) else None
    short = d(st.integers(0, Bsz - 1))
    lens = np.array([d(st.integers(1, T - 1 if b == short else T)) for b in range(Bsz)], dtype=np.int32)
    h0 = S.arrays(d, dtype, shape=(nd, Bsz, H), lo=-1.0, hi=1.0) if d(st.booleans()) else None
    c0 = P = None
    if kind == "LSTM":
        c0 = S.arrays(d, dtype, shape=(nd, Bsz, H), lo=-1.0, hi=1.0) if d(st.booleans()) else None
        P = S.arrays(d, dtype, shape=(nd, 3 * H), lo=-1.0, hi=1.0) if d(st.booleans()) else None
        if d(st.integers(0, 3)) == 0:
            attrs["input_forget"] = 1
    if kind == "GRU" and since >= 3 and d(st.booleans()):
        attrs["linear_before_reset"] = d(st.integers(0, 1))
    if d(st.integers(0, 2)) == 0:
        names = [d(st.sampled_from(sorted(ACTIVATIONS))) for _ in range(len(defaults) * nd)]
        attrs["activations"] = names
        alphas = [d(st.floats(*ALPHA_RANGE[n], width=32)) for n in names if n in ALPHA_RANGE]
        betas = [d(st.floats(*BETA_RANGE[n], width=32)) for n in names if n in BETA_RANGE]
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
    if d(st.integers(0, 3)) == 0:
        attrs["clip"] = d(st.floats(0.25, 3.0, width=32))
    if since == 1 or (kind == "GRU" and since == 3):
        if d(st.booleans()):
            attrs["output_sequence"] = d(st.integers(0, 1))
    lo = min_outputs(kind, since)
    outs = d(st.integers(lo, n_outputs(kind)))
    ins = inputs_list(kind, X, W, R, B, lens, h0, c0, P)
    # the padding must show: outputs that would be the same had every entry run seq_length steps
    # (states 0 throughout, as Hypothesis' first all-zero draws give) test nothing of sequence_lens
    hypothesis.assume(_padding_shows(kind, ins, attrs, outs))
    return Example(ins, attrs, outputs=outs)


def _padding_shows(kind: str, ins: list, attrs: dict, outs: int) -> bool:
    full = list(ins)
    full[4] = None
    padded, unpadded = _variants_of(kind, ins, attrs, [{}])[0], _variants_of(kind, full, attrs, [{}])[0]
    return any(not np.allclose(a, b, rtol=0.02, atol=0.02, equal_nan=True) for a, b in zip(padded[:outs], unpadded[:outs]))


def _values(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


def _base(kind: str, dtype: str, seed: int, T=3, Bsz=2, I=2, H=2, nd=1, layout=0, bias=True, h0=True, c0=True, P=False):
    gates, _ = KINDS[kind]
    rng = np.random.default_rng(seed)
    X = _cast(_values(rng, (Bsz, T, I) if layout else (T, Bsz, I), -2, 2), dtype)
    W = _cast(_values(rng, (nd, gates * H, I)), dtype)
    R = _cast(_values(rng, (nd, gates * H, H)), dtype)
    B = _cast(_values(rng, (nd, 2 * gates * H)), dtype) if bias else None
    hs = (Bsz, nd, H) if layout else (nd, Bsz, H)
    hh = _cast(_values(rng, hs), dtype) if h0 else None
    cc = _cast(_values(rng, hs), dtype) if (c0 and kind == "LSTM") else None
    pp = _cast(_values(rng, (nd, 3 * H)), dtype) if (P and kind == "LSTM") else None
    return [X, W, R, B, None, hh, cc, pp]


def _ex(kind, ins, attrs, name, outputs=None):
    ins = list(ins[:6]) + (list(ins[6:8]) if kind == "LSTM" else [])
    return Example(ins, attrs, name=name, outputs=outputs)


def edge_examples(kind: str, since: int, dtype: str) -> list[Example]:
    gates, defaults = KINDS[kind]
    full = n_outputs(kind)
    out: list[Example] = []
    H = 2
    base = _base(kind, dtype, 1)
    out.append(_ex(kind, base, {"hidden_size": H}, "all_inputs", full))
    out.append(_ex(kind, _base(kind, dtype, 2, bias=False, h0=False, c0=False), {"hidden_size": H}, "no_bias_no_initial_state", full))
    for direction in DIRECTIONS:
        nd = 2 if direction == "bidirectional" else 1
        ins = _base(kind, dtype, 3, T=4, Bsz=3, nd=nd)
        out.append(_ex(kind, ins, {"hidden_size": H, "direction": direction}, f"{direction}_full", full))
        ins = list(ins)
        ins[4] = np.array([4, 2, 1], dtype=np.int32)
        out.append(_ex(kind, ins, {"hidden_size": H, "direction": direction}, f"{direction}_padded", full))
    ins = _base(kind, dtype, 4, T=3, Bsz=3, nd=2)
    ins[4] = np.array([0, 3, 1], dtype=np.int32)
    out.append(_ex(kind, ins, {"hidden_size": H, "direction": "bidirectional"}, "zero_length_entry", full))
    ins = _base(kind, dtype, 5, T=0)
    out.append(_ex(kind, ins, {"hidden_size": H}, "seq_length_0", full))
    ins = _base(kind, dtype, 6, Bsz=0)
    out.append(_ex(kind, ins, {"hidden_size": H}, "batch_0", full))
    out.append(_ex(kind, _base(kind, dtype, 7), {}, "hidden_size_absent", full))
    for k in range(min_outputs(kind, since), full + 1):
        out.append(_ex(kind, _base(kind, dtype, 8), {"hidden_size": H}, f"outputs_{k}", k))
    out.append(_ex(kind, _base(kind, dtype, 9), {"hidden_size": H, "clip": 0.5}, "clip", full))
    # every activation in every slot, with and without alpha / beta given
    per = len(defaults)
    names = sorted(ACTIVATIONS)
    for j, name in enumerate(names):
        acts = [name if s == j % per else defaults[s] for s in range(per)]
        attrs: dict[str, Any] = {"hidden_size": H, "activations": acts}
        out.append(_ex(kind, _base(kind, dtype, 20 + j), dict(attrs), f"act_{name}_defaults", full))
        if name in ALPHA_RANGE:
            attrs["activation_alpha"] = [0.375]
            if name in BETA_RANGE:
                attrs["activation_beta"] = [0.625]
            out.append(_ex(kind, _base(kind, dtype, 40 + j), attrs, f"act_{name}_alpha_beta", full))
    # two directions, different activations, parameters consumed in order across both
    bi = ["LeakyRelu", "HardSigmoid", "Tanh", "Elu", "ScaledTanh", "Affine"]
    acts2 = (bi * 2)[: 2 * per] if per > 1 else ["HardSigmoid", "ScaledTanh"]
    out.append(_ex(kind, _base(kind, dtype, 60, nd=2), {"hidden_size": H, "direction": "bidirectional", "activations": acts2,
                                                        "activation_alpha": [0.25, 0.5, 0.75, 1.25, 1.5, 1.75][:2 * per],
                                                        "activation_beta": [0.125, 0.375, 0.625][:2 * per]}, "bidirectional_activations", full))
    # ThresholdedRelu at its threshold: "x if x >= alpha else 0" (the doc's table)
    tie = [_cast(np.ones((1, 1, 1)), dtype), _cast(np.ones((1, gates, 1)), dtype), _cast(np.zeros((1, gates, 1)), dtype)]
    tie_acts = ["Sigmoid", "ThresholdedRelu"] if kind == "GRU" else ["ThresholdedRelu"] * per  # GRU: z = r = sigmoid(1), ht = 1 or 0
    out.append(_ex(kind, tie + [None] * 5, {"hidden_size": 1, "activations": tie_acts, "activation_alpha": [1.0] * per},
                   "thresholded_relu_at_alpha", full))
    # specials
    X, W, R, B, _, h0, c0, P = _base(kind, dtype, 70, T=3, Bsz=3, I=1)
    Xn = np.array(X, dtype=np.float64)
    Xn[1, 0, 0] = np.nan
    out.append(_ex(kind, [_cast(Xn, dtype), W, R, B, None, h0, c0, P], {"hidden_size": H}, "nan_input", full))
    Xi = np.array(X, dtype=np.float64)
    Xi[0, 1, 0], Xi[2, 2, 0] = np.inf, -np.inf
    Wn = np.where(np.asarray(W, np.float64) == 0, 0.5, np.asarray(W, np.float64))
    out.append(_ex(kind, [_cast(Xi, dtype), _cast(Wn, dtype), R, B, None, h0, c0, P], {"hidden_size": H}, "inf_input", full))
    tiny = S.smallest_subnormal(dtype)
    Xs = np.array(X, dtype=np.float64)
    Xs[0, :, 0] = [-0.0, tiny, -tiny]
    Bs = None if B is None else np.array(B, dtype=np.float64)
    Bs[0, 0] = -0.0
    out.append(_ex(kind, [_cast(Xs, dtype), W, R, _cast(Bs, dtype), None, h0, c0, P], {"hidden_size": H}, "neg_zero_subnormal", full))
    big = float(S.finite_range(dtype)[1])
    Xb = np.array(X, dtype=np.float64)
    Xb[1, 0, 0] = big
    out.append(_ex(kind, [_cast(Xb, dtype), _cast(Wn, dtype), R, B, None, h0, c0, P], {"hidden_size": H}, "largest_input", full))
    if kind == "LSTM":
        out.append(_ex(kind, _base(kind, dtype, 80, P=True), {"hidden_size": H}, "peepholes", full))
        out.append(_ex(kind, _base(kind, dtype, 81, P=True), {"hidden_size": H, "clip": 0.5}, "peepholes_clip", full))
        out.append(_ex(kind, _base(kind, dtype, 82), {"hidden_size": H, "input_forget": 1}, "input_forget", full))
        ins = _base(kind, dtype, 83, P=True, nd=2, Bsz=3, T=3)
        ins[4] = np.array([3, 1, 2], dtype=np.int32)
        out.append(_ex(kind, ins, {"hidden_size": H, "direction": "bidirectional", "input_forget": 1, "clip": 1.0},
                       "bidirectional_peepholes_input_forget_padded", full))
    if kind == "GRU" and since >= 3:
        out.append(_ex(kind, _base(kind, dtype, 90), {"hidden_size": H, "linear_before_reset": 1}, "linear_before_reset", full))
        ins = _base(kind, dtype, 91, nd=2, Bsz=3)
        ins[4] = np.array([3, 1, 2], dtype=np.int32)
        out.append(_ex(kind, ins, {"hidden_size": H, "direction": "bidirectional", "linear_before_reset": 1, "clip": 1.0},
                       "bidirectional_linear_before_reset_padded", full))
    if since >= 14:
        for direction in DIRECTIONS:
            nd = 2 if direction == "bidirectional" else 1
            ins = _base(kind, dtype, 100, T=3, Bsz=3, nd=nd, layout=1, P=True)
            ins[4] = np.array([3, 1, 2], dtype=np.int32)
            out.append(_ex(kind, ins, {"hidden_size": H, "direction": direction, "layout": 1}, f"layout_1_{direction}_padded", full))
        out.append(_ex(kind, _base(kind, dtype, 101, layout=1, bias=False, h0=False, c0=False), {"hidden_size": H, "layout": 1},
                       "layout_1_no_optional_inputs", full))
    if since == 1 or (kind == "GRU" and since == 3):
        out.append(_ex(kind, _base(kind, dtype, 110), {"hidden_size": H, "output_sequence": 1}, "output_sequence_1", full))
    return out


def since_of(kind: str, opset: int) -> int:
    """The op-version in force at ``opset`` (what the strategy and edges may use)."""
    import onnx

    return onnx.defs.get_schema(kind, opset).since_version


def strategy(kind: str):
    def draw(d, dtype, opset):
        return draw_example(kind, since_of(kind, opset), d, dtype)

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def edges(kind: str):
    def named(dtype, opset):
        return edge_examples(kind, since_of(kind, opset), dtype)

    named.__name__ = f"edges_{kind.lower()}"
    return named


# -- how it enters a generated graph ---------------------------------------------------------
#: hidden sizes the template draws (small: the recurrence is a chain of tiny dot products)
FUZZ_HIDDEN = (1, 2, 3)


def fuzz_bound(kind: str):
    """bound(ref, ins, attrs): the magnitude one step's rounding scales with, for every element
    of Y: the largest sum of |terms| of a gate's pre-activation, ``|W||x_t| + |R||h| + |Wb| +
    |Rb|`` with |h| <= 1 (the state is a Tanh or Sigmoid output, or a convex mix of them and of
    the zero initial state), plus 1 (the gates and states themselves: |h|, |c| <= 1 per step)."""

    def bound(ref, ins, attrs):
        # ins are the values the plan reads: [X, W, R, B?], or with the Reshape step
        # [the pool value, X's shape (int64), W, R, B?]
        read = list(ins)  # what ref, the plan's steps and node as one function, takes
        if len(ins) > 1 and np.asarray(ins[1]).dtype.kind in "iu":
            ins = [np.reshape(ins[0], tuple(int(d) for d in ins[1]))] + list(ins[2:])
        x, w, r = (np.abs(np.asarray(a, dtype=np.float64)) for a in ins[:3])
        pre = np.einsum("dgi,tbi->tbdg", w, x)  # (T, B, dirs, gates*H)
        pre = pre + np.sum(r, axis=-1)[None, None]
        if len(ins) > 3 and ins[3] is not None:
            b = np.abs(np.asarray(ins[3], dtype=np.float64))
            half = b.shape[-1] // 2
            pre = pre + (b[..., :half] + b[..., half:])[None, None]
        y = np.asarray(ref(*read, **attrs)[0])
        return np.full(y.shape, float(np.max(pre, initial=0.0)) + 1.0)

    return bound


def fuzz_plan(kind: str):
    """The plan of an RNN / GRU / LSTM node: a rank-3 pool value as X [seq_length, batch_size,
    input_size] (layout 0), or any pool value reshaped to [its first dim, 1, the rest] by a
    Reshape step (every element a step of its own when the rest exceeds 16), a hidden size of 1 to 3, W, R (and B) constants in [-0.5, 0.5] with
    every row of |R| summing below 1 (so an error of the state does not grow from step to step:
    the activations' slopes are at most 1), forward, reverse or both directions, default
    activations, no sequence_lens and no initial state (the padding and the length-0 entry are
    spec-silent points); output Y.

    Error estimate. The error X carries is pushed through the node by the engine (re-evaluating
    the reference on perturbed X). The node's own rounding is ``n_acc * u * bound``: a gate's
    pre-activation sums ``input_size + hidden_size + 2`` terms (the classic dot-product bound,
    as MatMul, Gemm and Conv count their terms), each step adds that error to the state, and
    with contracting R it carries on at most undamped, so over seq_length steps the state holds
    ``seq_length`` of them; LSTM's cell state Ct = ft Ct-1 + it ct is a sum of up to seq_length
    terms of size <= 1 that the errors of ft, it and ct scale, so its count is multiplied by
    ``seq_length + 2``. Plus 4 terms per step for the activations' own rounding (exp, tanh, the
    division of Sigmoid) and GRU's and LSTM's elementwise gate products."""
    gates, _ = KINDS[kind]

    def plan(c):
        from harness.fuzz_api import Plan, Step

        x = c.take("float", 0, lambda v: v.size > 0)
        if x is None:
            return None
        steps = []
        if x.rank != 3 or c.pick(4) == 3:
            # the value reshaped to [seq_length, 1, rest] (its first dim as the sequence), or
            # with one step of every element when that makes input_size too large
            T = x.shape[0] if x.rank else 1
            if x.size // T > 16:
                T = x.size
            shape = (T, 1, x.size // T)
            name = c.fresh("rnn") + "x"
            steps = [Step("Reshape", [x, c.ints(list(shape))], [name])]
            xin = c.local(name)
        else:
            shape, xin = x.shape, x
        T, _, I = shape
        H = c.choice(FUZZ_HIDDEN)
        direction = c.choice(["forward", "reverse", "bidirectional"])
        nd = 2 if direction == "bidirectional" else 1
        w = c.const(c.rng.uniform(-0.5, 0.5, (nd, gates * H, I)))
        r = c.rng.uniform(-0.5, 0.5, (nd, gates * H, H))
        rows = np.sum(np.abs(r), axis=-1, keepdims=True)
        r = np.where(rows > 0.9, r * (0.9 / np.maximum(rows, 1e-30)), r)
        ins = [xin, w, c.const(r)]
        if c.pick(2):
            ins.append(c.const(c.rng.uniform(-0.5, 0.5, (nd, 2 * gates * H))))
        attrs = {"hidden_size": H}
        if direction != "forward":
            attrs["direction"] = direction
        if kind == "GRU" and c.since >= 3 and c.pick(2):
            attrs["linear_before_reset"] = 1
        per_step = I + H + 2 + 4
        n_acc = T * per_step * ((T + 2) if kind == "LSTM" else 1)
        return Plan(ins, attrs, n_acc=n_acc, n_outputs=1, steps=steps)

    return plan


def fuzz(op: Operator, kind: str) -> None:
    """Register the op's template (see :func:`fuzz_plan`). NaN inputs are skipped: what a NaN
    does inside a recurrence is IEEE arithmetic, but a zero weight times NaN and the gates'
    saturation make "which outputs are NaN" depend on the order of evaluation."""
    op.fuzz(nan=None, ulps=0.0, bound=fuzz_bound(kind))(fuzz_plan(kind))


def declare(op: Operator, kind: str, versions: tuple[int, ...]):
    """The recurrent family's declaration for ``kind`` ("RNN", "GRU", "LSTM"): the reference,
    strategy and edges of every version, its spec-silent points and its fuzz template. Returns
    the reference."""
    reference = op.reference(*versions)(make_reference(kind))
    op.strategy(*versions)(strategy(kind))
    op.edges(*versions)(edges(kind))
    declare_points(op, kind, versions)
    fuzz(op, kind)
    return reference
