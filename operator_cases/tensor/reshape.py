"""Reshape (ONNX spec: Reshape-1, 5, 13, 14, 19, 21, 23, 24, 25).

"Reshape the input tensor similar to numpy.reshape." At most one entry of the new shape may be
-1 (inferred from the size of the tensor and the remaining dimensions); an entry 0 copies the
input's dimension at that index; an empty shape makes a scalar; input and output must have the
same number of elements.

- Reshape-1 takes ``shape`` as an attribute (and the legacy ``consumed_inputs``, ignored);
  float types only.
- Reshape-5 makes ``shape`` the second input (int64) and widens the types.
- Reshape-13 adds bfloat16.
- Reshape-14 adds ``allowzero``: with allowzero=1 a 0 is an explicit zero dimension (as in
  numpy), and a shape holding both 0 and -1 is invalid.
- Reshape-19, 21, 23, 24, 25 only widen the types (float8, 4-bit, float4e2m1, ...).

Invalid shapes (two -1s, entries below -1, a 0 past the input's rank, a -1 that cannot be
inferred uniquely, a size mismatch) raise ValueError; no strategy draws them.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Reshape")
st = S.st
INPUT_VERSIONS = (5, 13)
ALLOWZERO_VERSIONS = (14, 19, 21, 23, 24, 25)


def _target_shape(in_shape, shape, allowzero: int) -> tuple[int, ...]:
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise ValueError(f"Reshape: shape must be 1-D, got rank {shape.ndim}")
    dims = [int(v) for v in shape]
    if any(v < -1 for v in dims):
        raise ValueError(f"Reshape: invalid dimension in {dims}")
    if dims.count(-1) > 1:
        raise ValueError(f"Reshape: at most one -1 allowed, got {dims}")
    if allowzero and 0 in dims and -1 in dims:
        raise ValueError(f"Reshape: allowzero=1 with both 0 and -1 in {dims}")
    out = []
    for i, v in enumerate(dims):
        if v == 0 and not allowzero:
            if i >= len(in_shape):
                raise ValueError(f"Reshape: 0 at index {i} but the input has rank {len(in_shape)}")
            v = in_shape[i]
        out.append(v)
    size = int(np.prod(in_shape)) if in_shape else 1
    if -1 in out:
        k = out.index(-1)
        rest = int(np.prod([v for j, v in enumerate(out) if j != k])) if len(out) > 1 else 1
        if rest == 0 or size % rest:
            raise ValueError(f"Reshape: cannot infer -1 in {dims} for input shape {tuple(in_shape)}")
        out[k] = size // rest
    if (int(np.prod(out)) if out else 1) != size:
        raise ValueError(f"Reshape: {tuple(in_shape)} has {size} elements, shape {dims} gives {tuple(out)}")
    return tuple(out)


def _reshape(data, shape, allowzero=0):
    data = np.asarray(data)
    return data.reshape(_target_shape(data.shape, shape, int(allowzero))).copy()


@op.reference(1)
def reshape_1(data, *, shape=None, consumed_inputs=None):
    if shape is None:
        raise ValueError("Reshape-1: the shape attribute is required to reshape")
    return _reshape(data, shape)


@op.reference(*INPUT_VERSIONS)
def reshape_5(data, shape):
    return _reshape(data, shape)


@op.reference(*ALLOWZERO_VERSIONS)
def reshape_14(data, shape, *, allowzero=0):
    return _reshape(data, shape, allowzero)


# -- strategies ---------------------------------------------------------------------------------
def _shape_with_size(d, n: int) -> list[int]:
    """A random shape with ``n`` elements (rank 0..4; at least one 0 dim when n == 0)."""
    if n == 0:
        rank = d(st.integers(1, 4))
        dims = [d(st.integers(0, 4)) for _ in range(rank)]
        dims[d(st.integers(0, rank - 1))] = 0
        return dims
    rank = d(st.integers(0 if n == 1 else 1, 4))
    if rank == 0:
        return []
    dims, rest = [], n
    for _ in range(rank - 1):
        divisors = [k for k in range(1, rest + 1) if rest % k == 0]
        k = d(st.sampled_from(divisors))
        dims.append(k)
        rest //= k
    dims.append(rest)
    return d(st.permutations(dims))


def _draw_shape(d, x, allowzero: int) -> list[int]:
    if x.size == 0 and not allowzero:
        # without allowzero a 0 copies the input's dim: reach an empty shape through -1
        dims = d(st.permutations([v for v in x.shape if v])) + [1] * d(st.integers(0, 1))
        dims.insert(d(st.integers(0, len(dims))), -1)
        return dims
    dims = list(_shape_with_size(d, x.size))
    if not allowzero:
        # a 0 copies the input's dim at the same index
        for i in range(min(len(dims), x.ndim)):
            if dims[i] == x.shape[i] and d(st.integers(0, 3)) == 0:
                dims[i] = 0
    if dims and d(st.booleans()):
        k = d(st.integers(0, len(dims) - 1))
        resolved = [x.shape[i] if v == 0 and not allowzero else v for i, v in enumerate(dims)]
        rest = int(np.prod([v for j, v in enumerate(resolved) if j != k]))
        if rest and dims[k] != 0 and not (allowzero and 0 in dims):
            dims[k] = -1
    return dims


def _draw_x(d, dtype):
    return S.arrays(d, dtype, min_dims=0, max_dims=4, min_side=0 if d(st.integers(0, 5)) == 0 else 1)


def _ints(v):
    return np.array(v, dtype=np.int64)


@op.strategy(1)
def draw_1(d, dtype, opset):
    x = _draw_x(d, dtype)
    shape = _draw_shape(d, x, 0)
    # an empty INTS attribute cannot be written without an explicit type (make_node infers it
    # from the values), so Reshape-1 never reshapes to a scalar here
    return Example([x], {"shape": shape or [1]})


@op.strategy(*INPUT_VERSIONS)
def draw_5(d, dtype, opset):
    x = _draw_x(d, dtype)
    return Example([x, _ints(_draw_shape(d, x, 0))])


@op.strategy(*ALLOWZERO_VERSIONS)
def draw_14(d, dtype, opset):
    x = _draw_x(d, dtype)
    allowzero = d(st.sampled_from([0, 0, 1, None]))
    shape = _ints(_draw_shape(d, x, allowzero or 0))
    return Example([x, shape], {} if allowzero is None else {"allowzero": allowzero})


# -- edges ----------------------------------------------------------------------------------------
def _fill(dtype, shape):
    """Edge values of the dtype, cycled to fill ``shape``."""
    return np.resize(S.edge_values(dtype), shape)


def _edge_cases(dtype):
    """(name, x, shape, allowzero) for every version; allowzero None: not set."""
    return [
        ("zero_and_minus_one", _fill(dtype, (2, 3, 4)), [0, -1], None),      # (2, 12)
        ("minus_one_first", _fill(dtype, (2, 3, 4)), [-1, 2, 0], None),      # (3, 2, 4)
        ("to_scalar", _fill(dtype, (1, 1)), [], None),
        ("from_scalar", _fill(dtype, ()), [1, 1, 1], None),
        ("edge_values_column", S.edge_values(dtype), [-1, 1], None),
        ("zero_copies_empty_dim", _fill(dtype, (0, 3)), [0, 3, 1], None),    # (0, 3, 1)
        ("minus_one_empty", _fill(dtype, (2, 0)), [-1, 4], None),            # (0, 4)
    ]


@op.edges(1)
def edges_1(dtype, opset):
    return [Example([x], {"shape": s}, name=name) for name, x, s, _ in _edge_cases(dtype) if s]


@op.edges(*INPUT_VERSIONS)
def edges_5(dtype, opset):
    return [Example([x, _ints(s)], name=name) for name, x, s, _ in _edge_cases(dtype)]


@op.edges(*ALLOWZERO_VERSIONS)
def edges_14(dtype, opset):
    out = [Example([x, _ints(s)], name=name) for name, x, s, _ in _edge_cases(dtype)]
    out += [
        Example([_fill(dtype, (0, 3)), _ints([3, 0])], {"allowzero": 1}, name="allowzero_empty"),      # (3, 0)
        Example([_fill(dtype, (2, 0, 3)), _ints([0, 5, 2])], {"allowzero": 1}, name="allowzero_new_empty"),
        Example([_fill(dtype, (2, 3)), _ints([0, 3])], {"allowzero": 0}, name="allowzero_0_copies"),  # (2, 3)
        Example([_fill(dtype, (2, 3)), _ints([3, 2])], {"allowzero": 1}, name="allowzero_no_zero"),
    ]
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    n = x.size
    dims: list[int] = []
    rest = n
    for _ in range(c.pick(4)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = c.choice(divisors)
        dims.append(d)
        rest //= d
    dims.append(rest)
    if c.pick(3) == 0 and n:
        dims[c.pick(len(dims))] = -1
    return Plan([x, c.ints(dims)])
