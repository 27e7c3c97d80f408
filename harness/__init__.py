"""onnx-harness: ONNX conformance and cross-runtime testing.

Importing this package stays cheap: no backend library (onnxruntime, tensorflow, torch) is
imported until a backend is loaded by name.
"""

__version__ = "0.1.0"
