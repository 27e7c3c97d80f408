"""Whole models built in a framework and exported to ONNX, the framework's own outputs being
the oracle; plus the light models that ship in the onnx wheel.

One module per framework (``torch_models``, ``keras_models``, ``sklearn_models``,
``light_models``), each with the same small surface (see ``_common.Builder``). A module imports
its framework only inside ``build``, so listing what is installed stays cheap.
"""
