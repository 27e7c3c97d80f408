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

A spec-silent point (an input where the spec does not fix the result) is declared beside the
reference it concerns, as data: the op-versions, the spec text, the behaviour the reference takes
and why, where in the outputs the spec is silent, and the invariants that hold whatever the
choice::

    op.spec_silent("nan", (8, 12, 13), spec="Element-wise max of each of the input tensors",
                   expected="NaN propagates (IEEE 754-2019 maximum, numpy.maximum)",
                   where=lambda inputs, attrs, expected, since: [np.isnan(expected[0])],
                   invariants={"a max is NaN or the largest non-NaN input": nan_or_ignoring_nan})

Versions are listed explicitly, so an op-version that ONNX adds later is not silently claimed
as covered: ``missing_versions()`` reports it and a test fails until it is registered.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
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
    #: share of the run's drawn examples per dtype this op-version draws (at least one): less
    #: for op-versions that sweep many types through the same behaviour (Shape-25's 26 types)
    draw_share: float = 1.0
    module: str = ""

    @property
    def key(self) -> str:
        return f"{self.op}-{self.since}" if not self.domain else f"{self.domain}.{self.op}-{self.since}"

    @property
    def complete(self) -> bool:
        return self.reference is not None and self.strategy is not None


#: (domain, op, since) -> OpVersion
REGISTRY: dict[tuple[str, str, int], OpVersion] = {}

#: where(inputs, attrs, expected, since) -> per output, a boolean mask of the elements the spec leaves
#: open (None or an all-False mask: the output is fixed by the spec)
Where = Callable[[list, dict, list, int], "list[Any]"]
#: invariant(check) -> True when it holds on ``check.actual``
Invariant = Callable[["SilentCheck"], bool]
#: reading(check) -> per output, that output computed under one reading of the spec (an array shaped
#: like ``check.expected[k]``, or None where the reading says nothing of that output); only the open
#: elements are consulted: there the backend's value must match our expected value or one reading
Reading = Callable[["SilentCheck"], "list[Any]"]


@dataclass
class SilentCheck:
    """What an invariant of a spec-silent point sees: the node's inputs and attributes, our
    expected outputs, the backend's, the open elements (per output) and the op-version's reference."""

    inputs: list
    attrs: dict
    expected: list
    actual: list
    masks: list
    since: int
    reference: Reference | None = None


@dataclass
class SpecSilentPoint:
    """An input where the spec does not fix the result: a case whose inputs reach it (``where``
    marks at least one element) is tagged with ``id``; a backend that differs from ``expected``
    there but keeps every invariant gets the outcome ``unspecified``, not ``mismatch``."""

    id: str
    op: str
    versions: tuple[int, ...]
    #: the spec's own words (``onnx.defs.get_schema(op, version).doc``) that leave the point open;
    #: {since: words} when the wording changed (each version quotes the latest key <= its own)
    spec: str | dict[int, str]
    #: the behaviour our reference takes, and why
    expected: str
    where: Where
    #: what must hold whatever the choice, by a sentence saying it
    invariants: dict[str, Invariant] = field(default_factory=dict)
    #: the other readings we accept, by a name saying which (e.g. "the formula read literally in
    #: IEEE arithmetic", "the official test data"), each computed
    readings: dict[str, Reading] = field(default_factory=dict)
    module: str = ""
    #: the operator's domain ("" for ai.onnx)
    domain: str = ""

    def spec_at(self, since: int) -> str:
        if isinstance(self.spec, str):
            return self.spec
        return self.spec[max(v for v in self.spec if v <= since)]

    def masks(self, inputs: list, attrs: dict, expected: list, since: int) -> list[Any]:
        """Per output, the boolean mask of the open elements (None where nothing is open)."""
        import numpy as np

        out = list(self.where(inputs, attrs, expected, since))
        out += [None] * (len(expected) - len(out))
        return [None if m is None else np.broadcast_to(np.asarray(m, dtype=bool), np.shape(e))
                for m, e in zip(out, expected)]

    def reached(self, inputs: list, attrs: dict, expected: list, since: int) -> bool:
        return any(m is not None and m.any() for m in self.masks(inputs, attrs, expected, since))


#: point id ("Max.nan") -> its declaration
SPEC_SILENT: dict[str, SpecSilentPoint] = {}


class Operator:
    """Registration helper for one operator (one module in ``operator_cases/``)."""

    def __init__(self, name: str, domain: str = "", dtypes: tuple[str, ...] | None = None, type_param: str | None = None) -> None:
        self.name = name
        self.domain = schema.canonical_domain(domain)
        self.dtypes = dtypes
        self.type_param = type_param
        self.module = _declaring_module()

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
                entry.module = self.module
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

    def spec_silent(self, name: str, versions: tuple[int, ...], *, spec: str | dict[int, str], expected: str, where: Where,
                    invariants: dict[str, Invariant] | None = None, readings: dict[str, Reading] | None = None) -> SpecSilentPoint:
        """Declare a spec-silent point of these op-versions (see :class:`SpecSilentPoint`)."""
        for since in versions:
            self._entry(since)
        point = SpecSilentPoint(f"{self.name}.{name}", self.name, tuple(versions), spec, expected, where, dict(invariants or {}),
                                dict(readings or {}), self.module, self.domain)
        if point.id in SPEC_SILENT:
            raise ValueError(f"spec-silent point {point.id} declared twice")
        SPEC_SILENT[point.id] = point
        return point

    def draws(self, *versions: int, share: float) -> None:
        """Draw ``share`` of the run's examples per dtype for these versions (at least one; say
        why in a comment where used: the cases of a wide type sweep whose values do not matter)."""
        if not 0 < share <= 1:
            raise ValueError(f"{self.name}: draw share {share} outside (0, 1]")
        for since in versions:
            self._entry(since).draw_share = share

    def restrict(self, *versions: int, dtypes: tuple[str, ...]) -> None:
        """Sweep only ``dtypes`` for these versions (say why in a comment where used)."""
        for since in versions:
            self._entry(since).dtypes = dtypes


def _declaring_module() -> str:
    """The operator's own module: the first caller past the registry and any family helper
    (``operator_cases._families``, ``operator_cases.nn._conv_util`` ...), which declare on an operator's behalf."""
    frame = sys._getframe(2)
    while frame.f_back is not None and is_shared_module(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "")


_LOADED = False
#: operator module -> the exception it raised on import
BROKEN: dict[str, Exception] = {}


class BrokenOperatorModules(ImportError):
    """Operator modules failed to import (the operators suite shows them as oracle errors)."""


#: the packages of operator modules, one module an operator, grouped in family subpackages; each
#: module registers its op-versions on import. The one place that names them: the suites and
#: tools ask the registry for modules and sources.
PACKAGES: tuple[str, ...] = ("operator_cases",)


def is_operator_module(name: str) -> bool:
    return any(name.startswith(package + ".") for package in PACKAGES)


def is_shared_module(name: str) -> bool:
    """A family's shared helpers (``_*_util.py``, ``_families.py``), which declare on an
    operator's behalf."""
    return is_operator_module(name) and name.rpartition(".")[2].startswith("_")


def operator_modules() -> list[str]:
    """The dotted names of every operator module (not its shared helpers), without importing them."""
    names = []
    for package in map(importlib.import_module, PACKAGES):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.ispkg and not info.name.rpartition(".")[2].startswith("_"):
                names.append(info.name)
    return names


def source_files(shared_only: bool = False) -> list[Path]:
    """The operator packages' source files (``shared_only``: the helpers and package files)."""
    files = sorted(p for package in map(importlib.import_module, PACKAGES) for root in package.__path__ for p in Path(root).rglob("*.py"))
    return [p for p in files if p.name.startswith("_")] if shared_only else files


def load_all(allow_broken: bool = False) -> dict[tuple[str, str, int], OpVersion]:
    """Import every module of ``operator_cases`` so that they register themselves. A module
    that fails to import is recorded (:func:`broken_modules`) and the others still load; unless
    ``allow_broken`` (the operators suite, which shows each as an oracle error), a broken
    module then ends the caller loudly, never a registry silently missing its op-versions."""
    global _LOADED
    if not _LOADED:
        for name in operator_modules():
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


def spec_silent_points(op: str, since: int, domain: str = "") -> list[SpecSilentPoint]:
    """The spec-silent points declared for one op-version (its module must be loaded)."""
    domain = schema.canonical_domain(domain)
    return [p for p in SPEC_SILENT.values() if p.op == op and since in p.versions and p.domain == domain]


def spec_silent_point(point_id: str) -> SpecSilentPoint:
    """A point by id, importing the operator's module if needed (``ArgMax.nan`` lives in
    ``operator_cases.reduction.arg_max``), or every module when it is not there; KeyError when no module
    declares it."""
    if point_id not in SPEC_SILENT:
        op = point_id.split(".", 1)[0]
        snake = "".join("_" + c.lower() if c.isupper() and k else c.lower() for k, c in enumerate(op))
        module = next((m for m in operator_modules() if m.rpartition(".")[2] in (snake, snake + "_", "ml_" + snake)), None)
        try:
            importlib.import_module(module or "")
        except (ImportError, ValueError):
            load_all(allow_broken=True)
    if point_id not in SPEC_SILENT:
        load_all(allow_broken=True)
    return SPEC_SILENT[point_id]


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
