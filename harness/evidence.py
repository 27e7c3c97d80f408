"""The evidence a report shows of a non-pass, recorded when the case runs (the actual outputs are
not stored anywhere else): each input's shape, dtype and first values; each output's expected and
actual shape and dtype; and, for the output that failed, a window of both around the first bad
element with the bad positions marked (the comparator's own mask, never judged again here).

Bounded so that a store of 50,000 results and its single-file HTML report stay small:
``VALUES`` values per input, ``WINDOW`` elements per window, ``INPUTS`` inputs and ``OUTPUTS``
outputs per result. Values are strings at their own precision (``nan``, ``-inf`` included),
since JSON has no NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .values import describe, dtype_name

#: values shown per input (the first ones, row-major)
VALUES = 12
#: elements of the window around the first bad element of a failing output
WINDOW = 16
INPUTS = 8
OUTPUTS = 8
#: elements shown of a sequence
ELEMENTS = 4


def _text(v: Any) -> Any:
    if isinstance(v, (bytes, np.bytes_)):
        v = bytes(v).decode("utf-8", "replace")
    if isinstance(v, str):
        return v if len(v) <= 40 else v[:39] + "…"
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    return str(v)  # a float (any width) at its own precision: float32 0.1 stays "0.1"


def _array(value: Any) -> np.ndarray | None:
    return value if isinstance(value, np.ndarray) else np.asarray(value) if isinstance(value, np.generic) else None


def tensor(value: Any, values: int = VALUES) -> dict[str, Any]:
    """Shape, dtype and the first ``values`` values of one tensor (``describe`` for a sequence, map, None)."""
    if isinstance(value, (list, tuple)):  # a sequence: its length and its first elements, each a tensor's evidence
        shown = [tensor(v, values) for v in list(value)[:ELEMENTS]]
        kinds = ", ".join(t["text"] if t.get("kind") == "other" else f"{t['dtype']}[{','.join(map(str, t['shape']))}]" for t in shown)
        more = ", ..." if len(value) > ELEMENTS else ""
        return {"kind": "other", "text": f"sequence of {len(value)}: [{kinds}{more}]", "length": len(value), "elements": shown}
    a = _array(value)
    if a is None:
        return {"kind": "other", "text": describe(value)}
    flat = a.reshape(-1)
    return {"shape": list(a.shape), "dtype": dtype_name(a.dtype), "size": int(a.size), "values": [_text(v) for v in flat[:values]]}


def window(expected: np.ndarray, actual: np.ndarray, bad: np.ndarray, size: int = WINDOW) -> dict[str, Any]:
    """``size`` flat elements of both around the first bad one: ``start`` (flat index), ``shape``,
    ``expected``, ``actual``, and ``bad``: the positions in the window the comparator marked bad."""
    flat_bad = np.flatnonzero(bad.reshape(-1))
    first = int(flat_bad[0]) if flat_bad.size else 0
    start = max(0, min(first - size // 4, int(bad.size) - size))
    stop = min(int(bad.size), start + size)
    e, a = expected.reshape(-1)[start:stop], actual.reshape(-1)[start:stop]
    return {"start": start, "shape": list(expected.shape), "expected": [_text(v) for v in e], "actual": [_text(v) for v in a],
            "bad": [int(i - start) for i in flat_bad if start <= i < stop]}


def summary(inputs: dict[str, Any], expected: list[Any] | None, actual: list[Any] | None, values: int = VALUES) -> dict[str, Any]:
    """Inputs, and expected and actual outputs (shape, dtype, first ``values`` values) of one data set."""
    out: dict[str, Any] = {"inputs": {name: tensor(v, values) for name, v in list(inputs.items())[:INPUTS]}}
    if len(inputs) > INPUTS:
        out["more_inputs"] = len(inputs) - INPUTS
    if expected is not None:
        out["expected"] = [tensor(v, values) for v in expected[:OUTPUTS]]
    if actual is not None:
        out["actual"] = [tensor(v, values) for v in list(actual)[:OUTPUTS]]
    return out
