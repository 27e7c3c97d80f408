"""Small helpers the lowerings share."""

from __future__ import annotations

from typing import Any

import torch


def ints(t: Any) -> list[int]:
    """A 1-D (or 0-d) integer tensor, or a list, as Python ints."""
    if t is None:
        return []
    if isinstance(t, torch.Tensor):
        return [int(v) for v in t.reshape(-1).tolist()]
    return [int(v) for v in t]


def scalar(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        return t.reshape(-1)[0].item()
    return t


def axis(a: int, rank: int) -> int:
    return a + rank if a < 0 else a


def axes_of(a: Any, rank: int) -> list[int]:
    return [axis(v, rank) for v in ints(a)]


def widen(t: torch.Tensor) -> torch.Tensor:
    """A dtype torch has CPU kernels for, for arithmetic on small ints."""
    if t.dtype in (torch.int8, torch.int16, torch.uint8, torch.int32):
        return t.to(torch.int64)
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.to(torch.float32)
    return t


def pair_pads(pads: list[int] | None, n: int) -> list[tuple[int, int]]:
    """ONNX pads [x1_begin, x2_begin, ..., x1_end, x2_end] as [(begin, end), ...]."""
    if not pads:
        return [(0, 0)] * n
    return [(pads[i], pads[i + n]) for i in range(n)]


def auto_pads(auto_pad: str, in_sizes: list[int], kernel: list[int], strides: list[int], dilations: list[int]) -> list[tuple[int, int]] | None:
    """Pads chosen by auto_pad (SAME_UPPER puts the odd one at the end), None for NOTSET."""
    if auto_pad in ("", "NOTSET"):
        return None
    if auto_pad == "VALID":
        return [(0, 0)] * len(in_sizes)
    out = []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        target = -(-size // s)
        total = max((target - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        out.append((small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small))
    return out


def consumed(fn: Any) -> Any:
    """``fn`` for a legacy op-version (1-5) that differs only by ``consumed_inputs``, an in-place
    hint of the old optimizer the result does not depend on."""

    def run(node: Any, *args: Any, consumed_inputs: Any = None, **attrs: Any) -> Any:
        return fn(node, *args, **attrs)

    run.__name__ = f"{getattr(fn, '__name__', 'lowering')}_consumed"
    return run
