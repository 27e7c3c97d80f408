"""Einsum: Einstein summation over the operands (ONNX spec: Einsum-12, 28).

The equation is "term1, term2 -> output-term": each term names its operand's dimensions with
letters (lower and upper case distinct), a letter repeated within or across terms indexes the
same values (diagonals, products), and every letter absent from the output is summed over.
Without "->" the output is (implicit mode) "the sequence of indices appearing exactly once in
the equation, sorted in increasing order of their ASCII values", preceded by the ellipsis
dimensions. "..." stands for the same number of dimensions in every term, broadcast together;
the right-hand side "may contain exactly one ellipsis"; spaces are allowed. Einsum-28 adds
bfloat16.

The equation is parsed here (implicit output, ellipsis expansion, broadcasting of size-1
ellipsis dimensions); numpy.einsum then only evaluates the resulting explicit, ellipsis-free
sum, in float64 or on Python ints. Floats are drawn on a binary grid on which every partial sum
of products is exact in the input type; integers small enough that nothing overflows (the spec
says nothing about integer overflow). Explicit outputs name each letter at most once; a term
with "..." when the output has none is not drawn (the text does not say whether that sums the
ellipsis dimensions).
"""

from __future__ import annotations

import string

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, abs_bound
from harness.registry import Example, Operator

from .._reduce_util import exact, to_dtype, value_drawer

op = Operator("Einsum")
st = S.st


def parse(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The explicit, ellipsis-free terms and output of ``equation`` for operands of ``shapes``."""
    eq = equation.replace(" ", "")
    lhs, rhs = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    used = set(eq) - set(".,->")
    spare = [c for c in string.ascii_letters if c not in used]
    ell_rank = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            ell_rank = max(ell_rank, len(shape) - (len(term) - 3))
    ell = "".join(spare[:ell_rank])
    out_terms = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - (len(term) - 3)
            term = term.replace("...", ell[ell_rank - k:])
        out_terms.append(term)
    if rhs is None:
        letters = "".join(t.replace("...", "") for t in lhs.split(","))
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        rhs_full = ell + "".join(once)
    else:
        rhs_full = rhs.replace("...", ell)
    return out_terms, rhs_full


def einsum_exact(equation: str, *operands: np.ndarray) -> np.ndarray:
    shapes = [np.shape(x) for x in operands]
    terms, rhs = parse(equation, shapes)
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        for c, s in zip(term, shape):
            if s != 1:
                sizes[c] = s
            sizes.setdefault(c, s)
    wide = []
    for term, x in zip(terms, operands):
        # broadcast size-1 (ellipsis) dimensions to the common size
        target = tuple(sizes[c] for c in term)
        wide.append(np.broadcast_to(exact(x), target))
    return np.einsum(",".join(terms) + "->" + rhs, *wide)


@op.reference(12, 28)
def einsum(*inputs, equation):
    eq = equation.decode() if isinstance(equation, bytes) else equation
    return to_dtype(einsum_exact(eq, *inputs), np.asarray(inputs[0]).dtype)


# -- drawing equations ---------------------------------------------------------------------------
def draw_equation(d) -> tuple[str, list[tuple[int, ...]], int]:
    """(equation, operand shapes, number of products summed per output element)."""
    pool = "abcdef" + ("AB" if d(st.integers(0, 3)) == 0 else "")
    n_ops = d(st.integers(1, 3))
    use_ell = d(st.integers(0, 3)) == 0
    ell_rank = d(st.integers(0, 2)) if use_ell else 0
    sizes = st.sampled_from([2, 3, 2, 1, 3])
    ell_sizes = [d(sizes) for _ in range(ell_rank)]
    size = {c: d(sizes) for c in pool}
    if d(st.integers(0, 7)) == 0:
        size[d(st.sampled_from(pool))] = 0  # an empty dimension
    terms, shapes = [], []
    ell_in = [use_ell and (k == 0 or d(st.booleans())) for k in range(n_ops)]
    for k in range(n_ops):
        top = 3 - (ell_rank if ell_in[k] else 0) // 2
        rank = min(top, d(st.sampled_from([2, 1, 3, 2] + ([0] if n_ops > 1 else []))))
        letters = [d(st.sampled_from(pool)) for _ in range(rank)]
        term = "".join(letters)
        shape = [size[c] for c in letters]
        if ell_in[k]:
            at = d(st.integers(0, len(term)))
            term = term[:at] + "..." + term[at:]
            # each operand's ellipsis dimensions: the common size, or 1 (broadcast)
            mine = [s if d(st.integers(0, 3)) else 1 for s in ell_sizes]
            shape = shape[:at] + mine + shape[at:]
        if int(np.prod(shape)) > 64:
            term, shape = term.replace("...", ""), [size[c] for c in term.replace("...", "")]
            ell_in[k] = False
        terms.append(term)
        shapes.append(tuple(shape))
    letters = sorted(set("".join(t.replace("...", "") for t in terms)))
    has_ell = any("..." in t for t in terms)
    if d(st.integers(0, 2)) == 0:
        eq = ",".join(terms)
        text = "".join(t.replace("...", "") for t in terms)
        out_letters = [c for c in letters if text.count(c) == 1]
    else:
        out_letters = d(st.lists(st.sampled_from(letters), unique=True, max_size=len(letters))) if letters else []
        rhs = "".join(out_letters)
        if has_ell:
            at = d(st.integers(0, len(rhs)))
            rhs = rhs[:at] + "..." + rhs[at:]
        eq = ",".join(terms) + "->" + rhs
    if d(st.integers(0, 4)) == 0:
        eq = eq.replace(",", ", ").replace("->", " -> ")
    summed = int(np.prod([size[c] for c in letters if c not in out_letters])) if letters else 1
    return eq, shapes, max(summed, 1)


def fits(eq, xs, dtype) -> bool:
    lo, hi = S.finite_range(dtype)
    r = np.asarray(einsum_exact(eq, *xs)).reshape(-1)
    return all(lo <= int(v) <= hi for v in r)


@op.strategy(12, 28)
def draw(d, dtype, opset):
    eq, shapes, summed = draw_equation(d)
    n_ops = len(shapes)
    if S.is_float(dtype):
        xs = [value_drawer((-4.0, 4.0), grid=n_ops)(d, dtype, s, summed) for s in shapes]
    else:
        for bound in (5, 2, 1, 0):
            xs = [S.arrays(d, dtype, shape=s, lo=-bound, hi=bound) for s in shapes]
            if fits(eq, xs, dtype):
                break
    return Example(xs, {"equation": eq})


@op.edges(12, 28)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    m = np.array([[1, 2, 0], [3, 1, 2], [0, 1, 1]], dtype=t)
    v = np.array([1, 2, 3], dtype=t)
    r = np.array([[1, 0, 2], [2, 1, 0]], dtype=t)          # (2, 3)
    batch = np.stack([m, m.T.copy()])                        # (2, 3, 3)
    cases = [
        ("ij->ji", [r]), ("ii->i", [m]), ("ii", [m]), ("ij", [r]), ("ji", [r]), ("ij->", [r]), ("ij->j", [r]),
        ("ij,jk->ik", [r, m]), ("ij,jk", [r, m]), ("i,i", [v, v]), ("i,j->ij", [v, v]), ("i,i->i", [v, v]),
        ("bij,bjk->bik", [batch, batch]), ("...ij,...jk->...ik", [batch, m[None]]), ("...ii->...i", [batch]),
        ("i...->...", [batch]), ("...j,j", [r, v]), (" ij , jk -> ik ", [r, m]), ("Ab,bA->", [r, r.T.copy()]),
        ("aB,Ba", [r, r.T.copy()]), ("ij,jk,kl->il", [r, m, m]), ("ijk->kji", [batch]), ("iij->j", [batch[:, :, :2].copy()[:2, :2]]),
    ]
    out = [Example(xs, {"equation": eq}, name=f"eq{k}") for k, (eq, xs) in enumerate(cases)]
    out.append(Example([np.zeros((2, 0), dtype=t), np.zeros((0, 3), dtype=t)], {"equation": "ij,jk->ik"}, name="empty_sum"))
    out.append(Example([np.zeros((0, 2), dtype=t)], {"equation": "ij->ji"}, name="empty_transpose"))
    out.append(Example([np.array(3, dtype=t), v], {"equation": ",i->i"}, name="scalar_operand"))
    if S.is_float(dtype):
        inf, nan = np.inf, np.nan
        special = np.array([[inf, 0.0], [nan, 1.0], [-inf, -0.0]], dtype=t)
        out.append(Example([special, np.array([[1.0, 0.0], [0.0, 1.0]], dtype=t)], {"equation": "ij,jk->ik"}, name="nan_inf"))
        out.append(Example([(r * S.smallest_subnormal(dtype)).astype(t), m], {"equation": "ij,jk->ik"}, name="subnormal"))
    else:
        lo, hi = S.finite_range(dtype)
        ext = np.array([[hi, 0], [lo, 1]], dtype=object).astype(t)
        out.append(Example([ext, np.array([[1, 0], [0, 1]], dtype=t)], {"equation": "ij,jk->ik"}, name="int_extremes"))
        out.append(Example([ext], {"equation": "ij->ji"}, name="int_extremes_transpose"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: 1 <= v.rank <= 3 and v.size > 0)
    if a is None:
        return None
    letters = "ijkl"
    la = letters[: a.rank]
    mode = c.pick(3)
    if mode == 0:  # one operand: permute and sum some axes
        keep = [ch for ch in la if c.pick(3)]
        out = "".join(sorted(keep, key=lambda _: c.pick(7)))
        return Plan([a], {"equation": f"{la}->{out}"}, n_acc=a.size)
    # two operands: contract a's last axis with b's first
    k = a.shape[-1]
    shape = (k,) + tuple(1 + c.pick(3) for _ in range(c.pick(2)))
    b = c.take("float", 1, lambda v: 1 <= v.rank <= 2 and v.shape[0] == k)
    if b is None or mode == 2:
        b = c.const(c.floats(shape))
    lb = la[-1] + "mn"[: b.rank - 1]
    out = la[:-1] + lb[1:]
    if c.pick(2):
        out = out[::-1]
    return Plan([a, b], {"equation": f"{la},{lb}->{out}"}, n_acc=k)
