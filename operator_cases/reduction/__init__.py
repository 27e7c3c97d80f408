"""Reductions and arg-reductions along axes (onnx/defs/reduction)."""
