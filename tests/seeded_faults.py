"""Backends with one known bug each, for testing that the graph fuzzer finds and shrinks it.

Each wraps ``onnx.reference`` and replaces one kernel (through ``ReferenceEvaluator``'s
``new_ops``) or rewrites one pattern, the way real runtimes go wrong:

- ``BroadcastAdd``: Add stretches an operand with a size-1 inner dimension by repeating its
  data cyclically (``np.resize``) instead of broadcasting; right only when the size-1
  dimensions lead. Minimal graph: one Add.
- ``NanDroppingMax``: Max is ``np.fmax``, which returns the other operand where one is NaN,
  instead of propagating the NaN. Minimal graph: one Max with a NaN input. NaN in Max is a
  spec-silent point and fmax is IEEE 754-2019 maximumNumber, one of its readings, so the
  operators suite and the fuzzer (whose graphs carry the spec-silent points they reach) call it
  ``unspecified``, not a finding.
- ``NanOrderMax``: Max keeps the running value only when it is strictly larger
  (``out > x ? out : x``, the operand order of ``std::max(x, out)``), so a NaN anywhere but last
  is forgotten again by the next operand: Max(1, NaN, 0) is 0, neither NaN nor the max of the
  other inputs. It breaks the invariant of the spec-silent point, a ``mismatch``.
- ``SliceEnd``: Slice clamps an end beyond the dimension to ``dim - 1`` instead of ``dim``
  (for positive steps), so "to the end" drops the last element. Minimal graph: one Slice. (It
  hands our Slice reference the clamped ends, so it is built on ``OurReferences``.)
- ``FusedAddRelu``: an Add whose only consumer is a Relu is fused with it, and the fused
  kernel forgets the Add's second operand (the "bias"). Minimal graph: Add then Relu.

``GemmFusionSharedOutput`` (at the end) fuses MatMul+Add into Gemm where the MatMul's output has
other consumers too, which then read the biased value: the faulty fusion that the optimizer
patterns of harness/generated/patterns.py find (their MatMulAdd extra-consumer variant).

``SwappedSub`` (Sub computes b - a) is wrong in every Sub and nowhere else: a 50-node chain
with one Sub in the middle is what ``tests/test_localize.py`` localizes.

``OPERATOR_FAULTS`` (at the end) holds one fault per edge class of issue 17 for the operators
suite: each is right everywhere but on its class (NaN, +-inf, -0, subnormal, overflow, ties, empty,
broadcast, negative index, negative exponent, non-default attribute, integer dtype), and
``Unfaulty`` is their control.

``NoFloat16Neg`` lacks a kernel (Neg on float16), for what a campaign does with a missing
kernel. ``OurReferences`` has no fault: it is the control (a correct implementation the fuzzer must
never flag). ``FAULTS`` maps each fault to its backend, the ops of its minimal graph and their
count.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import onnx
from onnx.reference.op_run import OpRun

from harness.backends.reference import ReferenceBackend, ReferenceSession


def _kernel(name: str, run) -> type:
    return type(name, (OpRun,), {"op_domain": "", "_run": run})


def replaces(op: str, name: str):
    """Makes a faulty kernel function into the backend whose one fault it is: onnx.reference
    with its ``op`` kernel replaced by the function. The backend class (``name`` its backend name)
    takes the function's name and docstring, so ``tests.seeded_faults:<function>`` names it."""

    def backend(run) -> type:
        attrs = {"__doc__": run.__doc__, "__module__": run.__module__, "name": name, "kernels": (_kernel(op, run),)}
        return type(run.__name__, (_Kernels,), attrs)

    return backend


class _Kernels(ReferenceBackend):
    repro_runtime = None  # not onnx.reference as it is: a bundle replays it through the harness
    kernels: tuple[type, ...] = ()

    def prepare(self, model: onnx.ModelProto):
        from onnx.reference import ReferenceEvaluator

        return ReferenceSession(ReferenceEvaluator(self.rewrite(model), new_ops=list(self.kernels)))

    def rewrite(self, model: onnx.ModelProto) -> onnx.ModelProto:
        return model


@replaces("Sub", "swapped-sub")
def SwappedSub(self, a, b):
    """Sub computes b - a: wrong in every Sub node and only there (for localize: one Sub in the
    middle of a long graph)."""
    return np.subtract(b, a).astype(a.dtype),  # the bug: operands in the wrong order


@replaces("Add", "broadcast-add")
def BroadcastAdd(self, a, b):
    """Add stretches an operand by repeating its data instead of broadcasting."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    if a.ndim == b.ndim and a.shape != b.shape:
        # the bug: operands are stretched by repeating their data, not by broadcasting
        return (np.resize(a, shape) + np.resize(b, shape)).astype(a.dtype),
    return np.add(a, b).astype(a.dtype),


@replaces("Max", "nan-dropping-max")
def NanDroppingMax(self, *xs):
    """Max is ``np.fmax``: a NaN operand gives the other one (IEEE 754-2019 maximumNumber)."""
    out = xs[0]
    for x in xs[1:]:
        out = np.fmax(out, x)
    return np.asarray(out).astype(xs[0].dtype),


@replaces("Max", "nan-order-max")
def NanOrderMax(self, *xs):
    """Max keeps the running value only when it is strictly larger: a NaN but last is forgotten."""
    out = xs[0]
    for x in xs[1:]:
        out = np.where(out > x, out, x)  # the bug: with a NaN on either side the later operand wins
    return np.asarray(out).astype(xs[0].dtype),


class FusedAddRelu(_Kernels):
    name = "fused-add-relu"

    def rewrite(self, model: onnx.ModelProto) -> onnx.ModelProto:
        graph = model.graph
        outputs = {o.name for o in graph.output}
        consumers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                consumers.setdefault(name, []).append(node)
        producer = {o: node for node in graph.node for o in node.output}
        fused = []
        for relu in graph.node:
            add = producer.get(relu.input[0]) if relu.op_type == "Relu" else None
            if add is None or add.op_type != "Add" or add.output[0] in outputs or len(consumers[add.output[0]]) != 1:
                continue
            fused.append((add, relu))
        if not fused:
            return model
        out = onnx.ModelProto()
        out.CopyFrom(model)
        drop = {add.name for add, _ in fused}
        for node in out.graph.node:
            for add, relu in fused:
                if node.name == relu.name:
                    # the bug: the fused kernel reads only the Add's first operand
                    node.input[0] = add.input[0]
        keep = [n for n in out.graph.node if n.name not in drop]
        del out.graph.node[:]
        out.graph.node.extend(keep)
        return out


class SlowFusedAddRelu(FusedAddRelu):
    """``FusedAddRelu`` on a runtime whose every run takes 20 ms: shrinking one graph (hundreds
    of runs) fills a budget of seconds, so a campaign that shrank each disagreement when it
    found it would test few graphs."""

    name = "slow-fused-add-relu"

    def prepare(self, model: onnx.ModelProto):
        session = super().prepare(model)
        run = session.run

        def slow(feeds):
            time.sleep(0.02)
            return run(feeds)

        session.run = slow
        return session


@replaces("Div", "floor-div")
def FloorDiv(self, a, b):
    """Integer Div rounds toward -inf (Python's ``//``); Div-7 on: "For integer inputs, the
    result is computed using truncating division (rounding toward zero)". Only integer graphs."""
    if a.dtype.kind in "iu":
        return (a // b).astype(a.dtype),  # the bug: integers rounded toward -inf, not truncated
    return (a / b).astype(a.dtype),


@replaces("Mod", "c-mod")
def CMod(self, a, b, fmod=None):
    """Integer Mod with fmod=0 takes the dividend's sign (C ``%``) instead of the divisor's
    (Mod: "the sign of the remainder is the same as that of the Divisor"). Only integer graphs."""
    if a.dtype.kind in "iu" or fmod:
        return np.fmod(a, b).astype(a.dtype),  # the bug: fmod=0 gets C's sign rule (the dividend's)
    return np.mod(a, b).astype(a.dtype),


@replaces("Xor", "or-xor")
def OrXor(self, a, b):
    """Bool Xor is Or: wrong where both operands are true."""
    return np.logical_or(a, b),  # the bug: a Xor that forgets the both-true case


@replaces("ArgMax", "last-argmax")
def LastArgMax(self, data, axis=None, keepdims=None, select_last_index=None):
    """ArgMax returns the last maximum without select_last_index: wrong only on ties."""
    axis = 0 if axis is None else int(axis)
    axis = axis % data.ndim
    # the bug: the last maximum always wins (a reverse scan), whatever select_last_index says
    idx = data.shape[axis] - 1 - np.argmax(np.flip(data, axis), axis=axis)
    idx = np.expand_dims(idx, axis) if keepdims is None or keepdims else idx
    return idx.astype(np.int64),


@replaces("Add", "empty-add")
def EmptyAdd(self, a, b):
    """Add with an empty operand returns the other operand (a fast path for "nothing to add"):
    wrong (in shape) only on empty inputs, which broadcast to an empty result."""
    if a.size == 0 or b.size == 0:
        return (b if a.size == 0 else a).copy(),  # the bug: "nothing to add" returns the other operand
    return np.add(a, b).astype(a.dtype),


class NoFloat16Neg(_Kernels):
    """A missing kernel rather than a wrong one: Neg on float16 is refused at load."""

    name = "no-float16-neg"

    def prepare(self, model: onnx.ModelProto):
        elem = model.graph.input[0].type.tensor_type.elem_type if model.graph.input else 0
        if elem == onnx.TensorProto.FLOAT16 and any(n.op_type == "Neg" for n in model.graph.node):
            raise NotImplementedError("no Neg kernel for float16")
        return super().prepare(model)


FAULTS = {
    "broadcast-add": ("tests.seeded_faults:BroadcastAdd", {"Add"}, 1),
    "nan-order-max": ("tests.seeded_faults:NanOrderMax", {"Max"}, 1),
    "slice-end": ("tests.seeded_faults:SliceEnd", {"Slice"}, 1),
    "fused-add-relu": ("tests.seeded_faults:FusedAddRelu", {"Add", "Relu"}, 2),
}

#: faults only an edge class reaches (issue 17): integer graphs, bool graphs, ties, empty
#: inputs, asymmetric pads. fault: (backend, ops of its minimal graph, their count)
EDGE_FAULTS = {
    "floor-div": ("tests.seeded_faults:FloorDiv", {"Div"}, 1),
    "c-mod": ("tests.seeded_faults:CMod", {"Mod"}, 1),
    "or-xor": ("tests.seeded_faults:OrXor", {"Xor"}, 1),
    "last-argmax": ("tests.seeded_faults:LastArgMax", {"ArgMax"}, 1),
    "empty-add": ("tests.seeded_faults:EmptyAdd", {"Add"}, 1),
    "symmetric-pads": ("tests.seeded_faults:SymmetricPads", {"MaxPool"}, 1),
}


class _NodeByNode:
    """A session that computes a graph node by node: each step is handed the values so far
    (initializers, feeds, the outputs of the steps before it) and returns its node's outputs."""

    def __init__(self, model: onnx.ModelProto, steps):
        self.inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
        self.outputs = [o.name for o in model.graph.output]
        self.steps = steps

    def run(self, feeds):
        env = {**self.inits, **feeds}
        with np.errstate(all="ignore"):
            for step in self.steps:
                env.update(step(env))
        return [env[o] for o in self.outputs]


class OurReferences(ReferenceBackend):
    """No fault: every node is computed by our own per-op-version reference with inputs and
    outputs in the graph's types (so intermediates are rounded as a correct float32 or float16
    implementation rounds them). The fuzzer composes the same references in float64, so a run
    against this backend checks the tolerances and the generator, end to end: it must find
    nothing."""
    repro_runtime = None  # not onnx.reference as it is: a bundle replays it through the harness

    name = "our-references"

    def prepare(self, model: onnx.ModelProto):
        from harness import schema
        from harness.registry import load_all
        from harness.values import Typed, reference_value

        registry = load_all()
        opset = schema.opset_of(model, "")
        steps = []
        for node in model.graph.node:
            since = schema.schema_at(node.op_type, opset).since_version
            attrs = {}
            for a in node.attribute:
                value = onnx.helper.get_attribute_value(a)
                attrs[a.name] = value.decode() if isinstance(value, bytes) else value
            scoped = any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)
            ref = self.wrap(node.op_type, registry[("", node.op_type, since)].reference)

            def step(env, ref=ref, ins=list(node.input), outs=list(node.output), attrs=attrs, scoped=scoped):
                # a node with a subgraph sees the values in scope (the convention of
                # operator_cases._control_util.run_graph); a sequence flows on as the
                # value a reference is given (SeqList), a tensor in the graph's type
                extra = {"_outer": dict(env), "_opset": opset} if scoped else {}
                ys = ref(*[env[i] if i else None for i in ins], **attrs, **extra)
                ys = [ys] if isinstance(ys, Typed) else (list(ys) if isinstance(ys, (list, tuple)) else [ys])
                return {name: reference_value(y) if isinstance(y, Typed) else np.asarray(y) for name, y in zip(outs, ys)}

            steps.append(step)
        return _NodeByNode(model, steps)


    def wrap(self, op: str, ref):
        """The reference a node of ``op`` is computed by (a fault replaces one)."""
        return ref


def wrapping(*ops: str, name: str):
    """Makes a fault into the backend that is ``OurReferences`` but for the nodes of ``ops``: the
    fault is handed the reference of such a node and returns what computes it instead. The
    backend class (``name`` its backend name) takes the fault's name and docstring."""

    def backend(fault) -> type:
        def wrap(self, op, ref):
            return fault(ref) if op in ops else ref

        attrs = {"__doc__": fault.__doc__, "__module__": fault.__module__, "name": name, "wrap": wrap}
        return type(fault.__name__, (OurReferences,), attrs)

    return backend


@wrapping("Slice", name="slice-end")
def SliceEnd(ref):
    """Slice clamps an end beyond the dimension to ``dim - 1`` instead of ``dim`` (for positive
    steps): "to the end" drops the last element. Our reference, handed the clamped ends."""

    def faulty(data, starts, ends, axes=None, steps=None):
        ends = np.array(ends).reshape(-1)  # a copy, in the ends' own dtype
        axes_or_all = range(len(ends)) if axes is None else np.asarray(axes).reshape(-1)
        steps_or_ones = np.ones(len(ends), np.int64) if steps is None else np.asarray(steps).reshape(-1)
        for i, (a, k) in enumerate(zip(axes_or_all, steps_or_ones)):
            dim = data.shape[int(a) % data.ndim]
            if k > 0 and ends[i] >= dim:
                ends[i] = dim - 1  # the bug: "to the end" stops one short
        # by keyword: Slice-1 takes starts, ends and axes as (keyword) attributes and has no steps
        return ref(data, starts=starts, ends=ends, axes=axes, **({} if steps is None else {"steps": steps}))

    return faulty


@wrapping("Loop", name="loop-one-short")
def LoopOneShort(ref):
    """Loop runs one iteration fewer than its trip count M (an off-by-one in the loop bound)."""
    return lambda M=None, *rest, **kw: ref(None if M is None else np.maximum(np.asarray(M) - 1, 0), *rest, **kw)


@wrapping("If", name="if-else-always")
def IfElseAlways(ref):
    """If always runs else_branch (a condition read as false)."""
    return lambda cond, **kw: ref(np.zeros_like(np.asarray(cond, dtype=bool)), **kw)


@wrapping("LSTM", "GRU", "RNN", name="rnn-no-bias")
def RnnNoBias(ref):
    """LSTM, GRU and RNN drop the recurrence bias B (Wb and Rb)."""
    return lambda X, W, R, B=None, *rest, **kw: ref(X, W, R, None, *rest, **kw)


@wrapping("ConcatFromSequence", name="concat-first")
def ConcatFromSequenceFirst(ref):
    """ConcatFromSequence gives the first item repeated (it reads item 0 for every one)."""
    return lambda seq, **kw: ref([seq[0]] * len(seq), **kw)


class SymmetricPads(OurReferences):
    """MaxPool, AveragePool and Conv read only the begin pads and apply them at both ends (a
    kernel that takes one pad per axis): wrong only on asymmetric pads. Built on our references
    (``OurReferences``), not on onnx.reference, whose MaxPool fails on 1-D inputs of its own."""

    name = "symmetric-pads"

    def prepare(self, model: onnx.ModelProto):
        return super().prepare(self.rewrite(model))

    def rewrite(self, model: onnx.ModelProto) -> onnx.ModelProto:
        out = onnx.ModelProto()
        out.CopyFrom(model)
        for node in out.graph.node:
            if node.op_type not in ("MaxPool", "AveragePool", "Conv"):
                continue
            for a in node.attribute:
                if a.name == "pads":
                    n = len(a.ints) // 2
                    begin = list(a.ints[:n])
                    del a.ints[:]
                    a.ints.extend(begin + begin)  # the bug: the end pads are the begin pads
        return out


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


#: the ops ``PlainNumpy`` computes, each written here from its ONNX definition in plain numpy,
#: in the inputs' dtype (a float16 graph rounds every intermediate to float16)
NUMPY_OPS = {
    "Abs": np.abs,
    "Add": np.add,
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "Exp": np.exp,
    "Identity": lambda x: x,
    # a FLOAT attribute: its default is float32(0.01); the product in the graph's dtype
    "LeakyRelu": lambda x, alpha=np.float32(0.01): np.where(x < 0, (x * alpha).astype(x.dtype), x),
    "MatMul": np.matmul,
    "Max": lambda *xs: functools.reduce(np.maximum, xs),
    "Min": lambda *xs: functools.reduce(np.minimum, xs),
    "Mul": np.multiply,
    "Neg": np.negative,
    "Relu": lambda x: np.where(x < 0, np.zeros_like(x), x),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Softmax": _softmax,
    "Sub": np.subtract,
    "Sum": lambda *xs: functools.reduce(np.add, xs),
    "Tanh": np.tanh,
    "Transpose": lambda x, perm=None: np.transpose(x, perm),
}


class PlainNumpy(ReferenceBackend):
    """No fault, and independent of the code under test: the ops of ``NUMPY_OPS`` computed by
    plain numpy in the graph's dtype. The fuzzer's oracle (our references composed in float64)
    must agree with it within the drawn tolerances on every graph of those ops."""
    repro_runtime = None  # not onnx.reference as it is: a bundle replays it through the harness

    name = "plain-numpy"

    def prepare(self, model: onnx.ModelProto):
        steps = []
        for node in model.graph.node:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

            def step(env, fn=NUMPY_OPS[node.op_type], ins=list(node.input), out=node.output[0], attrs=attrs):
                return {out: np.asarray(fn(*[env[i] for i in ins], **attrs))}

            steps.append(step)
        return _NodeByNode(model, steps)


# -- faults only an edge class reaches, for the operators suite (issue 17) ----------------------
# Each replaces one onnx.reference kernel with what a real runtime's fast path, fused kernel or
# assumed default computes; each is right everywhere but on its edge class. ``Unfaulty`` is the
# same wrapping with no kernel replaced: the control.
class Unfaulty(_Kernels):
    """The control: onnx.reference through the same wrapping, no kernel replaced."""

    name = "unfaulty"


@replaces("Relu", "where-relu")
def WhereRelu(self, x):
    """Relu as ``x > 0 ? x : 0``: NaN (which compares false) becomes 0."""
    return np.where(x > 0, x, np.zeros_like(x)),  # the bug: a compare-and-select Relu sends NaN to 0


@replaces("Sign", "quotient-sign")
def QuotientSign(self, x):
    """Sign as x / |x| with 0 kept apart: NaN at +-inf."""
    with np.errstate(all="ignore"):
        q = (x / np.abs(x)).astype(x.dtype) if x.dtype.kind == "f" or "float" in x.dtype.name else np.sign(x)
    # the bug: sign as x / |x| (0 kept apart) is inf / inf = NaN at +-inf
    return np.where(x == 0, np.zeros_like(x), q).astype(x.dtype),


@replaces("Reciprocal", "compared-sign-reciprocal")
def ComparedSignReciprocal(self, x):
    """Reciprocal as (x < 0 ? -1 : 1) / |x|: 1 / -0 gives +inf, not -inf."""
    with np.errstate(all="ignore"):
        sign = np.where(x < 0, -1, 1).astype(x.dtype)  # the bug: -0 < 0 is false, so 1 / -0 is +inf
        return (sign / np.abs(x)).astype(x.dtype),


@replaces("Log", "daz-log")
def DazLog(self, x):
    """Log with denormals-are-zero (the DAZ/FTZ CPU mode): a subnormal input gives -inf."""
    import ml_dtypes

    tiny = float(ml_dtypes.finfo(x.dtype).smallest_normal)
    flushed = np.where(np.abs(x.astype(np.float64)) < tiny, x * 0, x).astype(x.dtype)  # the bug: denormals are zero
    with np.errstate(all="ignore"):
        return np.log(flushed.astype(np.float64)).astype(x.dtype),


@replaces("MatMul", "saturating-matmul")
def SaturatingMatMul(self, a, b):
    """MatMul accumulates wide and narrows with saturation: a result beyond the type's range is
    its largest finite value instead of inf."""
    if a.dtype.kind in "iu":
        return np.matmul(a, b),
    out = np.matmul(a.astype(np.float64), b.astype(np.float64))
    import ml_dtypes

    top = float(ml_dtypes.finfo(a.dtype).max)
    # the bug: the wide accumulator is narrowed by a saturating conversion, so a sum that
    # overflows the type gives its largest finite value, not inf (infinite inputs stay inf)
    return np.where(np.isfinite(out), np.clip(out, -top, top), out).astype(a.dtype),


@replaces("Gather", "clamped-gather")
def ClampedGather(self, data, indices, axis=None):
    """Gather clamps indices to [0, dim) before counting negative ones from the back: a
    negative index reads element 0."""
    axis = 0 if axis is None else int(axis)
    indices = np.maximum(indices, 0)  # the bug: indices clamped into [0, dim) as a bounds guard, before wrapping
    return np.take(data, indices, axis=axis),


@replaces("Pow", "unsigned-exponent-pow")
def UnsignedExponentPow(self, x, y):
    """Pow with an integral exponent by repeated multiplication that forgets the reciprocal of a
    negative exponent: 2 ** -1 gives 2."""
    if x.dtype.kind == "f" or "float" in x.dtype.name:
        yw = y.astype(np.float64)
        integral = np.isfinite(yw) & (yw == np.round(yw))
        with np.errstate(all="ignore"):
            # the bug: integral exponents by repeated multiplication, which takes |y| and forgets 1 / x**|y|
            fast = np.power(x.astype(np.float64), np.abs(np.where(integral, yw, 0)))
            out = np.where(integral, fast, np.power(x.astype(np.float64), yw))
        return out.astype(x.dtype),
    return np.power(x, y).astype(x.dtype),


@replaces("LeakyRelu", "default-alpha-leaky-relu")
def DefaultAlphaLeakyRelu(self, x, alpha=None):
    """LeakyRelu with alpha fixed at its default 0.01 (the attribute never read)."""
    return np.where(x < 0, x * np.array(0.01, x.dtype), x).astype(x.dtype),  # the bug: alpha assumed 0.01


#: edge class (as ``harness.coverage.EDGE_CLASSES`` names it) -> (faulty backend, op-version
#: whose default operators cases find it); tests/test_seeded_edges.py runs the table
OPERATOR_FAULTS = {
    "nan": ("tests.seeded_faults:WhereRelu", "Relu-14"),
    "inf": ("tests.seeded_faults:QuotientSign", "Sign-13"),
    "neg_zero": ("tests.seeded_faults:ComparedSignReciprocal", "Reciprocal-13"),
    "subnormal": ("tests.seeded_faults:DazLog", "Log-13"),
    "overflow": ("tests.seeded_faults:SaturatingMatMul", "MatMul-13"),
    "ties": ("tests.seeded_faults:LastArgMax", "ArgMax-13"),
    "empty": ("tests.seeded_faults:EmptyAdd", "Add-14"),
    "broadcast": ("tests.seeded_faults:BroadcastAdd", "Add-14"),
    "index": ("tests.seeded_faults:ClampedGather", "Gather-13"),
    "exponent": ("tests.seeded_faults:UnsignedExponentPow", "Pow-15"),
    "non_default_attrs": ("tests.seeded_faults:DefaultAlphaLeakyRelu", "LeakyRelu-16"),
    "integer": ("tests.seeded_faults:FloorDiv", "Div-14"),
}


@wrapping("Scan", name="scan-forward-only")
def ScanForwardOnly(ref):
    """Scan ignores scan_input_directions and scan_output_directions (every input scanned and
    every output stacked forward)."""
    drop = ("scan_input_directions", "scan_output_directions")
    return lambda *ins, **kw: ref(*ins, **{k: v for k, v in kw.items() if k not in drop})


@wrapping("SequenceInsert", name="sequence-insert-at-back")
def SequenceInsertAtBack(ref):
    """SequenceInsert ignores its position: the tensor always goes to the back."""
    return lambda seq, tensor, position=None, **kw: ref(seq, tensor, **kw)


@wrapping("SequenceErase", name="sequence-erase-last")
def SequenceEraseLast(ref):
    """SequenceErase ignores its position: the last tensor is always erased."""
    return lambda seq, position=None, **kw: ref(seq, **kw)


@wrapping("SequenceLength", name="sequence-length-of-first")
def SequenceLengthOfFirst(ref):
    """SequenceLength gives the length of the first tensor's first axis, not the number of
    tensors (a sequence read as the tensor it holds)."""
    return lambda seq, **kw: np.array(len(seq[0]) if len(seq) and np.ndim(seq[0]) else len(seq), dtype=np.int64)


@wrapping("SequenceMap", name="sequence-map-first")
def SequenceMapFirst(ref):
    """SequenceMap runs its body on the first sample at every position."""
    return lambda seq, *extra, **kw: ref([seq[0]] * len(seq), *extra, **kw)


class GemmFusionSharedOutput(_Kernels):
    """A faulty MatMul+Add -> Gemm fusion (ONNX Runtime's matmul_add_fusion without its "only
    consumer, not a graph output" precondition): the MatMul's other consumers, and the graph
    output it gives, read the fused Gemm's output, bias included. Right wherever the MatMul feeds
    the Add alone (the pattern's inside variants); wrong on its extra-consumer variant."""

    name = "gemm-fusion-shared-output"

    def rewrite(self, model: onnx.ModelProto) -> onnx.ModelProto:
        out = onnx.shape_inference.infer_shapes(model)
        graph = out.graph
        inits = {t.name: t for t in graph.initializer}
        shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in [*graph.input, *graph.value_info]}
        shapes.update({name: list(t.dims) for name, t in inits.items()})
        producer = {o: node for node in graph.node for o in node.output}
        fused: dict[str, str] = {}  # MatMul output -> Gemm output
        drop = set()
        for add in graph.node:
            if add.op_type != "Add":
                continue
            for i, name in enumerate(add.input):
                mm = producer.get(name)
                bias = add.input[1 - i]
                if mm is None or mm.op_type != "MatMul" or name in fused or bias not in inits:
                    continue
                a, b = mm.input
                if len(shapes.get(a, [])) != 2 or len(shapes.get(b, [])) != 2 or len(inits[bias].dims) > 2:
                    continue
                gemm = onnx.helper.make_node("Gemm", [a, b, bias], list(add.output), name=f"{mm.name}_fused")
                add.CopyFrom(gemm)
                fused[name] = add.output[0]
                drop.add(mm.name)
                break
        if not fused:
            return model
        keep = [n for n in graph.node if n.name not in drop]
        for node in keep:  # the bug: every other reader of the MatMul's output reads the Gemm's
            for k, name in enumerate(node.input):
                if name in fused:
                    node.input[k] = fused[name]
        extra = [onnx.helper.make_node("Identity", [fused[o.name]], [o.name]) for o in graph.output if o.name in fused]
        del graph.node[:]
        graph.node.extend(keep + extra)
        return out


class QLinearWeightZeroPoint(_Kernels):
    """A faulty QDQ fusion (the kind ONNX Runtime's QDQ Conv and MatMul selectors make): a
    DequantizeLinear of a constant weight feeding a Conv or MatMul whose only consumer is a
    QuantizeLinear is taken into the fused kernel, which ignores the weight's zero point (computes
    with w_q instead of w_q - w_zero_point). Right wherever that zero point is 0 or no group
    matches; wrong on the QDQConv and QDQMatMul patterns with their nonzero weight zero points."""

    name = "qlinear-weight-zero-point"

    def rewrite(self, model: onnx.ModelProto) -> onnx.ModelProto:
        out = onnx.ModelProto()
        out.CopyFrom(model)
        graph = out.graph
        inits = {t.name: t for t in graph.initializer}
        producer = {o: node for node in graph.node for o in node.output}
        readers: dict[str, list] = {}
        for node in graph.node:
            for name in node.input:
                readers.setdefault(name, []).append(node)
        outputs = {o.name for o in graph.output}
        for node in graph.node:
            if node.op_type not in ("Conv", "MatMul") or len(node.input) < 2:
                continue
            dq = producer.get(node.input[1])
            after = readers.get(node.output[0], [])
            if (dq is None or dq.op_type != "DequantizeLinear" or dq.input[0] not in inits or len(dq.input) < 3
                    or node.output[0] in outputs or [n.op_type for n in after] != ["QuantizeLinear"]):
                continue
            zp = onnx.numpy_helper.to_array(inits[dq.input[2]])
            zero = onnx.numpy_helper.from_array(np.zeros_like(zp), f"{dq.input[2]}_ignored")
            graph.initializer.append(zero)
            dq.input[2] = zero.name  # the bug: the fused kernel reads the weight without its zero point
        return out
