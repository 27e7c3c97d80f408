"""How kernels are registered and bound.

A kernel module registers one factory per operator and behavioural version::

    @register("Conv", since=1)
    def conv(node: NodeInfo):
        pads = node.attrs.get("pads")        # bound once, at prepare time
        def run(x, w, b=None):               # absent optional inputs arrive as None
            ...
            return (y,)                      # a tuple or list, one entry per node output
        return run

A registration covers every opset from ``since`` until the next registration of the same
(domain, op). The executor looks the factory up once per node at prepare time and keeps only
the returned callable on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import onnx

KernelFactory = Callable[["NodeInfo"], Callable[..., Any]]

#: (domain, op_type) -> sorted list of (since_version, factory)
KERNELS: dict[tuple[str, str], list[tuple[int, KernelFactory]]] = {}


def register(op_type: str, since: int = 1, domain: str = "") -> Callable[[KernelFactory], KernelFactory]:
    def deco(factory: KernelFactory) -> KernelFactory:
        versions = KERNELS.setdefault((domain, op_type), [])
        versions.append((since, factory))
        versions.sort(key=lambda item: item[0])
        return factory

    return deco


def register_each(op_type: str, versions: tuple[int, ...], factory: Callable[["NodeInfo", int], Callable[..., Any]],
                  domain: str = "") -> None:
    """One registration per behavioural version of ``op_type`` for a factory that takes the
    version too: ``factory(node, since)``."""
    for since in versions:
        register(op_type, since, domain)(lambda node, since=since: factory(node, since))


def lookup(domain: str, op_type: str, opset: int) -> KernelFactory | None:
    """The factory in force for ``op_type`` at ``opset`` of ``domain``, or None."""
    best = None
    for since, factory in KERNELS.get((domain, op_type), ()):
        if since <= opset:
            best = factory
    return best


@dataclass
class NodeInfo:
    """What a kernel factory may look at when it binds a node."""

    node: onnx.NodeProto
    #: attribute values as Python/numpy objects: ints, floats, str, lists, numpy arrays
    #: for tensors, onnx.GraphProto for graphs
    attrs: dict[str, Any]
    #: opset in force for the node's domain
    opset: int
    #: input names ("" for an absent optional input) and output names
    inputs: list[str]
    outputs: list[str]
    #: statically known input shapes/dtypes where inference found them (None when unknown)
    input_shapes: list[tuple[int | None, ...] | None] = field(default_factory=list)
    input_dtypes: list[Any] = field(default_factory=list)
    #: compiles a subgraph attribute (If/Loop/Scan bodies) into a callable taking a dict of
    #: values (outer-scope names included) and returning the subgraph outputs as a list
    compile_subgraph: Callable[[onnx.GraphProto], Callable[[dict[str, Any]], list[Any]]] | None = None
