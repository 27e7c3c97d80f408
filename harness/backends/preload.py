"""Imported by the workers' fork server (:mod:`harness.forkserver`) when it starts: the runtimes
of the run's backends (each backend class's ``preload``), so that every worker forked from the
server has them imported instead of importing them itself. The backends are named in the
server's environment by :func:`harness.forkserver.start`."""

from __future__ import annotations

import importlib
import json
import os

from ..forkserver import BACKENDS_ENV
from . import load_backend_class


def _preload(names: list[str]) -> None:
    """Import each named backend's ``preload`` modules."""
    for name in names:
        try:
            for module in load_backend_class(name).preload:
                importlib.import_module(module)
        except Exception:  # noqa: BLE001 (not said here: the worker imports it again, and its probe says why it failed)
            continue


_preload(json.loads(os.environ.get(BACKENDS_ENV) or "[]"))
