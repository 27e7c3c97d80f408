"""Realizing a spec: each node planned by its op's template, its values composed by our references,
its error estimated, its tolerance derived."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from .. import schema
from .. import strategies as S
from ..fuzz_api import (
    LOCAL,
    MAX_ELEMENTS,
    NAN_ASSUMED,
    NAN_IEEE,
    PERTURB,
    QUANT,
    QUANT_DTYPES,
    ROUNDOFF,
    Ctx,
    Plan,
    Step,
    Template,
    Value,
    as_list,
    size_of,
)
from ..registry import load_all, spec_silent_points
from ..values import Typed, reference_value
from .graph import Graph, Node, SilentSite, _narrow, available_ops, is_exact, templates
from .patterns import PATTERNS, Skip
from .spec import (
    INPUT_ELEMENTS,
    INT_MAGNITUDE,
    MAX_MAGNITUDE,
    SUBNORMAL,
    GenConfig,
    GraphSpec,
    NodeSpec,
)


#: the since_version that marks a pattern in the list of what a spec's op index picks from
PATTERN = 0


# =============================================================================================
# realizing a spec
# =============================================================================================
class Builder:
    def __init__(self, spec: GraphSpec, config: GenConfig) -> None:
        self.spec = spec
        self.config = config
        self.opset = config.opset_of(spec.opset)
        self.dtype = config.dtype_of(spec.dtype)
        self.exact = is_exact(self.dtype)
        self.u = ROUNDOFF.get(self.dtype, 0.0)
        self.nan_mode = spec.nan >= 100 - round(100 * config.nan_rate) and not self.exact
        self.pool: list[Value] = []
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.skipped: list[tuple[int, str]] = []
        self.exposed: set[str] = set()
        self.nan_assumed: list[str] = []
        #: the edge class of the graph's inputs ("" for none; see GenConfig.edge_of)
        self.edge = config.edge_of(spec) if not self.exact and not self.nan_mode else ""
        #: outputs of nodes that reached a spec-silent point: graph outputs nothing reads
        self.terminal: list[Value] = []
        self.silent: dict[str, SilentSite] = {}
        #: the values of the node placed last
        self.placed: list[Value] = []
        #: patterns placed whole ("MatMulAdd:inside")
        self.patterns: list[str] = []
        self.registry = load_all()

    # -- inputs ----------------------------------------------------------------------------
    def make_inputs(self) -> None:
        spec = self.spec
        rank = (2, 1, 3, 4, 2, 1, 3, 0)[spec.rank % 8]
        dims: list[int] = []
        for i in range(rank):
            room = max(1, INPUT_ELEMENTS // max(1, size_of(tuple(dims))))
            dims.append(min(1 + spec.dims[i] % 5, room))
        if self.config.empty and rank and spec.dims[0] == 7 and (spec.seed >> 8) % 2 == 0:
            dims[0] = 0  # an empty input: every op-version must take zero-size dims
        base = tuple(dims)
        for k, ispec in enumerate(spec.inputs):
            shape = base
            if ispec.variant in (2, 3) and shape:
                shape = shape[ispec.mask % (len(shape) + 1):] if ispec.variant == 2 else shape[(ispec.mask >> 2) % len(shape):]
            if ispec.variant in (1, 3):
                shape = tuple(1 if ispec.mask >> i & 1 else d for i, d in enumerate(shape))
            rng = np.random.default_rng([spec.seed, 1000 + k])
            n = size_of(shape)
            if ispec.dist == 0:
                vals = rng.uniform(-2, 2, n)
            elif ispec.dist == 1:
                vals = rng.uniform(-10, 10, n)
            elif ispec.dist == 2:
                vals = rng.uniform(0.1, 4, n)
            else:
                vals = rng.integers(-6, 7, n) / 2.0
            if self.nan_mode and n and rng.uniform() < 0.75:
                vals[rng.choice(n, size=1 + int(rng.integers(0, max(1, n // 8))), replace=False)] = np.nan
            if self.edge and n:
                vals = self._edge_values(vals, ispec.dist, np.random.default_rng([spec.seed, 2000 + k]))
            if self.exact:
                wide = _exact_values(self.dtype, vals.reshape(shape), ispec.dist)
            else:
                wide = vals.reshape(shape).astype(S.np_dtype(self.dtype)).astype(np.float64)
            err = np.zeros(shape)
            if self.edge == "overflow":
                # an input far beyond the generator's magnitudes is exact, but an op that is
                # ill-conditioned there (Sin of 1e21: argument reduction) must show as such, so
                # it carries one rounding of error and the value checks skip such nodes
                err = np.where(np.abs(wide) > MAX_MAGNITUDE, self.u * np.abs(wide), 0.0)
            v = Value(f"x{k}", "float", wide, err, 0)
            self.inputs.append(v)
            self.pool.append(v)

    def _edge_values(self, vals: np.ndarray, dist: int, rng: np.random.Generator) -> np.ndarray:
        """``vals`` with some elements (three graphs in four: one, up to an eighth) set to values
        of the graph's edge class; positive ones where the input's distribution is positive."""
        n = vals.size
        if rng.uniform() >= 0.75:
            return vals
        vals = vals.copy()
        where = rng.choice(n, size=1 + int(rng.integers(0, max(1, n // 8))), replace=False)
        sign = np.ones(len(where)) if dist == 2 else rng.choice([-1.0, 1.0], size=len(where))
        info = ml_dtypes.finfo(S.np_dtype(self.dtype))
        if self.edge == "inf":
            vals[where] = sign * np.inf
        elif self.edge == "neg_zero":
            vals[where] = -0.0
        elif self.edge == "subnormal":
            vals[where] = sign * rng.uniform(0.01, 0.99, len(where)) * float(info.smallest_normal)
        elif self.edge == "overflow":
            vals[where] = sign * rng.uniform(1.0, 4.0, len(where)) * float(info.max) ** 0.55
        else:
            raise ValueError(f"unknown edge class {self.edge!r}")
        return vals

    def _overflowed(self, y: np.ndarray) -> np.ndarray:
        """A float64 result as the graph's dtype holds it where it overflows: +-inf (what a
        correct implementation in that dtype computes; the composed reference then propagates it)."""
        if y.dtype.kind != "f" or self.dtype == "float64":
            return y
        narrow = y.astype(S.np_dtype(self.dtype)).astype(np.float64)
        return np.where(np.isinf(narrow) & np.isfinite(y), narrow, y)

    def _edge_mask(self, x: np.ndarray | None) -> np.ndarray | None:
        """``x`` with its edge elements (non-finite, zero, subnormal, beyond the generator's
        magnitudes) replaced by 1 for a template's guard: the guard keeps ordinary values inside
        the op's well-conditioned domain; an edge value's result is what IEEE 754 says."""
        if x is None or x.dtype.kind != "f":
            return x
        tiny = float(ml_dtypes.finfo(S.np_dtype(self.dtype)).smallest_normal)
        with np.errstate(invalid="ignore"):
            edge = ~np.isfinite(x) | (np.abs(x) < tiny) | (np.abs(x) > MAX_MAGNITUDE)
        return np.where(edge, 1.0, x)

    # -- nodes -----------------------------------------------------------------------------
    def apply(self, index: int, nspec: NodeSpec, available: tuple[tuple[str, int], ...]) -> str | None:
        """Place one node (or a pattern's nodes); return None, or why the spec was skipped."""
        op, since = available[nspec.op % len(available)]
        c = Ctx(self, nspec, since)
        if since == PATTERN:
            c.index = index
            try:
                variant = PATTERNS[op].place(c)
            except Skip as exc:  # the nodes placed before it stay: an ordinary graph
                return f"pattern {op}: {exc}"
            self.patterns.append(f"{op}:{variant}")
            return None
        try:
            plan = templates()[op].plan(c)
        except (ValueError, IndexError, ZeroDivisionError):
            plan = None
        if plan is None:
            return f"{op}: no value fits"
        return self.evaluate(op, since, plan.inputs, plan.attrs, plan.n_acc, plan.n_outputs, index, nspec.expose,
                             captures=plan.captures, steps=plan.steps, then=plan.then, own=plan.outputs)

    def evaluate(self, op: str, since: int, ins: list[Value | None], attrs: dict[str, Any], n_acc: int = 0,
                 n_outputs: int | None = None, index: int = -1, expose: bool = False,
                 out_names: list[str] | None = None, captures: list[Value] = (), steps: list[Step] = (),
                 then: list[Step] = (), own: list[str] = (), slack: float = 0.0) -> str | None:
        """Evaluate one node on pool values with the reference, check its values and add it
        (and its outputs to the pool); return None, or why it cannot be placed. ``captures``
        (values its subgraphs read by name) are checked and perturbed as inputs after ``ins``;
        ``steps`` and ``then`` (reading the node's outputs ``own``) are placed before and after it.
        ``slack``: an absolute error its float outputs are allowed beyond their own estimate (the
        one quantization step a fused quantized kernel may round differently: patterns.py)."""
        tmpl = templates()[op]
        attrs = _as_stored(op, self.opset, attrs)
        ins = list(ins)
        while ins and ins[-1] is None:
            ins.pop()
        captures = list(captures)
        if any(v.const or not v.name for v in captures):
            return f"{op}: a captured value must be a named pool value"
        n_in = len(ins)
        ref = self.registry[("", op, since)].reference
        if captures:
            ref = _with_scope(ref, n_in, [v.name for v in captures], self.opset)
            ins = ins + captures
        main_ins = ins
        step_rows: list[tuple[str, int, list[Value | None], list[str], dict[str, Any]]] = []
        then_rows: list[tuple[str, int, list[Value | None], list[str], dict[str, Any]]] = []
        if then and not own:
            return f"{op}: helper steps after the node need the node's output names (Plan.outputs)"
        for rows, helpers in ((step_rows, steps), (then_rows, then)):
            for st_ in helpers:
                sch = schema.schema_at(st_.op, self.opset)
                if sch is None or ("", st_.op, sch.since_version) not in self.registry:
                    return f"{op}: helper {st_.op} has no reference at opset {self.opset}"
                if (f"{st_.op}-{sch.since_version}", self.dtype) in self.config.exclude:
                    return f"{op}: helper {st_.op}-{sch.since_version} not drawn at {self.dtype}"
                rows.append((st_.op, sch.since_version, list(st_.inputs), list(st_.outputs),
                             _as_stored(st_.op, self.opset, st_.attrs)))
        if step_rows or then_rows:
            ref, ins = _with_steps(ref, step_rows, main_ins, self.registry, then_rows, list(own))
        wide_in = [v.wide if v is not None else None for v in ins]
        nan_in = any(v is not None and v.has_nan for v in ins)
        if nan_in and tmpl.nan is None:
            return f"{op}: NaN input, behaviour not defined"
        guarded = [self._edge_mask(x) for x in wide_in] if self.edge else wide_in
        if self.config.value_aware and tmpl.guard is not None and not tmpl.guard(guarded):
            return f"{op}: input outside the safe domain"
        if self.config.value_aware and tmpl.stable is not None and not tmpl.stable(ins, attrs, self.u):
            return f"{op}: near a tie or an equality"
        plan = Plan(ins, attrs, n_acc, n_outputs)
        try:
            ys = as_list(ref(*wide_in, **attrs))[:n_outputs]
        except Exception as exc:  # a template drew something the reference refuses: skip it
            return f"{op}: reference raised {type(exc).__name__}: {exc}"[:200]
        kinds = [_kind_of(y, self.dtype) for y in ys]
        if any(k is None for k in kinds):
            return f"{op}: output type not handled"
        ys = [np.asarray(y, dtype=np.float64) if k == "float" and not self.exact else np.asarray(y) for y, k in zip(ys, kinds)]
        if self.edge:
            ys = [self._overflowed(y) for y in ys]
        if any(y.size > MAX_ELEMENTS for y in ys):
            return f"{op}: output too large"
        errs = [np.zeros(y.shape) for y in ys]
        if self.exact:
            why = _exact_result(ref, ins, attrs, ys, self.dtype)
            if why:
                return f"{op}: {why}"
        elif self.config.value_aware:
            why = self._check_values(tmpl, ref, plan, ins, ys, errs, nan_in)
            if why:
                return f"{op}: {why}"
        if slack:
            errs = [e + slack if k == "float" else e for e, k in zip(errs, kinds)]
        # a spec-silent point reached (NaN and edge-value graphs): the node's outputs become
        # graph outputs that nothing reads, judged by the point's readings and invariants
        reached: list[str] = []
        if (self.nan_mode or self.edge) and not (captures or step_rows or then_rows):
            narrow_in = [None if v is None else _narrow(v, self.dtype) for v in main_ins[:n_in]]
            narrow_out = [_narrow(Value("", k, y, e, 0), self.dtype) for y, e, k in zip(ys, errs, kinds)]
            reached = [p.id for p in spec_silent_points(op, since) if p.reached(narrow_in, attrs, narrow_out, since)]
        # place the node
        names = [self._name_input(v) for v in main_ins[:n_in]]
        rows = [(o, s_, [self._name_input(v) for v in vs], outs_, a) for o, s_, vs, outs_, a in step_rows]
        outs = out_names or [f"v{len(self.nodes)}" + (f"_{i}" if len(ys) > 1 else "") for i in range(len(ys))]
        after = [(o, s_, [self._name_input(v) for v in vs], outs_, a) for o, s_, vs, outs_, a in then_rows]
        if after:  # the last helper gives the plan's outputs: it writes the pool names
            o, s_, vs, outs_, a = after[-1]
            after[-1] = (o, s_, vs, list(outs) + list(outs_[len(outs):]), a)
        depth = 1 + len(step_rows) + len(then_rows) + max([v.depth for v in ins if v is not None] or [0])
        self.nodes.append(Node(op, since, names, outs, dict(attrs), index, n_acc, n_outputs, [v.name for v in captures], rows,
                               after, list(own) if after else [], slack))
        self.placed = []
        for name, y, e, k in zip(outs, ys, errs, kinds):
            v = Value(name, k, y, e, depth, node=len(self.nodes) - 1)
            self.placed.append(v)
            (self.terminal if reached else self.pool).append(v)
            if expose:
                self.exposed.add(name)
        if reached:
            site = SilentSite(op, since, reached, narrow_in, dict(attrs), list(outs), narrow_out)
            self.silent.update(dict.fromkeys(outs, site))
        elif nan_in and tmpl.nan == NAN_ASSUMED:
            self.nan_assumed.append(op)
        return None

    def _name_input(self, v: Value | None) -> str:
        if v is None:
            return ""
        if not v.const or v.name in self.initializers:
            return v.name
        name = f"c{len(self.initializers)}"
        arr = _narrow(v, self.dtype) if v.kind == "float" else v.wide
        self.initializers[name] = np.asarray(arr)
        v.name = name
        return name

    def _check_values(self, tmpl: Template, ref: Callable, plan: Plan, ins: list[Value | None], ys: list[np.ndarray],
                      errs: list[np.ndarray], nan_in: bool) -> str | None:
        """Value-aware checks of one node (numpy warnings are off: see :func:`realize`). Fills
        ``errs`` with the outputs' error estimates; returns why the node is unsafe, or None."""
        edge = bool(self.edge)
        clean = (lambda a: np.nan_to_num(a)) if nan_in or edge else (lambda a: a)
        for y in ys:
            if y.dtype.kind != "f" or not y.size:
                continue
            if edge:
                # +-inf, overflow and magnitudes beyond 1e4 are what these graphs are for; a NaN
                # from numbers (inf - inf) only where IEEE 754 arithmetic defines the op
                if np.isnan(y).any() and not nan_in and tmpl.nan != NAN_IEEE:
                    return "NaN output from numbers, not IEEE arithmetic"
                continue
            if nan_in:
                if np.isinf(y).any():
                    return "infinite output"
            elif not np.isfinite(y).all():
                return "NaN or infinite output"
            if np.max(clean(np.abs(y))) > MAX_MAGNITUDE:
                return "output magnitude above 1e4"
        # perturb the float inputs by their error (and, where outputs jump, by a few ulps more)
        u = self.u
        deltas: dict[int, np.ndarray] = {}
        for i, v in enumerate(ins):
            if v is None or v.kind != "float" or v.const:
                continue
            d = PERTURB * v.err
            if tmpl.jumps:
                d = d + clean(4 * u * np.abs(v.wide)) + 1e-30
            if edge:
                d = np.where(np.isfinite(v.wide), d, 0.0)  # an infinite value stays itself
            if d.any():
                deltas[i] = d
        if deltas:
            first = min(deltas)
            rng = np.random.default_rng([self.spec.seed, len(self.nodes), 7])
            random_signs = {i: rng.choice([-1.0, 1.0], size=d.shape) for i, d in deltas.items()}
            diffs = [np.zeros(y.shape) for y in ys]
            # sign patterns: independent random signs; all up; all down (a kink or a boundary is
            # crossed whichever side of it the value sits); with several inputs also the first up
            # and the others down and vice versa (the difference of two erroneous values is not
            # taken as exact)
            patterns = ("random", (1.0, 1.0), (-1.0, -1.0)) + (((1.0, -1.0), (-1.0, 1.0)) if len(deltas) > 1 else ())
            for pattern in patterns:
                args = []
                for i, v in enumerate(ins):
                    if i not in deltas:
                        args.append(v.wide if v is not None else None)
                        continue
                    sign = random_signs[i] if pattern == "random" else pattern[0 if i == first else 1]
                    args.append(v.wide + sign * deltas[i])
                try:
                    yp = as_list(ref(*args, **plan.attrs))[: plan.n_outputs]
                except Exception:
                    return "reference fails near these values"
                if edge:
                    yp = [self._overflowed(np.asarray(y2, dtype=np.float64)) if np.asarray(y2).dtype.kind == "f" else y2 for y2 in yp]
                for k, (y, y2) in enumerate(zip(ys, yp)):
                    y2 = np.asarray(y2)
                    if y2.shape != y.shape:
                        return "unstable shape"
                    if y.dtype.kind != "f":
                        if not np.array_equal(y, y2):
                            return "near a discontinuity"
                        continue
                    diff = np.abs(y2.astype(np.float64) - y)
                    if edge:
                        # the same NaN and the same infinities, or the node sits at an overflow
                        # threshold or a pole
                        if not (np.array_equal(np.isnan(y), np.isnan(y2)) and np.array_equal(np.isposinf(y), np.isposinf(y2))
                                and np.array_equal(np.isneginf(y), np.isneginf(y2))):
                            return "non-finite near these values"
                        diff = np.where(np.isfinite(y), diff, 0.0)
                    elif nan_in:
                        if not np.array_equal(np.isnan(y), np.isnan(y2)) or np.isinf(y2).any():
                            return "non-finite near these values"
                        diff = np.nan_to_num(diff)
                    elif not np.isfinite(diff).all():
                        return "non-finite near these values"
                    np.maximum(diffs[k], diff, out=diffs[k])
            for k, y in enumerate(ys):
                if y.dtype.kind == "f":
                    errs[k] = diffs[k] / PERTURB
        if edge:
            why = self._overflow_inside(ref, plan, ins, ys, tmpl)
            if why:
                return why
        # the op's own rounding, and the conditioning limit
        u = max(u, tmpl.compute_u)
        bounds: list | None = None
        if tmpl.bound is not None:  # a bound that raises or does not fit y is a bug of its template: it propagates
            got = tmpl.bound(ref, [v.wide if v is not None else None for v in ins], plan.attrs)
            # one array for a node of one output, or a list of them, one per output
            bounds = list(got) if isinstance(got, (list, tuple)) else [got]
            if len(bounds) != len(ys):
                raise ValueError(f"{tmpl.op}: its template's bound gave {len(bounds)} array(s) for {len(ys)} output(s)")
        for k, y in enumerate(ys):
            if y.dtype.kind != "f":
                continue
            mag = clean(np.abs(y))
            scale = mag
            if bounds is not None:
                scale = np.broadcast_to(clean(np.asarray(bounds[k], dtype=np.float64)), y.shape)
            if edge:  # an infinite result is exact; a finite one rounds with its finite bound
                fin = np.isfinite(y)
                mag = np.where(fin, mag, 0.0)
                scale = np.where(fin & np.isfinite(np.asarray(bounds[k] if bounds is not None else y, dtype=np.float64)),
                                 np.broadcast_to(scale, y.shape), 0.0)
            # plus the absolute error of rounding into the subnormal range (a value below the
            # smallest subnormal legitimately becomes 0: Softmax of float16 does)
            errs[k] = errs[k] + (tmpl.ulps + plan.n_acc) * u * scale + SUBNORMAL[self.dtype]
            if np.any(errs[k] > math.sqrt(u) * np.maximum(mag, 1.0)):
                return "ill-conditioned here (error estimate too large)"
        return None

    def _overflow_inside(self, ref: Callable, plan: Plan, ins: list[Value | None], ys: list[np.ndarray],
                         tmpl: Template) -> str | None:
        """Whether a result of an edge-value node depends on where the op overflows inside (how
        it accumulates, which formula it evaluates): the order and width of a sum and the
        evaluation of a formula are not fixed by the spec, so such a node is not placed.

        Two tests: the reference evaluated in the graph's dtype (every intermediate rounded to
        it, a product of large values becoming inf) must put NaN and +-inf where the composed
        float64 result overflowed to them; and for ops that accumulate (a template bound), the
        finite terms (infinite inputs set to 0) must not cancel where their magnitudes' sum
        overflows (+big + big - big is inf or big by order), nor meet an infinite input's term
        (+inf + big * big is inf, or NaN where the product overflows to -inf first)."""
        if self.dtype == "float64":
            return None
        np_dtype = S.np_dtype(self.dtype)
        narrow = [None if v is None else (v.wide.astype(np_dtype) if v.kind == "float" else v.wide) for v in ins]
        try:
            low = as_list(ref(*narrow, **plan.attrs))[: plan.n_outputs]
        except Exception as exc:  # the reference is our oracle: in the dtype it must run too
            return f"reference fails in {self.dtype} ({type(exc).__name__})"
        for y, y2 in zip(ys, low):
            y2 = np.asarray(y2)
            if y.dtype.kind != "f" or y2.dtype.kind != "f" or y2.shape != y.shape:
                continue
            y2 = y2.astype(np.float64)
            if not (np.array_equal(np.isnan(y), np.isnan(y2)) and np.array_equal(np.isposinf(y), np.isposinf(y2))
                    and np.array_equal(np.isneginf(y), np.isneginf(y2))):
                return "overflows inside the op (its evaluation order and width decide)"
        if tmpl.bound is None or not plan.n_acc:
            return None
        finite = [None if v is None else (np.where(np.isfinite(v.wide), v.wide, 0.0) if v.kind == "float" else v.wide) for v in ins]
        got = tmpl.bound(ref, finite, plan.attrs)
        bounds = list(got) if isinstance(got, (list, tuple)) else [got]
        for y, yf, b in zip(ys, as_list(ref(*finite, **plan.attrs))[: plan.n_outputs], bounds):
            yf, b = np.asarray(yf, dtype=np.float64), np.asarray(b, dtype=np.float64)
            with np.errstate(invalid="ignore"):
                by_inf = ~np.isfinite(y) & (self._overflowed(yf) != y)  # an infinite input's term decides
            if np.any(np.isinf(self._overflowed(b)) & ((np.abs(yf) < b * (1 - 1e-9)) | by_inf)):
                return "terms that overflow meet others of the other sign inside a sum (its order decides)"
        return None

    # -- outputs -----------------------------------------------------------------------------
    def finish(self) -> Graph:
        consumed = {name for n in self.nodes for name in n.reads}
        outputs = [v for v in self.pool if v.node is not None and (v.name in self.exposed or v.name not in consumed)]
        used_inputs = [v for v in self.inputs if v.name in consumed]
        outputs += self.terminal
        return Graph(self.spec, self.opset, self.dtype, self.nan_mode, used_inputs, self.nodes, self.initializers, outputs,
                     self.skipped, self.nan_assumed, self.config, edge=self.edge, silent=dict(self.silent),
                     patterns=list(self.patterns))


def _with_scope(ref: Callable, n_in: int, names: list[str], opset: int) -> Callable:
    """``ref`` taking the captured values as positional arguments after its ``n_in`` inputs
    and passing them on as the enclosing scope (Plan.captures)."""

    def call(*args: Any, **attrs: Any) -> Any:
        return ref(*args[:n_in], **attrs, _outer=dict(zip(names, args[n_in:])), _opset=opset)

    return call


def _with_steps(ref: Callable, steps: list, main_ins: list[Value | None], registry: Any, then: list = (),
                own: list[str] = ()) -> tuple[Callable, list[Value]]:
    """The node and its helper steps as one function of the values they read from the pool
    and constants (Plan.steps, Plan.then), and those values: what the engine evaluates, checks
    and perturbs in place of the node alone. With ``then`` the node's outputs are bound to the
    local names ``own`` and the function returns the last helper's outputs."""
    ext: list[Value] = []
    for v in [v for _, _, vs, _, _ in steps for v in vs] + list(main_ins) + [v for _, _, vs, _, _ in then for v in vs]:
        if v is not None and v.kind != LOCAL and not any(v is e for e in ext):
            ext.append(v)

    def slot(v: Value | None) -> Any:
        if v is None:
            return None
        if v.kind == LOCAL:
            return ("local", v.name)
        return ("ext", next(k for k, e in enumerate(ext) if e is v))

    plan_steps = [(registry[("", o, s_)].reference, [slot(v) for v in vs], outs, a) for o, s_, vs, outs, a in steps]
    after = [(registry[("", o, s_)].reference, [slot(v) for v in vs], outs, a) for o, s_, vs, outs, a in then]
    main_slots = [slot(v) for v in main_ins]

    def run(rows: list, env: dict[str, Any], get: Callable[[Any], Any]) -> list[Any]:
        vals: list[Any] = []
        for r, slots, outs, a in rows:
            result = r(*[get(s) for s in slots], **a)
            # a sequence is one Typed value; several outputs come as a tuple or list
            vals = [result] if isinstance(result, Typed) or not isinstance(result, (list, tuple)) else list(result)
            env.update(zip(outs, map(reference_value, vals)))
        return vals

    def call(*args: Any, **attrs: Any) -> Any:
        env: dict[str, Any] = {}

        def get(s: Any) -> Any:
            if s is None:
                return None
            return args[s[1]] if s[0] == "ext" else env[s[1]]

        run(plan_steps, env, get)
        result = ref(*[get(s) for s in main_slots], **attrs)
        if not after:
            return result
        vals = [result] if isinstance(result, Typed) or not isinstance(result, (list, tuple)) else list(result)
        env.update(zip(own, map(reference_value, vals)))
        return tuple(run(after, env, get))

    return call, ext


def _as_stored(op: str, opset: int, attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes as the model stores them: FLOAT attributes are float32 (alpha=0.1 is
    0.100000001490116...), and the reference must see that value, not the Python float."""
    sch = schema.schema_at(op, opset)
    A = onnx.defs.OpSchema.AttrType
    out = {}
    for k, v in attrs.items():
        kind = sch.attributes[k].type if sch is not None and k in sch.attributes else None
        if kind == A.FLOAT:
            v = float(np.float32(v))
        elif kind == A.FLOATS:
            v = [float(np.float32(x)) for x in v]
        out[k] = v
    return out


def _kind_of(y: Any, dtype: str = "float32") -> str | None:
    arr = np.asarray(y)
    if is_exact(dtype):
        if arr.dtype == S.np_dtype(dtype):
            return "float"
        return "bool" if arr.dtype == bool else ("int" if arr.dtype == np.int64 else None)
    if arr.dtype.kind == "f":
        return "float"
    if arr.dtype == bool:
        return "bool"
    if arr.dtype == np.int64:
        return "int"
    if arr.dtype in QUANT_DTYPES:
        return QUANT
    return None


def _exact_values(dtype: str, vals: np.ndarray, dist: int) -> np.ndarray:
    """A graph input of an integer or bool graph from the float draw ``vals``: small integers
    (many equal ones: ties), non-negative for unsigned types, or bools."""
    if dtype == "bool":
        return vals > (0.5 if dist == 2 else 0.0)
    scale = (1.0, 1.0, 1.0, 2.0)[dist]  # dist 3 (multiples of 0.5) becomes -6..6
    out = np.round(vals * scale)
    if dtype.startswith("uint"):
        out = np.abs(out)
    return out.astype(S.np_dtype(dtype))


def _exact_result(ref: Callable, ins: list[Value | None], attrs: dict[str, Any], ys: list[np.ndarray],
                  dtype: str) -> str | None:
    """An integer graph keeps every result exact: integer overflow is spec-silent (the ops'
    ``int_overflow`` points), so a node whose result wraps is not placed. Types up to 32 bits
    are checked by evaluating the node again on inputs widened to int64 (the exact result);
    64-bit types by magnitude, on a float64 evaluation too (a product that wraps to 0)."""
    if dtype == "bool":
        return None
    if S.np_dtype(dtype).itemsize < 8:
        args = [v.wide.astype(np.int64) if v is not None and v.kind == "float" else (v.wide if v is not None else None) for v in ins]
        try:
            wide = as_list(ref(*args, **attrs))[:len(ys)]
        except Exception as exc:
            return f"exactness not checkable ({type(exc).__name__}: {exc})"[:200]
        for y, w in zip(ys, wide):
            w = np.asarray(w)
            if y.dtype.kind in "iu" and (w.shape != y.shape or not np.array_equal(y.astype(np.int64), w.astype(np.int64))):
                return "integer overflow here (spec-silent; kept exact)"
        return None
    for y in ys:
        if y.dtype.kind in "iu" and y.size and np.max(np.abs(y.astype(np.float64))) > INT_MAGNITUDE:
            return "integer result too large to be sure it is exact"
    args = [v.wide.astype(np.float64) if v is not None and v.kind == "float" else (v.wide if v is not None else None) for v in ins]
    try:
        wide = as_list(ref(*args, **attrs))[:len(ys)]
    except Exception as exc:  # unchecked exactness is not assumed: the node is not drawn
        return f"exactness not checkable ({type(exc).__name__}: {exc})"[:200]
    for y, w in zip(ys, wide):
        w = np.asarray(w)
        if y.dtype.kind in "iu" and w.dtype.kind == "f" and w.size and not np.all(np.abs(np.nan_to_num(w, nan=0.0, posinf=np.inf)) <= INT_MAGNITUDE):
            return "integer overflow likely here (spec-silent; kept exact)"
    return None


def realize(spec: GraphSpec, config: GenConfig = GenConfig()) -> Graph:
    """The graph a spec describes (deterministic). Specs that cannot apply are skipped."""
    b = Builder(spec, config)
    b.make_inputs()
    available = available_ops(b.opset, b.dtype, config.ops, config.exclude)
    if config.patterns and not b.exact:
        available += tuple((p, PATTERN) for p in config.patterns)
    with np.errstate(all="ignore"):
        for index, nspec in enumerate(spec.nodes if available else ()):
            if len(b.nodes) >= config.max_nodes:
                break
            why = b.apply(index, nspec, available) if nspec.enabled else "disabled"
            if why:
                b.skipped.append((index, why))
    return b.finish()
