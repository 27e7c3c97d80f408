"""ReverseSequence: per batch entry, the first ``sequence_lens[i]`` steps of the time axis
reversed and the rest copied (ONNX spec: ReverseSequence-10, 28).

``input`` has rank >= 2; ``batch_axis`` and ``time_axis`` are 0 and 1 in some order ("Must be
one of 1 (default), or 0"; "one of 0 (default), or 1"); ``sequence_lens`` (int64, shape
[batch_size]) "reverses the first sequence_lens[i] elements on time axis, and copies elements
whose index's beyond sequence_lens[i]". The text gives no lower bound: a length of 0 or 1
copies the slice unchanged; a length beyond the time dim is not defined and not drawn.
ReverseSequence-28 adds bfloat16.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import ints

op = Operator("ReverseSequence", type_param="T")
st = S.st
VERSIONS = (10, 28)


@op.reference(*VERSIONS)
def reverse_sequence(x, sequence_lens, *, batch_axis=1, time_axis=0):
    x = np.asarray(x)
    batch_axis, time_axis = int(batch_axis), int(time_axis)
    if x.ndim < 2 or {batch_axis, time_axis} != {0, 1}:
        raise ValueError(f"ReverseSequence: rank {x.ndim}, batch_axis {batch_axis}, time_axis {time_axis}")
    lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
    if lens.shape != (x.shape[batch_axis],) or (lens.size and (lens.min() < 0 or lens.max() > x.shape[time_axis])):
        raise ValueError(f"ReverseSequence: sequence_lens {lens.tolist()} for batch {x.shape[batch_axis]}, time {x.shape[time_axis]}")
    out = x.copy()
    for b, n in enumerate(lens):
        sel = [slice(None)] * x.ndim
        sel[batch_axis] = b
        sel[time_axis] = slice(0, int(n))
        src = x[tuple(sel)]
        axis = time_axis if time_axis < batch_axis else time_axis - 1  # the time axis in the slice
        out[tuple(sel)] = np.flip(src, axis=axis)
    return out


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=2, max_dims=4, min_side=1, max_side=5)
    time_axis = d(st.integers(0, 1))
    batch_axis = 1 - time_axis
    lens = d(st.lists(st.integers(0, shape[time_axis]), min_size=shape[batch_axis], max_size=shape[batch_axis]))
    attrs = {"batch_axis": batch_axis, "time_axis": time_axis} if time_axis or d(st.booleans()) else {}
    return Example([S.arrays(d, dtype, shape=shape), ints(lens)], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    grid = np.resize(ev, (4, 4))
    return [
        Example([grid, ints([4, 3, 2, 1])], {"time_axis": 0, "batch_axis": 1}, name="spec_example_1"),
        Example([grid, ints([1, 2, 3, 4])], {"time_axis": 1, "batch_axis": 0}, name="spec_example_2"),
        Example([np.resize(ev, (3, 2, 2)), ints([3, 0])], name="zero_and_full_lengths_rank3"),
        Example([np.resize(ev[::-1], (2, 5, 3)), ints([5, 2])], {"time_axis": 1, "batch_axis": 0}, name="rank3_batch_first"),
        Example([np.resize(ev, (0, 3)), ints([0, 0, 0])], name="empty_time"),
        Example([np.resize(ev, (3, 0)), ints([])], name="empty_batch"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param="T")
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 2)
    if x is None:
        return None
    time_axis = c.pick(2)
    batch_axis = 1 - time_axis
    lens = c.rng.integers(0, x.shape[time_axis] + 1, size=x.shape[batch_axis])
    return Plan([x, c.ints(lens)], {"batch_axis": batch_axis, "time_axis": time_axis})
