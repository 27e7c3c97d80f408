"""Object detection: RoiAlign, NonMaxSuppression (onnx/defs/object_detection)."""
