"""The op-version registry: our reference implementations, strategies and edge examples by
(domain, op, since_version).

An operator module in ``operator_cases/`` declares, for every ``since_version`` of its op::

    op = Operator("Clip")

    @op.reference(6)
    def clip_6(x, *, min=-3.4e38, max=3.4e38):      # inputs positional, attributes by spec name
        return np.clip(x, min, max)                  # one array, or a list/tuple of outputs

    @op.strategy(6)
    def draw_6(draw, dtype, opset):                  # draw: Hypothesis' data.draw
        return Example([draw(arrays(dtype))], {"min": ..., "max": ...})

    @op.edges(6)
    def edges_6(dtype, opset):
        return [Example([edge_values(dtype)], {"min": 0.0, "max": 1.0}, name="nan_inf")]

    @op.fuzz(nan=NAN_ASSUMED, ulps=0.0)                # how it enters a generated graph
    def fuzz(c):                                       # (harness.fuzz_api: Ctx -> Plan | None)
        ...

Versions are listed explicitly, so an op-version that ONNX adds later is not silently claimed
as covered: ``missing_versions()`` reports it and a test fails until it is registered.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from . import schema

Draw = Callable[[Any], Any]
Reference = Callable[..., Any]
Strategy = Callable[[Draw, str, int], "Example"]
Edges = Callable[[str, int], "list[Example]"]


@dataclass
class Example:
    """One input set: positional inputs (None for an absent optional input) and attributes."""

    inputs: list[Any]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: a readable name for hand-picked examples ("nan_inf"); generated ones are numbered
    name: str = ""
    #: number of node outputs to request (optional outputs); None: as many as the reference returns
    outputs: int | None = None
    #: random-by-definition op: check shape, dtype and range only
    random: bool = False


@dataclass
class OpVersion:
    domain: str
    op: str
    since: int
    reference: Reference | None = None
    strategy: Strategy | None = None
    edges: Edges | None = None
    #: restrict the schema's allowed types for the primary type parameter (labels like "float32")
    dtypes: tuple[str, ...] | None = None
    #: the type parameter whose allowed types are swept (default: the first input's)
    type_param: str | None = None
    module: str = ""

    @property
    def key(self) -> str:
        return f"{self.op}-{self.since}" if not self.domain else f"{self.domain}.{self.op}-{self.since}"

    @property
    def complete(self) -> bool:
        return self.reference is not None and self.strategy is not None


#: (domain, op, since) -> OpVersion
REGISTRY: dict[tuple[str, str, int], OpVersion] = {}


class Operator:
    """Registration helper for one operator (one module in ``operator_cases/``)."""

    def __init__(self, name: str, domain: str = "", dtypes: tuple[str, ...] | None = None, type_param: str | None = None) -> None:
        self.name = name
        self.domain = schema.canonical_domain(domain)
        self.dtypes = dtypes
        self.type_param = type_param

    def _entry(self, since: int) -> OpVersion:
        key = (self.domain, self.name, since)
        if key not in REGISTRY:
            if since not in schema.since_versions(self.name, self.domain):
                raise ValueError(f"{self.name}-{since} is not an op-version in onnx.defs ({schema.since_versions(self.name, self.domain)})")
            REGISTRY[key] = OpVersion(self.domain, self.name, since, dtypes=self.dtypes, type_param=self.type_param)
        return REGISTRY[key]

    def _register(self, attr: str, versions: tuple[int, ...]) -> Callable[[Callable], Callable]:
        if not versions:
            raise ValueError(f"{self.name}: name the since_versions this {attr} covers")

        def deco(fn: Callable) -> Callable:
            for since in versions:
                entry = self._entry(since)
                setattr(entry, attr, fn)
                entry.module = fn.__module__
            return fn

        return deco

    def reference(self, *versions: int) -> Callable[[Reference], Reference]:
        return self._register("reference", versions)

    def strategy(self, *versions: int) -> Callable[[Strategy], Strategy]:
        return self._register("strategy", versions)

    def edges(self, *versions: int) -> Callable[[Edges], Edges]:
        return self._register("edges", versions)

    def fuzz(self, **kw: Any) -> Callable[[Callable], Callable]:
        """Decorator: the op's template for generated graphs (every version; the plan reads
        ``c.since``). Keywords are the fields of :class:`harness.fuzz_api.Template`."""
        from .fuzz_api import template

        if self.domain:
            raise ValueError(f"{self.domain}.{self.name}: generated graphs use ai.onnx operators only")
        return template(self.name, **kw)

    def restrict(self, *versions: int, dtypes: tuple[str, ...]) -> None:
        """Sweep only ``dtypes`` for these versions (say why in a comment where used)."""
        for since in versions:
            self._entry(since).dtypes = dtypes


_LOADED = False
#: operator module -> the exception it raised on import
BROKEN: dict[str, Exception] = {}


class BrokenOperatorModules(ImportError):
    """Operator modules failed to import (the operators suite shows them as oracle errors)."""


def load_all(allow_broken: bool = False) -> dict[tuple[str, str, int], OpVersion]:
    """Import every module of ``operator_cases`` so that they register themselves. A module
    that fails to import is recorded (:func:`broken_modules`) and the others still load; unless
    ``allow_broken`` (the operators suite, which shows each as an oracle error), a broken
    module then ends the caller loudly, never a registry silently missing its op-versions."""
    global _LOADED
    if not _LOADED:
        import operator_cases

        for info in pkgutil.iter_modules(operator_cases.__path__):
            if not info.name.startswith("_"):
                name = f"operator_cases.{info.name}"
                try:
                    importlib.import_module(name)
                except Exception as exc:  # recorded, then raised below or shown as a result
                    BROKEN[name] = exc
        _LOADED = True
    if BROKEN and not allow_broken:
        first = next(iter(BROKEN.values()))
        raise BrokenOperatorModules("operator modules failed to import: " + "; ".join(
            f"{name}: {type(exc).__name__}: {exc}" for name, exc in BROKEN.items())) from first
    return REGISTRY


def broken_modules() -> dict[str, str]:
    """Operator modules that failed to import: "ExceptionName: message" by module."""
    load_all(allow_broken=True)
    return {name: f"{type(exc).__name__}: {exc}" for name, exc in BROKEN.items()}


def covered_ops() -> set[tuple[str, str]]:
    return {(d, op) for d, op, _ in load_all()}


def missing_versions() -> list[str]:
    """Op-versions of operators we cover that have no complete registration."""
    missing = []
    registry = load_all()
    for domain, op in sorted(covered_ops()):
        for since in schema.since_versions(op, domain):
            entry = registry.get((domain, op, since))
            if entry is None or not entry.complete:
                missing.append(f"{op}-{since}" if not domain else f"{domain}.{op}-{since}")
    return missing
