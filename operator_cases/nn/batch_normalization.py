"""BatchNormalization (ONNX spec: BatchNormalization-1, 6, 7, 9, 14, 15).

Inference ("test mode"): ``Y = (X - mean) / sqrt(var + epsilon) * scale + B``, the per-channel
vectors broadcast along axis 1 of X (N x C x D1 ... Dn).

- BatchNormalization-1: X is "4-dimensional ... NCHW"; attributes ``consumed_inputs`` (required,
  a legacy in-place hint), ``epsilon``, ``momentum``, ``is_test`` (default 0) and ``spatial``
  (default 1). The mode is chosen by ``is_test``; outputs: "Y, mean, var, saved_mean, saved_var
  (training mode)" or "Y (test mode)".
- BatchNormalization-6: drops ``consumed_inputs``; X may have any rank >= 2 (N x C x D1 ... Dn).
  scale, B, mean and var stay "1-dimensional tensor[s] of size C" whatever ``spatial`` is, so
  ``spatial`` only concerns how statistics are computed in training mode.
- BatchNormalization-7: drops ``is_test``; the mode follows the number of outputs (Y alone: test
  mode). With ``spatial`` = 0 scale, B, mean and var have shape (C x D1 x ... x Dn): every
  feature position has its own statistics.
- BatchNormalization-9: drops ``spatial`` (non-spatial users flatten X to N x C*D1*..*Dn);
  X may also be 1-D "of size N in which case C is assumed to be 1".
- BatchNormalization-14: mean/var get their own type U, and ``training_mode`` (default 0)
  replaces the output-count rule. With training_mode = 1 the outputs are Y, running_mean,
  running_var (declared optional, but onnx's shape inference rejects training_mode = 1 with
  fewer than three outputs, so the cases request all three):
  ``current_mean = ReduceMean(X, all but the channel axis)``, ``current_var`` the population
  variance ("sum(sqrd(x_i - x_avg)) / N"),
  ``Y = (X - current_mean) / sqrt(current_var + epsilon) * scale + B``,
  ``running_mean = input_mean * momentum + current_mean * (1 - momentum)`` and likewise
  running_var. With training_mode = 0 "extra outputs are invalid".
- BatchNormalization-15: scale/B get type T1 and mean/var T2, independent of X's T; "The
  computation of ReduceMean and ReduceVar uses float to avoid overflow for float16 inputs".

The training mode of versions 1-9 (five outputs, saved_mean/saved_var without a definition)
is not specified precisely enough to have one right answer, so those cases run test mode only
(is_test = 1 for 1 and 6, a single output for 7 and 9); the references refuse anything else.
There ``momentum`` has nothing to update: the ``inference_momentum`` examples set it to 0.5 to
check that Y ignores it (also with training_mode = 0 from version 14).

Accumulation width in training mode: BatchNormalization-15 says "The computation of ReduceMean
and ReduceVar uses float to avoid overflow for float16 inputs", so a float16 channel whose sum
overflows float16 gets its exact statistics (the ``narrow_accumulation`` example); the
BatchNormalization-14 text says nothing (spec-silent point ``BatchNormalization.narrow_accumulation``:
ours wide, the reading "statistics accumulated in the input type" computed with ``_accumulate_util``).

Everything is computed in float64 (``epsilon`` and ``momentum`` first rounded to float32, which
is what a FLOAT attribute holds) and rounded once to each output's type. The drawn variances
(input var, and the batch variance in training mode) stay >= 0.25 so that Y is well conditioned;
the ``epsilon_dominated`` edge examples set var to 0 (a constant channel in training mode).
"""

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, with_input
from harness.registry import Example, Operator

from .._accumulate_util import EXPECTED, NARROW, add_examples, narrow_spec, running_sum
from .._common import back, wide

op = Operator("BatchNormalization")
st = S.st
FLOATS_T = ("float32", "float16", "float64", "bfloat16")


def _f32(v):
    return float(np.float32(v))


def _per_channel(p, x):
    """Shape a per-channel vector (C,) to broadcast along axis 1 of x; a (C, D1, ...) tensor
    (BatchNormalization-7, spatial = 0) broadcasts as it is."""
    p = wide(np.asarray(p))
    if x.ndim >= 2 and p.ndim == 1:
        return p.reshape((-1,) + (1,) * (x.ndim - 2))
    return p


def _infer(x, scale, b, mean, var, epsilon):
    xw = wide(x)
    s, bb, m, v = (_per_channel(p, x) for p in (scale, b, mean, var))
    return back((xw - m) / np.sqrt(v + _f32(epsilon)) * s + bb, x)


def _train(x, scale, b, mean, var, epsilon, momentum):
    xw = wide(x)
    axes = tuple(a for a in range(x.ndim) if a != 1) if x.ndim >= 2 else (0,)
    cur_mean = xw.mean(axis=axes, keepdims=True)
    cur_var = ((xw - cur_mean) ** 2).mean(axis=axes, keepdims=True)
    s, bb = _per_channel(scale, x), _per_channel(b, x)
    y = (xw - cur_mean) / np.sqrt(cur_var + _f32(epsilon)) * s + bb
    mom = _f32(momentum)
    cm, cv = cur_mean.reshape(-1), cur_var.reshape(-1)
    run_mean = wide(mean) * mom + cm * (1 - mom)
    run_var = wide(var) * mom + cv * (1 - mom)
    return [back(y, x), back(run_mean, mean), back(run_var, var)]


@op.reference(1)
def bn_1(x, scale, b, mean, var, *, consumed_inputs=None, epsilon=1e-5, is_test=0, momentum=0.9, spatial=1):
    if not is_test:
        raise ValueError("BatchNormalization-1 training mode is not specified precisely: cases use is_test=1")
    return _infer(x, scale, b, mean, var, epsilon)


@op.reference(6)
def bn_6(x, scale, b, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9, spatial=1):
    if not is_test:
        raise ValueError("BatchNormalization-6 training mode is not specified precisely: cases use is_test=1")
    return _infer(x, scale, b, mean, var, epsilon)


@op.reference(7)
def bn_7(x, scale, b, mean, var, *, epsilon=1e-5, momentum=0.9, spatial=1):
    return _infer(x, scale, b, mean, var, epsilon)  # spatial=0: the parameters are (C, D1, ...)


@op.reference(9)
def bn_9(x, scale, b, mean, var, *, epsilon=1e-5, momentum=0.9):
    return _infer(x, scale, b, mean, var, epsilon)


@op.reference(14, 15)
def bn_14(x, scale, b, input_mean, input_var, *, epsilon=1e-5, momentum=0.9, training_mode=0):
    if training_mode:
        return _train(x, scale, b, input_mean, input_var, epsilon, momentum)
    return _infer(x, scale, b, input_mean, input_var, epsilon)


# -- strategies ------------------------------------------------------------------------------------
def _since(opset):
    return schema.schema_at("BatchNormalization", opset).since_version


def _x_shape(d, since):
    if since == 1:
        rank = 4
    elif since >= 9 and d(st.integers(0, 7)) == 5:
        rank = 1
    else:
        rank = d(st.sampled_from([4, 2, 3, 5] if since > 1 else [4]))
    dims = [d(st.integers(1, 3))]                        # N
    if rank >= 2:
        dims.append(d(st.integers(1, 4)))                # C
    while len(dims) < rank:
        room = max(1, 64 // int(np.prod(dims)))
        dims.append(d(st.integers(1, max(1, min(4, room)))))
    return tuple(dims)


def _spread_channels(x, dtype):
    """Make every channel's batch variance >= 0.25 (the drawn values may be near-constant)."""
    xw = x.astype(np.float64)
    moved = np.moveaxis(xw, 1, 0) if x.ndim >= 2 else xw[None]
    flat = moved.reshape(moved.shape[0], -1).copy()
    n = flat.shape[1]
    if n < 2:
        return x
    pattern = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1 + np.arange(n) % 3)
    for c in range(flat.shape[0]):
        if flat[c].var() < 0.25:
            flat[c] = np.round(flat[c] * 0.25) + pattern
    out = flat.reshape(moved.shape)
    out = np.moveaxis(out, 0, 1) if x.ndim >= 2 else out[0]
    return out.astype(S.np_dtype(dtype))


def _params(d, dtype, shape, lo, hi):
    return S.arrays(d, dtype, shape=shape, lo=lo, hi=hi)


@op.strategy(1, 6, 7, 9, 14, 15)
def draw(d, dtype, opset):
    since = _since(opset)
    x = S.arrays(d, dtype, shape=_x_shape(d, since), lo=-4, hi=4)
    attrs = {}
    group = x.size // (x.shape[1] if x.ndim >= 2 else 1) if x.size else 0
    if d(st.booleans()):
        # epsilon 0 only where every channel has two or more elements (training_mode = 1 uses
        # the batch variance, >= 0.25 then; a lone element has variance 0)
        attrs["epsilon"] = d(st.sampled_from([1e-5, 1e-3, 0.1, 1e-2] + ([0.0] if group >= 2 else [])))
    if d(st.booleans()):
        attrs["momentum"] = d(st.sampled_from([0.9, 0.5, 0.0, 1.0, 0.99]))
    if since == 1:
        attrs["consumed_inputs"] = [0, 0, 0, 1, 1] if d(st.booleans()) else [0, 0, 0, 0, 0]
    if since in (1, 6):
        attrs["is_test"] = 1
        if d(st.booleans()):
            attrs["spatial"] = d(st.sampled_from([1, 0]))
    pshape = (x.shape[1],) if x.ndim >= 2 else (1,)
    if since == 7 and d(st.integers(0, 2)) == 1:
        attrs["spatial"] = 0
        pshape = x.shape[1:]
    elif since == 7 and d(st.booleans()):
        attrs["spatial"] = 1
    # parameter types: T for all before 14; U (mean/var) may differ from 14 on, T1 (scale/B) from 15
    t1 = dtype if since < 15 or d(st.integers(0, 2)) else d(st.sampled_from(FLOATS_T))
    t2 = dtype if since < 14 or d(st.integers(0, 2)) else d(st.sampled_from(FLOATS_T))
    scale = _params(d, t1, pshape, -2, 2)
    b = _params(d, t1, pshape, -2, 2)
    mean = _params(d, t2, pshape, -2, 2)
    var = _params(d, t2, pshape, 0.25, 4)
    outputs = None
    # training mode only where every channel holds two or more elements: a lone element has
    # batch variance 0, and then Y = B is computed from terms of size |x| / sqrt(epsilon)
    # by the usual kernels (x * a + (B - mean * a)), an ill-conditioned evaluation
    if since >= 14 and group >= 2 and d(st.integers(0, 2)) == 1:
        attrs["training_mode"] = 1
        x = _spread_channels(x, dtype)
        outputs = 3  # onnx shape inference requires all three outputs when training_mode = 1
    elif since >= 14 and d(st.booleans()):
        attrs["training_mode"] = 0
    return Example([x, scale, b, mean, var], attrs, outputs=outputs if outputs is not None else 1)


@op.edges(1, 6, 7, 9, 14, 15)
def edges(dtype, opset):
    since = _since(opset)
    t = S.np_dtype(dtype)
    a = lambda v: np.array(v, dtype=np.float64).astype(t)
    base = {"is_test": 1} if since in (1, 6) else {}
    if since == 1:
        base["consumed_inputs"] = [0, 0, 0, 0, 0]
    x = a(np.arange(2 * 3 * 2 * 2).reshape(2, 3, 2, 2) % 5 - 2)
    one, zero = a([1.0, 1.0, 1.0]), a([0.0, 0.0, 0.0])
    const = a(np.full((2, 3, 1, 2), 1.5))
    special = np.resize(S.edge_values(dtype), (1, 3, 13, 1))
    out = [
        Example([x, a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0]), a([0.0, 1.0, -2.0]), a([1.0, 0.25, 4.0])], base, name="plain", outputs=1),
        Example([const, one, zero, a([1.5, 1.5, 1.5]), zero], {**base, "epsilon": 1e-2}, name="epsilon_dominated", outputs=1),
        Example([special, one, zero, zero, one], base, name="special_values", outputs=1),
        Example([a(np.zeros((0, 3, 2, 1))), one, zero, zero, one], base, name="empty_batch", outputs=1),
        # momentum only updates running statistics: in inference it must change nothing
        Example([x, a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0]), a([0.0, 1.0, -2.0]), a([1.0, 0.25, 4.0])],
                {**base, "momentum": 0.5} if since < 14 else {"momentum": 0.5, "training_mode": 0}, name="inference_momentum", outputs=1),
    ]
    if since == 7:
        p = lambda v: a(np.full((3, 2, 2), v))
        out.append(Example([x, p(2.0), p(0.5), p(-1.0), p(0.25)], {"spatial": 0}, name="non_spatial", outputs=1))
    if since >= 9:
        out.append(Example([a([1.0, -2.0, 3.0]), a([2.0]), a([0.5]), a([1.0]), a([4.0])], name="one_dimensional", outputs=1))
        out.append(Example([a(np.arange(2 * 3).reshape(2, 3) - 2.5), one, zero, zero, one], name="two_dimensional", outputs=1))
    if since >= 14:
        tm = {"training_mode": 1}
        out += [
            Example([x, a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0]), a([0.0, 1.0, -2.0]), a([1.0, 0.25, 4.0])], tm, name="training", outputs=3),
            Example([x, one, zero, a([0.5, 0.5, 0.5]), one], {**tm, "momentum": 0.5}, name="training_momentum_half", outputs=3),
            # the two ends: running statistics are the batch's (momentum 0) or the inputs unchanged (momentum 1)
            Example([x, a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0]), a([0.0, 1.0, -2.0]), a([1.0, 0.25, 4.0])], {**tm, "momentum": 0.0},
                    name="training_momentum_0", outputs=3),
            Example([x, a([1.0, -0.5, 2.0]), a([0.0, 1.0, -1.0]), a([0.0, 1.0, -2.0]), a([1.0, 0.25, 4.0])], {**tm, "momentum": 1.0},
                    name="training_momentum_1", outputs=3),
            Example([const, one, zero, zero, one], {**tm, "epsilon": 1e-2}, name="training_epsilon_dominated", outputs=3),
            Example([a([[1.0, 2.0, 4.0, 8.0]]).T.copy(), a([1.0]), a([0.0]), a([0.0]), a([1.0])], tm, name="training_one_channel", outputs=3),
        ]
        nan_x = x.copy()
        nan_x[0, 1, 0, 0] = np.nan
        out.append(Example([nan_x, one, zero, zero, one], tm, name="training_nan_in_channel", outputs=3))
    if since >= 15 and dtype != "float32":
        f32 = lambda v: np.array(v, dtype=np.float32)
        out.append(Example([x, f32([1.0, -0.5, 2.0]), f32([0.0, 1.0, -1.0]), f32([0.0, 1.0, -2.0]), f32([1.0, 0.25, 4.0])],
                           name="float32_parameters", outputs=1))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=8.0, bound=with_input)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 2 and v.size > 0)
    if x is None:
        return None
    ch = (x.shape[1],)
    ins = [x, c.const(c.floats(ch, 0.5, 1.5)), c.const(c.floats(ch)), c.const(c.floats(ch)), c.const(c.floats(ch, 0.5, 2.0))]
    attrs = {"epsilon": c.choice([1e-5, 1e-2])} if c.pick(2) else {}
    return Plan(ins, attrs, n_outputs=1)


# -- accumulation width in training mode (issue 32) -------------------------------------------------
def _channel_axes(x):
    return tuple(a for a in range(x.ndim) if a != 1)


def _narrow(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if not attrs.get("training_mode") or S.label_of(x.dtype) not in NARROW or x.size == 0 or x.ndim < 2:
        return [None] * len(expected)
    over = (~np.isfinite(running_sum(x, _channel_axes(x)).astype(np.float64))
            & np.all(np.isfinite(x.astype(np.float64)), axis=_channel_axes(x), keepdims=True)).reshape(-1)  # an inf or NaN input is IEEE's
    return [np.broadcast_to(over.reshape((1, -1) + (1,) * (x.ndim - 2)), x.shape), over, over][:len(expected)]


def _in_type(var_only):
    """Y and the running statistics with the batch statistics accumulated in X's type; ``var_only``:
    the mean taken wide, the variance from its own mean accumulated in X's type (numpy's float16
    ``var``, whose sums stay in float16 where its ``mean`` uses float32)."""
    def reading(c):
        return _stats_in_type(c, var_only)

    return reading


def _stats_in_type(c, var_only):
    x = np.asarray(c.inputs[0])
    t, axes = x.dtype, _channel_axes(x)
    n = int(np.prod([x.shape[a] for a in axes]))
    mom = _f32(c.attrs.get("momentum", 0.9))
    with np.errstate(all="ignore"):
        in_type_mean = (running_sum(x, axes).astype(np.float64) / n).astype(t)
        mean = (np.sum(wide(x), axis=axes, keepdims=True) / n).astype(t) if var_only else in_type_mean
        d = (x.astype(np.float64) - mean.astype(np.float64)).astype(t)
        d_var = (x.astype(np.float64) - in_type_mean.astype(np.float64)).astype(t)
        var = (running_sum(d_var, axes, square=True).astype(np.float64) / n).astype(t)
        std = np.sqrt(var.astype(np.float64) + _f32(c.attrs.get("epsilon", 1e-5))).astype(t)
        y = d.astype(np.float64) / std.astype(np.float64) * _per_channel(c.inputs[1], x) + _per_channel(c.inputs[2], x)
        outs = [y.astype(t)]
        for k, stat in ((3, mean), (4, var)):
            held = np.asarray(c.inputs[k])
            outs.append((wide(held) * mom + stat.reshape(-1).astype(np.float64) * (1 - mom)).astype(held.dtype))
    return outs[:len(c.expected)]


op.spec_silent(
    "narrow_accumulation", (14,), spec=narrow_spec(op, (14,)), expected=EXPECTED, where=_narrow,
    invariants={"the running mean of an overflowing channel is finite only if Y's channel is": lambda c: bool(np.all(
        ~np.isfinite(np.asarray(c.actual[1]).astype(np.float64)[c.masks[1]])
        | np.isfinite(np.moveaxis(np.asarray(c.actual[0]).astype(np.float64), 1, 0).reshape(np.shape(c.actual[1])[0], -1)).all(axis=1)[c.masks[1]]))},
    readings={"statistics accumulated in the input type, left to right": _in_type(False),
              "the mean wide, the variance from a mean accumulated in the input type (numpy's float16 var)": _in_type(True)})


def _narrow_examples(dtype, since):
    """Channel 0's batch sum overflows float16 (2^16), its mean (2^14) and variance (16^2) do not."""
    if dtype != "float16":
        return []
    a = lambda v: np.array(v, dtype=np.float64).astype(np.float16)  # noqa: E731
    h = 2.0 ** 14
    x = a(np.array([[h - 16, 1.0, -1.0], [h + 16, 2.0, 1.0], [h - 16, 3.0, -1.0], [h + 16, 4.0, 1.0]]).reshape(4, 3, 1, 1))
    one, zero = a([1.0, 1.0, 1.0]), a([0.0, 0.0, 0.0])
    return [Example([x, a([2.0, 1.0, 1.0]), a([0.5, 0.0, 0.0]), zero, one], {"training_mode": 1}, name="narrow_accumulation", outputs=3)]


def _constant_channel(dtype, since):
    """A constant channel of large values in training mode: x - mean is exactly 0, so Y is B
    (an evaluation as x * k + (B - mean * k), k = scale / sqrt(epsilon), cancels catastrophically)."""
    if dtype not in ("float32", "float64"):  # float16: 4 x 16384 overflows its sum (narrow_accumulation's ground)
        return []
    a = lambda v: np.array(v, dtype=np.float64).astype(S.np_dtype(dtype))  # noqa: E731
    x = a(np.array([[16384.0, 1.0], [16384.0, 2.0], [16384.0, 3.0], [16384.0, 4.0]]).reshape(4, 2, 1, 1))
    return [Example([x, a([2.0, 1.0]), a([0.5, 0.0]), a([0.0, 0.0]), a([1.0, 1.0])], {"training_mode": 1},
                    name="training_large_constant_channel", outputs=3)]


add_examples(op, (14, 15), _constant_channel)
add_examples(op, (14, 15), _narrow_examples)
