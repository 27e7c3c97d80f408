"""Comparisons, logical and bitwise operators (onnx/defs/logical)."""
