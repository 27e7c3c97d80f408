"""The 3-minute campaigns of issue 35 on onnx.reference, the kernel engine and PyTorch: each
finding that was ours (a reference, a fuzz template, a kernel) stays fixed here."""

from __future__ import annotations

from harness.generated.campaign import Campaign, FuzzConfig
from harness.generated.spec import GenConfig
from harness.runner import BackendSpec


def _campaign(backend: str, ops: tuple[str, ...], dtypes: tuple[str, ...], graphs: int, seed: int = 1):
    config = FuzzConfig(backends=[BackendSpec(backend)], gen=GenConfig(opsets=(23,), ops=ops, dtypes=dtypes, max_nodes=3,
                                                                       nan_rate=0.0, edge_rate=0.0, patterns=()),
                        budget_s=120, seed=seed, max_graphs=graphs, isolate=False, shrink_s=10)
    return Campaign(config).run()


def test_rmsnormalization_float64_graphs_allow_the_specs_float32_stage_one():
    """RMSNormalization-23: 'if stash_type is 1, this operator casts all input variables to 32-bit
    float, perform the computation, and finally cast Normalized back to the original type of X'.
    The kernel engine does that for float64 X; the fuzz template judged it at float64's roundoff
    (a finding of the kernel campaign: 4.2e-9 off at rtol 1e-12)."""
    report = _campaign("kernels", ("RMSNormalization",), ("float64",), 40)
    assert report.stats.tested == 40 and report.findings == []


def test_groupnormalization_float64_graphs_allow_the_specs_float32_stage_one():
    """GroupNormalization-21: 'if stash_type is 1, the operator casts all input variables to 32-bit
    float, performs the computation, and finally casts the normalized results back to the
    original type of X'. PyTorch (and ONNX Runtime) do; the fuzz template judged them at float64's
    roundoff (a finding of the PyTorch campaign: 5.2e-8 off at rtol 1e-12)."""
    report = _campaign("pytorch", ("GroupNormalization",), ("float64",), 30)
    assert report.stats.tested == 30 and report.findings == []
