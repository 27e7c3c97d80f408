"""How ONNX op-versions are lowered to torch.

An ``ops_*`` module registers one function per operator and behaviour, naming every
op-version (``since_version``) it implements::

    @lowers("Relu", 6, 13, 14)
    def relu(node, x):
        return torch.relu(x)

- The first argument is the :class:`harness.backends.pytorch.lowering.NodeContext` (op-version,
  device, the logical ONNX types of inputs and outputs, which outputs are wanted, compiled
  subgraphs). Inputs follow positionally; an absent optional input is ``None``; trailing absent
  inputs are not passed (so the Python default applies).
- Attributes arrive as keyword arguments named like the spec, with the spec's defaults filled
  in from ``onnx.defs``.
- A single output is returned as is; several outputs as a ``tuple`` (a ``list`` is one
  sequence value).

Op-versions are listed explicitly: an op-version onnx adds later is ``unsupported`` until
someone checks that its behaviour matches and adds it here.
"""

from __future__ import annotations

from ..lowering import Lowering, Lowerings

#: (domain, op_type, since_version) -> lowering
LOWERINGS: Lowerings = Lowerings()
lowers = LOWERINGS.lowers


def lookup(domain: str, op_type: str, since: int) -> Lowering | None:
    return LOWERINGS.get((domain, op_type, since))


def covered() -> list[tuple[str, str, int]]:
    """Every (domain, op, since_version) with a lowering, sorted."""
    return sorted(LOWERINGS)
