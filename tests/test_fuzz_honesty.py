"""Issue 16, the fuzzer and --model: a harness bug ends a campaign loudly, the fuzzer does not
import the CLI, every fuzz bundle replays to its finding with ``run --model``, and a backend is
never credited with a pass for agreeing with itself as the oracle."""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.backends.reference import ReferenceBackend, ReferenceSession
from harness.cli import main
from harness.generated import judge
from harness.generated.campaign import (
    Campaign,
    FuzzConfig,
    _disagreement,
    only_disagreements,
)
from harness.generated.cases import draw_graphs
from harness.generated.graph import check_graph, templates
from harness.generated.spec import GenConfig
from harness.runner import BackendSpec
from tests.seeded_faults import FAULTS, _kernel, replaces

ROOT = Path(__file__).resolve().parents[1]
HERE = "tests.test_fuzz_honesty"


# -- backends with faults that only an honest replay shows ------------------------------------
@replaces("Add", "slightly-off-add")
def SlightlyOffAdd(self, a, b):
    """Add 4e-5 relative too large: beyond the fuzzer's float32 tolerance for one Add, within the
    loose whole-model tolerance a --model case gets when it ignores the bundle's own."""
    return (np.add(a, b) * np.float32(1 + 4e-5)).astype(a.dtype),


@replaces("Add", "wrong-add")
def WrongAdd(self, a, b):
    """Add subtracts."""
    return np.subtract(a, b).astype(a.dtype),


def _wrong_neg(self, x):
    return np.abs(x),


class NewOpsetNeg(ReferenceBackend):
    """Neg is wrong in models stamped at opset 20 or later (a kernel registered wrongly for a new
    opset); a model re-stamped down to Neg's own opset (13) runs the right kernel."""

    name = "new-opset-neg"
    repro_runtime = None  # its bug is in this class, not in onnx.reference: a bundle replays it through the harness

    def prepare(self, model: onnx.ModelProto):
        from onnx.reference import ReferenceEvaluator

        opset = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
        if opset >= 20:
            return ReferenceSession(ReferenceEvaluator(model, new_ops=[_kernel("Neg", _wrong_neg)]))
        return super().prepare(model)


class BrokenOracle(ReferenceBackend):
    name = "broken-oracle"

    def prepare(self, model: onnx.ModelProto):
        raise RuntimeError("this oracle cannot run anything")


# -- 1. a harness bug ends the campaign --------------------------------------------------------
_BROKEN_TEMPLATE = """
import dataclasses, sys
from harness.generated.graph import templates
from harness.cli import main

def broken(ctx):
    raise TypeError("deliberate bug in the Neg template")

if __name__ == "__main__":
    templates()["Neg"] = dataclasses.replace(templates()["Neg"], plan=broken)
    sys.exit(main(sys.argv[1:]))
"""


def test_a_harness_bug_ends_the_fuzz_command_with_its_traceback(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text(_BROKEN_TEMPLATE)
    store = tmp_path / "results.sqlite"
    # backends in a child process (the default): the template runs in the controller all the same
    proc = subprocess.run([sys.executable, str(script), "fuzz", "--backend", "reference", "--budget", "20s",
                           "--ops", "Neg,Abs", "--max-nodes", "3", "--seed", "1", "--opset", "17", "--dtypes", "float32",
                           "--shrink-time", "5", "--store", str(store)],
                          check=False, cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=300)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" in proc.stderr and "TypeError: deliberate bug in the Neg template" in proc.stderr
    assert "unique bugs" not in proc.stdout  # no report that reads like a clean campaign
    assert sqlite3.connect(store).execute("SELECT status FROM runs").fetchone()[0] == "failed"


class NoNeg(ReferenceBackend):
    """Has no kernel for Neg: every graph holding it is unsupported."""

    name = "no-neg"
    repro_runtime = None

    def prepare(self, model: onnx.ModelProto):
        from harness.backends.base import Unsupported

        if any(n.op_type == "Neg" for n in model.graph.node):
            raise Unsupported("no kernel for Neg")
        return super().prepare(model)


def test_a_campaign_with_nothing_left_to_draw_ends_saying_so(capsys):
    # the one op's missing kernel is excluded after its finding; then no graph can be drawn
    config = FuzzConfig(backends=[BackendSpec(f"{HERE}:NoNeg")], gen=GenConfig(opsets=(17,), dtypes=("float32",), ops=("Neg",), max_nodes=2),
                        budget_s=60, seed=1, max_graphs=50, isolate=False, shrink_s=2)
    campaign = Campaign(config)
    campaign.say = print
    report = campaign.run()
    assert [f.outcome for f in report.findings] == ["unsupported"]
    assert report.excluded and "nothing left to draw" in capsys.readouterr().out


def test_a_harness_bug_in_the_tester_propagates_out_of_a_campaign(monkeypatch):
    def broken(self, *args, **kwargs):
        raise TypeError("deliberate bug in the tester")

    monkeypatch.setattr(judge.Tester, "test", broken)
    config = FuzzConfig(backends=[BackendSpec("reference")], gen=GenConfig(opsets=(17,), ops=("Neg", "Abs"), max_nodes=3),
                          budget_s=30, seed=1, max_graphs=20, isolate=False, shrink_s=2)
    with pytest.raises(TypeError, match="deliberate bug in the tester"):
        Campaign(config).run()


def test_a_template_bound_that_fails_propagates_instead_of_loosening_the_tolerance(monkeypatch):
    import dataclasses

    def broken(ref, ins, attrs):
        raise TypeError("deliberate bug in the CumSum bound")

    monkeypatch.setitem(templates(), "CumSum", dataclasses.replace(templates()["CumSum"], bound=broken))
    config = GenConfig(opsets=(17,), ops=("CumSum",), max_nodes=2, dtypes=("float32",))
    with pytest.raises(TypeError, match="deliberate bug in the CumSum bound"):
        draw_graphs(3, seed=1, config=config)


def test_only_disagreements_are_taken_as_the_end_of_a_session():
    from hypothesis.errors import FlakyFailure

    a, b = _disagreement(("x", "wrong-values")), _disagreement(("y", "nan"))
    assert only_disagreements(a("one"))
    assert only_disagreements(ExceptionGroup("two bugs", [a("one"), b("two")]))
    assert only_disagreements(FlakyFailure("stopped failing while shrinking", [a("one")]))
    assert not only_disagreements(TypeError("harness bug"))
    assert not only_disagreements(ExceptionGroup("mixed", [a("one"), TypeError("harness bug")]))
    assert not only_disagreements(FlakyFailure("flaky harness bug", [TypeError("harness bug")]))


# -- 2. no import cycle ------------------------------------------------------------------------
def test_fuzz_does_not_import_the_cli():
    imported = set()
    for module in (ROOT / "harness" / "generated").glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported.add(("." * node.level) + (node.module or ""))
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    assert not imported & {"..cli", "harness.cli"}, imported
    # and the CLI's error is the one fuzz raises
    from harness import cli, cliutil

    assert cli.CliError is cliutil.CliError


# -- 3. a fuzz bundle replays to its finding ----------------------------------------------------
def _results(store: Path) -> dict[tuple[str, str], tuple[str, str]]:
    rows = sqlite3.connect(store).execute("SELECT case_id, backend, outcome, message FROM results").fetchall()
    return {(c, b): (o, m) for c, b, o, m in rows}


def test_every_bundle_of_a_campaign_replays_to_its_finding(tmp_path):
    backends = [f"{HERE}:SlightlyOffAdd", f"{HERE}:NewOpsetNeg", FAULTS["slice-end"][0]]
    config = FuzzConfig(backends=[BackendSpec(b) for b in backends],
                          gen=GenConfig(opsets=(21,), dtypes=("float32",), ops=("Add", "Slice", "Neg"), max_nodes=4),
                          budget_s=90, seed=3, max_graphs=400, max_findings=3, isolate=False, shrink_s=20,
                          store=tmp_path / "fuzz.sqlite")
    report = Campaign(config).run()
    assert sorted(f.group for f in report.findings) == sorted(backends), [f.summary() for f in report.findings]
    bundles = [Path(f.bundle) for f in report.findings]
    argv = ["run", "--store", str(tmp_path / "replay.sqlite"), "-j", "1", "--backend", "reference"]
    for b in backends:
        argv += ["--backend", b]
    for bundle in bundles:
        argv += ["--model", str(bundle)]
    main(argv)
    results = _results(tmp_path / "replay.sqlite")
    for finding, bundle in zip(report.findings, bundles):
        meta = json.loads((bundle / "meta.json").read_text())
        case_id = f"user/{bundle.name}"
        outcome, message = results[(case_id, finding.backend)]
        assert (outcome, meta["outcome"]) == (finding.outcome, finding.outcome), (finding.summary(), message)
        # a correct implementation passes the same bundle, judged the same way
        assert results[(case_id, "reference")][0] == "pass", results[(case_id, "reference")]


# -- 4. the oracle compared with itself, the oracle failing -------------------------------------
def _add_model(path: Path) -> Path:
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_the_oracle_backend_is_not_credited_with_a_pass_against_itself(tmp_path, capsys):
    model = _add_model(tmp_path / "add.onnx")
    store = tmp_path / "r.sqlite"
    main(["run", "--model", str(model), "--backend", "reference", "--backend", f"{HERE}:WrongAdd", "--store", str(store),
          "-j", "1"])
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "self-check" in line]
    assert len(warning) == 1 and "--oracle reference" in warning[0] and "--oracle OTHER" in warning[0], err
    results = _results(store)
    outcome, message = results[("user/add", "reference")]
    assert outcome == "skip" and message.startswith("self-check: expected values computed by this backend"), message
    # the other backend is still judged against the oracle
    assert results[("user/add", f"{HERE}:WrongAdd")][0] == "mismatch"
    # its repro bundle stores the oracle's outputs: replayed on the oracle, still a self-check
    (bundle,) = sqlite3.connect(store).execute("SELECT bundle FROM results WHERE outcome = 'mismatch'").fetchone()
    main(["run", "--model", bundle, "--backend", "reference", "--store", str(tmp_path / "replay.sqlite"), "-j", "1"])
    ((_, outcome),) = [(k, v[0]) for k, v in _results(tmp_path / "replay.sqlite").items()]
    assert outcome == "skip"


def test_an_oracle_that_fails_is_named_in_every_result(tmp_path):
    model = _add_model(tmp_path / "add.onnx")
    store = tmp_path / "r.sqlite"
    main(["run", "--model", str(model), "--oracle", f"{HERE}:BrokenOracle", "--backend", "reference", "--backend",
          f"{HERE}:BrokenOracle", "--store", str(store), "-j", "1"])
    results = _results(store)
    assert len(results) == 2
    for (case_id, backend), (outcome, message) in results.items():
        assert outcome == "error", (backend, outcome, message)
        assert message.startswith(f"oracle error: oracle {HERE}:BrokenOracle failed: RuntimeError: this oracle cannot run anything")
        assert "--oracle" in message


def test_a_backend_that_is_not_the_oracle_gets_no_warning(tmp_path, capsys):
    model = _add_model(tmp_path / "add.onnx")
    main(["run", "--model", str(model), "--backend", f"{HERE}:SlightlyOffAdd", "--store", str(tmp_path / "r.sqlite"), "-j", "1"])
    assert "self-check" not in capsys.readouterr().err



def test_a_failure_at_the_last_node_of_a_chain_is_localized():
    """Localizing compares the candidate graph's outputs with the graph's by name (comparing
    the values' arrays raised, and the campaign swallowed that and lost the failure)."""
    config = FuzzConfig(backends=[BackendSpec(f"{HERE}:WrongAdd")],
                          gen=GenConfig(opsets=(17,), dtypes=("float32",), ops=("Neg", "Add"), max_nodes=3), isolate=False)
    campaign = Campaign(config)
    campaign._setup()
    whole = 0
    for g in draw_graphs(40, seed=2, config=config.gen, min_specs=2):
        if len(g.nodes) < 2 or g.nodes[-1].op != "Add":
            continue
        failures = campaign.tester.test(g, check_graph(g).SerializeToString())
        for f in failures:
            h, root = campaign.localize(g, f)
            assert root.group == f.group and len(h.nodes) <= len(g.nodes)
            whole += len(h.nodes) == len(g.nodes)
    campaign.executor.close()
    assert whole > 0  # graphs whose root failure is their last node were among them


def test_a_bundle_of_a_run_at_a_fixed_opset_replays_at_that_opset(tmp_path):
    """``run --opset 21`` stamps a Neg-13 model at 21, where NewOpsetNeg goes wrong; its bundle
    holds the model as written (opset 13), so a replay must stamp it at 21 again."""
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, tmp_path / "neg.onnx")
    store = tmp_path / "r.sqlite"
    main(["run", "--model", str(tmp_path / "neg.onnx"), "--opset", "21", "--backend", f"{HERE}:NewOpsetNeg", "--store", str(store),
          "-j", "1"])
    (outcome, bundle), = sqlite3.connect(store).execute("SELECT outcome, bundle FROM results").fetchall()
    assert outcome == "mismatch" and json.loads((Path(bundle) / "meta.json").read_text())["opset"] == 21
    correct = "tests.seeded_faults:OurReferences"
    main(["run", "--model", bundle, "--backend", f"{HERE}:NewOpsetNeg", "--backend", correct, "--store", str(tmp_path / "replay.sqlite"),
          "-j", "1"])
    results = {b: o for (_, b), (o, _) in _results(tmp_path / "replay.sqlite").items()}
    assert results == {f"{HERE}:NewOpsetNeg": "mismatch", correct: "pass"}
    # and the bundle's own script runs it at that opset too
    proc = subprocess.run([sys.executable, str(Path(bundle) / "repro.py")], check=False, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 1 and f"onnx-harness backend {HERE}:NewOpsetNeg" in proc.stdout and "BUG REPRODUCES" in proc.stdout, \
        (proc.stdout, proc.stderr)
