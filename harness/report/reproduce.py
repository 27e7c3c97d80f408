"""Portable commands that reproduce one result, built from what the run stored (its arguments),
never from the machine that ran it: no absolute path, every argument shell-quoted.

- ``repro_command``: ``onnx-harness repro CASE --backend X -o repro`` (writes a repro bundle and
  prints the outcome);
- ``run_command``: the ``onnx-harness run`` that selects exactly that case
  (``-k '^<the case id, regex-escaped>$'``) with the run's suite, backend options, opset,
  re-stamping and generated-example settings.

The HTML report builds the same strings in the page (``report.js``: ``quote``, ``commands``)
from :func:`run_prefix`; tests hold both to literal commands.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath
from typing import Any


def _options(backend: str, args: dict[str, Any]) -> list[str]:
    for spec in args.get("backends") or []:
        if spec.get("name") == backend:
            return [f"--option={backend}.{k}={v}" for k, v in sorted((spec.get("options") or {}).items())]
    return []


def run_prefix(args: dict[str, Any], suite: str) -> list[str]:
    """The arguments of ``onnx-harness run`` that rebuild the run's cases of ``suite``, before
    ``--backend`` and ``-k``: the suite, and the settings that change which cases exist or how
    they run (``--opset``, ``--no-restamp``, ``--examples``, ``--seed``). A corpus folder
    given as a relative path is kept; an absolute one is a machine path and left out (a fresh
    clone builds ./corpus)."""
    out = ["--suite", suite]
    corpus = args.get("corpus")
    if corpus and corpus != "corpus" and not PurePath(corpus).is_absolute() and suite.startswith("onnx-"):
        out += ["--corpus", corpus]
    if args.get("opset") is not None:
        out += ["--opset", str(args["opset"])]
    if args.get("restamp") is False:
        out.append("--no-restamp")
    if suite == "operators":
        for key in ("examples", "seed"):
            if args.get(key) is not None:
                out += [f"--{key}", str(args[key])]
    return out


def exact_pattern(case_id: str) -> str:
    """The ``-k`` regular expression that matches this case id and no other."""
    return f"^{re.escape(case_id)}$"


def run_command(args: dict[str, Any], case_id: str, backend: str) -> str:
    suite = case_id.split("/", 1)[0]
    argv = ["onnx-harness", "run", *run_prefix(args, suite), "--backend", backend, *_options(backend, args),
            "-k", exact_pattern(case_id)]
    return shlex.join(argv)


def repro_command(args: dict[str, Any], case_id: str, backend: str) -> str:
    argv = ["onnx-harness", "repro", case_id, "--backend", backend, *_options(backend, args), "-o", "repro"]
    if args.get("restamp") is False:
        argv.append("--no-restamp")
    return shlex.join(argv)
