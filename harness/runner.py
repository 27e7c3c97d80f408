"""Schedules case x backend on isolated worker processes.

Each worker is a process with a pipe to the controller. It loads backends lazily, runs one
(case, backend) task at a time and sends back a :class:`Result`; the controller keeps the next
task queued on it, so a worker goes from case to case without waiting for the controller. A worker that dies (segfault,
abort, exit) turns its task into ``crash`` and is replaced; a task that outlives its timeout is
killed and becomes ``timeout``. Results are handed to a callback as they finish, so the caller
can store each one at once: an interrupted run loses nothing it finished.
"""

from __future__ import annotations

import os
import math
import resource
import select
import signal
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from . import forkserver
from .forkserver import last_lines
from .case import Case
from .worker import ExecOptions, Result, Sessions, execute_case
from .timing import cores, limit_blas_threads, peak_rss, reset_peak_rss


@dataclass
class BackendSpec:
    """What a worker needs to build a backend: its name or ``module:Class`` and options."""

    spec: str
    options: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or self.spec


@dataclass(frozen=True)
class WorkerLimits:
    """Per-worker resource limits; a breach ends the case as crash or timeout, naming the limit.

    memory: bytes of data segment + private mappings (RLIMIT_DATA), what numpy and native
    allocators draw on; cpu: CPU seconds per case (RLIMIT_CPU, raised before each case);
    output: bytes a case may print (RLIMIT_FSIZE on the worker's own log file).
    """

    memory: int | None = 8 << 30
    cpu: float | None = None
    output: int | None = 64 << 20


@dataclass
class BackendInfo:
    name: str
    available: bool
    reason: str = ""
    version: str = ""
    environment: dict[str, Any] = field(default_factory=dict)


# -- the worker side ------------------------------------------------------------------------
def _build_backend(spec: BackendSpec, threads: int | None = None) -> Any:
    """Build and load the backend; one that takes a ``threads`` option gets ``threads`` (when
    given) unless its options set it."""
    from .backends import load_backend_class

    cls = load_backend_class(spec.spec)
    ok, reason = cls.available()
    if not ok:
        from .backends.base import Unavailable

        raise Unavailable(reason)
    options = dict(spec.options)
    if threads is not None and getattr(cls, "takes_threads", False):  # a class attribute of the backends that have the option
        options.setdefault("threads", threads)
    backend = cls(**options)
    backend.load()
    if spec.name != cls.name:
        backend.name = spec.name
    return backend


def _apply_limits(limits: WorkerLimits, log_path: str) -> int:
    """Send the worker's stdout/stderr to its log file and set its resource limits."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    if limits.memory:
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory, limits.memory))
    if limits.output:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output, limits.output))
    return fd


def _arm_cpu_limit(limits: WorkerLimits) -> None:
    if limits.cpu:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        resource.setrlimit(resource.RLIMIT_CPU, (int(used + limits.cpu) + 1, hard))


def received(conn: Connection) -> Iterator[Any]:
    """The messages a worker process is sent, until the controller sends None or the pipe closes."""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        yield msg


def _worker_main(conn: Connection, specs: dict[str, BackendSpec], options: ExecOptions, limits: WorkerLimits, log_path: str,
                 threads: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller decides what Ctrl-C means
    log_fd = _apply_limits(limits, log_path)
    backends: dict[str, Any] = {}
    threads_used: dict[str, Any] = {}  # per backend, as it reads them back after loading
    blas = _limit_blas(threads)
    sessions = Sessions()  # cases of one model share its session
    tasks: deque[tuple[Case, str]] = deque()  # received in one chunk, run in order, each answered
    messages = received(conn)
    while True:
        if not tasks:
            kind, payload = next(messages, (None, None))
            if kind is None:
                return
            if kind == "probe":
                info = _probe(payload, specs[payload], backends, threads)
                if info.available:  # the cases that follow report the threads the backend read back
                    threads_used[payload] = info.environment.get("threads")
                conn.send(info)
                continue
            tasks.extend(payload)
            continue
        case, name = tasks.popleft()
        os.ftruncate(log_fd, 0)  # the output limit is per case
        _arm_cpu_limit(limits)
        reset_peak_rss()
        backend = backends.get(name)
        if backend is None:
            try:
                backend = backends[name] = _build_backend(specs[name], threads)
                threads_used[name] = backend.environment().get("threads")
            except Exception as exc:
                conn.send(Result(case.id, name, "error", f"backend {name} failed to load: {type(exc).__name__}: {exc}", tags=dict(case.tags)))
                continue
        try:
            result = execute_case(backend, case, options, sessions)
        except MemoryError:
            result = Result(case.id, name, "crash", _oom_message(limits), tags=dict(case.tags))
        except Exception as exc:  # execute_case catches backend errors; this is our own bug
            result = Result(case.id, name, "error", f"harness error: {type(exc).__name__}: {exc} {traceback.format_exc(limit=3)}", tags=dict(case.tags))
        if threads_used.get(name) is not None:
            result.tags["threads"] = threads_used[name]
        result.timing["peak_rss"] = peak_rss()
        if "median_s" in result.timing:
            result.timing.update(threads=threads_used.get(name), blas=blas)
        if result.outcome == "error" and ("MemoryError" in result.message or "bad_alloc" in result.message):
            result.outcome, result.message = "crash", f"{_oom_message(limits)}: {result.message}"
        conn.send(result)
        if result.outcome == "crash":
            return  # an out-of-memory worker is not trusted with another case


def _limit_blas(threads: int) -> Any:
    """Hold numpy's BLAS / OpenMP pools to the worker's share of the cores; what they use, or
    why they could not be held (said in each timed result)."""
    try:
        return limit_blas_threads(threads)
    except Exception as exc:
        return f"not limited: {type(exc).__name__}: {exc}"


def _oom_message(limits: WorkerLimits) -> str:
    limit = f" (memory limit {limits.memory / (1 << 30):.1f} GiB)" if limits.memory else ""
    return f"out of memory{limit}"


def _probe(name: str, spec: BackendSpec, backends: dict[str, Any], threads: int) -> BackendInfo:
    try:
        backend = backends.get(name) or _build_backend(spec, threads)
        backends[name] = backend
        return BackendInfo(name, True, "", backend.version(), backend.environment())
    except Exception as exc:
        from .backends.base import Unavailable

        return BackendInfo(name, False, str(exc) if isinstance(exc, Unavailable) else f"{type(exc).__name__}: {exc}")


# -- the controller side --------------------------------------------------------------------
class _Worker:
    def __init__(self, ctx: Any, specs: dict[str, BackendSpec], options: ExecOptions, limits: WorkerLimits, log_dir: str,
                 threads: int) -> None:
        self.conn, child = ctx.Pipe()
        fd, self.log_path = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=log_dir)
        os.close(fd)
        self.process = ctx.Process(target=_worker_main, args=(child, specs, options, limits, self.log_path, threads), daemon=True)
        self.process.start()
        child.close()
        #: tasks sent and not answered, in the order the worker runs them: the first is running
        self.tasks: deque[tuple[Case, str]] = deque()
        #: the worker died or was killed (its pipe is no use)
        self.dead = False
        self.deadline = 0.0
        self.started = 0.0
        self.done = 0
        #: seconds its recent tasks took (a moving average; None before the first answer)
        self.pace: float | None = None
        self._answers = select.poll()  # kept: asked after every answer whether another waits
        self._answers.register(self.conn.fileno(), select.POLLIN)

    @property
    def task(self) -> tuple[Case, str] | None:
        """The task the worker is running (None when idle)."""
        return self.tasks[0] if self.tasks else None

    def send(self, tasks: list[tuple[Case, str]], timeout: float) -> None:
        """Queue tasks on the worker, in one message (the worker answers each); the one it starts
        now gets its deadline at once, a queued one when the task before it answers (:meth:`answered`)."""
        if not self.tasks:
            self.started = time.monotonic()
            self.deadline = self.started + timeout
        self.tasks.extend(tasks)
        try:
            self.conn.send(("run", tasks))
        except OSError:  # the worker died since the last look: its sentinel says so next, and the
            pass  # task it was running gets the death while this one goes back to the queue

    def answer_waiting(self) -> bool:
        """Whether an answer (or the end of the pipe) waits to be read, without waiting."""
        return bool(self._answers.poll(0))

    def answered(self, timeout: float) -> None:
        self.tasks.popleft()
        now = time.monotonic()
        took = now - self.started
        self.pace = took if self.pace is None else 0.7 * self.pace + 0.3 * took
        self.started = now
        self.deadline = self.started + timeout

    def log_tail(self, size: int = 600) -> str:
        """The last lines the worker printed (a native crash often says why there)."""
        return " | ".join(last_lines(self.log_path, size)[-3:])[-size:]

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        self._cleanup()

    def _cleanup(self) -> None:
        try:
            os.unlink(self.log_path)
        except OSError:
            pass

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(2)
        if self.process.is_alive():
            self.kill()
        else:
            self.conn.close()
            self._cleanup()


def _describe_death(process: Any, limits: WorkerLimits | None = None) -> tuple[str, str]:
    """(outcome, message) for a worker that died."""
    code = process.exitcode
    if code is None:
        return "crash", "worker died"
    if code < 0:
        if -code == signal.SIGXCPU and limits and limits.cpu:
            return "timeout", f"CPU time limit of {limits.cpu:g} s exceeded; worker killed by SIGXCPU"
        if -code == signal.SIGXFSZ and limits and limits.output:
            return "crash", f"output limit of {limits.output >> 20} MiB exceeded; worker killed by SIGXFSZ"
        try:
            return "crash", f"worker killed by {signal.Signals(-code).name}"
        except ValueError:
            return "crash", f"worker killed by signal {-code}"
    return "crash", f"worker exited with status {code}"


class Runner:
    def __init__(self, backends: list[BackendSpec], jobs: int = 1, timeout: float = 120.0,
                 options: ExecOptions | None = None, recycle_after: int = 0, limits: WorkerLimits | None = None) -> None:
        self.specs = {b.name: b for b in backends}
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.options = options or ExecOptions()
        self.recycle_after = recycle_after
        self.limits = limits or WorkerLimits()
        #: threads per worker for backends with a ``threads`` option the user left unset
        self.threads = default_threads(self.jobs)
        self.ctx = forkserver.context()
        self.workers: list[_Worker] = []
        self.log_dir = tempfile.mkdtemp(prefix="onnx-harness-")
        #: (the busy workers, a poll object of their pipes and sentinels, fd -> pipe or sentinel)
        self._poller: tuple[list[_Worker], Any, dict[int, Any]] | None = None

    def _spawn(self) -> _Worker:
        os.makedirs(self.log_dir, exist_ok=True)
        return _Worker(self.ctx, self.specs, self.options, self.limits, self.log_dir, self.threads)

    def probe(self, keep: bool = False) -> dict[str, BackendInfo]:
        """Load each backend once in a worker: its version and environment, or why not. With
        ``keep`` the worker, backends loaded, stays for the next :meth:`run` (which stops it), and
        the run's other workers start and load the backends meanwhile."""
        infos: dict[str, BackendInfo] = {}
        warming = [self._spawn() for _ in range(self.jobs - 1)] if keep else []
        for extra in warming:
            for name in self.specs:
                extra.conn.send(("probe", name))
        worker = self._spawn()
        try:
            for name in self.specs:
                worker.conn.send(("probe", name))
                if worker.conn.poll(max(self.timeout, 60)):
                    try:
                        infos[name] = worker.conn.recv()
                        continue
                    except EOFError:
                        pass
                infos[name] = BackendInfo(name, False, _describe_death(worker.process, self.limits)[1] + " while loading")
                worker.kill()
                worker = self._spawn()
        except BaseException:
            for w in [worker, *warming]:
                w.kill()
            raise
        if keep:
            self.workers.append(worker)
            self.workers.extend(w for w in warming if self._warmed(w))
        else:
            worker.stop()
        return infos

    def _warmed(self, worker: _Worker) -> bool:
        """Collect a warming worker's answers to its probes; one that died or hung is dropped (the
        run spawns another)."""
        for _ in self.specs:
            try:
                if worker.conn.poll(max(self.timeout, 60)):
                    worker.conn.recv()
                    continue
            except (EOFError, OSError):
                pass
            worker.kill()
            return False
        return True

    def __enter__(self) -> Runner:
        """Keep the workers between ``run`` calls (as the pytest plugin does, one case at a time)."""
        self._persistent = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self._persistent = False
        self._shutdown()

    def run_one(self, case: Case, backend: str) -> Result:
        results: list[Result] = []
        self.run([(case, backend)], results.append)
        return results[0]

    def run(self, tasks: Iterable[tuple[Case, str]], on_result: Callable[[Result], None],
            on_idle: Callable[[], None] | None = None) -> None:
        """Run every (case, backend name) task; ``on_result`` gets each result as it finishes, and
        ``on_idle`` (if given) is called at least every ``idle_s`` while no result comes (a
        caller storing results in batches commits the waiting ones then).

        Each worker holds the task it runs and the next ones, already sent, so it never waits for
        the controller between cases (which stores the result meanwhile): about ``ahead_s`` seconds
        of work at its recent pace, two at least and ``depth`` at most (a queue of a few quick cases
        ran dry while a busy controller slept or stored results), sent in chunks of consecutive
        tasks (:meth:`_feed`). A task still queued on a worker that dies or times out goes back to
        the queue."""
        queue = deque(tasks)
        want = min(self.jobs, max(1, len(queue)))
        while len(self.workers) < want:
            self.workers.append(self._spawn())
        try:
            while queue or any(w.tasks for w in self.workers):
                self._feed(queue)
                busy = [w for w in self.workers if w.tasks]
                now = time.monotonic()
                wait_for = max(0.0, min(w.deadline for w in busy) - now) if busy else 0.0
                if on_idle is not None:
                    wait_for = min(wait_for, self.idle_s)
                ready = self._wait(busy, wait_for)
                finished = []
                for worker in busy:
                    # every answer already waiting, in one round (a busy controller finds several)
                    seen = ready
                    while worker.tasks and (outcome := self._collect(worker, seen)) is not None:
                        worker.done += 1
                        finished.append(outcome)
                        # a worker that answered and then died is seen by its sentinel on the next round,
                        # as a death of the task it was running then
                        alive = outcome.outcome != "crash" and not worker.dead
                        if not alive or (self.recycle_after and worker.done >= self.recycle_after):
                            queue.extendleft(reversed(worker.tasks))  # sent, not started: run them elsewhere
                            worker.tasks.clear()
                            self._replace(worker)
                            break
                        if not worker.answer_waiting():
                            break
                        seen = [worker.conn]
                self._feed(queue)  # before storing: the workers run meanwhile
                for outcome in finished:
                    on_result(outcome)
                if not finished and on_idle is not None:
                    on_idle()
                if self.linger_s and self.workers and all(len(w.tasks) >= max(self.linger_when, self._room(w) // 2 + 1)
                                                          for w in self.workers):
                    time.sleep(self.linger_s)  # no worker is due more work: let answers gather, taken in one round
        except BaseException:
            self._shutdown()
            raise
        if not getattr(self, "_persistent", False):
            self._shutdown()

    #: a worker holds about ``ahead_s`` seconds of tasks at its recent pace, two at least (a long
    #: case holds one other up behind it) and ``depth`` at most; a chunk sent at once stops growing
    #: past ``chunk_bytes`` of models and data held in memory, so that it always fits in the pipe
    #: (the controller never blocks sending while the worker blocks sending it answers)
    depth = 64
    ahead_s = 0.03
    chunk_bytes = 1 << 16
    #: seconds between ``on_idle`` calls while no result comes
    idle_s = 0.1
    #: seconds the controller lets answers gather while every worker holds at least
    #: ``linger_when`` tasks and more than it is fed at (none is due more work), so that it wakes
    #: once for several answers instead of once for each (a wake-up costs both sides CPU time)
    linger_s = 0.002
    linger_when = 4

    def _wait(self, busy: list[_Worker], timeout: float) -> list[Any]:
        """The busy workers' pipes and sentinels that are ready within ``timeout`` seconds (what
        ``multiprocessing.connection.wait`` answers), through one poll object kept while the busy
        workers stay the same: building one each round cost more than the poll itself."""
        if self._poller is None or self._poller[0] != busy:
            poller, objects = select.poll(), {}
            for obj in [w.conn for w in busy] + [w.process.sentinel for w in busy]:
                fd = obj if isinstance(obj, int) else obj.fileno()
                poller.register(fd, select.POLLIN)
                objects[fd] = obj
            self._poller = (list(busy), poller, objects)
        _, poller, objects = self._poller
        return [objects[fd] for fd, _ in poller.poll(math.ceil(timeout * 1000))]

    def _feed(self, queue: deque) -> None:
        """Send each worker consecutive tasks from the queue, in chunks of one message each: a worker
        at half its room or below is filled up to it (tasks next to each other, often cases of one model,
        go to one worker, which shares their session), or until the chunk holds ``chunk_bytes``."""
        for worker in self.workers:
            room = self._room(worker)
            n = min(len(queue), room - len(worker.tasks))
            if n > 0 and len(worker.tasks) <= room // 2:
                chunk, size = [], 0
                while len(chunk) < n and size < self.chunk_bytes:
                    chunk.append(queue.popleft())
                    size += _held_bytes(chunk[-1][0])
                worker.send(chunk, self.timeout)

    def _room(self, worker: _Worker) -> int:
        """How many tasks this worker may hold, fewer when it is due for recycling."""
        room = 2 if worker.pace is None else max(2, min(self.depth, math.ceil(self.ahead_s / max(worker.pace, 1e-9))))
        if self.recycle_after:
            return max(0, min(room, self.recycle_after - worker.done))
        return room

    def close(self) -> None:
        """Stop the workers (those a kept probe left, or a persistent runner's)."""
        self._shutdown()

    def _shutdown(self) -> None:
        for worker in self.workers:
            worker.kill() if worker.task else worker.stop()
        self.workers = []
        try:
            os.rmdir(self.log_dir)
        except OSError:
            pass

    def _collect(self, worker: _Worker, ready: list[Any]) -> Result | None:
        """The result of the worker's running task, or its crash or timeout; None while it runs."""
        case, name = worker.tasks[0]
        if worker.conn in ready:
            try:
                result = worker.conn.recv()
                worker.answered(self.timeout)
                return result
            except (EOFError, OSError):
                pass
        elif worker.process.sentinel not in ready and time.monotonic() < worker.deadline:
            return None
        elif worker.process.sentinel not in ready:
            worker.kill()
            worker.dead = True
            worker.tasks.popleft()
            return Result(case.id, name, "timeout", f"no answer within {self.timeout:g} s; worker killed", tags=dict(case.tags))
        worker.process.join(1)
        worker.dead = True
        worker.tasks.popleft()
        outcome, message = _describe_death(worker.process, self.limits)
        tail = worker.log_tail()
        return Result(case.id, name, outcome, f"{message} while running this case" + (f"; it printed: {tail}" if tail else ""), tags=dict(case.tags))

    def _replace(self, worker: _Worker) -> None:
        if worker.process.is_alive():
            worker.stop()
        else:
            worker.kill()
        self.workers.remove(worker)
        self.workers.append(self._spawn())


def _held_bytes(case: Case) -> int:
    """The bytes of model and data a case carries in memory (what its message weighs, about)."""
    size = len(case.model_bytes or b"")
    for ds in case.data or ():
        size += sum(getattr(v, "nbytes", 0) for v in ds.inputs.values()) + sum(getattr(v, "nbytes", 0) for v in ds.expected or ())
    return size


def default_jobs() -> int:
    return cores()


def default_threads(jobs: int) -> int:
    """Threads per worker so that ``jobs`` workers share the cores instead of each filling them."""
    return max(1, cores() // max(1, jobs))
