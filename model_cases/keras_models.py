"""TensorFlow/Keras models exported with tf2onnx: an MLP, a CNN (batch norm, max pooling, global
average pooling) and an LSTM, each at opsets 13, 17 and the newest tf2onnx supports.

Each model is trained a few deterministic steps (``keras.utils.set_random_seed``, op
determinism on, no shuffling) on generated data; its own outputs in inference mode are the
oracle. The batch axis is dynamic, the LSTM's time axis too.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import BuiltModel, Say, built, check_export, data_set, missing_distributions, one_line, quiet_output, shape_tags

FRAMEWORK = "keras"
#: whichever of tensorflow / tensorflow-cpu is installed keys the cache
DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "keras", "tf2onnx")
OPSETS = (13, 17)
SEED = 20261122


def missing() -> str | None:
    import importlib.util

    absent = [] if importlib.util.find_spec("tensorflow") else ["tensorflow"]
    absent += missing_distributions(("keras", "tf2onnx"))
    return f"{' and '.join(absent)} not installed (pip install 'tensorflow-cpu==2.21.*' tf2onnx)" if absent else None


def _models(keras: Any, rng: np.random.Generator) -> list[tuple[str, Any, tuple[int | None, ...], list[np.ndarray], int | None]]:
    """(name, trained model, input shape with None for dynamic axes, input sets, sequence axis)."""
    layers = keras.layers

    def train(model: Any, x: np.ndarray) -> Any:
        y = rng.standard_normal((x.shape[0], *model.output_shape[1:])).astype(np.float32)
        model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
        model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
        return model

    def data(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    keras.utils.set_random_seed(SEED)
    mlp = keras.Sequential([keras.Input((16,)), layers.Dense(32, activation="relu"), layers.Dense(4)])
    cnn = keras.Sequential([
        keras.Input((16, 16, 3)), layers.Conv2D(8, 3, padding="same", activation="relu"), layers.BatchNormalization(),
        layers.MaxPooling2D(2), layers.Conv2D(16, 3, activation="relu"), layers.GlobalAveragePooling2D(), layers.Dense(10),
    ])
    lstm = keras.Sequential([keras.Input((None, 8)), layers.LSTM(16), layers.Dense(3)])
    return [
        ("mlp", train(mlp, data(64, 16)), (None, 16), [data(1, 16), data(16, 16)], None),
        ("cnn", train(cnn, data(32, 16, 16, 3)), (None, 16, 16, 3), [data(1, 16, 16, 3), data(8, 16, 16, 3)], None),
        ("lstm", train(lstm, data(32, 10, 8)), (None, None, 8), [data(1, 10, 8), data(8, 10, 8), data(8, 4, 8)], 1),
    ]


def build(say: Say) -> Iterator[BuiltModel]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with quiet_output():  # TensorFlow logs its start-up straight to file descriptor 2
        import keras
        import tensorflow as tf
        import tf2onnx
        from tf2onnx import constants

    logging.getLogger("tf2onnx").setLevel(logging.ERROR)
    tf.config.experimental.enable_op_determinism()
    newest = max(constants.OPSET_TO_IR_VERSION)
    opsets = sorted(set(OPSETS) | {newest})
    rng = np.random.default_rng(SEED)
    with quiet_output():
        trained = _models(keras, rng)
    for name, model, shape, input_sets, seq_axis in trained:
        expected = [[np.asarray(model(x, training=False))] for x in input_sets]
        # With Keras 3, tf2onnx.convert.from_keras fails (a KeyError on a keras_tensor name: it
        # expects tf.keras's functional graph, which Keras 3 models no longer carry). A
        # tf.function with a named input_signature is a plain TF graph with a stable input
        # name and dynamic axes where the signature says None; from_function converts that.
        signature = (tf.TensorSpec(shape, tf.float32, name="x"),)
        function = tf.function(lambda x, model=model: model(x, training=False), input_signature=signature)
        for opset in opsets:
            case_name = f"{name}/opset{opset}"
            tags = {"suite": "models", "framework": FRAMEWORK, "framework_version": f"keras {keras.__version__}, tensorflow {tf.__version__}",
                    "model": name, "exporter": "tf2onnx", "exporter_version": tf2onnx.__version__, "opset": opset,
                    **shape_tags([(x,) for x in input_sets], seq_axis)}
            try:
                with quiet_output():
                    proto, _ = tf2onnx.convert.from_function(function, input_signature=signature, opset=opset)
                check_export(proto, opset, [(x,) for x in input_sets])
                data = [data_set(proto, (x,), outs) for x, outs in zip(input_sets, expected)]
            except Exception as exc:
                say(f"keras {case_name}: export failed: {one_line(exc, 200)}")
                yield built(case_name, None, [], tags, export_error=one_line(exc))
                continue
            yield built(case_name, proto, data, tags)
