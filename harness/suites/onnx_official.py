"""The official ONNX backend suites, frozen to disk with a content-hashed manifest.

The installed ``onnx`` builds its node cases in memory (their expected outputs are computed by
the installed numpy, so they can drift between machines); the simple, pytorch-converted and
pytorch-operator cases and the light models ship as files. ``build_corpus`` writes all of them
in the ``onnx_test_runner`` layout with a manifest (onnx and numpy versions, a sha256 per case,
counts per suite); ``verify_corpus`` reports changed, missing and added cases.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx

from ..case import Case, CorpusError, DataSet, Tolerance, folder_sha256, graph_inputs, verify_folder, write_case_folder
from ..schema import model_tags

SUITES = {
    "onnx-node": "node",
    "onnx-simple": "simple",
    "onnx-pytorch-converted": "pytorch-converted",
    "onnx-pytorch-operator": "pytorch-operator",
    "onnx-light": "real",
}
MANIFEST = "manifest.json"


def default_corpus_dir() -> Path:
    return Path(os.environ.get("ONNX_HARNESS_CORPUS", "corpus"))


def _data_dir() -> Path:
    import onnx.backend.test

    return Path(onnx.backend.test.__file__).parent / "data"


# -- collecting from the installed onnx -------------------------------------------------------
def collect(suites: list[str] | None = None) -> Iterator[tuple[str, str, onnx.ModelProto, list[DataSet], Tolerance]]:
    """Yield (suite, name, model, data sets, tolerance) for every official case."""
    for suite in suites or list(SUITES):
        kind = SUITES[suite]
        if kind == "node":
            yield from _collect_node()
        elif kind == "real":
            yield from _collect_light()
        else:
            yield from _collect_folder(suite, _data_dir() / kind)


def _collect_node():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # onnx computes overflowing casts on purpose
        testcases = collect_testcases(None)
    for tc in sorted(testcases, key=lambda t: t.name):
        inputs = graph_inputs(tc.model)
        outputs = list(tc.model.graph.output)
        data = []
        for ins, outs in tc.data_sets:
            feeds = {info.name: _normalize(v) for info, v in zip(inputs, ins)}
            data.append(DataSet(feeds, [_normalize(v) for v in outs][: len(outputs)]))
        yield "onnx-node", tc.name, tc.model, data, Tolerance(tc.rtol, tc.atol)


def _normalize(value: Any) -> Any:
    """Node cases hold numpy scalars, TensorProtos and lists; keep 0-d values as arrays."""
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, (list, tuple)):
        return [_normalize(v) for v in value]
    if isinstance(value, dict) or value is None:
        return value
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value)


def _collect_folder(suite: str, kind_dir: Path):
    from ..case import read_data_sets

    for folder in sorted(p for p in kind_dir.iterdir() if (p / "model.onnx").exists()):
        tol = Tolerance()
        if (folder / "data.json").exists():
            tol = Tolerance.from_dict(json.loads((folder / "data.json").read_text()))
        model = onnx.load(folder / "model.onnx")
        yield suite, folder.name, model, read_data_sets(folder, model), tol


def _collect_light():
    """The light models ship with one stored output; their input is onnx's documented dummy
    input: float32 ``arange(n) / n`` in the declared shape, unbound dimensions set to 1."""
    real = _data_dir() / "real"
    light = _data_dir() / "light"
    for folder in sorted(real.iterdir()):
        meta = json.loads((folder / "data.json").read_text())
        model_file = light / f"light_{meta['model_name']}.onnx"
        if not model_file.exists():
            continue
        model = onnx.load(model_file)
        feeds = {}
        for info in graph_inputs(model):
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in info.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            feeds[info.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
        expected = []
        for k in range(len(model.graph.output)):
            out = light / f"light_{meta['model_name']}_output_{k}.pb"
            expected.append(onnx.numpy_helper.to_array(onnx.load_tensor(out)))
        yield "onnx-light", folder.name, model, [DataSet(feeds, expected)], Tolerance.from_dict(meta)


# -- the frozen corpus ------------------------------------------------------------------------
def build_corpus(root: Path, suites: list[str] | None = None, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write every official case under ``root/<suite>/<name>/`` and the manifest."""
    root = Path(root)
    # a private folder, renamed into place at the end: parallel builders (tox -p) never see a
    # half-written corpus, and the first one to finish wins
    tmp = root.with_name(f"{root.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    cases: dict[str, str] = {}
    counts: dict[str, int] = {}
    for suite, name, model, data, tol in collect(suites):
        folder = tmp / suite / name
        meta = {"tolerance": tol.to_dict(), "tags": {"suite": suite, **model_tags(model)}}
        write_case_folder(folder, model, data, meta)
        cases[f"{suite}/{name}"] = folder_sha256(folder)
        counts[suite] = counts.get(suite, 0) + 1
        if progress:
            progress(f"{suite}/{name}")
    manifest = {
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        "counts": counts,
        "total": len(cases),
        "corpus_sha256": hashlib.sha256(json.dumps(cases, sort_keys=True).encode()).hexdigest(),
        "cases": cases,
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    _install(tmp, root)
    return manifest


def _install(tmp: Path, root: Path) -> None:
    """Put the official suites and the manifest built in ``tmp`` into ``root``, leaving
    everything else there (the frozen ``operators`` and ``generated`` corpora, the models cache)."""
    try:
        tmp.rename(root)  # no corpus yet: one atomic rename
        return
    except OSError:
        pass  # ``root`` exists (or another builder finished first): replace only what we own
    root.mkdir(parents=True, exist_ok=True)
    old = root.with_name(f"{root.name}.old-{os.getpid()}")
    old.mkdir()
    # the manifest leaves first and comes back last: a reader never sees a manifest over
    # half-replaced suite folders (it then rebuilds, or refuses a case that does not match)
    for name in [MANIFEST, *SUITES]:
        if (root / name).exists():
            os.replace(root / name, old / name)
    for name in SUITES:
        if (tmp / name).exists():
            try:
                os.replace(tmp / name, root / name)
            except OSError:  # a parallel builder put its (identical) suite folder in first
                pass
    os.replace(tmp / MANIFEST, root / MANIFEST)
    shutil.rmtree(old)
    shutil.rmtree(tmp)


def read_manifest(root: Path) -> dict[str, Any]:
    file = Path(root) / MANIFEST
    if not file.exists():
        raise CorpusError(f"no corpus at {root} (no {MANIFEST}); build it with: onnx-harness corpus build --corpus {root}")
    try:
        return json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CorpusError(f"corpus manifest {file} is unreadable: {exc}") from exc


def verify_corpus(root: Path) -> dict[str, list[str]]:
    """Compare the folders on disk with the manifest: changed, missing and added cases."""
    root = Path(root)
    manifest = read_manifest(root)
    recorded: dict[str, str] = manifest["cases"]
    # only the official suites' folders: the frozen operators and generated corpora live beside them
    on_disk = {f"{p.parent.name}/{p.name}" for suite in SUITES for p in root.glob(f"{suite}/*") if p.is_dir()}
    report: dict[str, list[str]] = {"changed": [], "missing": [], "added": sorted(on_disk - set(recorded))}
    for case_id, digest in sorted(recorded.items()):
        if case_id not in on_disk:
            report["missing"].append(case_id)
        elif folder_sha256(root / case_id) != digest:
            report["changed"].append(case_id)
    return report


def iter_corpus_cases(root: Path, suites: list[str], pattern: re.Pattern[str] | None = None, verify: bool = True) -> Iterator[Case]:
    """The frozen cases of ``suites`` (those whose id ``pattern`` matches, if given); refuses a
    corpus with fewer cases than it records, and a case whose content is not the one the
    manifest records (tampered, half-written, added). Each case carries its recorded digest
    (``Case.sha256``): ``verify`` checks it here, as the case is read; without it, where the case
    is loaded (a run's workers do, in parallel, before they run it)."""
    root = Path(root)
    manifest = read_manifest(root)
    recorded = manifest["cases"]
    for suite in suites:
        count = manifest["counts"].get(suite, 0)
        folders = sorted(p for p in (root / suite).glob("*") if (p / "model.onnx").exists()) if (root / suite).exists() else []
        if len(folders) < count:
            raise CorpusError(
                f"corpus {root} holds {len(folders)} {suite} cases but its manifest records {count}; "
                f"run 'onnx-harness corpus verify' to see what is missing, 'onnx-harness corpus build' to rebuild"
            )
        for folder in folders:
            case_id = f"{suite}/{folder.name}"
            if pattern is not None and not pattern.search(case_id):
                continue
            meta = json.loads((folder / "case.json").read_text()) if (folder / "case.json").exists() else {}
            tags = meta.get("tags", {"suite": suite})
            case = Case(
                id=case_id,
                suite=suite,
                path=folder,
                tolerance=Tolerance.from_dict(meta.get("tolerance", {})),
                tags=tags,
                check="random" if tags.get("random") else "values",
                sha256=recorded.get(case_id, ""),
            )
            if verify:
                verify_folder(case)
                case.sha256 = None  # checked: nothing left to check where it is loaded
            yield case
