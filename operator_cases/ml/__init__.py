"""ai.onnx.ml: the traditional machine-learning operators (onnx/defs/traditionalml)."""
