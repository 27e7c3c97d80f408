"""Generated graphs: random multi-operator graphs, drawn by Hypothesis, built directly as
ONNX (no exporter), with the composed reference as the oracle.

Encoding (chosen for shrinking). A graph is a :class:`GraphSpec`: a base shape, a few input
specs, a value seed and a *list of node specs*. A node spec is context-free data, one
Hypothesis choice of bytes: an enable byte, an op index, three relative input references ("how
far back in the pool of values", taken modulo the number of values that fit), an expose flag
(the node's outputs become graph outputs) and six knobs (integers a template reads modulo its
own ranges for axes, permutations, slice bounds, attribute values ...). Every spec has the same
structure whatever the graph around it, so the shrinker can delete or disable any spec and the
later ones keep their meaning; a spec that cannot apply (no value fits, unsafe values, a type
the op-version does not take) is *skipped*, never rejected. Bytes shrink towards zeros, which
every field reads as its simplest choice. :func:`realize` turns a spec into a :class:`Graph`
deterministically; :func:`with_outputs`, :func:`cut` and :func:`reduce_graph` take a failing
graph further down than the spec encoding can (fewer outputs, a node replaced by an input).

Templates. How an op enters a graph (which values it takes, its attributes, its safe domain,
its stability test) is its *fuzz template*, registered in its own module beside its reference
(``@op.fuzz`` in ``operator_cases/<op>.py``, shared shapes in the family's ``_*_util.py``)
through the small API of :mod:`harness.fuzz_api`. This module is the engine: it draws specs,
plans each node with the op's template, composes and checks values, and builds the model.

Plans of more than one node. A plan may place helper steps before its node (``Plan.steps``: a
sequence built by SequenceConstruct or SplitToSequence and consumed by ConcatFromSequence in the
same plan, If's condition computed as ReduceSum > 0, a Reshape to RNN's rank-3 X) and its
subgraphs may read pool values by name (``Plan.captures``: If's branches, a Loop body). The
engine evaluates the steps and the node as one function of the pool values and constants they
read, checks, perturbs and judges it as one node, and keeps only the node's tensor outputs in
the pool: sequences live inside a plan, never in the pool. A node that gives a sequence
(SequenceInsert, SequenceErase, SequenceMap) is followed by helper steps of its plan that turn
it back into a tensor (``Plan.then``: ConcatFromSequence, SequenceAt); their outputs are then
the plan's.

Oracle. Our per-op-version references (``operator_cases/``) are composed in float64 while the
graph is realized ("value-aware generation"): a node is placed only when its inputs are inside
the op's safe domain (Log/Sqrt of positive values, |divisor| >= 0.05, positive Pow bases),
its outputs are finite with |y| <= 1e4, and the output is stable when the inputs move by their
estimated error (that removes values next to a Floor/Ceil/Round/Sign boundary, near-ties under
ArgMax or a comparison, and ill-conditioned points). NaN appears only in NaN mode, where some
graph inputs carry NaN and only ops whose NaN behaviour we rely on may consume them
(``fuzz_api.NAN_IEEE``: IEEE 754 arithmetic and copies; ``NAN_ASSUMED``: the spec is silent,
we assume propagation as numpy and IEEE 754-2019 ``maximum`` do).

Edge values (issue 35). A share of float graphs (``GenConfig.edge_rate``, the ``nan`` byte just
below the NaN share) carries values of one edge class in some input elements: +-inf, -0.0,
subnormals of the dtype, or finite values so large that a product of two overflows it. The
composed reference propagates them: a float64 result beyond the dtype's range becomes +-inf (what
a correct implementation in the dtype computes), a template's guard sees only the ordinary
elements, infinite values are never perturbed, and the value checks skip a node whose result
depends on where it overflows inside (its reference evaluated in the dtype puts NaN or inf
elsewhere; terms that overflow meet others of the other sign in a sum). Such graphs compare with
an elementwise allowance (``Tolerance.bound``) instead of one absolute tolerance per output.

Spec-silent points. In NaN and edge-value graphs a node whose inputs reach a spec-silent point of
its op-version (``op.spec_silent`` in its operator file: Max.nan, Softsign.infinity ...) gives
graph outputs that nothing reads (``Graph.silent``); a backend that differs from our value there
is judged by the point's readings and invariants (``Comparator.spec_silent``): ``unspecified``
when a reading matches and every invariant holds, a mismatch naming the point otherwise.

Optimizer patterns (:mod:`.patterns`): subgraphs runtimes rewrite, drawn inside and just outside
each rewrite's preconditions (``GenConfig.patterns``). Findings that last (:mod:`.regressions`):
each distinct finding is written as a named regression case that the ``generated`` suite replays.

Integer and bool graphs. A graph's dtype may also be an integer type (int8..int64,
uint8..uint64) or bool, drawn where every op's schema allows it (its template's type
parameter), except the ops whose integer result the spec gives only through a float formula
(``FLOAT_FORMULA_OPS``). Their values are held exactly in the dtype (no float64 copy, no NaN, no
perturbation), inputs are small integers with many equal ones (ties: ArgMax and Hardmax on exact
values are judged by the spec's first-index rule), unsigned ones non-negative, and every result
is kept exact: integer overflow is a spec-silent point (``int_overflow`` of Add, Sub, Mul), so a
node whose result would wrap is skipped (checked on int64-widened inputs up to 32 bits, by
magnitude for 64-bit types). Their outputs are compared with tolerance zero. A graph input's
first dim is 0 now and then (empty inputs), and window ops draw asymmetric pads.

Tolerance (per graph output). Every value carries an elementwise estimate of the absolute error
a correct implementation in the graph's dtype may have: its inputs' errors pushed through the
op (measured by re-evaluating the reference on inputs moved by twice their error: random signs,
all up, all down and, with several inputs, opposite directions) plus the op's own rounding: a
few units of roundoff of |y|, of |y| + |x| for ops the spec defines by a formula that cancels
(Gelu's 1 + erf, Elu's exp(x) - 1), ``n * u * ref(|inputs|)`` for ops that accumulate n terms
(the classic bound for sums and dot products), and the smallest subnormal (a value may round
to 0). An output passes when ``|a - e| <= atol + rtol * |e|`` with

- ``rtol = depth * rtol_dtype`` and ``ulp = depth * ulp_dtype``: each op on the longest path
  may round once more; the per-dtype base comes from ``harness/data/tolerances.toml``;
- ``atol = depth * atol_dtype + 4 * max(err)``: the propagated error (cancellation,
  amplification) with a factor 4 of safety for a randomised estimate.

Nodes whose error estimate exceeds ``sqrt(u) * max(|y|, 1)`` are skipped, so no tolerance is
loose enough to hide a wrong value of the size real bugs produce. Checked end to end: every op
computed by our references in the graph's own dtype (``tests/seeded_faults.py:OurReferences``,
for the tolerances) and plain numpy written in the tests (``PlainNumpy``, independent of the
references) pass every graph.

Modules: ``spec`` (what Hypothesis draws), ``graph`` (a realized graph, its ONNX model, which
templates apply), ``builder`` (realizing a spec), ``shrink`` (graph surgery, shared with
``localize``), ``cases`` (graphs as cases), ``patterns`` (optimizer patterns), ``regressions``
(findings as regression cases); the fuzzer: ``engine`` (running a model on a
backend), ``judge`` (one graph on every backend), ``campaign``, ``cli`` (``onnx-harness fuzz``).
The ``generated`` suite of ``onnx-harness run`` is :mod:`harness.suites.generated`.
"""
