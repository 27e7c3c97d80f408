"""A campaign's time: the budget as the command line takes it, and the share of it kept for
shrinking. Light on purpose: ``onnx-harness`` builds the ``fuzz`` command's help from it without
importing the campaign (hypothesis and the graph builder)."""

from __future__ import annotations

import re

#: the shrinking reserve (:meth:`harness.generated.campaign.Campaign.reserve`): testing stops
#: SHRINK_EACH seconds (at most ``--shrink-time``) before the end of the budget for each distinct
#: multi-node disagreement waiting, at most SHRINK_SHARE of the budget; each is then shrunk in its
#: share of what is left (at least MIN_SHRINK_S; none is started with less left)
SHRINK_SHARE = 0.25
SHRINK_EACH = 10.0
MIN_SHRINK_S = 3.0


def parse_budget(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1h30m`` -> seconds."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise ValueError(f"bad budget {text!r}: use seconds or a duration like 90s, 10m, 1h30m")
    return sum(float(a) * {"h": 3600, "m": 60, "s": 1}[b] for a, b in parts)
