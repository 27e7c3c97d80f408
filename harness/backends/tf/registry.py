"""How ONNX op-versions are lowered to TensorFlow.

An ``ops_*`` module registers one function per operator and behaviour, naming every op-version
(``since_version``) it implements::

    @lowers("Relu", 6, 13, 14)
    def relu(node, x):
        return tf.nn.relu(x)

The first argument is the node's :class:`harness.backends.tf.executor.NodeContext`; inputs follow
positionally (an absent optional input is ``None``); attributes arrive as keyword arguments named
like the spec, with the spec's defaults filled in. Several outputs are returned as a tuple.
Op-versions are listed explicitly: one onnx adds later is ``unsupported`` until someone checks
that its behaviour matches and adds it here. What TensorFlow cannot compute exactly raises
``Unsupported`` with the reason: never a silent cast to another type.
"""

from __future__ import annotations

from typing import Any, Callable

Lowering = Callable[..., Any]

#: (domain, op_type, since_version) -> lowering
LOWERINGS: dict[tuple[str, str, int], Lowering] = {}


def lowers(op_type: str, *since_versions: int, domain: str = "") -> Callable[[Lowering], Lowering]:
    if not since_versions:
        raise ValueError(f"lowers({op_type!r}) names no op-version")

    def deco(fn: Lowering) -> Lowering:
        for since in since_versions:
            key = (domain, op_type, since)
            if key in LOWERINGS:
                raise ValueError(f"{op_type}-{since} is lowered twice ({LOWERINGS[key].__name__}, {fn.__name__})")
            LOWERINGS[key] = fn
        return fn

    return deco
