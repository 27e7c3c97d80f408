"""A seeded stand-in for ``onnxruntime`` (``tests/test_repro_bundle.py``): onnx.reference underneath,
with two bugs a runtime could have: every float output is one too large, and Abs has no kernel.
A repro bundle's script imports it as ``onnxruntime`` when this folder is first on the path."""

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

__version__ = "0.0+seeded"


class GraphOptimizationLevel:
    ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL = 0, 1, 2, 99


class SessionOptions:
    pass


class OrtValue:
    pass


def set_default_logger_severity(level):
    pass


class _Output:
    def __init__(self, name):
        self.name, self.type = name, "tensor(float)"


class InferenceSession:
    def __init__(self, model, sess_options=None, providers=None):
        proto = onnx.load_model_from_string(model)
        if any(node.op_type == "Abs" for node in proto.graph.node):
            raise RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for Abs(13) node with name ''")
        self.names = [o.name for o in proto.graph.output]
        self.evaluator = ReferenceEvaluator(proto)
        self.providers = list(providers or ["CPUExecutionProvider"])

    def get_providers(self):
        return self.providers

    def get_outputs(self):
        return [_Output(name) for name in self.names]

    def run(self, names, feeds):
        outputs = self.evaluator.run(names, feeds)
        return [o + np.ones((), o.dtype) if o.dtype.kind == "f" else o for o in outputs]
