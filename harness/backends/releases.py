"""Releases side by side: ``--backend NAME@VERSION`` runs another release of a runtime.

The release is installed once into a virtual environment of its own under the cache folder
(``$ONNX_HARNESS_CACHE`` or ``~/.cache/onnx-harness``, then ``releases/<dist>-<version>``),
made with this Python and ``pip install <dist>==<version>`` (``1.28`` means the newest
``1.28.*``) plus what the runner needs (onnx, numpy, ml_dtypes). The harness package itself
is linked into it, not copied, so the runner there always speaks this harness's protocol. The
backend then runs through the out-of-process bridge (:mod:`harness.backends.external`) as
``python -m harness.backends.external_runner --backend NAME`` in that environment, with the
isolation, limits and classification of every exec backend. A failed install is
``unavailable`` with pip's last lines; it is retried on the next run (nothing is cached but a
complete environment, marked by a ``ready`` file written last).
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import venv
from pathlib import Path
from typing import ClassVar

from .base import Unavailable
from .external import ExecBackend

SPEC = re.compile(r"^(?P<name>[a-z][a-z0-9_-]*)@(?P<version>\d+(?:\.\d+){0,2})$")
#: backends whose releases can be installed: backend name -> distribution on the registry
DISTRIBUTIONS = {"onnxruntime": "onnxruntime", "onnxruntime-noopt": "onnxruntime", "tract": "tract", "tvm": "apache-tvm",
                 "openvino": "openvino"}
RUNNER_NEEDS = ("onnx", "numpy", "ml_dtypes")


def parse(spec: str) -> tuple[str, str] | None:
    match = SPEC.match(spec)
    return (match["name"], match["version"]) if match else None


def requirement(dist: str, version: str) -> str:
    """``1.28`` -> ``onnxruntime==1.28.*`` (the newest patch), ``1.28.0`` -> exactly that."""
    return f"{dist}=={version}" if version.count(".") == 2 else f"{dist}=={version}.*"


def cache_root() -> Path:
    return Path(os.environ.get("ONNX_HARNESS_CACHE") or Path.home() / ".cache" / "onnx-harness") / "releases"


def environment_dir(dist: str, version: str) -> Path:
    return cache_root() / f"{dist}-{version}-py{sys.version_info.major}{sys.version_info.minor}"


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def ensure_environment(dist: str, version: str, say=lambda text: print(text, file=sys.stderr, flush=True)) -> Path:
    """The ready environment of ``dist`` at ``version``, built once (under a lock, so parallel
    workers and runs wait for one build)."""
    folder = environment_dir(dist, version)
    if (folder / "ready").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "ready").exists():
            return folder
        say(f"installing {requirement(dist, version)} into {folder} (once) ...")
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
        pip = [str(_python(folder)), "-m", "pip", "install", "--disable-pip-version-check", "-q", requirement(dist, version), *RUNNER_NEEDS]
        proc = subprocess.run(pip, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-4:])
            raise Unavailable(f"cannot install {requirement(dist, version)}: pip exited {proc.returncode}: {tail}")
        site = subprocess.run([str(_python(folder)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        link = Path(site) / "harness"
        if not link.exists():
            link.symlink_to(Path(__file__).resolve().parents[1], target_is_directory=True)
        installed = subprocess.run([str(_python(folder)), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        (folder / "ready").write_text(installed + "\n")
    return folder


class ReleaseBackend(ExecBackend):
    """One release of a runtime, run in its own cached environment (see the module doc)."""

    base: ClassVar[str] = ""
    release: ClassVar[str] = ""

    @classmethod
    def dist(cls) -> str:
        return DISTRIBUTIONS[cls.base]

    @classmethod
    def available(cls) -> tuple[bool, str]:
        try:
            folder = ensure_environment(cls.dist(), cls.release)
        except (Unavailable, OSError, subprocess.CalledProcessError) as exc:
            return False, str(exc)
        cls.command = [str(_python(folder)), "-m", "harness.backends.external_runner", "--backend", cls.base]
        return True, ""

    @classmethod
    def argv(cls) -> list[str]:
        if not cls.command:  # in a worker process: the environment exists (the parent built it)
            folder = environment_dir(cls.dist(), cls.release)
            cls.command = [str(_python(folder)), "-m", "harness.backends.external_runner", "--backend", cls.base]
        return list(cls.command)


def release_backend_class(spec: str) -> type[ReleaseBackend]:
    parsed = parse(spec)
    if parsed is None or parsed[0] not in DISTRIBUTIONS:
        known = ", ".join(f"{n}@VERSION" for n in DISTRIBUTIONS)
        raise ValueError(f"cannot run {spec!r} as a release: give one of {known}")
    name, version = parsed
    return type("ReleaseBackend", (ReleaseBackend,), {"name": spec, "base": name, "release": version, "command": [],
                                                     "__module__": __name__})


def registry_versions(dist: str) -> list[str]:
    """Every release of ``dist`` the package registry offers this Python, oldest first."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist, "--disable-pip-version-check"],
                          capture_output=True, text=True)
    found = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"cannot list the releases of {dist}: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return sorted((v.strip() for v in found[1].split(",")), key=version_key)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+-]", version))


def releases_between(versions: list[str], low: str, high: str) -> list[str]:
    """The releases from ``low`` to ``high`` (inclusive, compared on as many parts as given);
    bounds given as ``X.Y`` keep the newest patch of each ``X.Y`` line, one build per line."""
    lo, hi = version_key(low), version_key(high)
    inside = [v for v in versions if lo <= version_key(v)[:len(lo)] and version_key(v)[:len(hi)] <= hi]
    if low.count(".") < 2 and high.count(".") < 2:
        newest: dict[tuple[int, ...], str] = {}
        for v in inside:
            newest[version_key(v)[:2]] = v  # versions come oldest first
        inside = list(newest.values())
    return sorted(inside, key=version_key)


def first_change(versions: list[str], outcome_at) -> tuple[int | None, dict[str, str]]:
    """Binary search for the first release whose outcome differs from the oldest one's, asking
    ``outcome_at(version)`` for as few releases as it can. Returns (index or None when both ends
    agree, every outcome asked). Assumes one change in the range, as any bisection does."""
    seen: dict[str, str] = {}

    def at(k: int) -> str:
        if versions[k] not in seen:
            seen[versions[k]] = outcome_at(versions[k])
        return seen[versions[k]]

    if len(versions) < 2 or at(0) == at(len(versions) - 1):
        return None, seen
    good, bad = 0, len(versions) - 1  # at(good) == at(0) != at(bad)
    while bad - good > 1:
        mid = (good + bad) // 2
        if at(mid) == at(0):
            good = mid
        else:
            bad = mid
    return bad, seen
