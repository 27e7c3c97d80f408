"""Sequences (onnx/defs/sequence)."""
