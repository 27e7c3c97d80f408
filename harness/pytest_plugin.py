"""pytest plugin: each case x backend is one test item.

    pytest --harness-backend onnxruntime --harness-suite onnx-node -n 2

Item ids are ``<case id>[<backend>]``; a failure's message carries the verdict and the command
that re-runs it; expectations become strict xfails (an unexpected pass is visible). Results go
to the store (one run per pytest session, shared by xdist workers) and the run's JSON is written
once, on the controller. Cases run in isolated worker processes as in ``onnx-harness run``, so
a backend that crashes fails its item, not the session. A backend that cannot load is one
failing item ``backend[<name>]`` with the reason (``--harness-allow-unavailable``: its cases
are collected and skipped instead).

The module is cheap to import: it registers options and does nothing unless
``--harness-backend`` is given.
"""

from __future__ import annotations

import re
import shlex
import warnings
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

_STATE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("onnx-harness", "ONNX conformance cases as tests")
    group.addoption("--harness-backend", action="append", default=[], help="backend to test (repeatable); enables the plugin")
    group.addoption("--harness-suite", action="append", default=[], help="suite (repeatable; default onnx-node)")
    group.addoption("--harness-opset", type=int, help="stamp models at this opset")
    group.addoption("--harness-expectations", action="append", default=[], help="TOML file of known failures")
    group.addoption("--harness-examples", type=int, help="generated examples per op-version and dtype (operators)")
    group.addoption("--harness-regressions", help="generated suite: replay the regression cases under this folder")
    group.addoption("--harness-store", default="reports/results.sqlite", help="results store")
    group.addoption("--harness-corpus", default="corpus", help="frozen official corpus")
    group.addoption("--harness-k", help="only cases whose id matches this regular expression")
    group.addoption("--harness-timeout", type=float, default=120.0, help="seconds per case")
    group.addoption("--harness-allow-unavailable", action="store_true",
                    help="a backend that cannot load skips its cases (default: one failing item per such backend)")


def _config(config: pytest.Config):
    from .run import RunConfig
    from .runner import BackendSpec

    opt = config.getoption
    return RunConfig(
        suites=opt("harness_suite") or ["onnx-node"], backends=[BackendSpec(b) for b in dict.fromkeys(opt("harness_backend"))],
        pattern=opt("harness_k"), opset=opt("harness_opset"), jobs=1, timeout=opt("harness_timeout"),
        store=Path(opt("harness_store")), corpus=Path(opt("harness_corpus")),
        expectations=[Path(p) for p in opt("harness_expectations")], examples=opt("harness_examples"),
        regressions=Path(opt("harness_regressions")) if opt("harness_regressions") else None,
    )


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("harness_backend"):
        return
    from .run import environment
    from .runner import Runner
    from .store import Store

    run_config = _config(config)
    state: dict[str, Any] = {"config": run_config}
    if _is_xdist_worker(config):
        state["run_id"] = config.workerinput["harness_run_id"]
        state["live"] = config.workerinput["harness_live"]
    else:
        store = Store(run_config.store)
        env = environment(run_config)
        state["run_id"] = store.start_run("pytest " + " ".join(shlex.quote(a) for a in config.invocation_params.args), run_config.to_json(), env, env.get("corpus_sha256"))
        infos = Runner(run_config.backends, timeout=run_config.timeout).probe()
        for name, info in infos.items():
            store.record_backend(state["run_id"], name, info.available, info.reason, info.version, info.environment)
        state["live"] = {name: (info.available, info.reason) for name, info in infos.items()}
        store.close()
    config.stash[_STATE] = state


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # xdist hook: share the run with workers
    state = node.config.stash.get(_STATE, None)
    if state:
        node.workerinput["harness_run_id"] = state["run_id"]
        node.workerinput["harness_live"] = state["live"]


class UnspecifiedBehaviour(pytest.PytestWarning):
    """A backend differs from our choice only where the spec is silent (outcome ``unspecified``)."""


class HarnessFailure(Exception):
    pass


class UnavailableBackendItem(pytest.Item):
    """A requested backend that cannot load: one failing item with the reason, instead of a
    skip per case (``--harness-allow-unavailable`` restores the skips)."""

    def __init__(self, *, backend: str, reason: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.backend = backend
        self.reason = reason

    def runtest(self) -> None:
        raise HarnessFailure(f"backend {self.backend} unavailable: {self.reason}\n"
                             "(--harness-allow-unavailable skips its cases instead)")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return "onnx-harness", None, f"backend[{self.backend}]"


class CaseItem(pytest.Item):
    def __init__(self, *, case: Any, backend: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.case = case
        self.backend = backend

    def runtest(self) -> None:
        state = self.config.stash[_STATE]
        available, reason = state["live"][self.backend]
        if not available:
            pytest.skip(f"backend {self.backend} unavailable: {reason}")
        result = state["recorder"].record(state["runner"].run_one(self.case, self.backend), self.case)
        if result.outcome == "skip":
            pytest.skip(result.message)
        if result.outcome in ("pass", "xpass"):
            return  # an xpass is reported by pytest's strict xfail marker
        if result.outcome == "unspecified":  # not a failure: shown as a warning with its spec text and bundle
            self.user_properties.append(("unspecified", result.message))
            warnings.warn(UnspecifiedBehaviour(f"{self.case.id} on {self.backend}: {result.message}"
                                               + (f" (repro bundle: {result.bundle})" if result.bundle else "")))
            return
        raw = result.raw_outcome or result.outcome
        rerun = f"onnx-harness run --suite {self.case.suite} --backend {self.backend} -k '^{re.escape(self.case.id)}$'"
        lines = [f"{self.case.id} on {self.backend}: {raw}", result.message]
        if result.bundle:
            lines.append(f"repro bundle: {result.bundle} (python {result.bundle}/repro.py)")
        lines.append(f"re-run: {rerun}")
        raise HarnessFailure("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.case.id, None, f"{self.case.id}[{self.backend}]"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    from . import expectations
    from .run import select_cases

    run_config = state["config"]
    names = [b.name for b in run_config.backends]
    entries = expectations.load(names, run_config.expectations)
    if not config.getoption("harness_allow_unavailable"):
        for name in names:
            available, reason = state["live"][name]
            if not available:
                items.append(UnavailableBackendItem.from_parent(session, name=f"backend[{name}]", backend=name, reason=reason))
        names = [name for name in names if state["live"][name][0]]
    for case in select_cases(run_config, say=lambda m: None):
        for name in names:
            item = CaseItem.from_parent(session, name=f"{case.id}[{name}]", case=case, backend=name)
            entry = next((e for e in entries if e.backend == name and fnmatchcase(case.id, e.case)), None)
            if entry is not None:
                item.add_marker(pytest.mark.xfail(reason=entry.reason, strict=True))
            items.append(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    from . import expectations
    from .worker import ExecOptions
    from .record import Recorder
    from .runner import Runner
    from .store import Store, bundles_root

    run_config = state["config"]
    entries = expectations.load([b.name for b in run_config.backends], run_config.expectations)
    state["recorder"] = Recorder(Store(run_config.store), state["run_id"], bundles_root(run_config.store),
                                 {b.name: b for b in run_config.backends}, entries, run_config.restamp, run_config.opset)
    options = ExecOptions(restamp=run_config.restamp, opset=run_config.opset, limits=run_config.intake_limits())
    state["runner"] = Runner(run_config.backends, jobs=1, timeout=run_config.timeout, options=options, limits=run_config.worker_limits()).__enter__()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    runner = state.pop("runner", None)
    if runner is not None:
        runner.__exit__(None, None, None)
    if _is_xdist_worker(session.config):
        return
    from .cli import write_run_json
    from .store import Store

    store = Store(state["config"].store)
    store.finish_run(state["run_id"], "complete" if exitstatus in (0, 1) else "interrupted")
    path = write_run_json(store, state["run_id"])
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"onnx-harness: run {state['run_id']} stored in {store.path}; JSON: {path}")
