"""ArgMax: the index of the largest element along ``axis`` (ONNX spec: ArgMax-1, 11, 12, 13).

The output is int64, with the reduced axis kept (size 1) or dropped per ``keepdims``. Ties
select the first occurrence, or the last with ``select_last_index`` (from ArgMax-12). ArgMax-11
adds negative axes ("Accepted range is [-r, r-1]") and says "The input tensor must not be
empty"; ArgMax-13 adds bfloat16. See ``register_arg`` for the cases left out (NaN, an empty
reduced axis: no version defines them).
"""

from harness.registry import Operator

from .._reduce_util import arg_template, register_arg

op = Operator("ArgMax")
register_arg(op, largest=True)


# how it enters a generated graph (harness.suites.generated)
arg_template(op)
