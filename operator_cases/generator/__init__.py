"""Generators and random draws: constants, ranges, eye, random distributions (onnx/defs/generator)."""
