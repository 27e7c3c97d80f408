"""Where worker processes come from: on Linux a fork server that has imported once what every
worker needs (numpy, onnx, the harness's execution and comparison code), so a new worker starts
in milliseconds; elsewhere a fresh interpreter each (spawn).

:func:`start` launches the fork server ahead of need: the command line calls it first thing, so
the server's imports run on another core while the controller does its own.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from typing import Any

#: what the fork server imports before forking workers (scipy.special for the random outputs'
#: tests: scipy.stats would cost half a second and no worker needs it for a plain run; hypothesis
#: because judging a case at a spec-silent point imports its operator module, which draws on it:
#: a quarter second per worker otherwise, more than a thousand small cases take)
PRELOAD = ["harness.worker", "numpy", "onnx", "scipy.special", "hypothesis", "harness.backends.preload"]
#: the backends whose runtimes ``harness.backends.preload`` imports in the fork server (JSON list)
BACKENDS_ENV = "ONNX_HARNESS_PRELOAD_BACKENDS"


def context() -> Any:
    if sys.platform == "linux":
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return mp.get_context("spawn")


def last_lines(path: str, size: int = 600) -> list[str]:
    """The non-blank lines among the last ``size`` bytes a child process wrote to its log
    ``path`` (a native crash often says why there); none when the log cannot be read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - size))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def start(backends: list[str] | None = None) -> None:
    """Launch the fork server now if this platform has one (a no-op when it runs already); it
    also imports the runtimes of ``backends`` (each backend class's ``preload``), so that no
    worker forked from it pays for that import itself."""
    if sys.platform == "linux":
        import json
        from multiprocessing import forkserver

        context()
        os.environ[BACKENDS_ENV] = json.dumps(backends or [])  # read by the server only: removed once it started
        try:
            forkserver.ensure_running()
        finally:
            del os.environ[BACKENDS_ENV]
