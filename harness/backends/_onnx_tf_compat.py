"""The two names onnx-tf 1.10.0 imports that no longer exist, provided so that its own operator
handlers run unchanged on today's TensorFlow and onnx.

onnx-tf 1.10.0 (2022, unmaintained) does

- ``from onnx import mapping`` and ``from onnx.helper import mapping``: ``onnx.mapping`` was
  deprecated in onnx 1.13 and removed in 1.16. onnx-tf reads four of its tables
  (``NP_TYPE_TO_TENSOR_TYPE``, ``TENSOR_TYPE_TO_NP_TYPE``, ``TENSOR_TYPE_TO_STORAGE_TENSOR_TYPE``,
  ``STORAGE_TENSOR_TYPE_TO_FIELD``). We rebuild those tables from the public helpers that
  replaced them (``onnx.helper.tensor_dtype_to_np_dtype`` and friends).
- ``import tensorflow_addons as tfa`` in its Hardmax handler, for ``tfa.seq2seq.hardmax`` only.
  TensorFlow Addons reached end of life in 2024 and fails to import under Keras 3. We provide
  that one function, written as Addons wrote it: one-hot of the arg-max over the last axis.

Nothing else of onnx-tf is changed. :func:`install` puts the stand-ins into ``sys.modules``
(and onto ``onnx`` / ``onnx.helper`` as attributes) *before* ``onnx_tf`` is imported; it never
replaces a real module that is importable and working (an older onnx that still has
``mapping`` keeps its own).
"""

from __future__ import annotations

import sys
import types

#: recorded in the run's environment next to the onnx-tf version
COMPAT_VERSION = "1"

#: the names this layer provides, for the environment record
PROVIDED = ("onnx.mapping", "tensorflow_addons.seq2seq.hardmax")


def _mapping_module() -> types.ModuleType:
    import numpy as np
    import onnx
    from onnx import helper

    module = types.ModuleType("onnx.mapping", "onnx.mapping tables rebuilt by harness for onnx-tf 1.10 (removed in onnx 1.16)")
    to_np: dict[int, np.dtype] = {}
    to_storage: dict[int, int] = {}
    storage_to_field: dict[int, str] = {}
    for code in helper.get_all_tensor_dtypes():
        if code == onnx.TensorProto.UNDEFINED:
            continue
        try:
            to_np[code] = helper.tensor_dtype_to_np_dtype(code)
            to_storage[code] = helper.tensor_dtype_to_storage_tensor_dtype(code)
            storage_to_field[to_storage[code]] = helper.tensor_dtype_to_field(to_storage[code])
        except (KeyError, ValueError):  # a type the helpers do not map: onnx.mapping did not either
            continue
    # the inverse table: the first ONNX type per numpy dtype, as onnx.mapping kept it
    from_np: dict[np.dtype, int] = {}
    for code, dtype in to_np.items():
        from_np.setdefault(dtype, code)
    module.TENSOR_TYPE_TO_NP_TYPE = to_np
    module.NP_TYPE_TO_TENSOR_TYPE = from_np
    module.TENSOR_TYPE_TO_STORAGE_TENSOR_TYPE = to_storage
    module.STORAGE_TENSOR_TYPE_TO_FIELD = storage_to_field
    return module


def hardmax(logits, name=None):  # noqa: ANN001 - the signature onnx-tf inspects (tfa.seq2seq.hardmax)
    """One-hot encoding of the arg-max of ``logits`` along the last axis, in ``logits``' dtype.

    Ties go to the first maximum (``tf.argmax``), as the ONNX Hardmax spec asks.
    """
    import tensorflow as tf

    with tf.name_scope(name or "Hardmax"):
        logits = tf.convert_to_tensor(logits, name="logits")
        depth = logits.shape[-1] if logits.shape[-1] is not None else tf.shape(logits)[-1]
        return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype)


def _addons_module() -> types.ModuleType:
    package = types.ModuleType("tensorflow_addons", "stand-in for the retired TensorFlow Addons: only seq2seq.hardmax (harness)")
    seq2seq = types.ModuleType("tensorflow_addons.seq2seq")
    seq2seq.hardmax = hardmax
    package.seq2seq = seq2seq
    package.__version__ = f"harness-compat-{COMPAT_VERSION}"
    package.__path__ = []  # a package, so "import tensorflow_addons.seq2seq" resolves from sys.modules
    return package


def _has_real_mapping() -> bool:
    import onnx

    try:
        import onnx.mapping  # noqa: F401 - present in onnx < 1.16
    except ImportError:
        return False
    return hasattr(onnx, "mapping") and not getattr(onnx.mapping, "__harness_compat__", False)


def install() -> dict[str, str]:
    """Make onnx-tf 1.10 importable here; returns what was provided (name -> how).

    Idempotent. Call it before the first ``import onnx_tf``.
    """
    import onnx
    import onnx.helper

    provided: dict[str, str] = {}
    if "onnx.mapping" in sys.modules and getattr(sys.modules["onnx.mapping"], "__harness_compat__", False):
        provided["onnx.mapping"] = "compat"
    elif _has_real_mapping():
        provided["onnx.mapping"] = "onnx"
    else:
        mapping = _mapping_module()
        mapping.__harness_compat__ = True
        sys.modules["onnx.mapping"] = mapping
        onnx.mapping = mapping
        provided["onnx.mapping"] = "compat"
    if not hasattr(onnx.helper, "mapping"):
        onnx.helper.mapping = sys.modules["onnx.mapping"]  # pb_wrapper does "from onnx.helper import mapping"

    # The real TensorFlow Addons is still pulled in by onnx-tf's requirements, but importing it
    # under Keras 3 fails or warns loudly; onnx-tf needs one function of it, so never import it.
    current = sys.modules.get("tensorflow_addons")
    if current is None or not getattr(current, "__harness_compat__", False):
        addons = _addons_module()
        addons.__harness_compat__ = True
        sys.modules["tensorflow_addons"] = addons
        sys.modules["tensorflow_addons.seq2seq"] = addons.seq2seq
    provided["tensorflow_addons.seq2seq.hardmax"] = "compat"
    return provided
