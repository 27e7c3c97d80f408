"""Optionals (onnx/defs/optional)."""
