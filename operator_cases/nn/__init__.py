"""Neural network: convolution, pooling, normalization, dropout, resampling of images and losses (onnx/defs/nn)."""
