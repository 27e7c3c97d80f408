"""Our oracle: one module per operator, each holding a reference implementation for every
``since_version`` (written from the ONNX operator spec, computing in a wider type where that
makes a better oracle), Hypothesis strategies for inputs and attributes, and hand-picked edge
examples. Nothing here imports a system under test (``harness.backends``) or onnx.reference.

The subpackages follow the ONNX spec's own grouping (``onnx/defs/<family>/``): math, nn, tensor,
reduction, logical, control_flow, sequence, optional, quantization, generator, image, text, rnn,
object_detection and ml (ai.onnx.ml). A family's shared helpers (``_*_util.py``) sit beside its
operators; helpers that several families draw on sit here.
"""
