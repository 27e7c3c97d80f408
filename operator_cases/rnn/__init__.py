"""Recurrent networks: RNN, GRU, LSTM (onnx/defs/rnn)."""
