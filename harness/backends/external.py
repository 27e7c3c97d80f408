"""Out-of-process backends: a runtime in another Python environment or another language.

``--backend exec:CMD`` starts CMD (split as a shell would, not run by one) once per worker and
talks to it over its stdin/stdout; a plug-in can instead name a subclass of :class:`ExecBackend`
that sets ``command`` (an entry point in ``harness.backends``, as for any backend). The worker
that owns the runner is the harness's usual isolated worker, so its limits (memory, output),
timeout and crash handling apply unchanged: the runner inherits the worker's memory and file
size limits, gets the CPU seconds the worker has left for each case (a runner killed by SIGXCPU
is a ``timeout``), and is started with a parent-death signal (Linux), so a worker killed on
timeout takes its runner with it. Limits are per process: the runner has a memory budget of
its own, the size of the worker's. Processes the runner starts itself are not covered by the
parent-death signal; a runner that forks helpers must end them when its stdin closes. Tensors
travel as files, so one larger than the output limit (``--output-limit``, 64 MiB by default)
ends its case as a crash that names the limit.

Protocol, version 1
-------------------
Messages are JSON objects, one per line (UTF-8, ``\\n``-terminated). The harness writes a
request on the runner's stdin; the runner writes exactly one reply line on its stdout and
nothing else there (logs go to stderr, which the harness captures and quotes when the runner
misbehaves). Every reply has ``status``: ``ok``, or one of the outcomes ``rejected`` (the model
was refused at load as invalid; the harness keeps it ``rejected`` only when the ONNX checker
agrees, else it is an ``error``), ``unsupported`` (an operator, type or attribute the runtime lacks) or
``error`` (anything else), with ``message``. A runner that exits or writes something that is
not a reply turns the case into ``crash`` or ``error``, with its stderr tail in the message.

``{"op": "hello", "protocol": 1, "options": {...}}``
    reply ``{"status": "ok", "protocol": 1, "name": ..., "version": ..., "environment": {...}}``.
    ``options`` are the backend's ``--option``s; a runner that does not speak version 1
    replies ``error``.
``{"op": "prepare", "model": PATH}``
    PATH is an ONNX model file (already re-stamped by the harness); the runner reads it before
    replying. Reply ``{"status": "ok", "session": ID}``. The harness keeps one session open at
    a time and releases it before the next prepare.
``{"op": "run", "session": ID, "inputs": [VALUE...], "outputs": [NAME...], "dir": DIR}``
    reply ``{"status": "ok", "outputs": [VALUE...]}``, the graph outputs in order; output
    tensors are written as files in DIR (any names).
``{"op": "release", "session": ID}``
    reply ``{"status": "ok"}``.
End of input: the runner exits.

A VALUE is a tensor ``{"name": N, "dtype": D, "shape": [...], "file": PATH}``: the elements in
C order as raw little-endian bytes, no header (``bool`` one byte 0/1; the 4-bit and 2-bit
types one element per byte, low bits). D is the numpy / ml_dtypes name: ``float32``,
``float64``, ``float16``, ``bfloat16``, ``int8`` ... ``int64``, ``uint8`` ... ``uint64``,
``bool``, ``float8_e4m3fn``, ``float8_e5m2``, ``int4``, ``uint4`` and so on. A string tensor
carries ``"values": [...]`` (flat, C order) instead of a file. A sequence is
``{"name": N, "sequence": [VALUE...]}``; an empty optional is ``{"name": N, "none": true}``.
A runner that cannot take a kind of value replies ``unsupported``. The encoding needs no
protobuf: a C++ runner reads it with a few lines (examples/cpp-runner).
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import IO, Any, ClassVar

import numpy as np
import onnx

from ..forkserver import last_lines
from .base import Backend, BackendError, Rejected, Session, Unavailable, Unsupported, refuse_if_invalid

PROTOCOL = 1
_STATUS = {"rejected": Rejected, "unsupported": Unsupported}


class RunnerError(BackendError):
    """The runner replied ``error``."""


class RunnerDied(BackendError):
    """The runner exited (or closed its stdout) before replying: a crash of the runtime (a
    timeout when the CPU-time limit killed it)."""

    def __init__(self, message: str, signum: int | None = None) -> None:
        super().__init__(message)
        self.signum = signum


class ProtocolError(BackendError):
    """The runner wrote something that is not a protocol reply."""


# -- values <-> protocol ----------------------------------------------------------------------
def dtype_from_name(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        kind = getattr(ml_dtypes, name, None)
        if kind is None:
            raise ProtocolError(f"unknown dtype {name!r}") from None
        return np.dtype(kind)


def encode_value(value: Any, name: str, folder: str, stem: str) -> dict[str, Any]:
    """A protocol VALUE for ``value``; tensor data goes to a file in ``folder``."""
    if value is None:
        return {"name": name, "none": True}
    if isinstance(value, (list, tuple)):
        return {"name": name, "sequence": [encode_value(v, f"{name}[{k}]", folder, f"{stem}-{k}") for k, v in enumerate(value)]}
    array = np.asarray(value)
    if array.dtype.kind in "OUS":
        return {"name": name, "dtype": "string", "shape": list(array.shape),
                "values": [v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v) for v in array.reshape(-1).tolist()]}
    path = os.path.join(folder, f"{stem}.bin")
    data = np.ascontiguousarray(array).reshape(-1)
    if data.dtype.byteorder == ">":
        data = data.astype(data.dtype.newbyteorder("<"))
    with open(path, "wb") as fh:
        fh.write(data.tobytes())
    return {"name": name, "dtype": array.dtype.name, "shape": list(array.shape), "file": path}


def decode_value(desc: Any) -> Any:
    """The value a protocol VALUE describes (its file is read, not kept)."""
    if not isinstance(desc, dict):
        raise ProtocolError(f"a value must be an object, got {desc!r:.200}")
    if desc.get("none"):
        return None
    if "sequence" in desc:
        return [decode_value(d) for d in desc["sequence"]]
    shape = tuple(int(d) for d in desc["shape"])
    if desc["dtype"] == "string":
        return np.array(desc["values"], dtype=object).reshape(shape)
    dtype = dtype_from_name(desc["dtype"]).newbyteorder("<")
    with open(desc["file"], "rb") as fh:
        raw = fh.read()
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) != count * dtype.itemsize:
        raise ProtocolError(f"{desc.get('name', 'value')}: {len(raw)} bytes in {desc['file']} for {desc['dtype']}{list(shape)} "
                            f"({count * dtype.itemsize} expected)")
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("=")).reshape(shape)


# -- the harness side ---------------------------------------------------------------------------
def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the runner gets SIGKILL when the worker that started it dies, however it dies."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Runner:
    """One running runner process: send a request, read its reply."""

    def __init__(self, argv: list[str], folder: str) -> None:
        self.stderr_path = os.path.join(folder, "runner.stderr")
        open(self.stderr_path, "wb").close()
        # append mode: truncating it per case (below) keeps it under the output limit
        self.stderr: IO[bytes] = open(self.stderr_path, "ab")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                            preexec_fn=_die_with_parent, close_fds=True)
        except OSError as exc:
            self.stderr.close()
            raise Unavailable(f"cannot start runner {shlex.join(argv)}: {exc}") from exc

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, ConnectionResetError):
            line = b""
        if not line:
            death = self._death()
            code = self.process.returncode
            raise RunnerDied(f"runner {death} during {message['op']}{self.stderr_tail()}", -code if code and code < 0 else None)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict) or reply.get("status") not in ("ok", "rejected", "unsupported", "error"):
            self.close()
            raise ProtocolError(f"runner wrote a line that is not a protocol reply during {message['op']}: {line[:300]!r}{self.stderr_tail()}")
        return reply

    def _death(self) -> str:
        try:
            code = self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.close()
            return "closed its stdout"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"

    def stderr_tail(self, size: int = 600) -> str:
        lines = last_lines(self.stderr_path, size)
        return f"; runner stderr: {' | '.join(lines[-4:])}" if lines else ""

    def new_case(self) -> None:
        """Per case, as the worker does for itself: the runner's stderr starts empty (the output
        limit is per case) and its CPU-time limit is re-armed."""
        os.ftruncate(self.stderr.fileno(), 0)
        self.arm_cpu_limit()

    def arm_cpu_limit(self) -> None:
        """Give the runner the CPU seconds the worker has left for this case (the worker's
        RLIMIT_CPU counts the worker's own time only)."""
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if soft == resource.RLIM_INFINITY or not hasattr(resource, "prlimit") or self.process.poll() is not None:
            return
        usage = resource.getrusage(resource.RUSAGE_SELF)
        left = max(1.0, soft - usage.ru_utime - usage.ru_stime)
        try:
            with open(f"/proc/{self.process.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
            resource.prlimit(self.process.pid, resource.RLIMIT_CPU, (int(used + left) + 1, hard))
        except (OSError, ValueError, IndexError) as exc:
            raise RunnerError(f"cannot set the runner's CPU limit: {exc}") from exc

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.stderr.close()


class ExecSession(Session):
    def __init__(self, backend: ExecBackend, session: Any, output_names: list[str]) -> None:
        self.backend = backend
        self.session = session
        self.output_names = output_names

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        backend = self.backend
        folder = tempfile.mkdtemp(prefix="run-", dir=backend.folder)
        try:
            inputs = [encode_value(v, name, folder, f"in-{k}") for k, (name, v) in enumerate(feeds.items())]
            reply = backend._request({"op": "run", "session": self.session, "inputs": inputs, "outputs": self.output_names, "dir": folder})
            outputs = reply.get("outputs")
            if not isinstance(outputs, list):
                raise ProtocolError(f"run reply without an outputs list: {json.dumps(reply)[:300]}")
            return [decode_value(d) for d in outputs]
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class ExecBackend(Backend):
    """A backend whose runtime is a separate process speaking protocol version 1 (see above)."""

    name: ClassVar[str] = "exec"
    #: the runner's command line; ``exec:CMD`` sets it, a plug-in subclass names its own
    command: ClassVar[list[str] | str] = []
    #: the runner fills ``threads`` from -j (sent in ``hello``'s options; a runner may ignore it)
    takes_threads: ClassVar[bool] = True
    #: the runner's model handles are its own: never reused across cases
    reusable_sessions: ClassVar[bool] = False

    @classmethod
    def argv(cls) -> list[str]:
        return shlex.split(cls.command) if isinstance(cls.command, str) else list(cls.command)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        argv = cls.argv()
        if not argv:
            return False, "no runner command: use --backend exec:CMD (CMD speaks the protocol of harness.backends.external)"
        if shutil.which(argv[0]) is None:
            return False, f"runner command not found: {argv[0]}"
        return True, ""

    def load(self) -> None:
        _sweep_folders()
        self.folder = tempfile.mkdtemp(prefix=f"{_FOLDER_PREFIX}{os.getpid()}-")
        self.runner: _Runner | None = None
        self.session: Any = None
        self.hello: dict[str, Any] = {}
        try:
            self.hello = self._request({"op": "hello", "protocol": PROTOCOL, "options": self.options})
        except BackendError as exc:
            raise Unavailable(f"runner {shlex.join(self.argv())} did not start: {exc}") from exc
        if self.hello.get("protocol") != PROTOCOL:
            raise Unavailable(f"runner speaks protocol {self.hello.get('protocol')!r}, the harness {PROTOCOL}")

    def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.runner is None or not self.runner.alive():
            if self.runner is not None:
                self.runner.close()
            self.runner = _Runner(self.argv(), self.folder)
            self.session = None
            if message["op"] != "hello":  # a fresh runner after a crash: greet it again
                self._reply(self.runner.request({"op": "hello", "protocol": PROTOCOL, "options": self.options}))
        return self._reply(self.runner.request(message))

    @staticmethod
    def _reply(reply: dict[str, Any]) -> dict[str, Any]:
        status = reply["status"]
        if status == "ok":
            return reply
        message = str(reply.get("message") or f"runner replied {status} without a message")
        raise _STATUS.get(status, RunnerError)(message)

    def version(self) -> str:
        return str(self.hello.get("version") or "unknown")

    def environment(self) -> dict[str, Any]:
        env = {"command": shlex.join(self.argv()), "protocol": PROTOCOL, "runner": self.hello.get("name", "")}
        env.update(super().environment())
        env.update(self.hello.get("environment") or {})  # what the runner says it uses wins
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        if self.session is not None:
            session, self.session = self.session, None
            self._request({"op": "release", "session": session})
        if self.runner is not None and self.runner.alive():
            self.runner.new_case()
        path = os.path.join(self.folder, "model.onnx")
        with open(path, "wb") as fh:
            fh.write(model.SerializeToString())
        try:
            reply = self._request({"op": "prepare", "model": path})
        except Rejected as exc:
            # the rule of harness.backends.base: rejected only when the ONNX checker agrees
            refuse_if_invalid(model, exc)
            raise RunnerError(f"the runner refused a model the ONNX checker finds valid: {exc}") from exc
        self.session = reply.get("session")
        return ExecSession(self, self.session, [o.name for o in model.graph.output])

    def classify_error(self, exc: BaseException, stage: str) -> str:
        if isinstance(exc, RunnerDied):
            return "timeout" if exc.signum == signal.SIGXCPU else "crash"
        return super().classify_error(exc, stage)

    def __del__(self) -> None:
        runner = getattr(self, "runner", None)
        if runner is not None:
            runner.close()
        if getattr(self, "folder", None):
            shutil.rmtree(self.folder, ignore_errors=True)


_FOLDER_PREFIX = "onnx-harness-exec-"


def _sweep_folders() -> None:
    """Remove the exchange folders of workers that were killed (timeout, crash) before they
    could clean up: a folder is named after its worker's process id."""
    root = tempfile.gettempdir()
    for entry in os.listdir(root):
        if not entry.startswith(_FOLDER_PREFIX):
            continue
        pid = entry[len(_FOLDER_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}") and sys.platform == "linux":
            shutil.rmtree(os.path.join(root, entry), ignore_errors=True)


def exec_backend_class(command: str, name: str) -> type[ExecBackend]:
    """The backend class for ``--backend exec:CMD``."""
    return type("ExecCommandBackend", (ExecBackend,), {"name": name, "command": command, "__module__": __name__})
