"""The ``models`` suite: whole models built in PyTorch, TensorFlow/Keras and scikit-learn and
exported to ONNX, the framework's own outputs being the oracle; the light models that ship in
the onnx wheel; and quantized versions of the PyTorch CNN and encoder (their oracle the quantized
model's own output, see ``model_cases/quantized_models.py``). The builders live in ``model_cases/``, one module per framework.

Building trains and exports, so it happens once: each framework's cases are written in the
``onnx_test_runner`` layout (``model.onnx``, ``test_data_set_N/``, ``case.json`` with tags and
tolerance) under ``<cache>/<framework>/<key>/`` with a ``manifest.json``, the key naming the
framework, exporter and onnx versions and a digest of the builder's source. Later runs load
from there. A framework that is not installed here is skipped with a message, unless another
environment has already built its cases into the same cache: those are run (the oracle is
stored, the framework is not needed to run them).

A failed export is a result: it is cached as a case folder holding only ``case.json`` whose
tags carry ``export_error``; the case has no model, and the runner reports it as
``export-failed``.

The cache sits beside the official corpus (``corpus-models`` next to ``corpus``), not inside
it: rebuilding the corpus replaces its whole folder, and ``corpus verify`` would list foreign
folders as added cases.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

from ..case import Case, Tolerance, folder_sha256, write_case_folder

#: framework name -> builder module; light and sklearn first: they build in seconds
FRAMEWORKS = {
    "light": "model_cases.light_models",
    "sklearn": "model_cases.sklearn_models",
    "torch": "model_cases.torch_models",
    "keras": "model_cases.keras_models",
    "quantized": "model_cases.quantized_models",
    "transformers": "model_cases.transformer_models",
}
MANIFEST = "manifest.json"
SUITE = "models"


class ModelCacheError(RuntimeError):
    pass


def default_cache_dir(corpus: Path | str = "corpus") -> Path:
    if os.environ.get("ONNX_HARNESS_MODELS"):
        return Path(os.environ["ONNX_HARNESS_MODELS"])
    corpus = Path(corpus).absolute()
    return corpus.with_name(corpus.name + "-models")


def builder(framework: str) -> Any:
    if framework not in FRAMEWORKS:
        raise ModelCacheError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    return importlib.import_module(FRAMEWORKS[framework])


def _dist_version(dist: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def cache_key(module: Any) -> str:
    """``torch-2.13.0+cpu_onnxscript-0.7.2_<digest>``: the versions that decide what a build
    produces, and a digest of the builder's source, the onnx and numpy versions (a changed
    builder or oracle library means a new build, never a stale cache)."""
    import numpy
    import onnx

    versions = [f"{d}-{_dist_version(d)}" for d in module.DISTRIBUTIONS if _dist_version(d) != "none"]
    digest = hashlib.sha256()
    here = Path(module.__file__)
    # a builder that builds on another's models names its module files in DEPENDS
    for file in (here, here.with_name("_common.py"), *(here.with_name(f) for f in getattr(module, "DEPENDS", ()))):
        if file.exists():
            digest.update(file.read_bytes())
    digest.update(f"onnx {onnx.__version__} numpy {numpy.__version__}".encode())
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", "_".join(versions)) + "_" + digest.hexdigest()[:10]


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not all((folder / name / "case.json").exists() for name in manifest.get("cases", {})):
        return None  # incomplete: somebody deleted case folders
    return manifest


# -- building --------------------------------------------------------------------------------
def build_framework(framework: str, folder: Path, say: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Run one builder and write its cases and manifest to ``folder`` (atomically: a build that
    fails or is interrupted leaves no half-written cache behind)."""
    module = builder(framework)
    folder = Path(folder)
    tmp = folder.with_name(f".{folder.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    started = time.time()
    cases: dict[str, dict[str, Any]] = {}
    try:
        for made in module.build(say):
            sub = tmp / made.name
            tags = dict(made.tags)
            if made.export_error:
                tags["export_error"] = made.export_error
            meta = {"tolerance": made.tolerance.to_dict(), "tags": tags}
            if made.model is None:
                sub.mkdir(parents=True, exist_ok=True)
                (sub / "case.json").write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))
            else:
                write_case_folder(sub, made.model, made.data, meta)
            cases[made.name] = {"sha256": folder_sha256(sub), "export_failed": bool(made.export_error)}
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    import numpy
    import onnx

    manifest = {
        "framework": framework,
        "key": folder.name,
        "versions": {d: _dist_version(d) for d in module.DISTRIBUTIONS if _dist_version(d) != "none"},
        "onnx": onnx.__version__,
        "numpy": numpy.__version__,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(time.time() - started, 1),
        "total": len(cases),
        "export_failed": sum(c["export_failed"] for c in cases.values()),
        "cases": cases,
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    if folder.exists():
        shutil.rmtree(folder)
    try:
        tmp.rename(folder)
    except OSError:  # another process finished the same build first; its cases are as good
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest


def _latest_cached(root: Path) -> Path | None:
    """The most recently built complete cache of one framework (from any environment)."""
    found = [(m.get("built_at", ""), p) for p in root.glob("*") if p.is_dir() and not p.name.startswith(".")
             for m in [_read_manifest(p)] if m is not None]
    return max(found)[1] if found else None


def ensure_built(framework: str, cache: Path, say: Callable[[str], None] = lambda m: None,
                 rebuild: bool = False) -> tuple[Path | None, str]:
    """The cache folder holding ``framework``'s cases, building it when the framework is
    installed and no cache for its versions exists; (None, why) when there is none."""
    module = builder(framework)
    root = Path(cache) / framework
    reason = module.missing()
    if reason:
        latest = _latest_cached(root)
        if latest is None:
            return None, f"skipping {framework} model cases: {reason}"
        say(f"{framework} model cases: {reason}; running the cases built elsewhere into {latest}")
        return latest, ""
    folder = root / cache_key(module)
    if not rebuild and _read_manifest(folder) is not None:
        return folder, ""
    say(f"building {framework} model cases into {folder} (once; later runs load them)")
    manifest = build_framework(framework, folder, say)
    say(f"{framework}: {manifest['total']} cases, {manifest['export_failed']} export failures, built in {manifest['build_seconds']} s")
    return folder, ""


def build_cache(cache: Path, frameworks: list[str] | None = None, rebuild: bool = False,
                say: Callable[[str], None] = print) -> dict[str, str]:
    """Build (or confirm) the cache of every framework installed here: {framework: folder or
    the reason it was skipped}. For a ``models build`` command."""
    out = {}
    for framework in frameworks or list(FRAMEWORKS):
        folder, why = ensure_built(framework, cache, say, rebuild)
        out[framework] = str(folder) if folder else why
    return out


# -- loading ---------------------------------------------------------------------------------
def load_cached(framework: str, folder: Path) -> Iterator[Case]:
    manifest = _read_manifest(folder)
    if manifest is None:
        raise ModelCacheError(f"model cache {folder} is incomplete or unreadable; remove it to rebuild")
    for name in sorted(manifest["cases"]):
        sub = folder / name
        meta = json.loads((sub / "case.json").read_text())
        tags = meta.get("tags", {})
        tolerance = Tolerance.from_dict(meta.get("tolerance", {}))
        case_id = f"{SUITE}/{framework}/{name}"
        if tags.get("export_error"):
            # nothing to run: the export itself failed, which is the result
            yield Case(id=case_id, suite=SUITE, data=[], tolerance=tolerance, tags=tags)
        else:
            yield Case(id=case_id, suite=SUITE, path=sub, tolerance=tolerance, tags=tags)


def model_cases(ctx: Any) -> Iterator[Case]:
    """Every framework's cases; ``ctx.extra`` may hold ``models_cache`` (a folder),
    ``frameworks`` (a list) and ``rebuild`` (bool)."""
    cache = Path(ctx.extra.get("models_cache") or default_cache_dir(ctx.corpus))
    frameworks = ctx.extra.get("frameworks") or list(FRAMEWORKS)
    for framework in frameworks:
        try:
            folder, why = ensure_built(framework, cache, ctx.say, bool(ctx.extra.get("rebuild")))
        except ModelCacheError:
            raise
        except Exception as exc:  # a builder that breaks must not take the other frameworks down
            ctx.say(f"skipping {framework} model cases: building them failed: {type(exc).__name__}: {exc}")
            continue
        if folder is None:
            ctx.say(why)
            continue
        yield from load_cached(framework, folder)
