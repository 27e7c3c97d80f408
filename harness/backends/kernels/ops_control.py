"""Control flow: If, Loop, Scan, SequenceMap.

Subgraphs are compiled once, at bind time, through ``NodeInfo.compile_subgraph``; the executor
calls these kernels with ``outer=``, the outer-scope values the subgraphs read.
"""

from __future__ import annotations

import numpy as np
import onnx

from ._util import normalize_axis, np_dtype
from .registry import register


def _output_dtype(graph: onnx.GraphProto, k: int):
    tt = graph.output[k].type.tensor_type
    return np_dtype(tt.elem_type) if tt.elem_type else np.dtype(np.float32)


def _empty_scan(graph: onnx.GraphProto, k: int) -> np.ndarray:
    """The stacked output of zero iterations: (0, *element shape) when the body declares a
    static element shape, else (0,)."""
    tt = graph.output[k].type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    shape = (0, *dims) if tt.HasField("shape") and None not in dims else (0,)
    return np.empty(shape, dtype=_output_dtype(graph, k))


def _stack(slices: list, graph: onnx.GraphProto, k: int, axis: int = 0) -> np.ndarray:
    if not slices:
        return _empty_scan(graph, k)
    return np.stack(slices, axis=axis)


@register("If", since=1)
def if_(node):
    then_branch = node.compile_subgraph(node.attrs["then_branch"])
    else_branch = node.compile_subgraph(node.attrs["else_branch"])

    def run(cond, *, outer):
        branch = then_branch if bool(np.asarray(cond).reshape(-1)[0]) else else_branch
        return branch.run_args((), outer)

    return run


def _body(node):
    """The node's ``body`` attribute: the graph and its runner, compiled once."""
    graph = node.attrs["body"]
    return graph, node.compile_subgraph(graph)


@register("Loop", since=1)
def loop(node):
    graph, body = _body(node)
    n_body_out = len(graph.output)

    def run(max_trip=None, cond=None, *initial, outer):
        n_carried = len(initial)
        limit = None if max_trip is None else int(np.asarray(max_trip).reshape(-1)[0])
        keep = True if cond is None else bool(np.asarray(cond).reshape(-1)[0])
        carried = list(initial)
        scans: list[list] = [[] for _ in range(n_body_out - 1 - n_carried)]
        i = 0
        while keep and (limit is None or i < limit):
            outs = body.run_args((np.array(i, dtype=np.int64), np.array(keep), *carried), outer)
            if cond is not None:  # Loop spec: without a cond input the body's "cond = ...; // ignored"
                keep = bool(np.asarray(outs[0]).reshape(-1)[0])
            carried = outs[1 : 1 + n_carried]
            for acc, value in zip(scans, outs[1 + n_carried :]):
                acc.append(value)
            i += 1
        stacked = [_stack(acc, graph, 1 + n_carried + k) for k, acc in enumerate(scans)]
        return (*carried, *stacked)

    return run


def _scan(body, graph, states, scan_inputs, in_axes, in_dirs, out_axes, out_dirs, outer):
    n_states = len(states)
    length = scan_inputs[0].shape[in_axes[0]] if scan_inputs else 0
    n_scan_out = len(graph.output) - n_states
    collected: list[list] = [[] for _ in range(n_scan_out)]
    states = list(states)
    for t in range(length):
        slices = []
        for x, ax, rev in zip(scan_inputs, in_axes, in_dirs):
            # np.take of a rank-1 object array gives a Python str: keep it a 0-d array of the input's dtype
            slices.append(np.array(np.take(x, length - 1 - t if rev else t, axis=ax), dtype=x.dtype))
        outs = body.run_args((*states, *slices), outer)
        states = outs[:n_states]
        for acc, value in zip(collected, outs[n_states:]):
            acc.append(value)
    results = []
    for k, acc in enumerate(collected):
        if out_dirs[k]:
            acc = acc[::-1]
        if not acc:
            results.append(_empty_scan(graph, n_states + k))
            continue
        ax = normalize_axis(out_axes[k], acc[0].ndim + 1)
        results.append(np.stack(acc, axis=ax))
    return states, results


def _scan_body(node):
    """A Scan node's body (see ``_body``), its number of scan inputs and its number of scan
    outputs (the body's outputs past the states)."""
    graph, body = _body(node)
    m = node.attrs["num_scan_inputs"]
    return graph, body, m, len(graph.output) - (len(graph.input) - m)


@register("Scan", since=9)
def scan(node):
    graph, body, m, n_scan_out = _scan_body(node)

    def run(*inputs, outer):
        n_states = len(inputs) - m
        states, scan_inputs = inputs[:n_states], inputs[n_states:]
        in_axes = [normalize_axis(a, x.ndim) for a, x in zip(node.attrs.get("scan_input_axes", [0] * m), scan_inputs)]
        in_dirs = node.attrs.get("scan_input_directions", [0] * m)
        out_axes = node.attrs.get("scan_output_axes", [0] * n_scan_out)
        out_dirs = node.attrs.get("scan_output_directions", [0] * n_scan_out)
        final, stacked = _scan(body, graph, states, scan_inputs, in_axes, in_dirs, out_axes, out_dirs, outer)
        return (*final, *stacked)

    return run


@register("Scan", since=8)
def scan_v8(node):
    """Scan-8: every input has a leading batch axis and the first input is sequence_lens."""
    graph, body, m, n_scan_out = _scan_body(node)
    directions = node.attrs.get("directions", [0] * m)

    def run(sequence_lens, *inputs, outer):
        n_states = len(inputs) - m
        batch = inputs[0].shape[0]
        per_batch_states, per_batch_scans = [], []
        for b in range(batch):
            states = [x[b] for x in inputs[:n_states]]
            scans = [x[b] for x in inputs[n_states:]]
            if sequence_lens is not None:
                n = int(np.asarray(sequence_lens).reshape(-1)[b])
                scans = [x[:n] for x in scans]
            final, stacked = _scan(body, graph, states, scans, [0] * m, directions, [0] * n_scan_out, [0] * n_scan_out, outer)
            per_batch_states.append(final)
            per_batch_scans.append(stacked)
        max_len = inputs[n_states].shape[1]
        states_out = [np.stack([s[k] for s in per_batch_states]) if batch else inputs[k][:0] for k in range(n_states)]
        scans_out = []
        for k in range(n_scan_out):
            # Scan-8: "scan-outputs will have size max_sequence_length, but only first N values
            # will be meaningful": rows past a shorter sequence_lens[batch] are zero-filled
            rows = [s[k] for s in per_batch_scans]
            element = rows[0].shape[1:] if rows else _empty_scan(graph, n_states + k).shape[1:]
            dtype = rows[0].dtype if rows else _output_dtype(graph, n_states + k)
            out = np.zeros((batch, max_len, *element), dtype=dtype)
            if dtype == object:
                out[...] = ""
            for b, r in enumerate(rows):
                out[b, : r.shape[0]] = r
            scans_out.append(out)
        return (*states_out, *scans_out)

    return run


@register("SequenceMap", since=17)
def sequence_map(node):
    graph, body = _body(node)
    n_out = len(graph.output)

    def run(seq, *additional, outer):
        results: list[list] = [[] for _ in range(n_out)]
        for i, item in enumerate(seq):
            args = [item] + [a[i] if isinstance(a, list) else a for a in additional]
            for acc, value in zip(results, body.run_args(args, outer)):
                acc.append(value)
        return tuple(results)

    return run
