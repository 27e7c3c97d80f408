"""Optimization-aware generation (issue 35): each pattern of harness.generated.patterns draws
graphs that ONNX Runtime's optimizer actually rewrites (its optimized model, written by
``SessionOptions.optimized_model_filepath``, holds the fused op and fewer nodes), its outside
variants are left alone, the rewritten graph still agrees with the composed reference, and a
seeded faulty fusion is found."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest

from harness.compare import Comparator
from harness.generated.builder import realize
from harness.generated.campaign import Campaign, FuzzConfig
from harness.generated.graph import Graph, check_graph
from harness.generated.patterns import FUSED_ANYWAY, NOT_FUSED, PATTERNS
from harness.generated.spec import GenConfig, GraphSpec, InputSpec, NodeSpec
from harness.runner import BackendSpec

ort = pytest.importorskip("onnxruntime")

OPSETS = tuple(range(13, 27))
#: the spec's rank byte for each pattern's first input: 0 -> [2, 3], 2 -> [2, 3, 3], 3 -> [2, 3, 3, 3]
RANK = {"MatMulAdd": 0, "MatMulScale": 0, "TransposeMatMul": 2, "ConvBatchNorm": 3, "ConvAddMul": 3, "ConvActivation": 3,
        "Gelu": 0, "BiasGelu": 0, "LayerNorm": 0, "SkipLayerNorm": 2, "TransposeChain": 2, "ReshapeChain": 0,
        "ConstantFolding": 0, "Attention": 2, "QDQConv": 3, "QDQMatMul": 0, "QDQAdd": 0, "QDQPair": 0}
#: outside variants ONNX Runtime leaves (part of) the pattern's ops in place for
OUTSIDE = [("MatMulAdd", "extra-consumer"), ("MatMulAdd", "bias-not-broadcastable"), ("MatMulScale", "scale-not-scalar"),
           ("TransposeMatMul", "extra-consumer"), ("TransposeMatMul", "other-perm"), ("ConvBatchNorm", "extra-consumer"),
           ("ConvAddMul", "extra-consumer"), ("ConvAddMul", "not-per-channel"), ("ConvActivation", "extra-consumer"),
           ("Gelu", "extra-consumer"), ("Gelu", "other-constant"), ("LayerNorm", "other-axis"),
           ("ReshapeChain", "extra-consumer"), ("Attention", "extra-consumer"), ("Attention", "scale-not-scalar")]


def _graph(name: str, variant: str, opset: int = 17, dtype: str = "float32") -> Graph:
    """A graph of the pattern alone, in ``variant``: its first knob picks the variant."""
    for knob in range(32):
        spec = GraphSpec(rank=RANK[name], dims=(2, 3, 3, 3), seed=7, inputs=(InputSpec(), InputSpec()),
                         nodes=(NodeSpec(0, (0, 0, 0), (knob, 0, 0, 0, 0, 0)),))
        g = realize(spec, GenConfig(ops=(), patterns=(name,), opsets=(opset,), dtypes=(dtype,)))
        if g.patterns == [f"{name}:{variant}"]:
            return g
    raise AssertionError(f"no knob draws {name}:{variant}")


def _optimized(model: onnx.ModelProto, tmp_path: Path) -> tuple[onnx.ModelProto, object]:
    path = tmp_path / "optimized.onnx"
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(path)
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return onnx.load(path), session


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_onnxruntime_rewrites_the_pattern(name, tmp_path):
    g = _graph(name, "inside")
    model = check_graph(g)
    optimized, session = _optimized(model, tmp_path)
    before = Counter(n.op_type for n in model.graph.node)
    after = Counter(n.op_type for n in optimized.graph.node)
    assert sum(after.values()) < sum(before.values()), (before, after)
    assert set(PATTERNS[name].rewritten_to) <= set(after), (before, after)
    for op in PATTERNS[name].removes:
        assert after[op] < before[op], (op, before, after)
    # and the rewritten graph still computes what the composed reference says
    outs = session.run(None, g.feeds())
    for e, a, tol in zip(g.expected(), outs, g.tolerances()):
        verdict = Comparator().compare([e], [a], tol)
        assert verdict.outcome == "pass", (verdict.message, g.describe())


@pytest.mark.parametrize("name,variant", OUTSIDE)
def test_onnxruntime_leaves_an_outside_variant(name, variant, tmp_path):
    """Each outside variant breaks one precondition of the rewrite: some op it removes stays."""
    g = _graph(name, variant)
    model = check_graph(g)
    optimized, _ = _optimized(model, tmp_path)
    after = Counter(n.op_type for n in optimized.graph.node)
    assert any(after[op] for op in PATTERNS[name].removes), (variant, after)


def test_every_pattern_has_its_variants_drawn_in_campaigns():
    """A campaign counts the patterns (and variants) its graphs held."""
    config = FuzzConfig(backends=[BackendSpec("tests.seeded_faults:OurReferences")],
                        gen=GenConfig(opsets=OPSETS, ops=("Neg", "Relu", "Add"), patterns=tuple(PATTERNS), max_nodes=12,
                                      dtypes=("float32", "float16")),
                        budget_s=120, seed=3, max_graphs=500, isolate=False, shrink_s=20)
    report = Campaign(config).run()
    assert report.stats.tested == 500
    # the faultless control: the patterns' graphs keep honest tolerances
    assert not report.findings, [f.summary() + "\n" + f.graph.describe() + "\n" + f.message for f in report.findings]
    seen = {p.split(":")[0] for p in report.stats.patterns}
    assert seen == set(PATTERNS), set(PATTERNS) - seen
    assert any(not p.endswith(":inside") for p in report.stats.patterns)


def test_a_faulty_fusion_is_found():
    """A MatMul+Add -> Gemm fusion that ignores the MatMul's other consumers is wrong only on
    the pattern's extra-consumer variant: a short campaign finds it, as the MatMul and the Add."""
    config = FuzzConfig(backends=[BackendSpec("tests.seeded_faults:GemmFusionSharedOutput")],
                        gen=GenConfig(opsets=OPSETS, ops=("Neg", "Relu", "Abs"), patterns=("MatMulAdd",), max_nodes=8,
                                      dtypes=("float32",), nan_rate=0.0, edge_rate=0.0),
                        budget_s=60, seed=1, max_findings=1, isolate=False, shrink_s=30)
    report = Campaign(config).run()
    assert report.findings, f"not found in {report.stats.tested} graphs"
    g = report.findings[0].graph
    assert {"MatMul", "Add"} <= {n.op for n in g.nodes}, g.describe()
    # the MatMul's output has a consumer besides the Add (drawn as the extra-consumer variant,
    # or shrunk to the inside variant with another node reading it: the same graph)
    matmul = next(n for n in g.nodes if n.op == "MatMul")
    assert sum(matmul.outputs[0] in n.inputs for n in g.nodes) >= 2, g.describe()
    # the control: the same campaign on a correct backend finds nothing
    config.backends = [BackendSpec("tests.seeded_faults:Unfaulty")]
    config.max_graphs, config.max_findings = 150, None
    assert not Campaign(config).run().findings


# -- QDQ: DequantizeLinear -> op -> QuantizeLinear groups ----------------------------------------
QDQ_FUSED = {"QDQConv": ("QLinearConv", ["inside", *FUSED_ANYWAY, "scale-not-constant"]),
             "QDQMatMul": ("QLinearMatMul", ["inside", *FUSED_ANYWAY]),
             "QDQAdd": ("QLinearAdd", ["inside", "extra-consumer", "mixed-types"])}
QDQ_OP = {"QDQConv": "Conv", "QDQMatMul": "MatMul", "QDQAdd": "Add"}


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("name,variant", [(n, v) for n, (_, vs) in QDQ_FUSED.items() for v in vs])
def test_onnxruntime_fuses_the_qdq_group(name, variant, opset, tmp_path):
    """Inside variants (and those whose broken precondition ONNX Runtime restores first:
    patterns.FUSED_ANYWAY) become one quantized kernel with no DequantizeLinear feeding it and
    no QuantizeLinear after it, at QuantizeLinear-13 and 21 alike, and it computes what the
    composed reference says within one quantization step."""
    fused_op = QDQ_FUSED[name][0]
    g = _graph(name, variant, opset)
    optimized, session = _optimized(check_graph(g), tmp_path)
    after = Counter(n.op_type for n in optimized.graph.node)
    assert after[fused_op] == 1 and not after[QDQ_OP[name]], after
    producer = {o: n.op_type for n in optimized.graph.node for o in n.output}
    fused = next(n for n in optimized.graph.node if n.op_type == fused_op)
    assert "DequantizeLinear" not in {producer.get(i) for i in fused.input}, after
    readers = {n.op_type for n in optimized.graph.node if fused.output[0] in n.input}
    assert "QuantizeLinear" not in readers, after
    for e, a, tol in zip(g.expected(), session.run(None, g.feeds()), g.tolerances()):
        verdict = Comparator().compare([e], [a], tol)
        assert verdict.outcome == "pass", (verdict.message, g.describe())


@pytest.mark.parametrize("name,variant", [(n, v) for n in sorted(QDQ_OP) for v in NOT_FUSED] + [("QDQMatMul", "per-axis-activation")])
def test_onnxruntime_leaves_a_qdq_group_unfused(name, variant, tmp_path):
    """The op's output read besides the Q, 16-bit types, a MatMul activation quantized per
    column: the float op and its Q/DQ stay."""
    g = _graph(name, variant, opset=21)
    optimized, _ = _optimized(check_graph(g), tmp_path)
    after = Counter(n.op_type for n in optimized.graph.node)
    assert after[QDQ_OP[name]] == 1 and not after[QDQ_FUSED[name][0]], after
    assert after["DequantizeLinear"] == Counter(n.op for n in g.nodes)["DequantizeLinear"], after


def test_onnxruntime_merges_double_qdq_pairs_and_changes_the_result(tmp_path):
    """Q -> DQ -> Q -> DQ: the inside variant (the middle pair an identity) loses a pair and
    keeps its values; with a second scale 1.5 times the first, ONNX Runtime's
    DoubleQDQPairsRemover still merges the pairs into one whose scale covers the intersection of
    their ranges (here the first scale), so the coarser second quantization the model asks for
    is lost: the optimized session disagrees with the composed reference beyond one step, the
    unoptimized one agrees. A deliberate rewrite of ONNX Runtime's that the QDQPair pattern's
    other-scale variant shows in every ONNX Runtime campaign (opt vs no-opt)."""
    for variant, outcome in (("inside", "pass"), ("other-scale", "mismatch")):
        g = _graph("QDQPair", variant, opset=21)
        optimized, session = _optimized(check_graph(g), tmp_path)
        after = Counter(n.op_type for n in optimized.graph.node)
        assert after == Counter({"QuantizeLinear": 1, "DequantizeLinear": 1}), after
        verdict = Comparator().compare(g.expected(), session.run(None, g.feeds()), g.tolerances()[0])
        assert verdict.outcome == outcome, (variant, verdict.message, g.describe())
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(check_graph(g).SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert Comparator().compare(g.expected(), plain.run(None, g.feeds()), g.tolerances()[0]).outcome == "pass"


def test_onnxruntime_fuses_a_per_axis_conv_activation_its_kernel_refuses(tmp_path):
    """An ONNX Runtime bug the QDQConv pattern's per-axis-activation variant finds: the activation
    quantized per channel (QuantizeLinear / DequantizeLinear axis 1, a 1-D scale and zero point:
    valid ONNX) still passes the QDQ Conv selector, which checks types but not that the
    activation's scale and zero point are scalars, so the group becomes a QLinearConv whose kernel
    then fails every run ("QLinearConv : input zero point must be a scalar or 1D tensor of size
    1"). Unoptimized, the same model runs and agrees with the composed reference. Recorded as
    the behaviour of ONNX Runtime 1.32 (not as right): when this fails, the fusion or the kernel
    changed."""
    g = _graph("QDQConv", "per-axis-activation", opset=21)
    model = check_graph(g)
    optimized, session = _optimized(model, tmp_path)
    assert Counter(n.op_type for n in optimized.graph.node)["QLinearConv"] == 1
    with pytest.raises(Exception, match="input zero point must be a scalar"):
        session.run(None, g.feeds())
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert Comparator().compare(g.expected(), plain.run(None, g.feeds()), g.tolerances()[0]).outcome == "pass"


QDQ_PATTERNS = ("QDQConv", "QDQMatMul", "QDQAdd", "QDQPair")


def test_a_faulty_qdq_fusion_is_found():
    """A fused Conv / MatMul that ignores its weight's zero point: a short campaign restricted
    to the QDQ patterns (opsets 19 and 21: onnx.reference, which the fault wraps, has no
    DequantizeLinear-13) finds it, as a group holding the quantized weight's DequantizeLinear;
    the same campaign on a correct backend finds nothing."""
    config = FuzzConfig(backends=[BackendSpec("tests.seeded_faults:QLinearWeightZeroPoint")],
                        gen=GenConfig(opsets=(19, 21), ops=("Neg", "Relu"), patterns=QDQ_PATTERNS, max_nodes=8,
                                      dtypes=("float32",), nan_rate=0.0, edge_rate=0.0),
                        budget_s=60, seed=1, max_findings=1, isolate=False, shrink_s=30)
    report = Campaign(config).run()
    assert report.findings, f"not found in {report.stats.tested} graphs"
    g = report.findings[0].graph
    ops = {n.op for n in g.nodes}
    assert "DequantizeLinear" in ops and ops & {"Conv", "MatMul"}, g.describe()
    config.backends = [BackendSpec("tests.seeded_faults:Unfaulty")]
    config.max_graphs, config.max_findings = 150, None
    control = Campaign(config).run()
    assert not control.findings, [f.summary() + "\n" + f.graph.describe() for f in control.findings]
    assert {p.split(":")[0] for p in control.stats.patterns} == set(QDQ_PATTERNS)


def test_a_quantization_scale_is_finite_on_edge_values():
    """An edge-value graph's +-inf (or NaN) gives no scale of inf (x / inf is NaN, a scale no
    quantized graph means); the scale comes from the finite magnitudes, float32's largest at most."""
    from operator_cases.quantization.quantize_linear import fuzz_params

    class Knobs:
        def choice(self, options):
            return options[0]

        def pick(self, n):
            return 0

    scale, zp = fuzz_params(Knobs(), np.array([-np.inf, 2.0, np.nan]), "int8")
    assert (float(scale), zp.dtype) == (np.float32(2.0 / 20.0), np.int8)
    assert float(fuzz_params(Knobs(), np.array([1e300]), "uint8")[0]) == float(np.finfo(np.float32).max)
