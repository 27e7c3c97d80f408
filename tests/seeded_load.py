"""A machine shared with other work, simulated and seeded: the timings the performance gate's
tests give it (never the wall clock).

An op takes a fixed time per run (1 to 5 ms by its name), ``factor`` times that for a slowed op.
The machine's load comes in episodes of ``EPISODE`` consecutive measurements (a measurement: one
case timed on one backend), each episode busy with probability ``BUSY`` and then slowing every
run by a factor drawn between 1 and 1 + ``BURST``; every run jitters by 1 %. Measurements are
numbered by a counter in a file shared by every process of a test (:func:`next_measurement`),
so consecutive measurements meet the same episode, as two cases timed one after the other on a
busy machine do, and two runs taken apart meet different ones.
"""

from __future__ import annotations

import fcntl
import random
import zlib

EPISODE = 6
BUSY = 0.4
BURST = 0.16


def next_measurement(state: str) -> int:
    with open(state, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        n = int(fh.read() or 0)
        fh.seek(0)
        fh.truncate()
        fh.write(str(n + 1))
    return n


def load(seed: int, n: int) -> float:
    rng = random.Random(f"{seed}/episode/{n // EPISODE}")
    busy = rng.random() < BUSY
    return 1 + rng.uniform(0, BURST) if busy else 1.0


def run_seconds(op: str, slow_op: str | None = None, factor: float = 1.0) -> float:
    ms = 1 + zlib.crc32(op.encode()) % 5
    return ms * (factor if op == slow_op else 1.0) / 1000


class Measurement:
    """The seconds of each run of one measurement."""

    def __init__(self, seed: int, n: int, op: str, slow_op: str | None, factor: float) -> None:
        self.base = run_seconds(op, slow_op, factor) * load(seed, n)
        self.jitter = random.Random(f"{seed}/jitter/{n}")

    def next(self) -> float:
        return self.base * (1 + self.jitter.gauss(0, 0.01))
