"""Case sources. Each suite yields :class:`harness.case.Case` objects; a suite never runs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..case import Case
from . import onnx_official


@dataclass
class SuiteContext:
    corpus: Path = field(default_factory=onnx_official.default_corpus_dir)
    opset: int | None = None
    examples: int | None = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the run's ``-k`` (a compiled regex over case ids): a suite that draws may draw only what it can match
    pattern: re.Pattern[str] | None = None
    #: progress callback for suites that build something first (message)
    say: Callable[[str], None] = lambda msg: None
    #: check each frozen official case's digest as it is selected; False: where it is loaded
    #: (``Case.sha256``; a run's workers check it in parallel)
    verify: bool = True
    #: processes a suite may draw in (the run's -j)
    jobs: int = 1


def _official(names: list[str]) -> Callable[[SuiteContext], Iterator[Case]]:
    def cases(ctx: SuiteContext) -> Iterator[Case]:
        ensure_corpus(ctx)
        return onnx_official.iter_corpus_cases(ctx.corpus, names, ctx.pattern, ctx.verify)

    return cases


def ensure_corpus(ctx: SuiteContext) -> None:
    if not (ctx.corpus / onnx_official.MANIFEST).exists():
        ctx.say(f"no corpus at {ctx.corpus}: building it from the installed onnx (once; about a minute)")
        onnx_official.build_corpus(ctx.corpus)


def _operators(ctx: SuiteContext) -> Iterator[Case]:
    from .operators import operator_cases

    return operator_cases(ctx)


def _generated(ctx: SuiteContext) -> Iterator[Case]:
    from ..generated.spec import MIN_OPSET
    from .generated import generated_cases

    if ctx.opset is not None and ctx.opset < MIN_OPSET:
        raise SuiteError(f"the generated suite draws graphs at opset {MIN_OPSET} or later, not {ctx.opset}")
    return generated_cases(ctx)


def _models(ctx: SuiteContext) -> Iterator[Case]:
    from .models import model_cases

    return model_cases(ctx)


SUITES: dict[str, tuple[str, Callable[[SuiteContext], Iterator[Case]]]] = {
    "onnx": ("every official ONNX backend suite below", _official(list(onnx_official.SUITES))),
    **{name: (f"official ONNX backend suite '{kind}'", _official([name])) for name, kind in onnx_official.SUITES.items()},
    "operators": ("our per-op-version reference cases with Hypothesis-drawn inputs", _operators),
    "generated": ("multi-operator graphs drawn by Hypothesis (seeded, frozen), our composed references as oracle", _generated),
    "models": ("whole PyTorch / Keras / scikit-learn models exported to ONNX, the framework as oracle; the onnx wheel's light models", _models),
}


class SuiteError(ValueError):
    """A suite cannot give cases: unknown, or options it does not take."""


class UnknownSuite(SuiteError):
    pass


def suite_cases(name: str, ctx: SuiteContext) -> Iterator[Case]:
    if name not in SUITES:
        raise UnknownSuite(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    return SUITES[name][1](ctx)
