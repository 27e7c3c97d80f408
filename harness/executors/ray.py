"""Cases as Ray tasks: ``onnx-harness run --executor ray [--ray-address ADDR]``.

Isolation: every Ray worker process keeps one local :class:`harness.runner.Runner` (one
worker of its own), and a Ray task hands it one (case, backend) pair. The case therefore runs
in the runner's own worker process, under the same memory/CPU/output limits, with the same
crash and timeout classification as a local run: a backend that segfaults kills that process,
never the Ray worker, and the runner reports ``crash`` and starts another. Backends load once
per such process, as locally. Ray's process isolation is the second line: if a Ray worker or a
whole node dies (the task was not answered), Ray retries the task elsewhere (``retries``
times); when the retries are spent the case is ``crash`` with Ray's reason.

Results stream back as they finish (``ray.wait``) and the caller stores each one at once, one
transaction per result; a controller killed mid-run keeps every stored result and
``run --resume`` runs only what is missing.

Resources: a task asks for the CPUs its backend uses (the backend's ``threads`` option, else
1, and a backend with a ``threads`` option left unset gets that many threads) plus the
backend's custom resources (``--ray-resource openvino.GPU=1``), so a GPU backend runs only
on a node that has one; a backend no node can host is ``unavailable`` with the reason.

This module imports ray; :mod:`harness.run` imports it only for ``--executor ray``.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import ray
from ray import exceptions as ray_errors

from ..case import Case
from ..worker import ExecOptions, Result
from ..runner import BackendInfo, BackendSpec, Runner, WorkerLimits

#: Ray retries of a task whose Ray worker or node died before answering
DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class _Setup:
    """What every Ray worker needs to build its runner; ``token`` names one run."""

    token: str
    specs: tuple[BackendSpec, ...]
    timeout: float
    options: ExecOptions
    limits: WorkerLimits
    recycle_after: int

    def runner(self, threads: int, specs: tuple[BackendSpec, ...] | None = None) -> Runner:
        runner = Runner(list(specs or self.specs), jobs=1, timeout=self.timeout, options=self.options,
                        recycle_after=self.recycle_after, limits=self.limits)
        runner.threads = threads
        return runner


# -- the Ray worker side ------------------------------------------------------------------------
_here: dict[str, Any] = {}  # per Ray worker process: the runners of the current run, by threads


def _runner(setup: _Setup, threads: int) -> Runner:
    if _here.get("token") != setup.token:  # a new run: the old one's runners (and their workers) go
        for old in _here.pop("runners", {}).values():
            old.__exit__(None, None, None)
        _here.update(token=setup.token, runners={})
    runners = _here["runners"]
    if threads not in runners:
        runners[threads] = setup.runner(threads)
        runners[threads].__enter__()  # persistent: its worker (and the backends it loaded) serves every task here
    return runners[threads]


def _run_case(setup: _Setup, case: Case, name: str, threads: int) -> Result:
    result = _runner(setup, threads).run_one(case, name)
    result.tags["ray_node"] = ray.get_runtime_context().get_node_id()[:12]
    return result


def _probe(setup: _Setup, name: str, threads: int) -> BackendInfo:
    spec = next(s for s in setup.specs if s.name == name)
    with setup.runner(threads, (spec,)) as runner:
        return runner.probe()[name]


# -- the controller side --------------------------------------------------------------------------
class RayRunner:
    """The :class:`harness.runner.Runner` interface (``probe``, ``run``) on a Ray cluster."""

    def __init__(self, backends: list[BackendSpec], timeout: float = 120.0, options: ExecOptions | None = None,
                 recycle_after: int = 0, limits: WorkerLimits | None = None, address: str | None = None,
                 resources: dict[str, dict[str, float]] | None = None, retries: int = DEFAULT_RETRIES,
                 say: Callable[[str], None] = print, window: int | None = None) -> None:
        self.setup = _Setup(uuid.uuid4().hex, tuple(backends), timeout, options or ExecOptions(), limits or WorkerLimits(), recycle_after)
        self.resources = resources or {}
        self.retries = retries
        self.window = window
        self.started = not ray.is_initialized()
        if self.started:
            ray.init(address=address, log_to_driver=False, configure_logging=False,
                     **({} if address else {"include_dashboard": False}))
        nodes = [n for n in ray.nodes() if n["Alive"]]
        self.cpus = int(sum(n["Resources"].get("CPU", 0) for n in nodes))
        here = ray.util.get_node_ip_address()
        #: cases are sent as bytes when a node may not see the controller's files
        self.ship = any(n["NodeManagerAddress"] != here for n in nodes)
        say(f"ray: {len(nodes)} node(s), {self.cpus} CPU(s) at {ray.get_runtime_context().gcs_address}"
            + ("; cases are sent with their data" if self.ship else ""))
        self._setup_ref: Any = None

    # resources ------------------------------------------------------------------------------
    def task_options(self, name: str) -> tuple[dict[str, Any], int]:
        """Ray options of a task of backend ``name``, and the threads its backend gets."""
        spec = next(s for s in self.setup.specs if s.name == name)
        threads = spec.options.get("threads")
        cpus = threads if isinstance(threads, int) and threads > 0 else 1
        extra = dict(self.resources.get(name, {}))
        gpus = extra.pop("GPU", 0)
        opts = {"num_cpus": cpus, "max_retries": self.retries, "retry_exceptions": False}
        if gpus:
            opts["num_gpus"] = gpus
        if extra:
            opts["resources"] = extra
        return opts, cpus

    @staticmethod
    def infeasible(opts: dict[str, Any]) -> dict[str, float] | None:
        """The request when no live node could ever grant it (Ray would wait for one forever)."""
        need = {"CPU": opts.get("num_cpus", 0), "GPU": opts.get("num_gpus", 0), **(opts.get("resources") or {})}
        need = {k: v for k, v in need.items() if v}
        for node in ray.nodes():
            if node["Alive"] and all(node["Resources"].get(k, 0) >= v for k, v in need.items()):
                return None
        return need

    def _ref(self) -> Any:
        if self._setup_ref is None:
            self._setup_ref = ray.put(self.setup)
        return self._setup_ref

    # the runner interface ---------------------------------------------------------------------
    def probe(self) -> dict[str, BackendInfo]:
        """Load each backend once on a node that can host it: its version and environment, or why not."""
        infos: dict[str, BackendInfo] = {}
        refs = {}
        for spec in self.setup.specs:
            opts, threads = self.task_options(spec.name)
            need = self.infeasible(opts)
            if need:
                infos[spec.name] = BackendInfo(spec.name, False, f"no node of the Ray cluster offers {need}")
                continue
            refs[spec.name] = ray.remote(_probe).options(**opts).remote(self._ref(), spec.name, threads)
        for name, ref in refs.items():
            try:
                infos[name] = ray.get(ref)
            except ray_errors.RayError as exc:
                infos[name] = BackendInfo(name, False, f"probe on the Ray cluster failed: {_first_line(exc)}")
        return {s.name: infos[s.name] for s in self.setup.specs}

    def run(self, tasks: Iterable[tuple[Case, str]], on_result: Callable[[Result], None]) -> None:
        """Run every (case, backend name) task on the cluster; ``on_result`` gets each result as it arrives."""
        queue = deque(tasks)
        remote = ray.remote(_run_case)
        options = {s.name: self.task_options(s.name) for s in self.setup.specs}
        window = self.window or max(8, 2 * self.cpus)  # tasks in flight: every CPU busy, one more queued behind each
        pending: dict[Any, tuple[Case, str]] = {}
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    case, name = queue.popleft()
                    opts, threads = options[name]
                    pending[remote.options(**opts).remote(self._ref(), self._portable(case), name, threads)] = (case, name)
                ready, rest = ray.wait(list(pending), num_returns=1)
                if rest:  # and whatever else finished meanwhile
                    ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
                for ref in ready:
                    case, name = pending.pop(ref)
                    on_result(self._result(ref, case, name))
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            self.close()

    def close(self) -> None:
        if self.started and ray.is_initialized():
            ray.shutdown()

    # ------------------------------------------------------------------------------------------
    def _portable(self, case: Case) -> Case:
        if not self.ship or case.model_bytes is not None or case.path is None:
            return case
        model = case.load_model()
        return replace(case, path=None, model_bytes=model.SerializeToString(), data=case.load_data(model))

    def _result(self, ref: Any, case: Case, name: str) -> Result:
        try:
            return ray.get(ref)
        except ray_errors.RayTaskError as exc:  # the task itself raised: a harness bug, shown as such
            return Result(case.id, name, "error", f"harness error on a Ray worker: {_first_line(exc)}", tags=dict(case.tags))
        except ray_errors.RayError as exc:  # the Ray worker or node died, and the retries are spent
            return Result(case.id, name, "crash", f"Ray worker lost after {self.retries} retries: {type(exc).__name__}: "
                                                  f"{_first_line(exc)}", tags=dict(case.tags))


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:500]
