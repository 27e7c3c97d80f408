"""CenterCropPad: crop or pad the input, centred, to ``shape`` along ``axes`` (ONNX spec:
CenterCropPad-18).

Per axis with input size d and target s: d > s crops a window starting at (d - s) // 2 ("The
starting value for the cropping window is rounded down"); d < s pads (s - d) // 2 before and
the rest after ("an additional pixel will be added to the right side"); "The padding value used
is zero". ``axes`` defaults to every axis, negative ones count from the back; a repeated axis
is undefined, so none is drawn. ``shape`` is int32 or int64 (drawn int64; the ``*_int32`` edge
examples take int32: ONNX's own function body for CenterCropPad-18 mixes it with Shape's int64 in
a Max, so a runtime that expands the function rejects them; see crosscheck.toml).

Spec-silent: the padding value of a string tensor ("zero" names no string); we take the empty
string, the value of an unset string element in a TensorProto.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan, size_of
from harness.registry import Example, Operator

from .._tensor_util import fill, ints, side

op = Operator("CenterCropPad")
op.draws(18, share=0.5)  # a wide type sweep of one behaviour: the edge examples carry the special values
st = S.st


def _padded(inputs, attrs, expected, since):
    """Open: the padded elements of a string output."""
    x = np.asarray(inputs[0])
    if x.dtype != object or not expected:
        return [None]
    mask = np.ones(x.shape, dtype=bool)
    return [~_place(mask, inputs[1], attrs.get("axes"), np.zeros((), dtype=bool))]


def _one_pad(c):
    """Invariant: every padded element holds the same value (one padding value, wherever it pads)."""
    got = np.asarray(c.actual[0])[c.masks[0]]
    return len({str(v) for v in got.ravel()}) <= 1


op.spec_silent(
    "string_pad", (18,), spec="The padding value used is zero.",
    expected="the empty string (an unset string element of a TensorProto); the spec names no zero string",
    where=_padded,
    invariants={"a padded string element holds one value, the same everywhere it pads": _one_pad},
    readings={"the number 0 (the text's 'zero' taken as it is)": lambda c: [np.full(np.shape(c.expected[0]), 0, dtype=object)]})


def _place(x, shape, axes, zero):
    x = np.asarray(x)
    r = x.ndim
    axes = list(range(r)) if axes is None else [int(a) + r if int(a) < 0 else int(a) for a in axes]
    shape = [int(s) for s in np.asarray(shape).reshape(-1)]
    if len(shape) != len(axes) or len(set(axes)) != len(axes):
        raise ValueError(f"CenterCropPad: shape {shape} for axes {axes}")
    out = x
    for axis, s in zip(axes, shape):
        d = out.shape[axis]
        if d >= s:
            begin = (d - s) // 2
            out = np.take(out, np.arange(begin, begin + s), axis=axis)
        else:
            before = (s - d) // 2
            width = [(0, 0)] * r
            width[axis] = (before, s - d - before)
            out = np.pad(out, width, constant_values=zero) if out.dtype != object else _pad_object(out, width, zero)
    return out.copy()


def _pad_object(x, width, zero):
    out = np.full([d + a + b for d, (a, b) in zip(x.shape, width)], zero, dtype=object)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, width))] = x
    return out


@op.reference(18)
def center_crop_pad(input_data, shape, *, axes=None):
    x = np.asarray(input_data)
    zero = "" if x.dtype == object else np.zeros((), dtype=x.dtype)
    return _place(x, shape, axes, zero)


@op.strategy(18)
def draw(d, dtype, opset):
    x = S.arrays(d, dtype, shape=tuple(side(d, 4) for _ in range(d(st.integers(1, 3)))))
    r = x.ndim
    attrs = {}
    axes = list(range(r))
    if d(st.booleans()):
        axes = d(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True))
        attrs["axes"] = [a - r if d(st.booleans()) else a for a in axes]
    target = [max(0, x.shape[a] + d(st.integers(-3, 3))) for a in axes]
    return Example([x, ints(target)], attrs)  # int32 shapes: the *_int32 edge examples


@op.edges(18)
def edges(dtype, opset):
    x = fill(dtype, (4, 5))
    return [
        Example([x, ints([2, 2])], name="crop_even_odd"),                      # rows 1-2, cols 1-2
        Example([x, ints([7, 8])], name="pad_odd_even"),                       # 1 before / 2 after, 1 / 2
        Example([x, ints([2, 8], "int32")], name="crop_and_pad_int32"),
        Example([x, ints([6], "int32")], {"axes": [1]}, name="one_axis_pad_int32"),
        Example([x, ints([2, 8])], name="crop_and_pad"),
        Example([x, ints([3])], {"axes": [-1]}, name="negative_axis"),
        Example([x, ints([6])], {"axes": [0]}, name="one_axis_pad"),
        Example([x, ints([5, 4])], {"axes": [1, 0]}, name="axes_reordered"),
        Example([x, ints([4, 5])], name="same_shape"),
        Example([x, ints([0, 2])], name="crop_to_empty"),
        Example([fill(dtype, (0, 3)), ints([2, 3])], name="pad_empty"),
        Example([S.edge_values(dtype), ints([len(S.edge_values(dtype)) + 3])], name="edge_values_padded"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1)
    if x is None:
        return None
    target = [max(1, s + c.pick(5) - 2) for s in x.shape]
    if size_of(tuple(target)) > MAX_ELEMENTS:
        return None
    if c.pick(2):
        return Plan([x, c.ints(target)])
    axis = c.pick(x.rank)
    return Plan([x, c.ints([target[axis]])], {"axes": [axis]})
