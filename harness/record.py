"""One step records every result, whoever ran it (``run``, the pytest plugin, a fuzz campaign):
the known failures applied, a repro bundle written for every non-pass that has a model (stamped
as the backend ran it), the result stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import expectations
from .case import Case
from .execute import Result
from .repro import bundle_dir, write_bundle
from .runner import BackendSpec
from .store import Store


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

    def record(self, result: Result, case: Case, evidence: Callable[[Result], None] | None = None) -> Result:
        """Apply the expectations, write the bundle, add the caller's ``evidence(result)`` (what
        else it keeps beside the bundle or in the verdict), store the result. A bundle that
        cannot be written is said in the result's message: it is evidence, not the verdict."""
        expectations.apply(result, self.entries)
        if self.bundles is not None and result.outcome not in ("pass", "skip", "export-failed"):  # a failed export has no model
            spec = self.specs[result.backend]
            try:
                result.bundle = str(write_bundle(bundle_dir(self.bundles, self.run_id, result.backend, result.case_id), case,
                                                 result, spec.spec, spec.options, self.restamp, self.opset))
            except Exception as exc:  # noqa: BLE001 (said in the stored message)
                result.message += f" [bundle not written: {exc}]"
        if evidence is not None:
            evidence(result)
        if self.store is not None:
            self.store.add_result(self.run_id, result)
        return result
