"""Repro bundles: everything needed to see a failure again, without the corpus, the store or the harness.

A bundle holds ``model.onnx`` (as the backend ran it: re-stamped, or at the run's ``--opset``),
``test_data_set_N/input_K.pb`` and ``output_K.pb`` (the oracle's expected outputs),
``actual/output_K.pb`` (what the backend gave on the data set that did not pass; none when it
failed before giving outputs), ``tolerance/bound_K.npy`` (a per-element allowance, where the case
has one), ``meta.json`` (case, backend and its options, outcome, verdict, message, the tolerance
applied, re-stamping or the ``--opset`` it ran at) and ``repro.py``.

``repro.py`` is the script a finding has (:func:`harness.findings.compose`: numpy, onnx and the
runtime, no harness import): it loads the model with the runtime the backend names (ONNX
Runtime with the backend's optimization level and providers, or onnx.reference), runs the data
set that failed, compares with the expected outputs under the case's tolerance, prints the
verdict and exits 1 while the bug is there (0 once fixed, 2 when the runtime is not installed, 3
when it fails in another way). A backend that is the harness's own code (its PyTorch and
TensorFlow lowerings, its kernel engine, a ``module:Class`` or ``exec:`` backend) is run through
the harness when it is installed; without it the script says so and compares the outputs
recorded in ``actual/``.

``onnx-harness repro CASE --backend B -o DIR`` writes one (re-running the case here);
:func:`zip_bundle` packs a stored one for a download (its script written afresh from ``meta.json``).
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from . import values as V
from .case import Case, write_case_folder
from .worker import ExecOptions, Result, model_as_run, random_outputs
from .findings import RUNTIMES, compose, runner
from .tolerances import effective_tolerance

#: outcomes where the backend failed instead of giving outputs: the failure is the bug
FAILED = ("error", "unsupported", "rejected", "crash", "timeout")

_READ = '''\
HERE = Path(__file__).resolve().parent
DATA = HERE / "test_data_set_{n}"


def read(path, kind):
    """A value in the ONNX test data layout (.pb): a tensor, sequence, map or optional, by its kind."""
    kinds = {{"sequence_type": (onnx.SequenceProto, numpy_helper.to_list), "map_type": (onnx.MapProto, numpy_helper.to_dict),
             "optional_type": (onnx.OptionalProto, numpy_helper.to_optional)}}
    proto, convert = kinds.get(kind, (onnx.TensorProto, numpy_helper.to_array))
    value = proto()
    value.ParseFromString(path.read_bytes())
    return convert(value)


MODEL = onnx.load(str(HERE / "model.onnx"))
_given = {{i.name for i in MODEL.graph.initializer}}
_inputs = [i for i in MODEL.graph.input if i.name not in _given]
FEEDS = {{i.name: read(DATA / f"input_{{k}}.pb", i.type.WhichOneof("value")) for k, i in enumerate(_inputs) if (DATA / f"input_{{k}}.pb").exists()}}
EXPECTED = {{o.name: read(DATA / f"output_{{k}}.pb", o.type.WhichOneof("value")) for k, o in enumerate(MODEL.graph.output)}}
#: the outputs the backend gave when the harness ran it (output name, kind; None: an empty optional)
ACTUAL = {{name: read(HERE / "actual" / f"output_{{k}}.pb", kind) if kind else None for k, (name, kind) in enumerate({actual!r})}}
{readings}
#: a per-element allowance of the case's tolerance, where it has one
BOUND = {{o.name: np.load(HERE / "tolerance" / f"bound_{{k}}.npy") for k, o in enumerate(MODEL.graph.output)
         if (HERE / "tolerance" / f"bound_{{k}}.npy").exists()}}
#: the harness saw the backend fail ({outcome}) instead of giving outputs: then a failure here is the bug
BUG_IS_A_FAILURE = {failed!r}'''

_OURS = '''\
def run(model):
    from harness.runner import BackendSpec, _build_backend

    backend = _build_backend(BackendSpec({spec!r}, {options!r}, {name!r}))
    return dict(zip(EXPECTED, backend.prepare(model).run(FEEDS)))
'''


def bundle_dir(root: Path, run_id: int, backend: str, case_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "__", case_id)
    return Path(root) / f"run-{run_id}" / re.sub(r"[^A-Za-z0-9._-]+", "_", backend) / safe


def runtime_of(spec: str, options: dict[str, Any]) -> dict[str, Any]:
    """What a bundle's script runs for the backend ``spec``: ``runtime`` (a key of
    :data:`harness.findings.RUNTIMES`, or None for the harness's own code), ``pip`` (what to
    install), ``level`` and ``providers`` (ONNX Runtime's) and ``what`` (words for the docstring)."""
    return dict(_runtime_of(spec, json.dumps(options, sort_keys=True)))


@functools.lru_cache(maxsize=None)
def _runtime_of(spec: str, options_json: str) -> dict[str, Any]:
    from .backends import load_backend_class

    options = json.loads(options_json)
    cls = load_backend_class(spec)
    release = getattr(cls, "release", "") if getattr(cls, "base", None) else ""
    if release:  # NAME@VERSION: that release of the named runtime
        cls = load_backend_class(cls.base)
    runtime = getattr(cls, "repro_runtime", None)
    if runtime is None:
        return {"runtime": None, "pip": "onnx-harness", "what": f"the harness's own backend {spec} ({cls.__module__}), run through the harness"}
    options = cls(**options).options  # a variant's own defaults (onnxruntime-noopt: optimization disabled)
    pip = RUNTIMES[runtime]["pip"] + (f"=={release}.*" if release else "")
    providers = options.get("providers") or ["CPUExecutionProvider"]
    level = {"disabled": "disable"}.get(options.get("optimization", "all"), options.get("optimization", "all"))
    said = f", graph optimization {level}, providers {', '.join(providers)}" if runtime == "onnxruntime" else ""
    return {"runtime": runtime, "pip": pip, "level": level, "providers": providers,
            "what": f"{RUNTIMES[runtime]['name']}{' ' + release if release else ''}{said}"}


def bundle_script(meta: dict[str, Any]) -> str:
    """The bundle's ``repro.py``, from its ``meta.json`` alone (a bundle written before the script
    stood alone gets it too)."""
    how = runtime_of(meta["backend_spec"], meta.get("backend_options") or {})
    raw = meta.get("raw_outcome") or meta["outcome"]
    actual = meta.get("actual") or {}
    n = actual.get("data_set", 0)
    tol = meta.get("tolerance") or {}
    message = " ".join(str(meta.get("message") or "").split())
    doc = [f"Repro: {meta['case_id']} on backend {meta['backend']}: {raw}", "",
           f"Recorded: {message[:300]}" if message else "Recorded without a message.",
           f"Runs the model in this folder (model.onnx, as the backend ran it) on data set {n} with {how['what']},",
           f"and compares with the oracle's expected outputs: rtol {tol.get('rtol', 0.0)}, atol {tol.get('atol', 0.0)}, ulp {tol.get('ulp')}"
           + (", plus a per-element bound (tolerance/)" if tol.get("bound_max") else "") + ".",
           *(["Random outputs (RANDOM) are compared by shape and dtype only."] if meta.get("random") else []),
           *(["Unspecified: the spec is silent there, and the outputs the runtime gave (actual/) are one of the readings the",
              "harness accepts, so they pass here too; other outputs are compared with ours."] if raw == "unspecified" else []),
           f"Needs numpy, onnx and {how['pip']}:", "",
           f"    pip install numpy onnx {how['pip']}", "    python repro.py", ""]
    readings = ("#: unspecified: where the spec is silent the harness found these outputs one of the readings it accepts\n"
                "READINGS = {name: [value] for name, value in ACTUAL.items()}") if raw == "unspecified" else "READINGS = {}"
    data = _READ.format(n=n, actual=[[o["name"], o["kind"]] for o in actual.get("outputs", [])], outcome=raw, readings=readings,
                        failed=raw in FAILED).splitlines()
    if how["runtime"] is None:
        run, module, name = _OURS.format(spec=meta["backend_spec"], options=meta.get("backend_options") or {}, name=meta["backend"]), \
            "harness", f"onnx-harness backend {meta['backend']}"
    else:
        run = runner(how["runtime"], level=how.get("level", "all"), providers=tuple(how.get("providers", ())))
        module, name = RUNTIMES[how["runtime"]]["module"], RUNTIMES[how["runtime"]]["name"]
    return compose(doc, data, ["    return MODEL"], run, module, name, imports=("from pathlib import Path",),
                   RTOL=float(tol.get("rtol", 0.0)), ATOL=float(tol.get("atol", 0.0)), ULP=tol.get("ulp"),
                   RANDOM=set(meta.get("random") or ()), CHECK=False)


def write_bundle(folder: Path, case: Case, result: Result, backend_spec: str, backend_options: dict[str, Any], restamp: bool = True,
                 opset: int | None = None) -> Path:
    """Write the bundle of ``result``; ``restamp`` and ``opset`` are how the run stamped the
    model (``ExecOptions``): the bundle's model is the one the backend ran."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    if case.path is not None:
        # the bytes only (no times, modes or extended attributes): a bundle is a new copy
        shutil.copytree(case.path, folder, ignore=shutil.ignore_patterns("case.json", "actual", "tolerance"), copy_function=shutil.copyfile)
        model = case.load_model()
    else:
        model = case.load_model()
        write_case_folder(folder, model, case.load_data(model), {})
        (folder / "case.json").unlink(missing_ok=True)
    ran, changes, _ = model_as_run(case, model, ExecOptions(restamp=restamp, opset=opset))
    if ran is not None and changes:
        (folder / "model.onnx").write_bytes(ran.SerializeToString())
    tolerance = effective_tolerance(case)
    for k, bound in enumerate(tolerance.bound or ()):
        if bound is not None:
            (folder / "tolerance").mkdir(exist_ok=True)
            np.save(folder / "tolerance" / f"bound_{k}.npy", np.asarray(bound, dtype=np.float64))
    meta = {
        "case_id": case.id,
        "suite": case.suite,
        "backend": result.backend,
        "backend_spec": backend_spec,
        "backend_options": backend_options,
        "outcome": result.outcome,
        "raw_outcome": result.raw_outcome or result.outcome,
        "message": result.message,
        "verdict": result.verdict,
        "tolerance": tolerance.to_dict(),
        "tags": case.tags,
        "check": case.check,
        "restamp_enabled": restamp and not case.tags.get("keep_opset"),  # whether this case was re-stamped
        "opset": opset,
        "restamp": result.restamp,
    }
    outputs = [o.name for o in (ran or model).graph.output]
    if result.actual is not None:
        meta["actual"] = {"data_set": result.actual_set, "outputs": _write_actual(folder / "actual", outputs, result.actual)}
        data = case.load_data(model)
        random = random_outputs(ran or model, data[result.actual_set].inputs) if result.actual_set < len(data) else None
        meta["random"] = [name for name, r in zip(outputs, random or ()) if r is not None]
    if case.check == "random":
        meta["random"] = outputs
    if case.tags.get("graph"):  # a generated graph, as a reader sees it
        (folder / "graph.txt").write_text(case.tags["graph"] + "\n")
    (folder / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))
    (folder / "repro.py").write_text(bundle_script(meta))
    return folder


def _write_actual(folder: Path, names: list[str], outputs: list[Any]) -> list[dict[str, Any]]:
    """Each output as given, its own type kept (a wrong dtype stays wrong): (name, kind) in order."""
    folder.mkdir()
    said = []
    for k, value in enumerate(outputs):
        name = names[k] if k < len(names) else f"output_{k}"
        if value is None:
            said.append({"name": name, "kind": None})
            continue
        type_proto = None if isinstance(value, (np.ndarray, np.generic)) else V.infer_type(value)
        V.write_value(folder / f"output_{k}.pb", value, name, type_proto)
        said.append({"name": name, "kind": "tensor_type" if type_proto is None else type_proto.WhichOneof("value")})
    return said


def zip_bundle(folder: Path) -> bytes:
    """A stored bundle as a zip (one top folder, the bundle's name) to share: its ``meta.json``
    without the machine's paths (a ``--model`` file's, a traceback's), its ``repro.py`` written
    from it now (a bundle stored before the script stood alone gets the standalone one)."""
    from .report.sources import portable_text, portable_value

    folder = Path(folder)
    stored = json.loads((folder / "meta.json").read_text())
    meta = {**portable_value({k: v for k, v in stored.items() if k != "message"}), "message": portable_text(stored.get("message"))}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for top, _, names in sorted(os.walk(folder)):
            rel = Path(top).relative_to(folder)
            for name in sorted(names):
                if (rel / name).as_posix() not in ("repro.py", "meta.json"):
                    zf.write(os.path.join(top, name), f"{folder.name}/{(rel / name).as_posix()}")
        zf.writestr(f"{folder.name}/meta.json", json.dumps(meta, indent=1, sort_keys=True))
        zf.writestr(f"{folder.name}/repro.py", bundle_script(meta))
    return buffer.getvalue()
