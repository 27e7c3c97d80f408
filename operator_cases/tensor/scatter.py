"""Scatter: the deprecated name of ScatterElements without ``reduction`` (ONNX spec: Scatter-9,
11).

Scatter-11 is the schema that deprecates it: onnx.checker and ONNX Runtime refuse any model
holding it ("Op registered for Scatter is deprecated in domain_version of 11"), so it has no
case (``dtypes_for`` sweeps nothing for a deprecated op-version); its reference stays, written
from its text, for a backend that would still run it.

Scatter-9 writes ``data[indices[i][j]][j] = updates[i][j]`` (axis 0) and states no bounds for the
index values, so its cases keep them in [0, s-1], as Gather-1's do; Scatter-11 ("deprecated.
Please use ScatterElements") states [-s, s-1] and an error outside. Duplicate targets are
spec-silent in both (neither text mentions them); we take the loop order (the last update wins).
"""

from harness.registry import Operator

from .._index_util import declare_scatter_points, draw_elements, element_edges, index_template, scatter_elements, scatter_elements_plan

op = Operator("Scatter", type_param="T")
declare_scatter_points(op, (9, 11), {
    9: "For each entry in `updates`, the target index in `data` is specified by corresponding entry in `indices`",
    11: "For each entry in `updates`, the target index in `data` is obtained by combining the corresponding entry in "
        "`indices` with the index of the entry itself"}, nd=False)


@op.reference(9)
def scatter_9(data, indices, updates, *, axis=0):
    return scatter_elements(data, indices, updates, axis, negative=False)


@op.reference(11)
def scatter_11(data, indices, updates, *, axis=0):
    return scatter_elements(data, indices, updates, axis)


@op.strategy(9, 11)
def draw(d, dtype, opset):
    return draw_elements(d, dtype, opset, ["none"], negative=opset >= 11)


@op.edges(9, 11)
def edges(dtype, opset):
    return element_edges(dtype, opset, ["none"], negative=opset >= 11)


# -- how it enters a generated graph: at opsets 9 and 10 only (Scatter-11 is deprecated) ------
def fuzz_plan(c):
    return scatter_elements_plan(c) if c.since < 11 else None


index_template(op, fuzz_plan)
