"""``fuzz --executor ray``: a campaign's sessions shared by parts on a Ray cluster (the cluster
only decides where each part runs: :mod:`harness.executors.ray`); the controller merges the
parts' findings. This module imports ray; ``onnx-harness fuzz`` imports it only for
``--executor ray``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import ray
from ray import exceptions as ray_errors

from ..cliutil import CliError
from ..executors.ray import DEFAULT_RETRIES, _first_line
from .campaign import Campaign, FuzzReport


def _fuzz_part(config: Any, offset: int, stride: int) -> Any:
    """One part of a campaign on a Ray worker: sessions offset+1, offset+1+stride, ... of the
    seed, with its backends isolated in a child process as locally; nothing stored here."""
    return Campaign(replace(config, store=None, bundles=None, session_offset=offset, session_stride=stride)).run()


def fuzz_on_ray(config: Any, parts: int | None = None, address: str | None = None, retries: int = DEFAULT_RETRIES,
                say: Callable[[str], None] = print) -> Any:
    """``fuzz --executor ray``: ``parts`` campaigns (default: one per CPU of the cluster) share the
    seed's sessions and the budget runs on each at once; the controller merges their findings
    as each part ends, one per (pattern, family, kind) across all parts (a finding another
    part found too counts as a duplicate), writes each new finding's bundle and stores it."""
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, log_to_driver=False, configure_logging=False, **({} if address else {"include_dashboard": False}))
    try:
        parts = parts or max(1, int(ray.cluster_resources().get("CPU", 1)))
        say(f"ray: fuzzing in {parts} part(s) of seed {config.seed}")
        controller = Campaign(config, say=say)
        controller._setup()  # the run, its backends (loaded here once for their versions), the store
        controller.executor.close()
        remote = ray.remote(_fuzz_part).options(num_cpus=1, max_retries=retries, retry_exceptions=False)
        pending = [remote.remote(config, i, parts) for i in range(parts)]
        stats, failed = controller.stats, []
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            try:
                report = ray.get(ready[0])
            except ray_errors.RayError as exc:  # a part lost for good: said, and the run is not complete
                failed.append(_first_line(exc))
                say(f"a fuzz part failed: {type(exc).__name__}: {_first_line(exc)}")
                continue
            _add_stats(stats, report.stats)
            for finding in report.findings:
                known = controller.findings.get(finding.key)
                if known is not None:
                    known.count += finding.count
                    known.symptoms.update(finding.symptoms)
                    stats.duplicates += finding.count
                    continue
                controller.findings[finding.key] = finding
                controller._record(finding)
                say(f"new finding: {finding.summary()}")
            controller.excluded += [e for e in report.excluded if e not in controller.excluded]
        if controller.store is not None:
            controller.store.finish_run(controller.run_id, "failed" if failed else "complete")
        if failed:
            raise CliError(f"{len(failed)} of {parts} fuzz part(s) lost on the Ray cluster after {retries} retries "
                           f"({'; '.join(failed)}); the findings of the others are in run {controller.run_id}")
        return FuzzReport(stats, list(controller.findings.values()), controller.run_id, False, controller.excluded)
    finally:
        if started:
            ray.shutdown()


def _add_stats(total: Any, part: Any) -> None:
    for name in ("drawn", "empty", "valid", "invalid", "tested", "disagreements", "duplicates", "sessions", "shrink_steps",
                 "root_duplicates", "shrunk", "unshrunk", "gen_seconds", "nodes"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    for name in ("op_versions", "edge", "unspecified", "silent_reached", "patterns"):
        getattr(total, name).update(getattr(part, name))
    total.invalid_examples += part.invalid_examples[: max(0, 20 - len(total.invalid_examples))]
