"""An exec-protocol runner for Apache MXNet 1.9.1 (``mxnet.contrib.onnx``), for its own
Python environment: MXNet 1.9 needs numpy < 1.24 and an onnx of its time, which the harness's
environment cannot share. It speaks protocol version 1 of ``harness.backends.external`` and needs
nothing of the harness (Python >= 3.7, mxnet, numpy, onnx).

    onnx-harness run --backend "exec:/path/to/mxnet-env/bin/python examples/mxnet-runner/runner.py"

Replies: a model MXNet's importer has no translator for is ``unsupported`` (its
"No conversion function registered" message); anything MXNet raises while importing, binding
or running is ``error`` with MXNet's message; stdout carries replies only.
"""

import json
import os
import sys
import traceback

PROTOCOL = 1

# MXNet 1.x ndarrays: the dtypes it can hold (bool and the unsigned wide types it cannot)
MX_DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def one_line(exc):
    text = " ".join(str(exc).split())
    return ("%s: %s" % (type(exc).__name__, text))[:2000] if text else type(exc).__name__


class Unsupported(Exception):
    pass


class Runner:
    def __init__(self):
        self.sessions = {}
        self.count = 0

    def hello(self, request):
        # keep stdout for replies: MXNet prints its deprecation notes with print()
        real, sys.stdout = sys.stdout, sys.stderr
        try:
            import mxnet as mx
            import numpy as np
            import onnx
            from mxnet.contrib import onnx as onnx_mxnet  # noqa: F401  (fails early if absent)
        finally:
            sys.stdout = real
        self.mx, self.np, self.onnx = mx, np, onnx
        threads = (request.get("options") or {}).get("threads")
        if threads:
            os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        if request.get("protocol") != PROTOCOL:
            return {"status": "error", "message": "runner speaks protocol %d" % PROTOCOL}
        return {"status": "ok", "protocol": PROTOCOL, "name": "mxnet", "version": mx.__version__,
                "environment": {"python": sys.version.split()[0], "numpy": np.__version__, "onnx": onnx.__version__,
                                "mxnet": mx.__version__}}

    def prepare(self, request):
        from mxnet.contrib import onnx as onnx_mxnet

        model = self.onnx.load(request["model"])
        initialized = {t.name for t in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in initialized]
        outputs = [o.name for o in model.graph.output]
        real, sys.stdout = sys.stdout, sys.stderr
        try:
            sym, arg_params, aux_params = onnx_mxnet.import_model(request["model"])
        except NotImplementedError as exc:
            raise Unsupported(one_line(exc))
        except ValueError as exc:
            if "channels/units" in str(exc):  # its Conv translators read the weight's shape from an initializer
                raise Unsupported("MXNet's importer takes convolution weights only as initializers, not as graph inputs (%s)" % one_line(exc))
            raise
        finally:
            sys.stdout = real
        self.count += 1
        key = str(self.count)
        self.sessions[key] = (sym, arg_params, aux_params, inputs, outputs)
        return {"status": "ok", "session": key}

    def run(self, request):
        mx, np = self.mx, self.np
        sym, arg_params, aux_params, inputs, outputs = self.sessions[request["session"]]
        args = dict(arg_params)
        for value in request["inputs"]:
            if "file" not in value:
                raise Unsupported("MXNet takes tensors only (got a %s)" % ("sequence" if "sequence" in value else "string or optional"))
            if value["dtype"] not in MX_DTYPES:
                raise Unsupported("MXNet 1.x has no %s tensors" % value["dtype"])
            array = np.fromfile(value["file"], dtype=np.dtype(value["dtype"]).newbyteorder("<")).reshape(value["shape"])
            if array.ndim == 0 or 0 in array.shape:
                raise Unsupported("MXNet 1.x ndarrays have no zero-rank or zero-size shapes (input %s: %s)" % (value["name"], list(array.shape)))
            args[value["name"]] = mx.nd.array(array, dtype=array.dtype)
        missing = [n for n in sym.list_arguments() if n not in args]
        if missing:
            raise RuntimeError("MXNet's graph asks for arguments the model does not feed: %s" % missing)
        executor = sym.bind(mx.cpu(), args={n: args[n] for n in sym.list_arguments()},
                            aux_states={n: aux_params[n] for n in sym.list_auxiliary_states()}, grad_req="null")
        executor.forward(is_train=False)
        results = [o.asnumpy() for o in executor.outputs]
        if len(results) != len(request["outputs"]):
            raise RuntimeError("MXNet gave %d outputs, the model has %d" % (len(results), len(request["outputs"])))
        replies = []
        for k, (name, array) in enumerate(zip(request["outputs"], results)):
            array = np.ascontiguousarray(array)
            path = os.path.join(request["dir"], "out%d.bin" % k)
            array.astype(array.dtype.newbyteorder("<")).tofile(path)
            replies.append({"name": name, "dtype": array.dtype.name, "shape": list(array.shape), "file": path})
        return {"status": "ok", "outputs": replies}

    def release(self, request):
        self.sessions.pop(request.get("session"), None)
        return {"status": "ok"}

    def handle(self, request):
        op = request.get("op")
        if op not in ("hello", "prepare", "run", "release"):
            return {"status": "error", "message": "unknown request %r" % op}
        try:
            return getattr(self, op)(request)
        except Unsupported as exc:
            return {"status": "unsupported", "message": str(exc)}
        except Exception as exc:  # every MXNet failure is a classified reply, with its message
            log(traceback.format_exc())
            return {"status": "error", "message": "%s during %s" % (one_line(exc), op)}


def main():
    runner = Runner()
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = runner.handle(json.loads(line))
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
