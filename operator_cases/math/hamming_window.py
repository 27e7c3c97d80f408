"""HammingWindow: a cosine-sum window of length ``size`` (ONNX spec: HammingWindow-17), periodic or symmetric,
in ``output_datatype``; the formula, coefficients and the size-1 symmetric point are in
operator_cases/math/_signal_util.py."""

from ._signal_util import window_op

op = window_op("HammingWindow", (25 / 46, 21 / 46))
