"""Control flow: If, Loop, Scan (onnx/defs/controlflow)."""
