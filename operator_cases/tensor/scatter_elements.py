"""ScatterElements: a copy of ``data`` with ``updates`` written at the positions ``indices``
name along ``axis`` (ONNX spec: ScatterElements-11, 13, 16, 18).

The target of ``updates[i][j]`` is ``[indices[i][j]][j]`` for axis 0 and ``[i][indices[i][j]]``
for axis 1 (likewise in any rank): its own position with the axis coordinate replaced.
Indices lie in [-s, s-1] ("It is an error if any of the index values are out of bounds");
ScatterElements-13 adds bfloat16; -16 adds ``reduction`` "none" | "add" | "mul" ("output[...]
+= updates[i][j]"); -18 adds "max" and "min". A reduction folds every update aimed at an element
into it, in the spec's loop order, wide then rounded once (see _index_util).

Spec-silent (declared below): duplicate targets with reduction "none" (every version: -11 and
-13 do not even mention them); NaN meeting a max/min reduction (-18). Reductions are drawn for
numeric types only: "+" of strings or bools has no meaning the text gives.
"""

from harness.registry import Operator

from .._index_util import (declare_nan_reduction_points, declare_scatter_points, draw_elements, element_edges,
                          index_template, reductions, scatter_elements, scatter_elements_plan)

op = Operator("ScatterElements", type_param="T")
VERSIONS = (11, 13, 16, 18)
declare_scatter_points(op, VERSIONS, {
    11: "For each entry in `updates`, the target index in `data` is obtained by combining the corresponding entry in "
        "`indices` with the index of the entry itself",
    16: "In cases where `reduction` is set to \"none\", indices should not have duplicate entries"}, nd=False)
declare_nan_reduction_points(op, (18,), "where the `f` is `+`, `*`, `max` or `min` as specified.")


@op.reference(11, 13)
def scatter_elements_11(data, indices, updates, *, axis=0):
    return scatter_elements(data, indices, updates, axis)


@op.reference(16, 18)
def scatter_elements_16(data, indices, updates, *, axis=0, reduction="none"):
    return scatter_elements(data, indices, updates, axis, reduction)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return draw_elements(d, dtype, opset, reductions(opset))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    return element_edges(dtype, opset, reductions(opset))


# -- how it enters a generated graph -------------------------------------------------------
index_template(op, scatter_elements_plan)
