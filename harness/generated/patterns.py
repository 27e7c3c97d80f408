"""Optimization-aware generation: templates of the subgraph patterns runtimes rewrite (issue 35).

A *pattern* places several nodes at once, in the shape an optimizer recognizes and rewrites
(ONNX Runtime's graph transformers in ``onnxruntime/core/optimizer/``: ``matmul_add_fusion``,
``matmul_scale_fusion``, ``matmul_transpose_fusion``, ``conv_bn_fusion``, ``conv_add_fusion``,
``conv_mul_fusion``, ``conv_activation_fusion``, ``gelu_fusion``, ``bias_gelu_fusion``,
``layer_norm_fusion``, ``skip_layer_norm_fusion``, the transpose optimizer, ``reshape_fusion``
and constant folding; a scaled dot-product attention core, which the first three rewrite; and
the QDQ node groups of ``qdq_transformer/`` (DequantizeLinear -> Conv / MatMul / Add ->
QuantizeLinear into QLinearConv / QLinearMatMul / QLinearAdd, and double Q -> DQ pairs merged),
drawn in float32 graphs whose quantized values are ``harness.fuzz_api.QUANT``). Each pattern draws a *variant* from its knobs: ``inside`` variants meet
the rewrite's preconditions; ``outside`` variants break exactly one (an extra consumer of an
intermediate, which makes it a graph output; a bias whose shape Gemm cannot broadcast; a
constant that is not the one the pattern matches; a parameter that is not a constant), so that a
rewrite that applies where it must not, or computes differently from the unfused graph, shows.

Patterns are generic data of the engine: every node they place is an ordinary node of the
graph, evaluated, checked and judged by its op's own reference and template checks (a pattern
never computes a value itself), and the shrinker treats them as nodes like any other. A pattern
is drawn like an op (``GenConfig.patterns``: the spec's op index covers the ops and then the
patterns); the graph records which patterns (and variants) it holds (``Graph.patterns``) and a
campaign counts them.

``REWRITES`` says, per pattern, what ONNX Runtime's optimized graph holds instead of the pattern's
ops when an inside variant is rewritten (tests/test_generated_patterns.py checks it on the
optimized model ONNX Runtime writes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import schema
from ..fuzz_api import Ctx, Value, size_of


class Skip(Exception):
    """A pattern that cannot be placed here (no value fits, a node's checks refuse it)."""


@dataclass(frozen=True)
class Pattern:
    name: str
    place: Callable[[Ctx], str]
    #: op types ONNX Runtime's optimized graph holds after rewriting an inside variant
    #: (an empty tuple: the pattern's nodes are removed or folded away)
    rewritten_to: tuple[str, ...]
    #: op types of the pattern that an inside variant's rewrite removes
    removes: tuple[str, ...]
    doc: str = ""


PATTERNS: dict[str, Pattern] = {}


def pattern(name: str, rewritten_to: tuple[str, ...], removes: tuple[str, ...]) -> Callable:
    def deco(fn: Callable[[Ctx], str]) -> Callable[[Ctx], str]:
        PATTERNS[name] = Pattern(name, fn, rewritten_to, removes, (fn.__doc__ or "").strip())
        return fn

    return deco


# -- placing nodes -------------------------------------------------------------------------------
def node(c: Ctx, op: str, ins: list[Value | None], attrs: dict[str, Any] | None = None, n_acc: int = 0,
         expose: bool = False, slack: float = 0.0) -> Value:
    """Place one node of ``op`` (its op-version in force at the graph's opset) through the
    engine's own evaluation; its first output, or Skip. ``slack``: Builder.evaluate's."""
    b = c.b
    sch = schema.schema_at(op, b.opset)
    if sch is None or ("", op, sch.since_version) not in b.registry or b.registry[("", op, sch.since_version)].reference is None:
        raise Skip(f"no {op} at opset {b.opset}")
    if (f"{op}-{sch.since_version}", b.dtype) in b.config.exclude:
        raise Skip(f"{op}-{sch.since_version} not drawn at {b.dtype}")
    why = b.evaluate(op, sch.since_version, ins, dict(attrs or {}), n_acc, 1, c.index, expose, slack=slack)
    if why:
        raise Skip(why)
    return b.placed[0]


def scalar(c: Ctx, value: float) -> Value:
    return c.const(np.array(value))


def _variant(c: Ctx, outside: list[str]) -> str:
    """``inside`` one time in two (always where the knob is 0, what shrinking reaches), else
    one of the ways outside the rewrite's preconditions."""
    k = c.pick(2 * len(outside))
    return "inside" if k < len(outside) else outside[k - len(outside)]


def _take(c: Ctx, fits: Callable[[Value], bool]) -> Value:
    v = c.take("float", 0, lambda v: v.size > 0 and fits(v))
    if v is None:
        raise Skip("no value fits")
    return v


# -- patterns ----------------------------------------------------------------------------------
@pattern("MatMulAdd", rewritten_to=("Gemm",), removes=("MatMul", "Add"))
def matmul_add(c: Ctx) -> str:
    """MatMul with a constant [K, N] weight, then Add of a bias: Gemm (matmul_add_fusion: the
    MatMul's only consumer, not a graph output; bias (N), (1, N), (M, 1) or (M, N))."""
    variant = _variant(c, ["extra-consumer", "bias-not-broadcastable"])
    a = _take(c, lambda v: v.rank == 2)
    m, k = a.shape
    n = 1 + c.pick(4)
    w = c.const(c.floats((k, n)))
    y = node(c, "MatMul", [a, w], n_acc=k, expose=variant == "extra-consumer")
    if variant == "bias-not-broadcastable":
        bias = c.const(c.floats((1, m, n)))  # rank 3: the Add broadcasts, Gemm's C cannot
    else:
        bias = c.const(c.floats(c.choice([(n,), (1, n), (m, n), (m, 1)])))
    node(c, "Add", [y, bias] if c.pick(2) == 0 else [bias, y])
    return variant


@pattern("MatMulScale", rewritten_to=("FusedMatMul",), removes=("MatMul", "Mul"))
def matmul_scale(c: Ctx) -> str:
    """A MatMul scaled by a scalar constant (Mul after it, or Mul on an operand before it):
    com.microsoft FusedMatMul with alpha (matmul_scale_fusion: the scale a scalar constant)."""
    # "shared-operand": the Mul is consumed elsewhere too; the fusion still applies (the Mul stays
    # for its other consumer), a rewrite that must keep both right
    variant = _variant(c, ["scale-not-scalar", "shared-operand"])
    a = _take(c, lambda v: v.rank >= 2)
    k = a.shape[-1]
    w = c.const(c.floats((k, 1 + c.pick(4))))
    scale = c.choice([0.5, 0.125, 2.0, 3.0])

    def factor(last: int) -> Value:
        return c.const(c.floats((last,), 0.5, 2.0)) if variant == "scale-not-scalar" else scalar(c, scale)

    if c.pick(2):
        y = node(c, "MatMul", [a, w], n_acc=k, expose=variant == "shared-operand")
        node(c, "Mul", [y, factor(w.shape[1])])
    else:
        s = node(c, "Mul", [a, factor(k)], expose=variant == "shared-operand")
        node(c, "MatMul", [s, w], n_acc=k)
    return variant


@pattern("TransposeMatMul", rewritten_to=("FusedMatMul",), removes=("Transpose", "MatMul"))
def transpose_matmul(c: Ctx) -> str:
    """Transpose of the last two axes feeding a MatMul: FusedMatMul with transA or transB
    (matmul_transpose_fusion: the Transpose's only consumer)."""
    variant = _variant(c, ["extra-consumer", "other-perm"])
    a = _take(c, lambda v: v.rank == 3 if variant == "other-perm" else v.rank >= 2)
    perm = list(range(a.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    if variant == "other-perm":
        perm = [1, 0, 2]  # swaps the leading axes: not a matrix transpose
    t = node(c, "Transpose", [a], {"perm": perm}, expose=variant == "extra-consumer")
    k = t.shape[-1]
    w = c.const(c.floats((k, 1 + c.pick(3))))
    node(c, "MatMul", [t, w], n_acc=k)
    return variant


@pattern("Attention", rewritten_to=("FusedMatMul",), removes=("Transpose", "Mul"))
def attention(c: Ctx) -> str:
    """Scaled dot-product attention of a value with itself: MatMul(Q, Transpose(K)) * 1/sqrt(d),
    Softmax over the last axis, MatMul by V (Q = K = V). ONNX Runtime folds the Transpose and the
    scale into one com.microsoft FusedMatMul (transB, alpha) ahead of the Softmax
    (matmul_transpose_fusion, then matmul_scale_fusion: the scores' only consumer is the Mul, the
    scale a scalar constant). Its contrib Attention fusion needs a whole BERT subgraph (projections,
    heads, mask), which this is not."""
    variant = _variant(c, ["extra-consumer", "scale-not-scalar"])
    q = _take(c, lambda v: v.rank >= 2)
    d = q.shape[-1]
    perm = list(range(q.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    kt = node(c, "Transpose", [q], {"perm": perm})
    scores = node(c, "MatMul", [q, kt], n_acc=d, expose=variant == "extra-consumer")
    if variant == "scale-not-scalar":
        factor = c.const(c.floats((q.shape[-2],), 0.1, 0.5))
    else:
        factor = scalar(c, 1.0 / math.sqrt(d))
    probs = node(c, "Softmax", [node(c, "Mul", [scores, factor])], {"axis": -1})
    node(c, "MatMul", [probs, q], n_acc=q.shape[-2])
    return variant


def _conv(c: Ctx, variant: str, expose_as: str = "extra-consumer") -> tuple[Value, int]:
    x = _take(c, lambda v: v.rank in (3, 4))
    channels = x.shape[1]
    out = 1 + c.pick(3)
    kernel = tuple(1 + c.pick(min(2, d)) for d in x.shape[2:])
    w = c.const(c.floats((out, channels, *kernel)))
    ins = [x, w] + ([c.const(c.floats((out,)))] if c.pick(2) else [])
    y = node(c, "Conv", ins, n_acc=channels * size_of(kernel) + 1, expose=variant == expose_as)
    return y, out


@pattern("ConvBatchNorm", rewritten_to=("Conv",), removes=("BatchNormalization",))
def conv_bn(c: Ctx) -> str:
    """Conv then BatchNormalization (inference) with constant scale, bias, mean and var: folded
    into the Conv's weights (conv_bn_fusion: the Conv's only consumer, constant parameters)."""
    variant = _variant(c, ["extra-consumer"])
    y, out = _conv(c, variant)
    scale = c.const(c.floats((out,), 0.5, 2.0))
    bias = c.const(c.floats((out,)))
    mean = c.const(c.floats((out,)))
    var = c.const(c.floats((out,), 0.5, 2.0))
    node(c, "BatchNormalization", [y, scale, bias, mean, var], {"epsilon": c.choice([1e-5, 1e-3, 0.1])})
    return variant


@pattern("ConvAddMul", rewritten_to=("Conv",), removes=("Add", "Mul"))
def conv_add_mul(c: Ctx) -> str:
    """Conv then Mul and Add by per-channel constants ([C, 1, ...]): folded into its weights and
    bias (conv_mul_fusion, conv_add_fusion)."""
    variant = _variant(c, ["extra-consumer", "not-per-channel"])
    y, out = _conv(c, variant)
    shape = (out,) + (1,) * (y.rank - 2) if variant != "not-per-channel" else (1,) + y.shape[1:]
    z = node(c, "Mul", [y, c.const(c.floats(shape, 0.5, 2.0))])
    node(c, "Add", [z, c.const(c.floats(shape))])
    return variant


@pattern("ConvActivation", rewritten_to=("FusedConv",), removes=("Conv",))
def conv_activation(c: Ctx) -> str:
    """Conv then an activation (Relu, LeakyRelu, Sigmoid, Tanh, Clip, HardSigmoid): one
    com.microsoft FusedConv (conv_activation_fusion: the Conv's only consumer)."""
    variant = _variant(c, ["extra-consumer"])
    y, _ = _conv(c, variant)
    act = c.choice(["Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid"])
    if act == "Clip":
        node(c, "Clip", [y, scalar(c, -1.0), scalar(c, 1.5)])
    elif act == "LeakyRelu":
        node(c, "LeakyRelu", [y], {"alpha": 0.2})
    else:
        node(c, act, [y])
    return variant


def _gelu(c: Ctx, x: Value, variant: str) -> Value:
    """(x * 0.5) * (1 + erf(x / sqrt(2))), the shape gelu_fusion matches."""
    root = math.sqrt(2.0) if variant != "other-constant" else 1.5
    d = node(c, "Div", [x, scalar(c, root)])
    e = node(c, "Erf", [d])
    p = node(c, "Add", [e, scalar(c, 1.0)], expose=variant == "extra-consumer")
    h = node(c, "Mul", [x, scalar(c, 0.5)])
    return node(c, "Mul", [h, p])


@pattern("Gelu", rewritten_to=("Gelu",), removes=("Erf",))
def gelu(c: Ctx) -> str:
    """The erf form of Gelu spelled out in five nodes: one Gelu (com.microsoft; gelu_fusion:
    the constants sqrt(2), 1 and 0.5, no intermediate consumed elsewhere)."""
    variant = _variant(c, ["extra-consumer", "other-constant"])
    _gelu(c, _take(c, lambda v: v.rank >= 1), variant)
    return variant


@pattern("BiasGelu", rewritten_to=("BiasGelu",), removes=("Erf", "Add"))
def bias_gelu(c: Ctx) -> str:
    """Add of a 1-D bias over the last axis, then the Gelu pattern: one BiasGelu (gelu_fusion
    then bias_gelu_fusion: the bias 1-D, the last axis' size)."""
    variant = _variant(c, ["extra-consumer", "bias-not-1d"])
    x = _take(c, lambda v: v.rank >= 2)
    shape = (x.shape[-1],) if variant != "bias-not-1d" else x.shape
    y = node(c, "Add", [x, c.const(c.floats(shape))], expose=variant == "extra-consumer")
    _gelu(c, y, "inside")
    return variant


def _layer_norm(c: Ctx, x: Value, variant: str) -> Value:
    """ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul gamma, Add beta over the
    last axis: the decomposition layer_norm_fusion matches."""
    axes = [-1] if variant != "other-axis" else [0]

    def mean(v: Value, expose: bool = False) -> Value:
        if c.b.opset >= 18:
            return node(c, "ReduceMean", [v, c.ints(axes)], expose=expose)
        return node(c, "ReduceMean", [v], {"axes": axes}, expose=expose)

    n = x.shape[-1]
    mu = mean(x, expose=variant == "extra-consumer")
    d = node(c, "Sub", [x, mu])
    var = mean(node(c, "Pow", [d, scalar(c, 2.0)]))
    s = node(c, "Sqrt", [node(c, "Add", [var, scalar(c, c.choice([1e-5, 1e-3]))])])
    y = node(c, "Div", [d, s])
    y = node(c, "Mul", [y, c.const(c.floats((n,), 0.5, 2.0))])
    return node(c, "Add", [y, c.const(c.floats((n,)))])


@pattern("LayerNorm", rewritten_to=("LayerNormalization",), removes=("ReduceMean", "Pow", "Sqrt"))
def layer_norm(c: Ctx) -> str:
    """LayerNormalization spelled out in nine nodes: one LayerNormalization (layer_norm_fusion:
    the reductions over the last axis, constant gamma and beta)."""
    variant = _variant(c, ["extra-consumer", "other-axis"])
    _layer_norm(c, _take(c, lambda v: v.rank >= 2 and v.shape[-1] >= 2 and v.shape[0] >= 2), variant)
    return variant


@pattern("SkipLayerNorm", rewritten_to=("SkipLayerNormalization",), removes=("ReduceMean", "Add"))
def skip_layer_norm(c: Ctx) -> str:
    """Add of a skip input then the LayerNorm pattern: one SkipLayerNormalization
    (skip_layer_norm_fusion: 3-D inputs of one shape)."""
    variant = _variant(c, ["extra-consumer"])
    x = _take(c, lambda v: v.rank == 3 and v.shape[-1] >= 2)
    skip = c.take("float", 1, lambda v: v.shape == x.shape and v is not x) or c.const(c.floats(x.shape))
    y = node(c, "Add", [x, skip], expose=variant == "extra-consumer")
    _layer_norm(c, y, "inside")
    return variant


@pattern("TransposeChain", rewritten_to=(), removes=("Transpose",))
def transpose_chain(c: Ctx) -> str:
    """Two Transposes in a row: one Transpose, or none where the permutations cancel (the
    transpose optimizer)."""
    variant = _variant(c, ["extra-consumer"])
    x = _take(c, lambda v: v.rank >= 2)
    perm = list(np.random.default_rng(c.pick(1000)).permutation(x.rank))
    t = node(c, "Transpose", [x], {"perm": [int(p) for p in perm]}, expose=variant == "extra-consumer")
    back = [int(p) for p in np.argsort(perm)] if c.pick(2) == 0 else list(range(x.rank))[::-1]
    node(c, "Transpose", [t], {"perm": back})
    return variant


@pattern("ReshapeChain", rewritten_to=("Reshape",), removes=("Reshape",))
def reshape_chain(c: Ctx) -> str:
    """Reshape to a flat vector then back to another shape: one Reshape (reshape_fusion and
    the rule-based Reshape elimination)."""
    variant = _variant(c, ["extra-consumer"])
    x = _take(c, lambda v: v.rank >= 1)
    flat = node(c, "Reshape", [x, c.ints([x.size])], expose=variant == "extra-consumer")
    shape = list(x.shape[::-1]) if c.pick(2) else [1, x.size]
    node(c, "Reshape", [flat, c.ints(shape)])
    return variant


@pattern("ConstantFolding", rewritten_to=(), removes=("Exp",))
def constant_folding(c: Ctx) -> str:
    """A subgraph of constants only (Exp of a constant, times a constant) feeding a node of a
    graph value: folded into one initializer (constant_folding)."""
    x = _take(c, lambda v: v.rank >= 1)
    shape = x.shape[-1:]
    k = node(c, "Mul", [node(c, "Exp", [c.const(c.floats(shape, -1.0, 1.0))]), c.const(c.floats(shape))])
    node(c, c.choice(["Add", "Mul", "Sub"]), [x, k])
    return "inside"


# -- QDQ patterns (float32 graphs) ------------------------------------------------------------
# ONNX Runtime's QDQ transformers (onnxruntime/core/optimizer/qdq_transformer/: selectors_actions
# qdq_selectors.cc and qdq_actions.cc, double_qdq_pairs_remover) rewrite DequantizeLinear ->
# op -> QuantizeLinear node groups into one quantized kernel: each DQ the group's input has the
# op as its only consumer and gives no graph output, the op's only consumers are the Qs; Conv and
# MatMul: an int8 activation needs int8 weights, the output Q of the activation's type; binary
# ops: both inputs and the output of one type.
#
# The fused kernels requantize their integer accumulation with a float multiplier
# (x_scale * w_scale / y_scale, float32) and round it to nearest even, where the composed graph
# divides its float result by y_scale. QuantizeLinear's text: "The quantization formula is
# `y = saturate((x / y_scale) + y_zero_point)` ... For `(x / y_scale)`, it rounds to the nearest
# even." Both are that formula, computed once through float products of different order: where the
# quotient lies within their rounding of a half step the two round to neighbouring integers, and
# nowhere else (the engine does not draw an element within the composed graph's own error of a
# half step, and the multiplier's relative error, a few float32 roundings, is far below one step
# for |q| <= 255). So the fused result is allowed one quantization step either way: the output
# DequantizeLinear's value gets the output scale as ``slack`` (+-1 in the quantized domain).
QUANT_TYPES = ("uint8", "int8")
#: outside variants that break a selector's literal precondition but that ONNX Runtime fuses all
#: the same, after passes that restore it: EnsureUniqueDQForNodeUnit gives an activation DQ with
#: another consumer a copy of its own ("extra-consumer"); QDQS8ToU8Transformer turns an int8
#: activation's Q -> DQ pair into a uint8 one (zero point + 128), so the int8-activation and
#: mixed-type rules no longer bite. Each computes through those rewrites too.
FUSED_ANYWAY = ["extra-consumer", "int8-activation-uint8-weight", "output-type-differs"]
#: outside variants ONNX Runtime leaves unfused: the op's output has a consumer besides the Q
#: (CheckQDQNodes: the Qs are all its output edges), 16-bit types (not allowed by default). A
#: third, "per-axis-activation" (the activation's Q -> DQ along axis 1: QLinearConv and
#: QLinearMatMul take a per-tensor one only), ONNX Runtime 1.32 leaves alone for MatMul but
#: fuses for Conv into a QLinearConv that fails every run: its Conv selector checks types only.
NOT_FUSED = ["output-extra-consumer", "uint16"]


def _float32(c: Ctx) -> None:
    if c.dtype != "float32":
        raise Skip("QDQ patterns draw float32 graphs (the quantized kernels' scales are float32)")


def _params(c: Ctx, x: np.ndarray, to: str, axis_len: int = 0, steps: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A scale and zero point quantizing ``x`` to ``to`` (QuantizeLinear's own fuzz_params), per
    tensor, or per axis (``axis_len`` of them, each a little apart)."""
    from operator_cases.quantization.quantize_linear import fuzz_params

    scale, zp = fuzz_params(c, x, to, steps)
    if axis_len:
        scale = (scale * np.linspace(0.75, 1.25, axis_len)).astype(np.float32)
        zp = np.full(axis_len, zp, dtype=zp.dtype)
    return scale, zp


def _qdq(c: Ctx, x: Value, to: str, scale: Value | None = None, expose: bool = False, per_axis: bool = False) -> Value:
    """x quantized to ``to`` and dequantized again (an activation's Q -> DQ), per tensor, or
    ``per_axis`` along axis 1."""
    s, zp = _params(c, x.wide, to, x.shape[1] if per_axis else 0)
    s_v = scale if scale is not None else c.const(s)
    z_v = c.const(zp)
    attrs = {"axis": 1} if per_axis else {}
    return node(c, "DequantizeLinear", [node(c, "QuantizeLinear", [x, s_v, z_v], attrs), s_v, z_v], attrs, expose=expose)


def _weight(c: Ctx, shape: tuple[int, ...], to: str, axis: int | None) -> Value:
    """A constant quantized weight dequantized, per tensor or per ``axis``."""
    s, zp = _params(c, np.ones(1), to, shape[axis] if axis is not None else 0, steps=50.0)
    q = (c.rng.integers(-60, 61, size=shape) + int(zp.reshape(-1)[0])).astype(np.dtype(to))
    return node(c, "DequantizeLinear", [c.const(q), c.const(s), c.const(zp)], {"axis": axis} if axis is not None else {})


def _requantize(c: Ctx, y: Value, to: str) -> Value:
    """The op's output quantized to ``to`` and dequantized, allowed one step (see above)."""
    s, zp = _params(c, y.wide, to)
    q = node(c, "QuantizeLinear", [y, c.const(s), c.const(zp)])
    return node(c, "DequantizeLinear", [q, c.const(s), c.const(zp)], slack=float(s))


def _types(c: Ctx, variant: str) -> tuple[str, str, str]:
    """(activation, weight, output) types: int8 activations need int8 weights; the output Q
    has the activation's type; 16-bit types (QuantizeLinear-21 on) are not fused by default."""
    if variant == "uint16":
        if c.b.opset < 21:
            raise Skip("16-bit QuantizeLinear from opset 21")
        return "uint16", "uint16", "uint16"
    act = c.choice(QUANT_TYPES)
    weight = "int8" if act == "int8" else c.choice(QUANT_TYPES)
    if variant == "int8-activation-uint8-weight":
        act, weight = "int8", "uint8"
    out = act if variant != "output-type-differs" else ("int8" if act == "uint8" else "uint8")
    return act, weight, out


def _dynamic_scale(c: Ctx, x: Value) -> Value:
    """A scale computed from the data (its largest magnitude over 50): not a constant."""
    top = node(c, "ReduceMax", [node(c, "Abs", [x])], {"keepdims": 0})
    return node(c, "Mul", [top, scalar(c, 1.0 / 50.0)])


@pattern("QDQConv", rewritten_to=("QLinearConv",), removes=("DequantizeLinear", "QuantizeLinear", "Conv"))
def qdq_conv(c: Ctx) -> str:
    """DQ(activation), DQ(constant weight, per tensor or per output channel) -> Conv -> Q: one
    QLinearConv (the QDQ Conv selector)."""
    variant = _variant(c, [*FUSED_ANYWAY, "scale-not-constant", *NOT_FUSED, "per-axis-activation"])
    _float32(c)
    x = _take(c, lambda v: v.rank in (3, 4) and v.shape[1] <= 4)
    act, weight, out = _types(c, variant)
    scale = _dynamic_scale(c, x) if variant == "scale-not-constant" else None
    xd = _qdq(c, x, act, scale, expose=variant == "extra-consumer", per_axis=variant == "per-axis-activation")
    channels, n_out = x.shape[1], 1 + c.pick(3)
    kernel = tuple(1 + c.pick(min(2, d)) for d in x.shape[2:])
    w = _weight(c, (n_out, channels, *kernel), weight, c.choice([None, 0]))
    y = node(c, "Conv", [xd, w], n_acc=channels * size_of(kernel), expose=variant == "output-extra-consumer")
    _requantize(c, y, out)
    return variant


@pattern("QDQMatMul", rewritten_to=("QLinearMatMul",), removes=("DequantizeLinear", "QuantizeLinear", "MatMul"))
def qdq_matmul(c: Ctx) -> str:
    """DQ(activation), DQ(constant [K, N] weight, per tensor or per column) -> MatMul -> Q: one
    QLinearMatMul (the QDQ MatMul selector)."""
    variant = _variant(c, [*FUSED_ANYWAY, *NOT_FUSED, "per-axis-activation"])
    _float32(c)
    x = _take(c, lambda v: v.rank == 2)
    act, weight, out = _types(c, variant)
    xd = _qdq(c, x, act, expose=variant == "extra-consumer", per_axis=variant == "per-axis-activation")
    k, n = x.shape[-1], 1 + c.pick(4)
    w = _weight(c, (k, n), weight, c.choice([None, 1]))
    _requantize(c, node(c, "MatMul", [xd, w], n_acc=k, expose=variant == "output-extra-consumer"), out)
    return variant


@pattern("QDQAdd", rewritten_to=("QLinearAdd",), removes=("DequantizeLinear", "QuantizeLinear", "Add"))
def qdq_add(c: Ctx) -> str:
    """DQ(a), DQ(b) -> Add -> Q, each with its own scale and zero point: one com.microsoft
    QLinearAdd (the QDQ binary selector: both inputs and the output of one type)."""
    variant = _variant(c, ["extra-consumer", "mixed-types", *NOT_FUSED])
    _float32(c)
    a = _take(c, lambda v: v.rank >= 1)
    b = c.operand(a)
    to = _types(c, variant)[0]
    other = ("int8" if to == "uint8" else "uint8") if variant == "mixed-types" else to
    ad = _qdq(c, a, to, expose=variant == "extra-consumer")
    bd = _qdq(c, b, other)
    _requantize(c, node(c, "Add", [ad, bd] if c.pick(2) == 0 else [bd, ad], expose=variant == "output-extra-consumer"), to)
    return variant


@pattern("QDQPair", rewritten_to=(), removes=("DequantizeLinear", "QuantizeLinear"))
def qdq_pair(c: Ctx) -> str:
    """Q -> DQ -> Q -> DQ, the middle DQ -> Q pair with the same scale and zero point (an identity
    on the integers): one Q -> DQ pair (double_qdq_pairs_remover). Outside: the second pair's scale
    differs, so the pair requantizes and is no identity."""
    variant = _variant(c, ["other-scale"])
    _float32(c)
    x = _take(c, lambda v: v.rank >= 1)
    to = c.choice(QUANT_TYPES)
    s, zp = _params(c, x.wide, to)
    s2 = s * np.float32(1.5) if variant == "other-scale" else s
    s_v, z_v = c.const(s), c.const(zp)
    d = node(c, "DequantizeLinear", [node(c, "QuantizeLinear", [x, s_v, z_v]), s_v, z_v])
    s2_v = c.const(s2) if variant == "other-scale" else s_v
    node(c, "DequantizeLinear", [node(c, "QuantizeLinear", [d, s2_v, z_v]), s2_v, z_v])
    return variant


def placeable(name: str) -> bool:
    return name in PATTERNS
