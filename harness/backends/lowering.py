"""The table of lowerings our own backends share (PyTorch, TensorFlow): one function per operator
and behaviour, registered for every op-version (``since_version``) it implements; an op-version
missing from the table is ``unsupported`` until someone checks its behaviour and adds it."""

from __future__ import annotations

from typing import Any, Callable

Lowering = Callable[..., Any]


class Lowerings(dict):
    """(domain, op_type, since_version) -> lowering."""

    def lowers(self, op_type: str, *since_versions: int, domain: str = "") -> Callable[[Lowering], Lowering]:
        if not since_versions:
            raise ValueError(f"lowers({op_type!r}) names no op-version")

        def deco(fn: Lowering) -> Lowering:
            for since in since_versions:
                key = (domain, op_type, since)
                if key in self:
                    raise ValueError(f"{op_type}-{since} is lowered twice ({self[key].__name__}, {fn.__name__})")
                self[key] = fn
            return fn

        return deco
