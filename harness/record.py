"""One step records every result, whoever ran it (``run``, the pytest plugin, a fuzz campaign):
the known failures applied, a repro bundle written for every unexpected non-pass that has a model
(stamped as the backend ran it; a known failure, ``xfail``, gets its bundle on demand from
``onnx-harness repro``), the result stored: at once, or with ``batched`` in a batch of results
committed together (:class:`~harness.store.ResultBatch`; :meth:`Recorder.flush` at the end)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import expectations
from .case import Case
from .worker import Result
from .repro import bundle_dir, write_bundle
from .runner import BackendSpec
from .store import ResultBatch, Store


@dataclass
class Recorder:
    store: Store | None
    run_id: int
    #: the folder of the run's bundles (None: no bundles)
    bundles: Path | None
    #: the run's backends by name
    specs: dict[str, BackendSpec]
    entries: list[expectations.Expectation] = field(default_factory=list)
    #: how the run stamped models (``ExecOptions``): a bundle replays what the backend ran
    restamp: bool = True
    opset: int | None = None
    #: store results in batches (one transaction per many results) instead of one at a time
    batched: bool = False

    def __post_init__(self) -> None:
        self.usage = expectations.Usage()  # what the entries matched: the stale ones at the end
        self.batch = ResultBatch(self.store, self.run_id) if self.batched and self.store is not None else None

    def record(self, result: Result, case: Case, evidence: Callable[[Result], None] | None = None) -> Result:
        """Apply the expectations, write the bundle, add the caller's ``evidence(result)`` (what
        else it keeps beside the bundle or in the verdict), store the result. A bundle that
        cannot be written is said in the result's message: it is evidence, not the verdict."""
        expectations.apply(result, self.entries, self.usage)
        # a failed export has no model; a known failure's bundle is made on demand (``repro``)
        if self.bundles is not None and result.outcome not in ("pass", "skip", "export-failed", "xfail"):
            spec = self.specs[result.backend]
            try:
                result.bundle = str(write_bundle(bundle_dir(self.bundles, self.run_id, result.backend, result.case_id), case,
                                                 result, spec.spec, spec.options, self.restamp, self.opset))
            except Exception as exc:  # noqa: BLE001 (said in the stored message)
                result.message += f" [bundle not written: {exc}]"
        if evidence is not None:
            evidence(result)
        if self.batch is not None:
            self.batch.add(result)
        elif self.store is not None:
            self.store.add_result(self.run_id, result)
        return result

    def due(self) -> None:
        """Commit the waiting results that have waited long enough (a no-op unless batched)."""
        if self.batch is not None:
            self.batch.due()

    def flush(self) -> None:
        """Commit every waiting result (a no-op unless batched)."""
        if self.batch is not None:
            self.batch.flush()
