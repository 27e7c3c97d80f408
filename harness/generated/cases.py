"""A generated graph as a case: checked, named, drawn in numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from ..case import Case, DataSet, Tolerance
from .builder import realize
from .graph import Graph, InvalidGraph, check_graph, combined_tolerance
from .spec import GenConfig, GraphSpec, graph_specs


# =============================================================================================
# cases
# =============================================================================================
def case_id(g: Graph) -> str:
    ops = "+".join(sorted({n.op for n in g.nodes})) or "empty"
    if len(ops) > 80:
        ops = ops[:77] + "..."
    return f"generated/{ops}/opset{g.opset}/{g.dtype}/{g.digest()}"


def graph_case(g: Graph, model: onnx.ModelProto | None = None, tolerance: Tolerance | None = None,
               expected: list[np.ndarray] | None = None, extra_tags: dict[str, Any] | None = None) -> Case:
    """A case for graph ``g``: the composed reference's outputs and (unless given) the loosest
    of the per-output tolerances, so re-running the case judges no output more strictly than
    the fuzzer did."""
    model = model or g.model()
    tols = g.tolerances()
    if tolerance is None:
        tolerance = combined_tolerance(tols) if tols else Tolerance(1e-5, 1e-6)
    tags = {
        "suite": "generated", "ops": sorted({n.op for n in g.nodes}), "op_versions": g.op_versions, "opset": g.opset,
        "dtypes": [g.dtype], "dtype": g.dtype, "nodes": len(g.nodes), "pattern": g.pattern, "nan_inputs": g.nan_mode,
        "edge_values": g.edge,
        "output_tolerances": [t.to_dict() for t in tols], "spec": g.spec.to_json(), "graph": g.describe(),
        # drawn at this opset on purpose (the suite sweeps them): run as drawn, never re-stamped
        "keep_opset": True,
    }
    if len(g.nodes) == 1:  # reports then file the case under its op-version
        tags.update(op=g.nodes[0].op, domain="ai.onnx", since_version=g.nodes[0].since)
        points = sorted({p for site in g.silent.values() for p in site.points})
        if points:  # a run judges it by the points' readings and invariants, as the fuzzer did
            tags["spec_silent"] = points
    tags.update(extra_tags or {})
    return Case(id=case_id(g), suite="generated", model_bytes=model.SerializeToString(),
                data=[DataSet(g.feeds(), expected if expected is not None else g.expected())], tolerance=tolerance, tags=tags)


def draw_graphs(n: int, seed: int, config: GenConfig = GenConfig(), min_specs: int = 1, max_specs: int | None = None,
                valid_only: bool = True) -> list[Graph]:
    """``n`` graphs drawn deterministically from ``seed`` (Hypothesis' generation, no shrinking)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    drawn: list[Graph] = []
    strategy = graph_specs(min_specs, max_specs or max(min_specs, 2 * config.max_nodes))

    @settings(max_examples=n * 4 + 20, database=None, deadline=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(spec: GraphSpec) -> None:
        if len(drawn) >= n:
            return
        g = realize(spec, config)
        if not g.nodes:
            return
        if valid_only:
            try:
                check_graph(g)
            except InvalidGraph:
                return
        drawn.append(g)

    collect()
    return drawn
