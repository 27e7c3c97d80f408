"""ArgMin: the index of the smallest element along ``axis`` (ONNX spec: ArgMin-1, 11, 12, 13).

The mirror of ArgMax (arg_max.py): the same versions, ties rule and cases left out.
"""

from harness.registry import Operator

from .._reduce_util import arg_template, register_arg

op = Operator("ArgMin")
register_arg(op, largest=False)


# how it enters a generated graph (harness.suites.generated)
arg_template(op)
