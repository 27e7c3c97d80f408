"""Compile-time fusion of per-channel affine chains (the plan's steps, after constant folding).

An inference-mode BatchNormalization, and a Mul or an Add by a per-channel constant, are each
``y = x * scale + shift`` with one (scale, shift) pair per channel (axis 1). A chain of them
whose every intermediate has no other reader (no other step, no subgraph, no graph output) is
one affine map, folded at prepare time in float64:

- after a Conv with constant weights (and bias), into the Conv's weights and bias:
  ``W'[m] = W[m] * scale[m]``, ``B'[m] = B[m] * scale[m] + shift[m]``; the chain's steps go
  (ResNet's, ShuffleNet's, Inception v2's Conv -> BatchNormalization [-> Mul -> Add]);
- elsewhere, when the chain has two or more steps, into one step computing ``x * scale +
  shift`` (DenseNet's BatchNormalization -> Mul -> Add before its ReLUs).

A Relu that is the only reader of a Conv's output, or of a fused chain's, of float32 or float64
values, runs in place inside that step (the same bits as the separate step).

A Relu read only by a MaxPool runs after it, in place on the pooled values (the same bits).

A channel shuffle (Reshape -> Transpose of axes 1 and 2 -> Reshape) read only by a depthwise
Conv goes into the Conv's step, which reads the transposed view as it pads its input (the same
bits; ShuffleNet's units).

The result differs from the unfused steps by float rounding only (the map is computed once in
float64 and rounded to the value's type; the unfused steps round after each step). Nothing is
fused where an assumption fails: a BatchNormalization in training mode, one with more than
one output, with ``spatial=0`` or before opset 7 (``is_test``); a legacy-broadcast Mul or Add
(attributes); a parameter that is not a constant of the plan (a graph input, even one with a
default value); a constant that does not broadcast per channel; a type other than float32 or
float64 anywhere in the chain; a folded value that is not finite.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .nn_util import IdentityCache
from .ops_elementwise import relu_in_place
from .ops_tensor import _target_shape

#: the value types chains are fused for: float rounding of the folded map stays within what
#: the unfused steps round anyway
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _attrs(node, opset: int) -> dict[str, Any]:
    """The node's attributes over its schema's defaults (at ``opset``)."""
    import onnx

    schema = onnx.defs.get_schema(node.op_type, opset, "")  # only ai.onnx nodes are fused
    attrs = {name: onnx.helper.get_attribute_value(spec.default_value)
             for name, spec in schema.attributes.items() if spec.default_value.name}
    attrs.update((a.name, onnx.helper.get_attribute_value(a)) for a in node.attribute)
    return attrs


class _Fuser:
    def __init__(self, steps, nodes, template, consts, output_slots, opset: int, type_of: Callable[[int], tuple]):
        self.steps, self.nodes = steps, nodes
        self.template, self.consts = template, consts
        self.opset = opset
        #: the statically known (shape, dtype) of a slot's value (None for what is unknown)
        self.type_of = type_of
        self.readers: dict[int, int] = {}
        for _, ins, _, _ in steps:
            for i in ins:
                self.readers[i] = self.readers.get(i, 0) + 1
        for s in output_slots:
            self.readers[s] = self.readers.get(s, 0) + 2  # a graph output is never fused away
        self.producer = {o: k for k, (_, _, outs, _) in enumerate(steps) for o in outs}

    def const(self, slot: int):
        return self.template[slot] if slot and slot in self.consts else None

    def channel_vector(self, value, channels: int, rank: int, dtype) -> np.ndarray | None:
        """``value`` (a constant) as one float64 entry per channel when broadcasting it against
        a (N, channels, ...) value of ``rank`` dimensions leaves that shape as it is and gives
        every element of a channel the same entry; else None."""
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim > rank:
            return None
        shape = (1,) * (rank - value.ndim) + value.shape
        if any(d != 1 for k, d in enumerate(shape) if k != 1) or shape[1] not in (1, channels):
            return None
        return np.broadcast_to(value.reshape(-1).astype(np.float64), (channels,))

    def affine(self, k: int, x: int, channels: int | None, rank: int | None, dtype) -> tuple | None:
        """(scale, shift) per channel, float64, when step ``k`` is a per-channel affine map of
        slot ``x`` (its only non-constant input) in type ``dtype``; else None."""
        node = self.nodes[k]
        if node is None or node.domain not in ("", "ai.onnx"):
            return None
        _, ins, outs, _ = self.steps[k]
        if len(outs) != 1 or any(node.output[1:]):
            return None
        if node.op_type == "BatchNormalization":
            return self._batch_norm(node, ins, x, channels, dtype)
        if node.op_type in ("Mul", "Add") and not node.attribute and len(ins) == 2 and channels and rank:
            if ins.count(x) != 1:
                return None
            vec = self.channel_vector(self.const(ins[1] if ins[0] == x else ins[0]), channels, rank, dtype)
            if vec is None:
                return None
            if node.op_type == "Mul":
                return vec, np.zeros(channels)
            return np.ones(channels), vec
        return None

    def _batch_norm(self, node, ins, x, channels, dtype):
        attrs = _attrs(node, self.opset)
        if self.opset < 7 or attrs.get("training_mode", 0) != 0 or attrs.get("spatial", 1) != 1:
            return None
        if len(ins) != 5 or ins[0] != x:
            return None
        params = [self.const(s) for s in ins[1:]]
        if any(not isinstance(p, np.ndarray) or p.ndim != 1 or p.dtype not in _FLOATS for p in params):
            return None
        scale, bias, mean, var = (p.astype(np.float64) for p in params)
        if channels is not None and scale.shape != (channels,):
            return None
        if len({p.shape for p in params}) != 1:
            return None
        eps = float(np.float32(attrs["epsilon"]))
        with np.errstate(all="ignore"):
            inv = scale / np.sqrt(var + eps)
        return inv, bias - mean * inv

    def chain(self, start_out: int, channels, rank, dtype) -> tuple[list[int], np.ndarray, np.ndarray] | None:
        """The affine steps reading ``start_out`` one after the other, each the only reader of
        the value before it, folded: (their step indices, scale, shift)."""
        ks: list[int] = []
        scale = shift = None
        value = start_out
        while self.readers.get(value) == 1:
            k = self.next_reader(value)
            if k is None:
                break
            found = self.affine(k, value, channels, rank, dtype)
            if found is None:
                break
            s, t = found
            channels = channels or s.shape[0]
            if scale is None:
                scale, shift = s, t
            else:
                scale, shift = scale * s, shift * s + t
            ks.append(k)
            value = self.steps[k][2][0]
        return (ks, scale, shift) if ks else None

    def next_reader(self, slot: int) -> int | None:
        for k in range(self.producer.get(slot, -1) + 1, len(self.steps)):
            if slot in self.steps[k][1]:
                return k
        return None

    def relu_after(self, k: int, steps: list[tuple], gone: set[int]) -> None:
        """Step ``k`` (a Conv or a fused chain, of a float32 or float64 value, which it computes
        into an array of its own) takes the Relu that is the only reader of its output: the
        Relu then runs in place on that array inside the same step."""
        fn, ins, outs, label = steps[k]
        if len(outs) != 1 or self.readers.get(outs[0]) != 1:
            return
        r = self.next_reader(outs[0])
        node = self.nodes[r] if r is not None else None
        if node is None or r in gone or node.op_type != "Relu" or node.domain not in ("", "ai.onnx"):
            return
        if len(steps[r][2]) != 1 or steps[r][1] != (outs[0],):
            return
        steps[k] = (then_relu(fn), ins, steps[r][2], f"{label}+{steps[r][3]}")
        gone.add(r)

    def relu_after_pool(self, k: int, steps: list[tuple], gone: set[int]) -> None:
        """A MaxPool (without Indices) whose input is a Relu's output that nothing else reads,
        of float32 or float64 values, pools the Relu's input and runs the Relu in place on its
        own output: max(relu(a), relu(b)) = relu(max(a, b)), with the same bits, on a fraction
        of the values (the first layers of ResNet, Inception, SqueezeNet, ShuffleNet: Conv ->
        Relu -> 3x3/2 MaxPool)."""
        fn, ins, outs, label = steps[k]
        if len(ins) != 1 or len(outs) != 1 or any(self.nodes[k].output[1:]):
            return
        r = self.only_reader(ins[0], "Relu", steps, gone)
        if r is None or len(steps[r][1]) != 1 or self.type_of(steps[r][1][0])[1] not in _FLOATS:
            return
        steps[k] = (then_relu(fn), steps[r][1], outs, f"{label}+{steps[r][3]}")
        gone.add(r)

    def new_const(self, value: np.ndarray) -> int:
        self.template.append(value)
        slot = len(self.template) - 1
        self.consts.add(slot)
        return slot

    def run(self) -> list[tuple]:
        steps = list(self.steps)
        gone: set[int] = set()
        for k, node in enumerate(self.nodes):
            if node is not None and node.op_type == "MaxPool" and node.domain in ("", "ai.onnx"):
                self.relu_after_pool(k, steps, gone)
        for k, node in enumerate(self.nodes):
            if node is None or k in gone or node.domain not in ("", "ai.onnx"):
                continue
            fn, ins, outs, label = steps[k]
            if node.op_type == "Conv" and len(outs) == 1:
                w = self.const(ins[1]) if len(ins) > 1 else None
                if not isinstance(w, np.ndarray) or w.dtype not in _FLOATS or w.ndim < 3:
                    continue
                b = self.const(ins[2]) if len(ins) > 2 and ins[2] else None
                if len(ins) > 2 and ins[2] and (not isinstance(b, np.ndarray) or b.shape != (w.shape[0],) or b.dtype != w.dtype):
                    continue
                found = self.chain(outs[0], w.shape[0], w.ndim, w.dtype)
                if found is not None:
                    ks, scale, shift = found
                    with np.errstate(all="ignore"):
                        w2 = (w.astype(np.float64) * scale.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
                        b2 = ((b.astype(np.float64) if b is not None else 0.0) * scale + shift).astype(w.dtype)
                    if np.isfinite(w2).all() and np.isfinite(b2).all():
                        steps[k] = (fn, (ins[0], self.new_const(w2), self.new_const(b2)), steps[ks[-1]][2],
                                    "+".join([label, *(steps[j][3] for j in ks)]))
                        gone.update(ks)
                self.relu_after(k, steps, gone)
            elif node.op_type == "BatchNormalization" and len(outs) == 1:
                shape, dtype = self.type_of(ins[0])
                if dtype not in _FLOATS or shape is None:
                    continue
                first = self.affine(k, ins[0], None, len(shape), dtype)
                rest = self.chain(outs[0], None if first is None else first[0].shape[0], len(shape), dtype)
                if first is None or rest is None:
                    continue
                ks, scale, shift = rest
                s, t = (first[0] * scale).astype(dtype), (first[1] * scale + shift).astype(dtype)
                if not (np.isfinite(s).all() and np.isfinite(t).all()):
                    continue
                steps[k] = (channel_affine(), (ins[0], self.new_const(s), self.new_const(t)), steps[ks[-1]][2],
                            "+".join([label, *(steps[j][3] for j in ks)]))
                gone.update(ks)
                self.relu_after(k, steps, gone)
        for k, node in enumerate(self.nodes):
            if node is not None and k not in gone and node.op_type == "Conv" and node.domain in ("", "ai.onnx"):
                self.shuffle_into(k, steps, gone)
        return [s for k, s in enumerate(steps) if k not in gone]

    def only_reader(self, slot: int, op_type: str, steps: list[tuple], gone: set[int]) -> int | None:
        """The step producing ``slot`` when it is a plain ``op_type`` node (of ai.onnx, with one
        output) that nothing else reads (no other step, no subgraph, no graph output)."""
        k = self.producer.get(slot)
        node = self.nodes[k] if k is not None else None
        if node is None or k in gone or node.op_type != op_type or node.domain not in ("", "ai.onnx"):
            return None
        if self.readers.get(slot) != 1 or len(steps[k][2]) != 1:
            return None
        return k

    def shuffle_into(self, k: int, steps: list[tuple], gone: set[int]) -> None:
        """A depthwise Conv (group = its filter count, one channel a filter, constant filters)
        reading a channel shuffle, Reshape (N, C, ...) -> (N, G, C / G, ...), Transpose swapping
        axes 1 and 2, Reshape back to (N, C, ...), each the only reader of the one before
        (ShuffleNet's units), reads the transposed view itself: the shuffle's copy goes, and
        the Conv's copy into its padded blocks takes the channels in the shuffled order. The
        three steps go; at run time a shape other than that (the reshapes' targets are
        tensors) takes the steps' own path, a copy and the plain Conv."""
        fn, ins, outs, label = steps[k]
        w = self.const(ins[1]) if len(ins) > 1 else None
        if not isinstance(w, np.ndarray) or w.ndim < 3 or w.shape[1] != 1:
            return
        if _attrs(self.nodes[k], self.opset).get("group", 1) != w.shape[0]:
            return
        r2 = self.only_reader(ins[0], "Reshape", steps, gone)
        if r2 is None or len(steps[r2][1]) != 2:
            return
        t = self.only_reader(steps[r2][1][0], "Transpose", steps, gone)
        if t is None:
            return
        r1 = self.only_reader(steps[t][1][0], "Reshape", steps, gone)
        if r1 is None or len(steps[r1][1]) != 2:
            return
        perm = _attrs(self.nodes[t], self.opset).get("perm")
        if perm is None or list(perm) != [0, 2, 1, *range(3, len(perm))] or len(perm) < 4:
            return
        if any(_attrs(self.nodes[r], self.opset).get("allowzero", 0) for r in (r1, r2)):
            return
        split_fn, transpose_fn, merge_fn = steps[r1][0], steps[t][0], steps[r2][0]

        def run(x, split_shape, merge_shape, *conv_args):
            (v,) = transpose_fn(split_fn(x, split_shape)[0])
            if _merges_axes_1_2(v, merge_shape):
                return fn(v, *conv_args, split=True)
            return fn(merge_fn(v, merge_shape)[0], *conv_args)

        steps[k] = (run, (steps[r1][1][0], steps[r1][1][1], steps[r2][1][1], *ins[1:]), outs,
                    "+".join([steps[r1][3], steps[t][3], steps[r2][3], label]))
        gone.update((r1, t, r2))


def then_relu(fn: Callable) -> Callable:
    """``fn`` (a kernel returning one array of its own), then ReLU in place on its result."""

    def run(*args, **kw):
        (y,) = fn(*args, **kw)
        return (relu_in_place(y),)

    if hasattr(fn, "inplace"):
        run.inplace = lambda *args: (relu_in_place(fn.inplace(*args)[0]),)
    return run


def _merges_axes_1_2(v: np.ndarray, shape) -> bool:
    """Whether Reshape (without allowzero) of ``v`` (rank 4 or more) to the tensor ``shape``
    merges v's axes 1 and 2 and keeps the others."""
    want = [v.shape[0], v.shape[1] * v.shape[2], *v.shape[3:]]
    if v.ndim < 4 or np.size(shape) != len(want):
        return False
    dims = _target_shape(v, shape, False)
    if dims.count(-1) > 1:
        return False
    if -1 in dims:
        rest = int(np.prod([d for d in dims if d != -1]))
        if rest == 0 or v.size % rest:
            return False
        dims[dims.index(-1)] = v.size // rest
    return dims == want


def channel_affine() -> Callable:
    """The kernel of a fused chain not after a Conv: ``x * scale + shift``, scale and shift one
    entry per channel (axis 1) of x's type, in place when x is ours to overwrite."""
    shaped = IdentityCache()

    def run(x, scale, shift, out=None):
        shape = (1, -1) + (1,) * (x.ndim - 2)
        s, t = shaped.get(lambda a, b: (a.reshape(shape), b.reshape(shape)), scale, shift, key=x.ndim)
        y = np.multiply(x, s, out=out)
        np.add(y, t, out=y)
        return (y,)

    run.inplace = lambda x, scale, shift: run(x, scale, shift, out=x)
    return run


def fuse_affine_chains(steps, nodes, template, consts, output_slots, opset: int, type_of) -> list[tuple]:
    """``steps`` ((fn, ins, outs, label), as the compiler builds them) with per-channel affine
    chains folded (see the module's text); ``nodes`` holds each step's NodeProto (None for a
    step that is not one plain node); ``type_of(slot)`` is the (shape, dtype) static shape
    inference found for a slot's value (None for what it did not). New constants are appended
    to ``template`` and ``consts``."""
    return _Fuser(steps, nodes, template, consts, output_slots, opset, type_of).run()
