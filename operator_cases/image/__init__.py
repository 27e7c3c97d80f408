"""Image decoding (onnx/defs/image)."""
