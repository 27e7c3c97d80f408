"""Executing a generated model on a backend, in this process or in a child process."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import onnx

from .. import forkserver
from ..case import Case
from ..worker import Result, _one_line, execute_case
from ..runner import BackendSpec, _build_backend, received


# =============================================================================================
# executing a model on a backend: in this process or in a child process
# =============================================================================================
@dataclass
class Outcome:
    outputs: list[Any] | None
    outcome: str = "pass"
    message: str = ""
    seconds: float = 0.0


def _run_on(backend: Any, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
    t0 = time.perf_counter()
    model = onnx.load_model_from_string(model_bytes)
    try:
        session = backend.prepare(model)
    except Exception as exc:
        return Outcome(None, backend.classify_error(exc, "prepare"), _one_line(exc), time.perf_counter() - t0)
    try:
        with np.errstate(all="ignore"):
            outputs = list(session.run(feeds))
    except Exception as exc:
        return Outcome(None, backend.classify_error(exc, "run"), _one_line(exc), time.perf_counter() - t0)
    return Outcome(outputs, seconds=time.perf_counter() - t0)


class InProcess:
    """Backends built in this process (fastest; a crashing runtime ends the campaign)."""

    def __init__(self, specs: list[BackendSpec]) -> None:
        self.specs = {s.name: s for s in specs}
        self.backends = {s.name: _build_backend(s) for s in specs}

    def info(self, name: str) -> tuple[str, dict[str, Any]]:
        b = self.backends[name]
        return b.version(), b.environment()

    def run(self, name: str, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
        return _run_on(self.backends[name], model_bytes, feeds)

    def judge(self, name: str, case: Case) -> Result:
        """``case`` run and judged on backend ``name`` as ``onnx-harness run`` does (the result it stores)."""
        return execute_case(self.backends[name], case)

    def close(self) -> None:
        pass


def _child_main(conn: Connection, specs: dict[str, BackendSpec]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller decides what Ctrl-C means
    backends: dict[str, Any] = {}
    for kind, name, payload in received(conn):
        try:
            backend = backends.get(name) or backends.setdefault(name, _build_backend(specs[name]))
        except Exception as exc:
            conn.send(Outcome(None, "error", f"backend {name} failed to load: {_one_line(exc)}"))
            continue
        if kind == "info":
            conn.send((backend.version(), backend.environment()))
        elif kind == "case":
            conn.send(execute_case(backend, payload))
        else:
            conn.send(_run_on(backend, *payload))


class Isolated:
    """Backends in one child process: a crash or a hang becomes an outcome, and the child is
    replaced."""

    def __init__(self, specs: list[BackendSpec], timeout: float = 30.0) -> None:
        self.specs = {s.name: s for s in specs}
        self.timeout = timeout
        self.ctx = forkserver.context()
        self.proc: Any = None
        self.conn: Connection | None = None

    def _ensure(self) -> None:
        if self.proc is None or not self.proc.is_alive():
            self.conn, child = self.ctx.Pipe()
            self.proc = self.ctx.Process(target=_child_main, args=(child, self.specs), daemon=True)
            self.proc.start()
            child.close()

    def _ask(self, msg: tuple, timeout: float) -> Any:
        self._ensure()
        assert self.conn is not None
        self.conn.send(msg)
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                pass
            self.proc.join(1)
            code = self.proc.exitcode
            self._kill()
            return Outcome(None, "crash", f"backend process died ({_death(code)}) while running this graph")
        self._kill()
        return Outcome(None, "timeout", f"no answer within {timeout:g} s; backend process killed")

    def info(self, name: str) -> tuple[str, dict[str, Any]]:
        got = self._ask(("info", name, None), max(self.timeout, 120))
        if isinstance(got, Outcome):
            raise RuntimeError(got.message)
        return got

    def run(self, name: str, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> Outcome:
        return self._ask(("run", name, (model_bytes, feeds)), self.timeout)

    def judge(self, name: str, case: Case) -> Result:
        """``case`` run and judged on backend ``name`` as ``onnx-harness run`` does, in the child;
        a crash or a hang is the result's outcome."""
        got = self._ask(("case", name, case), self.timeout)
        if isinstance(got, Outcome):
            return Result(case.id, name, got.outcome, got.message, tags=dict(case.tags))
        return got

    def _kill(self) -> None:
        if self.proc is not None and self.proc.pid is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive() and self.conn is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(2)
        self._kill()


def _death(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"
