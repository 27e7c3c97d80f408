"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (onnx/defs/quantization)."""
