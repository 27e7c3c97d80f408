"""Command-line pieces shared by :mod:`harness.cli` and the subcommands it registers
(:mod:`harness.generated.cli`), so that neither imports the other for them."""

from __future__ import annotations

import json
from typing import Any


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def parse_options(values: list[str]) -> dict[str, dict[str, Any]]:
    """``--option onnxruntime.threads=1`` -> {"onnxruntime": {"threads": 1}}."""
    out: dict[str, dict[str, Any]] = {}
    for item in values:
        key, sep, value = item.partition("=")
        backend, dot, name = key.partition(".")
        if not sep or not dot:
            raise CliError(f"--option {item!r}: expected BACKEND.NAME=VALUE, e.g. onnxruntime.threads=1")
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(backend, {})[name] = parsed
    return out
