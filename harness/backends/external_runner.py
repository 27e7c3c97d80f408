"""The runner side of the exec protocol in Python: serves any harness backend over it.

    python -m harness.backends.external_runner --backend onnxruntime [--option threads=1]

Run it with the Python of another environment (one where that runtime installs, with this
package installed too) and give the harness ``--backend "exec:/path/to/python -m
harness.backends.external_runner --backend NAME"``. Outcomes are the backend's own: its
``classify_error`` chooses the reply's status. The protocol is described in
:mod:`harness.backends.external`; stdout is kept for it alone (anything the runtime prints goes to
stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

import onnx

from ..worker import _one_line
from .external import PROTOCOL, decode_value, encode_value


class Server:
    def __init__(self, backend_spec: str, options: dict[str, Any]) -> None:
        self.spec = backend_spec
        self.options = options
        self.backend: Any = None
        self.sessions: dict[str, Any] = {}
        self.count = 0

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "hello":
            return self.hello(request)
        if op == "prepare":
            try:
                model = onnx.load(request["model"])
                session = self.backend.prepare(model)
            except Exception as exc:
                return self.failure(exc, "prepare")
            self.count += 1
            key = str(self.count)
            self.sessions[key] = (session, [o.name for o in model.graph.output])
            return {"status": "ok", "session": key}
        if op == "run":
            session, _ = self.sessions[request["session"]]
            try:
                feeds = {d["name"]: decode_value(d) for d in request["inputs"]}
                outputs = session.run(feeds)
            except Exception as exc:
                return self.failure(exc, "run")
            names = request.get("outputs") or []
            return {"status": "ok", "outputs": [encode_value(v, names[k] if k < len(names) else f"output{k}", request["dir"], f"out-{k}")
                                                for k, v in enumerate(outputs)]}
        if op == "release":
            self.sessions.pop(request.get("session"), None)
            return {"status": "ok"}
        return {"status": "error", "message": f"unknown request {op!r}"}

    def hello(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("protocol") != PROTOCOL:
            return {"status": "error", "message": f"this runner speaks protocol {PROTOCOL}, not {request.get('protocol')!r}"}
        if self.backend is None:
            from . import load_backend_class

            cls = load_backend_class(self.spec)
            ok, reason = cls.available()
            if not ok:
                return {"status": "error", "message": f"backend {self.spec} unavailable here: {reason}"}
            options = {**(request.get("options") or {}), **self.options}
            if "threads" not in self.options and not getattr(cls, "takes_threads", False):
                options.pop("threads", None)  # filled in by the harness for backends that take it
            try:
                self.backend = cls(**options)
                self.backend.load()
            except Exception as exc:
                self.backend = None
                return {"status": "error", "message": f"backend {self.spec} failed to load: {_one_line(exc)}"}
        env = {k: v for k, v in self.backend.environment().items() if isinstance(v, (str, int, float, bool))}
        env["python"] = sys.executable
        return {"status": "ok", "protocol": PROTOCOL, "name": self.backend.name or self.spec, "version": self.backend.version(),
                "environment": env}

    def failure(self, exc: BaseException, stage: str) -> dict[str, Any]:
        status = self.backend.classify_error(exc, stage)
        if status not in ("rejected", "unsupported"):
            status = "error"
        return {"status": status, "message": _one_line(exc)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.backends.external_runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", required=True, help="backend name or module:Class to serve")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="backend option (JSON value or string)")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {}
    for item in args.option:
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    if hasattr(signal, "SIGXFSZ"):  # as in the harness's worker: breaking the output limit kills (Python ignores it)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    # the protocol owns stdout: keep a private copy of it and send fd 1 (prints, native logs) to stderr
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = Server(args.backend, options)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = server.handle(request)
        except Exception as exc:  # a malformed request: said in the reply, never swallowed
            reply = {"status": "error", "message": f"runner: {_one_line(exc)}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
