"""Tensor: shape, layout, indexing, casting, slicing and padding (onnx/defs/tensor)."""
