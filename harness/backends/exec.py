"""The old name of :mod:`harness.backends.external`, kept for plug-ins that subclass
``ExecBackend`` from here (the pattern the README showed before the rename)."""

from .external import ExecBackend, ExecSession, exec_backend_class  # noqa: F401
