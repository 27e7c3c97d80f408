"""Helpers shared by the random operators (RandomNormal(Like), RandomUniform(Like), Bernoulli,
Multinomial, Dropout in training mode).

A random op has no value to compare: its reference draws one sample of the right shape and dtype
(from a generator seeded by the op and the shape, so the corpus is reproducible), the case is
marked ``Example(random=True)`` and the comparator judges a backend's output by the op's spec:
shape and dtype exact, the support, and tests of the distribution at a stated false-alarm rate
(``harness.compare.RandomOutput``, ``ALPHA``) with a stated power; a sample too small for the
power asked is "not checked" (``skip``), so drawn samples are large (``SAMPLE``) and the small
ones (a scalar) are named edge examples. Values are never compared
across backends, and the ``seed`` attribute is set in some examples only to check it is accepted
(the spec promises no particular stream: "may not produce the same values in different
implementations (even if a seed is specified)", Bernoulli)."""

from __future__ import annotations

import zlib

import numpy as np

from harness import strategies as S
from harness.registry import Example

st = S.st

def rng(*parts) -> np.random.Generator:
    """A generator seeded by ``parts`` (op name, shape ...): the reference's sample is reproducible."""
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


def out_dtype(dtype, like=None) -> np.dtype:
    """The numpy dtype of the ``dtype`` attribute (an ONNX TensorProto code), or ``like``'s."""
    if dtype is None:
        return np.asarray(like).dtype
    return S.np_dtype(S.label_of(int(dtype)))


#: the number of values a drawn sample holds: enough for the power the comparator asks of its
#: distribution tests (``harness.distribution.TARGETS``: 111 values for RandomUniform), which report a
#: smaller sample as not checked; scalars and empty tensors are edge examples
SAMPLE = (200, 800)
#: RandomNormal(Like): 11,222 values see 1.05 times the scale (a variance ratio of 1.1025) with
#: probability 0.99 at the false-alarm rate (``harness.distribution._spread``)
NORMAL_SAMPLE = (12000, 16000)
#: the shape of a named RandomNormal(Like) example that must be checked: 12,000 values
NORMAL_SHAPE = (120, 100)


def draw_shape(d, sample: tuple[int, int] = SAMPLE) -> list[int]:
    """An output shape of 1 to 3 dims holding ``sample`` values."""
    n = d(st.integers(*sample))
    shape = [d(st.integers(1, 8)) for _ in range(d(st.integers(0, 2)))]
    shape.append(-(-n // int(np.prod(shape, dtype=np.int64))))
    return list(d(st.permutations(shape)))


def dtype_attr(label: str, default: str | None) -> dict:
    """``{"dtype": code}`` unless ``label`` is the attribute's default."""
    return {} if label == default else {"dtype": S.onnx_code(label)}


#: quarters: exactly representable in every float output type, so a bound read back from a
#: narrow type is the bound itself
QUARTERS = st.integers(-16, 16).map(lambda k: k / 4)


def draw_seed(d) -> dict:
    """The optional ``seed`` attribute, set in a quarter of the drawn examples."""
    return {"seed": float(d(st.integers(0, 1000)))} if d(st.integers(0, 3)) == 0 else {}


def draw_normal(d) -> dict:
    """RandomNormal's and RandomNormalLike's attributes: an optional mean and scale, the seed."""
    attrs = {}
    if d(st.booleans()):
        attrs["mean"] = d(QUARTERS)
    if d(st.booleans()):
        attrs["scale"] = d(st.sampled_from([0.25, 0.5, 2.0, 3.0]))
    return {**attrs, **draw_seed(d)}


def draw_uniform(d) -> dict:
    """RandomUniform's and RandomUniformLike's attributes: optional bounds (low and a width in
    quarters), the seed."""
    attrs = {}
    if d(st.booleans()):
        low, width = d(QUARTERS), d(st.integers(1, 12)) / 4
        attrs = {"low": low, "high": low + width}
    return {**attrs, **draw_seed(d)}


def shaped_example(label: str, attrs: dict, name: str = "") -> Example:
    """An example of RandomNormal or RandomUniform: no input, the ``shape`` attribute, the output
    type as ``dtype`` (float32 the default)."""
    return Example([], {**attrs, **dtype_attr(label, "float32")}, name=name, random=True)


#: input types a *Like op copies the shape of (the schema's T1, less complex, which the harness
#: cannot store); bfloat16 from 22
def like_inputs(opset: int) -> tuple[str, ...]:
    return ("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "bool", "string") + (("bfloat16",) if opset >= 22 else ())


def like_example(d, dtype: str, opset: int, attrs: dict, sample: tuple[int, int] = SAMPLE) -> Example:
    """A *Like example: an input of a drawn T1 type (the output type itself, or another with
    ``dtype`` set), whose shape (``sample`` values) the output copies."""
    in_label = dtype if d(st.booleans()) else d(st.sampled_from([t for t in like_inputs(opset) if t != "string"]))  # string: an edge
    shape = tuple(draw_shape(d, sample))
    x = np.resize(S.arrays(d, in_label, shape=(d(st.integers(1, 8)),)), shape)  # values never read: a few, repeated
    extra = {} if in_label == dtype else {"dtype": S.onnx_code(dtype)}
    return Example([x], {**attrs, **extra}, random=True)


def declare_like(op, versions: tuple[int, ...], draw_attrs, edge_attrs: dict, sample: tuple[int, int] = SAMPLE,
                 shape: tuple[int, int] | None = None) -> None:
    """RandomNormalLike's and RandomUniformLike's strategies and edges: ``like_example`` with the
    attributes ``draw_attrs(d)`` draws (``sample`` values), ``like_edges`` with ``edge_attrs``
    (``shape``)."""
    op.strategy(*versions)(lambda d, dtype, opset: like_example(d, dtype, opset, draw_attrs(d), sample))
    op.edges(*versions)(lambda dtype, opset: like_edges(dtype, opset, edge_attrs, shape))


def like_edges(dtype: str, opset: int, attrs: dict, shape: tuple[int, int] | None = None) -> list:
    """The *Like edge examples: every input type of T1 (values never read, special ones fed),
    a scalar, an empty tensor and a large one for the distribution test; ``shape``: the one
    every example but the scalar and the empty one takes, when the tests need more values."""
    out = []
    for label in like_inputs(opset):
        x = np.resize(S.edge_values(label), shape or (15, 16))  # enough values for the distribution tests
        extra = {} if label == dtype else {"dtype": S.onnx_code(dtype)}
        out.append(Example([x], {**attrs, **extra}, name=f"from_{label}", random=True))
    f = S.np_dtype(dtype)
    out += [
        Example([np.zeros((), f)], dict(attrs), name="scalar", random=True),
        Example([np.zeros((2, 0, 3), f)], dict(attrs), name="empty", random=True),
        Example([np.resize(S.edge_values(dtype), shape or (40, 25))], dict(attrs), name="large", random=True),
        Example([np.zeros(shape or (20, 10), f)], {**attrs, "seed": 3.0}, name="seeded", random=True),
    ]
    return out
