"""Text: string operators (onnx/defs/text)."""
