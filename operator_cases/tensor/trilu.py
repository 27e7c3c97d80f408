"""Trilu: the upper or lower triangle of each matrix in the last two dims (ONNX spec: Trilu-14).

"The upper triangular part consists of the elements on and above the given diagonal (k). The
lower triangular part consists of elements on and below the diagonal. All other elements in the
matrix are set to zero." So element (i, j) stays where j - i >= k (upper) or j - i <= k (lower),
k from the optional 0-D int64 input (default 0); any k is allowed, beyond the matrix too (all
kept or all zeroed). A NaN or inf outside the triangle becomes 0 (a kernel that multiplies by a
mask gives NaN there). "set to zero" has no meaning for strings, so strings are not swept.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import ints

DTYPES = tuple(S.FLOATS + S.INTS + ("bool",))
op = Operator("Trilu", dtypes=DTYPES)  # every type of T but string ("set to zero" has no string value)
st = S.st


@op.reference(14)
def trilu(x, k=None, *, upper=1):
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError("Trilu: the input has rank 2 or more")
    kk = 0 if k is None else int(np.asarray(k).reshape(-1)[0])
    n, m = x.shape[-2:]
    rows, cols = np.indices((n, m))
    keep = (cols - rows >= kk) if upper else (cols - rows <= kk)
    return np.where(keep, x, np.zeros((), dtype=x.dtype)).astype(x.dtype)


def _k(v):
    return ints(v).reshape(())


@op.strategy(14)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=2, max_dims=4, min_side=1, max_side=5)
    x = S.arrays(d, dtype, shape=shape)
    n, m = shape[-2:]
    attrs = {"upper": d(st.integers(0, 1))} if d(st.booleans()) else {}
    k = d(st.one_of(st.none(), st.integers(-n - 1, m + 1)))
    return Example([x, None if k is None else _k(k)], attrs)


@op.edges(14)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    sq = np.resize(ev, (4, 4))
    wide = np.resize(ev[::-1], (3, 5))
    out = [
        Example([sq], name="upper_default"),
        Example([sq], {"upper": 0}, name="lower_default_k"),
        Example([wide, _k(1)], name="upper_k1_wide"),
        Example([wide, _k(-1)], {"upper": 0}, name="lower_k_minus1_wide"),
        Example([wide.T.copy(), _k(2)], {"upper": 0}, name="lower_k2_tall"),
        Example([wide.T.copy(), _k(-2)], name="upper_k_minus2_tall"),
        Example([sq, _k(7)], name="upper_k_beyond_all_zero"),
        Example([sq, _k(-7)], name="upper_k_below_all_kept"),
        Example([sq, _k(9)], {"upper": 0}, name="lower_k_beyond_all_kept"),
        Example([sq, _k(-5)], {"upper": 0}, name="lower_k_below_all_zero"),
        Example([np.resize(ev, (2, 3, 3)), _k(0)], {"upper": 1}, name="batched"),
        Example([np.resize(ev, (0, 3, 3))], name="empty_batch"),
        Example([np.resize(ev, (3, 0)), _k(1)], {"upper": 0}, name="empty_columns"),
        Example([np.resize(ev, (1, 1))], {"upper": 0}, name="one_by_one"),
    ]
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 2)
    if x is None:
        return None
    n, m = x.shape[-2:]
    k = c.pick(n + m + 3) - n - 1
    attrs = {"upper": 0} if c.pick(2) else {}
    return Plan([x, c.ints(np.array(k))] if c.pick(4) else [x], attrs)
