"""Where the cases of a run execute. The local runner (:mod:`harness.runner`) is the default;
:mod:`harness.executors.ray` runs them on a Ray cluster. An executor only decides where a
worker runs, never how a case is judged: each runs the runner's own per-case worker.

Heavy or optional libraries (ray) are imported only inside their executor module."""

EXECUTORS = ("local", "ray")
