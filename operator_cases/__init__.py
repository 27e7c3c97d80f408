"""Our oracle: one module per operator, each holding a reference implementation for every
``since_version`` (written from the ONNX operator spec, computing in a wider type where that
makes a better oracle), Hypothesis strategies for inputs and attributes, and hand-picked edge
examples. Nothing here imports a system under test (``harness.backends``) or onnx.reference.
"""
