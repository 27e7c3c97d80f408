"""Edge values in generated graphs (issue 35): inputs carrying +-inf, -0.0, subnormals and values
that overflow downstream, propagated by the composed reference, and spec-silent points carried
by the graphs so that a graph reaching one is judged by the point's readings and invariants."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from harness.generated.builder import realize
from harness.generated.campaign import Campaign, FuzzConfig, FuzzReport
from harness.generated.cases import draw_graphs, graph_case
from harness.generated.spec import EDGE_CLASSES, GenConfig, GraphSpec, InputSpec, NodeSpec
from harness.runner import BackendSpec
from tests.seeded_faults import NUMPY_OPS, OPERATOR_FAULTS

OPSETS = tuple(range(13, 27))
FLOATS = ("float32", "float16", "float64")
#: ops a faulty kernel's graphs are drawn from besides its own (the same for every class)
ARITHMETIC = ("Add", "Mul", "Neg", "Abs", "Relu")
#: edge class -> (seed of its short campaign, the op of its minimal graph); the faulty backends
#: are the operators suite's edge-class faults (tests/seeded_faults.py: OPERATOR_FAULTS)
EDGE_RUNS = {"inf": (1, "Sign"), "neg_zero": (1, "Reciprocal"), "subnormal": (1, "Log"), "overflow": (2, "MatMul")}


def _campaign(backend: str, ops: tuple[str, ...] | None, seed: int, budget: float, graphs: int | None = None,
              findings: int | None = 1, **gen) -> FuzzReport:
    gen.setdefault("nan_rate", 0.0)
    gen.setdefault("edge_rate", 0.5)
    config = FuzzConfig(backends=[BackendSpec(backend)], gen=GenConfig(opsets=OPSETS, ops=ops, max_nodes=6, dtypes=FLOATS, **gen),
                        budget_s=budget, seed=seed, max_graphs=graphs, max_findings=findings, isolate=False, shrink_s=20)
    return Campaign(config).run()


def _is_class(x: np.ndarray, cls: str) -> np.ndarray:
    info = ml_dtypes.finfo(x.dtype)
    w = x.astype(np.float64)
    if cls == "inf":
        return np.isinf(w)
    if cls == "neg_zero":
        return (w == 0) & np.signbit(w)
    if cls == "subnormal":
        return (w != 0) & (np.abs(w) < float(info.smallest_normal))
    return np.abs(w) >= float(info.max) ** 0.55


# -- drawing -----------------------------------------------------------------------------------
def test_edge_graphs_carry_their_class_at_the_stated_rate():
    specs = [GraphSpec(rank=1, dims=(4, 4, 4, 4), seed=s * 4099, nan=n, inputs=(InputSpec(),), nodes=(NodeSpec(0, (0, 0, 0), (0,) * 6),))
             for s in range(40) for n in range(100)]
    config = GenConfig(opsets=(17,), ops=("Neg",), dtypes=("float32",), nan_rate=0.1, edge_rate=0.25)
    graphs = [realize(s, config) for s in specs]
    # the spec's nan byte: 0..64 plain, 65..89 edge values, 90..99 NaN
    assert sum(bool(g.edge) for g in graphs) == 40 * 25
    assert sum(g.nan_mode for g in graphs) == 40 * 10
    assert {g.edge for g in graphs} == {"", *EDGE_CLASSES}
    carried = 0
    for g in graphs:
        x = g.feeds()["x0"]
        if g.edge:
            carried += bool(_is_class(x, g.edge).any())
        else:  # a plain graph's inputs are ordinary numbers (NaN only in NaN graphs)
            assert not any(_is_class(x, c).any() for c in EDGE_CLASSES), g.describe()
    assert 0.65 * 40 * 25 <= carried <= 0.85 * 40 * 25  # an edge graph's input carries them three times in four
    # no edge values when the rate is 0
    assert not any(realize(s, GenConfig(opsets=(17,), ops=("Neg",), edge_rate=0.0)).edge for s in specs[:200])


def test_edge_values_propagate_through_the_composed_reference():
    """Overflow: a product of two large inputs is +-inf in the graph's dtype and flows on as inf;
    inf, -0.0 and subnormals reach the outputs of deeper nodes."""
    seen = {c: 0 for c in EDGE_CLASSES}
    overflowed = 0
    for cls in EDGE_CLASSES:
        graphs = draw_graphs(40, seed=3, config=GenConfig(opsets=OPSETS, ops=("Mul", "Add", "Neg", "Abs", "Reciprocal", "MatMul"),
                                                           dtypes=("float32",), max_nodes=6, nan_rate=0.0, edge_rate=1.0,
                                                           edge_classes=(cls,)))
        for g in graphs:
            assert g.edge == cls
            for v, out in zip(g.outputs, g.expected()):
                seen[cls] += bool(v.depth >= 2 and _is_class(out, cls).any())
                if cls == "overflow" and np.isinf(out).any():
                    overflowed += 1
    assert all(seen.values()), seen
    assert overflowed >= 5, overflowed


def test_an_independent_numpy_implementation_finds_nothing_on_edge_graphs():
    """The composed reference and its elementwise tolerances against plain numpy computing in the
    graph's dtype (independent of our references): every edge class, no finding."""
    ops = tuple(sorted(NUMPY_OPS))
    report = _campaign("tests.seeded_faults:PlainNumpy", ops, seed=5, budget=120, graphs=300, findings=None, edge_rate=1.0)
    assert report.stats.tested == 300
    assert not report.findings, [f.summary() + "\n" + f.graph.describe() + "\n" + f.message for f in report.findings]


# -- the seeded faults of the edge classes -----------------------------------------------------
@pytest.mark.parametrize("cls", sorted(EDGE_RUNS))
def test_edge_class_fault_is_found_by_a_short_campaign(cls):
    """Each faulty kernel is right everywhere but on its class: a campaign of a few seconds over
    every edge class finds it as a one-node graph."""
    seed, op = EDGE_RUNS[cls]
    backend, _ = OPERATOR_FAULTS[cls]
    report = _campaign(backend, (op, *ARITHMETIC), seed=seed, budget=60)
    assert report.findings, f"{cls} not found in {report.stats.tested} graphs"
    g = report.findings[0].graph
    assert [n.op for n in g.nodes] == [op], g.describe()
    assert g.edge == cls, g.describe()


@pytest.mark.parametrize("cls", sorted(EDGE_RUNS))
def test_the_faultless_control_finds_nothing(cls):
    """The same wrapping of onnx.reference with no kernel replaced, on the same campaign."""
    seed, op = EDGE_RUNS[cls]
    report = _campaign("tests.seeded_faults:Unfaulty", (op, *ARITHMETIC), seed=seed, budget=60, graphs=250, findings=None)
    assert report.stats.tested == 250
    assert not report.findings, [f.summary() + "\n" + f.graph.describe() + "\n" + f.message for f in report.findings]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ONNX_HARNESS_LONG_FUZZ"), reason="the 2-minute campaigns: set ONNX_HARNESS_LONG_FUZZ=1")
@pytest.mark.parametrize("cls", sorted(EDGE_RUNS))
def test_edge_class_fault_is_found_by_a_two_minute_campaign_over_every_op(cls):
    """Issue 35's measure: a 2-minute campaign drawing every op (but those onnx.reference, which
    the faulty backends wrap, gets wrong on its own: each would cost the campaign its shrinking),
    NaN graphs at the default rate and edge graphs at 0.4, finds each fault."""
    from harness.generated.graph import templated_ops
    from tests.test_generated import KNOWN_REFERENCE_DEFECTS

    _, op = EDGE_RUNS[cls]
    backend, _ = OPERATOR_FAULTS[cls]
    defective = {o for o, _ in KNOWN_REFERENCE_DEFECTS} | {"Scan", "GatherElements"}
    ops = tuple(o for o in templated_ops() if o not in defective)
    report = _campaign(backend, ops, seed=1, budget=120, findings=None, nan_rate=GenConfig.nan_rate, edge_rate=0.4)
    assert any(f.pattern == op and f.graph.edge == cls for f in report.findings), [f.summary() for f in report.findings]


# -- spec-silent points carried by the graphs --------------------------------------------------
MAX_OPS = ("Max", "Add", "Neg", "Abs")


def test_a_graph_reaching_a_spec_silent_point_is_judged_by_its_readings():
    """NaN in Max is spec-silent (Max.nan): fmax (IEEE 754-2019 maximumNumber, the NaN left out)
    is one of its readings, so a backend computing it is ``unspecified``, not a finding."""
    report = _campaign("tests.seeded_faults:NanDroppingMax", MAX_OPS, seed=1, budget=60, graphs=200, findings=None,
                       nan_rate=0.5, edge_rate=0.0)
    assert report.stats.tested == 200
    assert not report.findings, [f.summary() + "\n" + f.message for f in report.findings]
    assert report.stats.unspecified["Max.nan"] > 0


def test_a_graph_breaking_a_spec_silent_invariant_is_a_finding():
    """Max keeping the running value only when strictly larger forgets a NaN that is not last:
    Max(1, NaN, 0) = 0 is neither NaN nor the max of the numbers (Max.nan's readings and
    invariant)."""
    report = _campaign("tests.seeded_faults:NanOrderMax", MAX_OPS, seed=1, budget=60, nan_rate=0.5, edge_rate=0.0)
    assert report.findings, f"not found in {report.stats.tested} graphs"
    f = report.findings[0]
    assert f.pattern == "Max", f.graph.describe()
    # Max(c, NaN) = c: neither our NaN nor the reading that leaves the NaN out (max(c, x))
    assert "spec-silent point Max.nan: output 0" in f.message and "matched none of its readings" in f.message, f.message
    # the finding's case carries the point, so a later run judges it the same way
    assert graph_case(f.graph).tags["spec_silent"] == ["Max.nan"]
