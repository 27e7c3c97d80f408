"""The ``generated`` suite: ``--examples`` random multi-operator graphs (:mod:`harness.generated`),
frozen under ``<corpus>/generated/`` so that every backend and later run sees the same graphs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx

import harness

from .. import fuzz_api, registry, strategies
from .. import generated as graphs_package
from ..case import Case
from ..generated.cases import draw_graphs, graph_case
from ..generated.regressions import REGRESSIONS, regression_cases
from ..generated.spec import GenConfig
from .frozen import digest, load_or_build, without_local_constants

DEFAULT_EXAMPLES = 50
DEFAULT_SEED = 20261122
#: nodes per graph in the ``generated`` suite (fuzz campaigns choose their own)
SUITE_MAX_NODES = 10
#: the regression cases the suite replays after its drawn graphs
REGRESSION_FOLDER = REGRESSIONS


def _suite_fingerprint() -> str:
    """What frozen suite graphs depend on: this module, the strategies, the template API, every
    reference and template."""
    package = Path(graphs_package.__file__).parent
    sources = [Path(__file__), *sorted(package.glob("*.py")), Path(strategies.__file__), Path(fuzz_api.__file__),
               *registry.source_files()]
    return digest(sources, onnx.__version__, np.__version__, harness.__version__)


def generated_cases(ctx: Any) -> Iterator[Case]:
    """The ``generated`` suite for ``onnx-harness run``: ``--examples`` graphs (default 50) of up
    to 10 nodes, drawn from ``--seed`` at ``--opset`` (default: every opset from 13), frozen
    under ``<corpus>/generated/`` so that every backend and later run sees the same graphs; then
    every regression case of ``harness/generated/regressions/`` (the distinct findings of
    earlier fuzz campaigns; ``--regressions DIR``: those a campaign wrote there) at that opset."""
    n = ctx.examples if ctx.examples is not None else DEFAULT_EXAMPLES
    seed = ctx.seed if ctx.seed is not None else DEFAULT_SEED
    config = GenConfig(opsets=(ctx.opset,) if ctx.opset else GenConfig().opsets, max_nodes=SUITE_MAX_NODES)
    file = Path(ctx.corpus) / "generated" / f"seed{seed}-examples{n}-opset{ctx.opset or 'all'}.pickle"

    def build() -> list[Case]:
        ctx.say(f"drawing {n} generated graphs (seed {seed}) into {file}")
        with without_local_constants():
            return [graph_case(g) for g in draw_graphs(n, seed, config)]

    yield from load_or_build(file, _suite_fingerprint(), build)
    # the regression cases fuzz campaigns wrote (harness.generated.regressions), every run: those
    # at the run's --opset when it names one, and that its -k selects
    for case in regression_cases(ctx.extra.get("regressions") or REGRESSION_FOLDER):
        if (ctx.opset is None or case.tags["opset"] == ctx.opset) and (ctx.pattern is None or ctx.pattern.search(case.id)):
            yield case
