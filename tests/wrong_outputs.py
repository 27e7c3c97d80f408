"""A backend whose outputs are a case's expected outputs changed by a function: what a wrong
backend looks like to the judge (``harness.worker.execute_case``), without running anything."""

from __future__ import annotations

from typing import Any, Callable

from harness.backends.base import Backend, Session
from harness.case import Case


class WrongOutputs(Backend):
    """Returns ``change(expected)`` for each data set of ``case``, in order."""

    name = "wrong-outputs"

    def __init__(self, case: Case, change: Callable[[list[Any]], list[Any]]) -> None:
        super().__init__()
        self.case, self.change = case, change

    def prepare(self, model) -> Session:
        queue = [self.change(list(ds.expected)) for ds in self.case.load_data(model)]

        class Replay(Session):
            def run(self, feeds):
                return queue.pop(0)

        return Replay()
