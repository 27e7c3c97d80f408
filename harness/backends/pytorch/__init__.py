"""PyTorch: ONNX graphs lowered node by node to torch operations, by us.

onnx2torch cannot be used here (it needs torchvision, which does not import beside the CPU
torch wheel this machine installs), and owning the lowering keeps each op-version's semantics
under our control: every lowering is written from the ONNX spec, one registration per
behavioural op-version (``registry.lowers``), one module per operator family (``ops_*.py``).
An op-version without a lowering makes the model ``unsupported`` at prepare time, naming it.

Two backends share the lowering:

- ``pytorch`` runs it eagerly (CPU; ``device="cuda"`` when a GPU is present);
- ``pytorch-compile`` runs the same lowered graph through ``torch.compile``. ``prepare``
  compiles it with a warm-up call on zeros of the declared input shapes when every input is a
  tensor of known shape, so the compile time lands in the prepare time (and in the session's
  ``compile_s``), not in the run time. Models with unknown shapes compile on their first run.

Options: ``device`` ("cpu" or "cuda"), ``threads`` (torch intra-op threads; 0 leaves torch's
default; the runner sets cores // jobs when it is not given); for ``pytorch-compile`` also ``compile_backend`` (default "inductor"), ``mode``
(torch.compile mode, default None) and ``dynamic`` (default False).

Nothing here imports torch at module import; the lowering modules are imported by ``load``.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, ClassVar

import onnx

from ..base import Backend, Session, Unavailable, import_runtime

#: the operator-family modules; importing them fills registry.LOWERINGS
OP_MODULES = ("ops_elementwise", "ops_tensor", "ops_reduce", "ops_nn", "ops_matrix", "ops_cast", "ops_rnn",
              "ops_control", "ops_image", "ops_attention", "ops_signal", "ops_random", "ops_training", "ops_ml")


class TorchSession(Session):
    def __init__(self, graph: Any, device: Any, torch: Any) -> None:
        self.graph = graph
        self.device = device
        self.torch = torch
        self.types = dict(zip(graph.inputs, graph.input_types))

    def feeds(self, feeds: dict[str, Any]) -> dict[str, Any]:
        from .lowering import feed_value

        return {name: feed_value(value, self.types.get(name), self.device) for name, value in feeds.items()}

    def outputs(self, values: list[Any]) -> list[Any]:
        from .lowering import result_value

        return [result_value(v, tp) for v, tp in zip(values, self.graph.output_types)]

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        with self.torch.no_grad():
            return self.outputs(self.graph.run(self.feeds(feeds)))


class CompiledSession(TorchSession):
    """The lowered graph as one function of its inputs, through ``torch.compile``."""

    def __init__(self, graph: Any, device: Any, torch: Any, options: dict[str, Any]) -> None:
        super().__init__(graph, device, torch)
        names = list(graph.inputs)
        self.names = names

        def forward(*args: Any) -> list[Any]:
            return graph.run(dict(zip(names, args)))

        self.compiled = torch.compile(forward, backend=options.get("compile_backend", "inductor"),
                                      mode=options.get("mode"), dynamic=bool(options.get("dynamic", False)))
        #: seconds spent in the warm-up call that compiled the graph (None: compiled on first run)
        self.compile_s: float | None = None
        self.warmup_error = ""

    def warm_up(self) -> None:
        args = _ones_for(self.graph, self.device, self.torch)
        if args is None:
            return
        t0 = time.perf_counter()
        try:
            with self.torch.no_grad():
                self.compiled(*args)
        except Exception as exc:  # ones may be invalid input (e.g. a shape); the real run decides
            self.warmup_error = f"{type(exc).__name__}: {exc}"[:300]
        self.compile_s = time.perf_counter() - t0

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        given = self.feeds(feeds)
        args = [given.get(name, self.graph.initializers.get(name)) for name in self.names]
        with self.torch.no_grad():
            return self.outputs(self.compiled(*args))


def _ones_for(graph: Any, device: Any, torch: Any) -> list[Any] | None:
    """Ones in every declared input shape and type, or None when a shape or type is unknown.
    Not zeros: an integer Div or Mod by a zero input is a SIGFPE in inductor's compiled CPU code
    (eager raises ZeroDivisionError), which killed the worker before the real inputs ran."""
    from . import dtypes

    args = []
    for name, tp in zip(graph.inputs, graph.input_types):
        if name in graph.initializers:
            args.append(graph.initializers[name])
            continue
        if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
            return None
        dims = tp.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            return None
        code = tp.tensor_type.elem_type
        if code not in dtypes.CARRIER:
            return None
        args.append(torch.ones([d.dim_value for d in dims], dtype=dtypes.CARRIER[code], device=device))
    return args


class PyTorchBackend(Backend):
    name: ClassVar[str] = "pytorch"
    packages = ("torch",)
    #: the runner fills ``threads`` from -j when the user left it unset
    takes_threads: ClassVar[bool] = True

    def load(self) -> None:
        torch = import_runtime("torch")
        device = str(self.options.get("device", "cpu"))
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise Unavailable(f"device {device!r} asked for, but torch sees no CUDA GPU here")
        threads = int(self.options.get("threads", 0))
        if threads:
            torch.set_num_threads(threads)
        self.torch = torch
        self.device = torch.device(device)
        for module in OP_MODULES:
            importlib.import_module(f"{__name__}.{module}")

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        env.setdefault("device", str(self.options.get("device", "cpu")))
        torch = getattr(self, "torch", None)
        if torch is not None:
            env["threads"] = torch.get_num_threads()
            from .registry import LOWERINGS

            env["lowered_op_versions"] = len(LOWERINGS)
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        from .lowering import lower_model

        graph, _ = lower_model(model, self.device)
        return TorchSession(graph, self.device, self.torch)


class PyTorchCompileBackend(PyTorchBackend):
    name: ClassVar[str] = "pytorch-compile"

    def environment(self) -> dict[str, Any]:
        env = super().environment()
        env.setdefault("compile_backend", self.options.get("compile_backend", "inductor"))
        env.setdefault("mode", self.options.get("mode") or "default")
        env.setdefault("dynamic", bool(self.options.get("dynamic", False)))
        env["compile_timing"] = "compile happens in prepare (warm-up on ones of the declared input shapes); prepare_s includes it"
        return env

    def prepare(self, model: onnx.ModelProto) -> Session:
        from .lowering import lower_model

        # One model per worker at a time: drop the previous model's compiled code, so dynamo's
        # per-code-object cache limit (all models share Graph.run) never silently falls back to eager.
        self.torch._dynamo.reset()
        graph, _ = lower_model(model, self.device)
        session = CompiledSession(graph, self.device, self.torch, self.options)
        session.warm_up()
        return session
