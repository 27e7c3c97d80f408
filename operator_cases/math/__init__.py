"""Math: element-wise arithmetic, unary functions, matrix products, activations, signal transforms and windows (onnx/defs/math)."""
