"""Backends that misbehave on purpose, for testing the runner's isolation.

Each wraps the reference backend and misbehaves only on cases whose id contains its trigger
word, so one run can show that every other result stays intact."""

from __future__ import annotations

import ctypes
import os
import threading
import time

from harness.backends.reference import ReferenceBackend, ReferenceSession


class _Faulty(ReferenceBackend):
    repro_runtime = None  # not onnx.reference as it is: a bundle replays it through the harness
    trigger = "FAULT"

    def prepare(self, model):
        session = super().prepare(model)
        fault = self.fault
        trigger_hit = any(self.trigger in (n.name or "") for n in model.graph.node) or self.trigger in model.graph.name

        class S(ReferenceSession):
            def run(self, feeds):
                if trigger_hit:
                    fault()
                return session.run(feeds)

        return S(session.evaluator)

    def fault(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def misbehaving(name: str):
    """Makes a misbehaviour into the backend (``name`` its backend name) that shows it on the
    cases its trigger word picks. The backend class takes the function's name and docstring."""

    def backend(fault) -> type:
        attrs = {"__doc__": fault.__doc__, "__module__": fault.__module__, "name": name, "fault": staticmethod(fault)}
        return type(fault.__name__, (_Faulty,), attrs)

    return backend


@misbehaving("segfault")
def Segfault():
    ctypes.string_at(0)


@misbehaving("abort")
def Abort():
    os.abort()


@misbehaving("exit")
def Exit():
    os._exit(3)


@misbehaving("hang")
def Hang():
    time.sleep(3600)


@misbehaving("raise")
def Raise():
    raise RuntimeError("deliberate failure")


@misbehaving("unsupported-op")
def Unsupported():
    from harness.backends.base import Unsupported as U

    raise U("no kernel for Fault-1")


class WrongValue(ReferenceBackend):
    """Adds 1 to every float output of a case whose graph name contains FAULT."""

    name = "wrong-value"

    def prepare(self, model):
        session = super().prepare(model)
        hit = "FAULT" in model.graph.name

        class S(ReferenceSession):
            def run(self, feeds):
                outs = session.run(feeds)
                return [o + 1 if hit and hasattr(o, "dtype") and o.dtype.kind == "f" else o for o in outs]

        return S(session.evaluator)


@misbehaving("threads")
def Threads():
    for _ in range(50):
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()


class Pids(ReferenceBackend):
    """Appends the worker's process id to ``<folder>/pids`` for every case it prepares, so a
    test can see which process ran which case."""

    name = "pids"

    def prepare(self, model):
        with open(os.path.join(self.options["folder"], "pids"), "a") as f:
            f.write(f"{os.getpid()}\n")
        return super().prepare(model)


class RunLog(ReferenceBackend):
    """Appends the sha256 of each model it prepares to the file named by ``$ONNX_HARNESS_RUN_LOG``,
    so a test can count how often each case ran (one line per case, whatever its outcome)."""

    name = "run-log"

    def prepare(self, model):
        import hashlib

        with open(os.environ["ONNX_HARNESS_RUN_LOG"], "a") as f:
            f.write(hashlib.sha256(model.SerializeToString()).hexdigest() + "\n")
        return super().prepare(model)


class NotInstalled(ReferenceBackend):
    name = "not-installed"

    @classmethod
    def available(cls):
        return False, "vendor-sdk is not installed (pip install vendor-sdk)"


class Slow(ReferenceBackend):
    """Takes half a second per case, so that a run can be interrupted in the middle."""

    name = "slow"

    def prepare(self, model):
        time.sleep(0.5)
        return super().prepare(model)


@misbehaving("allocate")
def Allocate():
    """Allocates without bound."""
    import numpy as np

    hoard = []
    while True:
        hoard.append(np.ones(1 << 27))  # 1 GiB at a time, touched


@misbehaving("chatty")
def Chatty():
    """Prints megabytes."""
    import sys

    line = "x" * 1023 + "\n"
    for _ in range(200 * 1024):
        sys.stdout.write(line)
    sys.stdout.flush()


@misbehaving("spin")
def Spin():
    """Burns CPU forever."""
    while True:
        pass


class AlwaysWrong(ReferenceBackend):
    """Adds 1 to every float output: every float case is a mismatch."""

    name = "always-wrong"

    def prepare(self, model):
        session = super().prepare(model)

        class S(ReferenceSession):
            def run(self, feeds):
                return [o + 1 if hasattr(o, "dtype") and o.dtype.kind == "f" else o for o in session.run(feeds)]

        return S(session.evaluator)


class Sleep(ReferenceBackend):
    """Takes ``ms`` milliseconds per run, plus up to ``jitter_ms`` of uniform jitter either side
    (seeded), then answers as the reference backend: a backend of known speed for perf tests.
    It sleeps for real; with ``virtual`` true it advances its session's own clock instead (the
    ``Session.clock`` a device-timed backend has), so its timings hold on a busy machine."""

    name = "sleep"

    def prepare(self, model):
        import random

        session = super().prepare(model)
        ms, jitter = float(self.options.get("ms", 10)), float(self.options.get("jitter_ms", 0))
        rng = random.Random(int(self.options.get("seed", 0)))
        virtual = [0.0] if self.options.get("virtual") else None

        class S(ReferenceSession):
            clock = (lambda self: virtual[0]) if virtual else None

            def run(self, feeds):
                took = (ms + rng.uniform(-jitter, jitter)) / 1000
                if virtual:
                    virtual[0] += took
                else:
                    time.sleep(took)
                return session.run(feeds)

        return S(session.evaluator)


class Loaded(ReferenceBackend):
    """Answers as the reference backend and takes the time ``tests.seeded_load`` gives its first
    node's op on a simulated shared machine, on its session's own clock (virtual: the test holds
    on any machine). Options: ``state`` (the measurement counter's file), ``seed``, ``slow_op`` and
    ``factor`` (an op made slower)."""

    name = "loaded"

    def prepare(self, model):
        from tests import seeded_load

        session = super().prepare(model)
        o = self.options
        op = model.graph.node[0].op_type if model.graph.node else ""
        took = seeded_load.Measurement(int(o.get("seed", 0)), seeded_load.next_measurement(o["state"]), op, o.get("slow_op"),
                                       float(o.get("factor", 1.0)))
        virtual = [0.0]

        class S(ReferenceSession):
            clock = lambda self: virtual[0]  # noqa: E731

            def run(self, feeds):
                virtual[0] += took.next()
                return session.run(feeds)

        return S(session.evaluator)


class DieOnLoad(ReferenceBackend):
    """Kills the process that loads it (a native library that aborts at import)."""

    name = "die-on-load"

    def load(self):
        os._exit(7)


@misbehaving("kill-host")
def KillHost():
    """Kills the Ray worker process that hosts the runner (the parent of its forkserver), as a
    dying node would; refuses anywhere else, so that it never kills a local controller."""
    with open(f"/proc/{os.getppid()}/stat") as f:
        host = int(f.read().rsplit(")", 1)[1].split()[1])
    with open(f"/proc/{host}/cmdline", "rb") as f:
        if not f.read().startswith(b"ray::"):  # a Ray worker names itself ray::<task>
            raise RuntimeError("kill-host runs only under a Ray worker")
    os.kill(host, 9)
    time.sleep(60)
