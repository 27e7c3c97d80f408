"""What the readings test and a look by hand share: the cases of the default draw that reach a
spec-silent point, run on ONNX Runtime and onnx.reference, and per open element whether the
backend's value is our expected value, one reading's, or none of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from harness.registry import REGISTRY, SPEC_SILENT, SilentCheck, load_all
from harness.schema import negotiate
from harness.suites.operators import DEFAULT_SEED, build_op_version
from harness.tolerances import effective_tolerance

def cases_reaching(point: Any, n: int = 3, seed: int = DEFAULT_SEED) -> list[Any]:
    """The cases (edge examples and ``n`` drawn per dtype) of the point's op-versions tagged with it."""
    load_all()
    out = []
    for since in point.versions:
        opv = REGISTRY[(point.domain, point.op, since)]
        if opv.complete:
            out += [c for c in build_op_version(opv, since, n, seed) if point.id in c.tags.get("spec_silent", ())]
    return out


def same(e: Any, a: Any, rtol: float, atol: float, extra: Any = 0.0) -> np.ndarray:
    """Elementwise: equal; for floats within rtol/atol (plus ``extra``, the case's derived bound
    per element), NaN equal to NaN, infinities by sign."""
    e, a = np.asarray(e), np.asarray(a)
    if e.shape != a.shape:
        return np.zeros(e.shape, bool)
    if e.dtype.kind in "OUSb" or a.dtype.kind in "OUSb":
        return e == a
    ef, af = e.astype(np.float64), a.astype(np.float64)
    with np.errstate(all="ignore"):
        return (np.isnan(ef) & np.isnan(af)) | (ef == af) | (np.isfinite(ef) & (np.abs(ef - af) <= atol + rtol * np.abs(ef) + extra))


def node_inputs(case: Any) -> tuple[list[Any], dict[str, Any], int]:
    """The inputs, attributes and since-version the comparator hands a point (as harness.worker does)."""
    model = case.load_model()
    node = model.graph.node[0]
    ds = case.data[0]
    inputs = [ds.inputs.get(name) if name else None for name in node.input]
    attrs = {}
    for a in node.attribute:
        value = onnx.helper.get_attribute_value(a)
        attrs[a.name] = value.decode() if isinstance(value, bytes) else value
    return inputs, attrs, int(case.tags.get("since_version") or 0)


def check_of(point: Any, case: Any, actual: list[Any]) -> SilentCheck:
    inputs, attrs, since = node_inputs(case)
    expected = case.data[0].expected
    opv = REGISTRY.get((point.domain, point.op, since))
    return SilentCheck(inputs, attrs, expected, actual, point.masks(inputs, attrs, expected, since), since,
                       opv.reference if opv else None)


def readings_at(point: Any, check: SilentCheck) -> dict[str, list[Any]]:
    with np.errstate(all="ignore"):
        return {name: list(reading(check)) for name, reading in point.readings.items()}


def judged(case: Any, actual: list[Any]) -> Any:
    """The harness's own verdict on these outputs (the comparator, then its spec-silent judgement)."""
    from harness.compare import Comparator
    from harness.worker import _spec_silent

    comparator, ds, tol = Comparator(), case.data[0], effective_tolerance(case)
    verdict = comparator.compare(ds.expected, actual, tol)
    return _spec_silent(comparator, verdict, case, case.load_model(), ds, actual, tol)


def model_of(case: Any) -> Any:
    """The case's model as the run stamps it (harness code: its failure is a harness error)."""
    model, _ = negotiate(case.load_model())
    return model


def run_on(backend: Any, case: Any, model: Any = None) -> list[Any]:
    """The runtime's outputs (only the runtime's own code runs here)."""
    return list(backend.prepare(model if model is not None else model_of(case)).run(case.data[0].inputs))


@dataclass
class Look:
    """One case on one backend: the open elements where it differs from our expected value, and
    how many of them each reading gives (``unexplained``: given by none)."""

    case_id: str
    backend: str
    differing: int = 0
    unexplained: int = 0
    by_reading: dict[str, int] = field(default_factory=dict)
    example: str = ""
    #: an invariant of a point the case reaches that the backend breaks (a mismatch before any reading is consulted)
    broken: str = ""


def look(case: Any, backend_name: str, actual: list[Any], focus: str | None = None) -> Look:
    """As the comparator judges it: at the elements any point the case reaches leaves open, the
    readings of every such point (``by_reading`` keyed "point: reading"); with ``focus`` (a point
    id) only the elements that point leaves open count."""
    points = [SPEC_SILENT[p] for p in case.tags["spec_silent"]]
    expected = case.data[0].expected
    if len(actual) != len(expected) or any(np.shape(a) != np.shape(e) for a, e in zip(actual, expected)
                                           if not isinstance(e, (list, dict)) and e is not None):
        return Look(case.id, backend_name, broken="a wrong shape (judged before any spec-silent point)")
    readings, masks, out_broken = {}, [None] * len(expected), ""
    for point in points:
        check = check_of(point, case, actual)
        readings.update({f"{point.id}: {name}": v for name, v in readings_at(point, check).items()})
        with np.errstate(all="ignore"):
            broken = [f"{point.id}: {sentence}" for sentence, holds in point.invariants.items() if not holds(check)]
        out_broken = out_broken or (broken[0] if broken else "")
        masks = [m if o is None else (o if m is None else o | m) for o, m in zip(masks, check.masks)]
        if point.id == focus:
            focused = check.masks
    out = Look(case.id, backend_name, by_reading={name: 0 for name in readings}, broken=out_broken)
    tol = effective_tolerance(case)
    if focus is not None:
        masks = [None if f is None else m & f for m, f in zip(masks, focused)]
    for k, (e, a, m) in enumerate(zip(expected, actual, masks)):
        if m is None or not m.any() or isinstance(e, (list, dict)) or e is None:
            continue
        a = np.asarray(a)
        if a.shape != np.shape(e) or (a.dtype.kind in "OUS") != (np.asarray(e).dtype.kind in "OUS"):
            continue  # a wrong shape or type is judged before any spec-silent point
        extra = 0.0 if tol.bound is None else tol.bound[k]
        diff = m & ~same(e, a, tol.rtol, tol.atol, extra)
        if not diff.any():
            continue
        explained = np.zeros_like(diff)
        for name, values in readings.items():
            if k < len(values) and values[k] is not None:
                hit = diff & same(values[k], a, tol.rtol, tol.atol, extra)
                out.by_reading[name] += int(hit.sum())
                explained |= hit
        out.differing += int(diff.sum())
        bad = diff & ~explained
        out.unexplained += int(bad.sum())
        if bad.any() and not out.example:
            i = tuple(int(j) for j in np.argwhere(bad)[0])
            out.example = (f"output {k} {list(i)}: got {a[i]!r}, ours {np.asarray(e)[i]!r}; "
                           + "; ".join(f"{n[:40]}={np.asarray(v[k])[i]!r}" for n, v in readings.items() if k < len(v) and v[k] is not None))
    return out


def backends() -> dict[str, Any]:
    from harness.backends.onnxruntime import OnnxRuntimeBackend
    from harness.backends.reference import ReferenceBackend

    out = {"onnxruntime": OnnxRuntimeBackend(), "reference": ReferenceBackend()}
    for b in out.values():
        b.load()
    return out


if __name__ == "__main__":  # a look by hand: python -m tests.readings_check POINT [n]
    import sys

    from harness.registry import SPEC_SILENT

    load_all()
    point = SPEC_SILENT[sys.argv[1]]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    totals: dict = {}
    cases = cases_reaching(point, n)
    print(len(cases), "cases")
    for b_name, b in backends().items():
        for case in cases:
            try:
                actual = run_on(b, case)
            except Exception as exc:
                print(b_name, case.id, "ERROR", str(exc)[:80])
                continue
            lk = look(case, b_name, actual, point.id)
            totals[b_name, "differing"] = totals.get((b_name, "differing"), 0) + lk.differing
            totals[b_name, "unexplained"] = totals.get((b_name, "unexplained"), 0) + lk.unexplained
            for r, k in lk.by_reading.items():
                if r.startswith(point.id + ":"):
                    totals[b_name, r[:60]] = totals.get((b_name, r[:60]), 0) + k
            if lk.unexplained:
                print(b_name, case.id, lk.differing, lk.unexplained, lk.example, "BROKEN " + lk.broken if lk.broken else "")
    for k, v in totals.items():
        print(k, v)
