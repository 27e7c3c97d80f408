"""The old name of :mod:`harness.backends.external_runner`, kept for backend specs written as
``exec:PYTHON -m harness.backends.exec_runner --backend NAME`` before the rename."""

import sys

from .external_runner import main

if __name__ == "__main__":
    sys.exit(main())
