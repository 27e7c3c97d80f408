"""How ONNX op-versions are lowered to TensorFlow.

An ``ops_*`` module registers one function per operator and behaviour, naming every op-version
(``since_version``) it implements::

    @lowers("Relu", 6, 13, 14)
    def relu(node, x):
        return tf.nn.relu(x)

The first argument is the node's :class:`harness.backends.tf.lowering.NodeContext`; inputs follow
positionally (an absent optional input is ``None``); attributes arrive as keyword arguments named
like the spec, with the spec's defaults filled in. Several outputs are returned as a tuple.
Op-versions are listed explicitly: one onnx adds later is ``unsupported`` until someone checks
that its behaviour matches and adds it here. What TensorFlow cannot compute exactly raises
``Unsupported`` with the reason: never a silent cast to another type.
"""

from __future__ import annotations

from ..lowering import Lowerings

#: (domain, op_type, since_version) -> lowering
LOWERINGS: Lowerings = Lowerings()
lowers = LOWERINGS.lowers
