"""Like for like: which runs and which cases a comparison is over. One rule, used by ``report``
(its default runs, its baseline and its backend cards), ``diff``, the perf views and the site.

- A run's **selection** of a suite (:class:`Selection`): the suite with what narrowed it (``-k``,
  ``--shard``, ``--model`` files) and what drew it (``--opset``, ``--seed``, ``--examples``). Two
  selections with the same **draw** (suite, opset, seed, examples) give a case id the same case;
  a selection nothing narrows, of a run that completed, is **full**, any other a **subset** (a
  run still running or interrupted holds only part of what it selected).
- :func:`default_runs`: per store and (suite, backend), the newest full run, or the newest run
  when no run of that pair is full: a subset never hides a fuller run of the same backend.
- :func:`baseline_runs`: per (suite, backend) of the runs reported, the newest earlier run with
  the same selection, else the newest earlier run with the same draw (then compared over the
  cases both ran).
- :func:`like_for_like`: two sets of result rows cut to what they have in common: a (suite,
  backend) one side did not run, or ran with another draw, is **not compared** (never
  "removed" nor "new"); with the same draw but different selections, only the cases both ran
  are compared; with equal selections every case is (a case gone is then removed indeed).
- Benchmark results (:data:`BENCH_SUITES`) are their own view, never conformance
  (:func:`conformance_rows`).

Every headline says over which cases it is computed: :meth:`Selection.describe`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .sources import ReportError, RunRef, _pairs_per_run, _store_labels, open_store, pairs_of, resolve_run, suite_of

#: suites whose results are timings of operators at realistic sizes (``onnx-harness bench``):
#: shown in the performance section, never counted as conformance
BENCH_SUITES = ("bench",)

Pair = tuple[str, str]  # (suite, backend)


def is_bench(case_id: str) -> bool:
    return suite_of(case_id) in BENCH_SUITES


def conformance_rows(rows: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(conformance results, benchmark results) of a list of result rows."""
    conf, bench = [], []
    for r in rows:
        (bench if is_bench(r["case_id"]) else conf).append(r)
    return conf, bench


@dataclass(frozen=True)
class Selection:
    """What a run selected of one suite (see the module's text)."""

    suite: str
    pattern: str | None = None
    shard: str | None = None
    models: tuple[str, ...] = ()
    opset: int | None = None
    seed: int | None = None
    examples: int | None = None
    #: the run's status when it did not complete (``running``, ``interrupted``): it holds only
    #: part of what it selected
    unfinished: str = ""

    @classmethod
    def from_args(cls, args: Mapping[str, Any], suite: str, status: str = "complete") -> "Selection":
        """A run's selection of ``suite`` from its stored arguments (``runs.args``) and status."""
        models = tuple(str(Path(m).name) for m in args.get("models") or ())
        return cls(suite, args.get("pattern") or None, args.get("shard") or None, models,
                   args.get("opset"), args.get("seed"), args.get("examples"), "" if status == "complete" else status)

    @property
    def draw(self) -> tuple[Any, ...]:
        return (self.suite, self.opset, self.seed, self.examples)

    @property
    def full(self) -> bool:
        return not (self.pattern or self.shard or self.models or self.unfinished)

    def describe(self) -> str:
        """``operators``, ``onnx-node -k 'abs' (subset)``, ``operators at opset 13, seed 3``."""
        text = self.suite
        narrowed = [f"-k {self.pattern!r}"] * bool(self.pattern) + [f"shard {self.shard}"] * bool(self.shard)
        narrowed += [f"--model {', '.join(self.models)}"] * bool(self.models)
        drawn = [f"at opset {self.opset}"] * (self.opset is not None) + [f"seed {self.seed}"] * (self.seed is not None)
        drawn += [f"{self.examples} examples"] * (self.examples is not None)
        if drawn:
            text += " " + ", ".join(drawn)
        if narrowed:
            text += " " + " ".join(narrowed) + " (subset)"
        return text + (f" ({self.unfinished}: part of it)" if self.unfinished else "")


def store_selections(store_path: Path | str) -> dict[int, dict[str, Selection]]:
    """Per run of the store, per suite it ran: its selection."""
    store = open_store(store_path)
    per_run = _pairs_per_run(store)
    out = {}
    for run in store.runs():
        suites = {suite for (suite, _) in per_run.get(run["id"], ())} | set(run["args"].get("suites") or ())
        out[run["id"]] = {suite: Selection.from_args(run["args"], suite, run["status"]) for suite in suites}
    return out


def ref_selections(refs: Iterable[RunRef]) -> dict[Pair, Selection]:
    """Per (suite, backend) the references ran: its selection (the later reference's when two
    references cover one pair). A run ran a pair when it holds results of it, or when the pair
    is one of its suites on one of its available backends (it ran them and found no case)."""
    out: dict[Pair, Selection] = {}
    for ref in refs:
        store = open_store(ref.store)
        selections = store_selections(ref.store)[ref.run_id]
        pairs = pairs_of(ref)
        if ref.only is None:
            backends = [b["name"] for b in store.backends(ref.run_id) if b["available"]]
            pairs |= {(suite, backend) for suite in selections for backend in backends}
        for pair in pairs:
            out[pair] = selections.get(pair[0]) or Selection(pair[0])
    return out


def default_runs(path: Path | str, label: str = "") -> list[RunRef]:
    """The runs a report of this store shows by default, oldest first: per (suite, backend) the
    newest run whose selection is full, or the newest run when none is (each run restricted to
    the pairs it is taken for; whole when it is taken for all of its pairs)."""
    store = open_store(path)
    per_run = _pairs_per_run(store)
    runs = store.runs()
    selections = store_selections(path)
    chosen: dict[Pair, int] = {}
    for run in reversed(runs):  # newest first
        for pair in per_run.get(run["id"], ()):
            current = chosen.get(pair)
            if current is None:
                chosen[pair] = run["id"]
            elif not selections[current][pair[0]].full and selections[run["id"]][pair[0]].full:
                chosen[pair] = run["id"]  # a subset never hides a fuller run of the same backend
    taken: dict[int, set[Pair]] = defaultdict(set)
    for pair, run_id in chosen.items():
        taken[run_id].add(pair)
    refs = [RunRef(Path(path), run_id, label, None if pairs == set(per_run[run_id]) else frozenset(pairs))
            for run_id, pairs in sorted(taken.items())]
    if not refs and runs:  # every backend unavailable: the newest run, to show why
        refs = [RunRef(Path(path), runs[-1]["id"], label)]
    return refs


def hidden_runs(refs: list[RunRef]) -> list[tuple[RunRef, str]]:
    """Runs newer than the one shown for a (suite, backend) and not shown because they are a
    subset: (the run, the selection it ran), for the report to name them."""
    out = []
    for ref in refs:
        store = open_store(ref.store)
        per_run = _pairs_per_run(store)
        shown = {(r.store, p): r.run_id for r in refs for p in (r.only or per_run.get(r.run_id, ()))}
        selections = store_selections(ref.store)
        for run_id, pairs in sorted(per_run.items()):
            if run_id <= ref.run_id or any(r.store == ref.store and r.run_id == run_id for r in refs):
                continue
            for pair in pairs:
                if shown.get((ref.store, pair)) == ref.run_id:
                    selection = selections[run_id][pair[0]]
                    item = (RunRef(ref.store, run_id, ref.store_label), f"{selection.describe()} on {pair[1]}")
                    if item not in out:
                        out.append(item)
    return out


def baseline_runs(refs: list[RunRef]) -> list[RunRef]:
    """The default baseline of the reported runs: per (suite, backend) they cover, the newest
    earlier run of the same store with the same selection, else the newest earlier one with the
    same draw (:func:`like_for_like` then compares the cases both ran). Pairs with neither have
    no baseline."""
    out: dict[tuple[Path, int], set[Pair]] = defaultdict(set)
    labels = {}
    for ref in refs:
        per_run = _pairs_per_run(open_store(ref.store))
        selections = store_selections(ref.store)
        mine = selections[ref.run_id]
        for pair in pairs_of(ref):
            same, drawn = None, None
            for run_id in sorted((r for r, pairs in per_run.items() if r < ref.run_id and pair in pairs), reverse=True):
                theirs = selections[run_id][pair[0]]
                if theirs == mine[pair[0]]:
                    same = run_id
                    break
                if drawn is None and theirs.draw == mine[pair[0]].draw:
                    drawn = run_id
            chosen = same if same is not None else drawn
            if chosen is not None:
                out[(ref.store, chosen)].add(pair)
                labels[ref.store] = ref.store_label
    return [RunRef(store, run_id, labels[store], frozenset(pairs)) for (store, run_id), pairs in sorted(out.items(), key=lambda kv: kv[0][1])]


#: why a (suite, backend) is not compared: the new side did not run it (a backend not re-run)...
NOT_RUN = "not run in"
#: ... or the base side did not
NOTHING_EARLIER = "nothing earlier to compare with"


@dataclass
class NotCompared:
    """Results of one (suite, backend) that a comparison leaves out, and why."""

    suite: str
    backend: str
    side: str  # "base" or "new": the side that holds them
    label: str  # that side's label
    results: int
    why: str

    def text(self) -> str:
        return f"{self.suite} on {self.backend}: {self.results:,} result{'s' if self.results != 1 else ''} of {self.label} not compared ({self.why})"


@dataclass
class Scope:
    """What a comparison is over: the (suite, backend) pairs compared, each with the selection
    it was compared over, and what was left out."""

    compared: dict[Pair, str] = field(default_factory=dict)
    not_compared: list[NotCompared] = field(default_factory=list)

    def text(self) -> str:
        compared = "; ".join(f"{s} on {b} over {how}" for (s, b), how in sorted(self.compared.items())) or "nothing"
        return f"compared: {compared}" + "".join(f"; {n.text()}" for n in self.not_compared)


def like_for_like(base: list[dict[str, Any]], new: list[dict[str, Any]], base_label: str, new_label: str,
                  base_sel: Mapping[Pair, Selection] | None = None,
                  new_sel: Mapping[Pair, Selection] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Scope]:
    """Both sides cut to what they have in common (see the module's text), with the scope.
    ``base_sel`` / ``new_sel``: the selection of each pair (absent: not known, e.g. a results
    JSON file; a pair of unknown selection is taken as selected alike on both sides). Rows
    carrying a ``run`` label (a merged report's) are named by it."""
    base_sel, new_sel = base_sel or {}, new_sel or {}
    run_of = {(suite_of(r["case_id"]), r["backend"]): r["run"] for r in new if r.get("run")}
    by_pair = lambda rows: _group(r for r in rows if not is_bench(r["case_id"]))  # noqa: E731
    before, after = by_pair(base), by_pair(new)
    scope = Scope()
    kept_base: list[dict[str, Any]] = []
    kept_new: list[dict[str, Any]] = []
    for pair in sorted(set(before) | set(after)):
        suite, backend = pair
        b, a = before.get(pair, []), after.get(pair, [])
        if (not b and pair not in base_sel) or (not a and pair not in new_sel):
            if b:
                scope.not_compared.append(NotCompared(suite, backend, "base", base_label, len(b), f"{NOT_RUN} {new_label}"))
            else:
                scope.not_compared.append(NotCompared(suite, backend, "new", run_of.get(pair, new_label), len(a), NOTHING_EARLIER))
            continue
        sb, sa = base_sel.get(pair), new_sel.get(pair)
        if not a and not b:
            continue
        if sb is not None and sa is not None and sb.draw != sa.draw:
            scope.not_compared.append(NotCompared(suite, backend, "base", base_label, len(b), f"another draw: {sb.describe()} against {sa.describe()}"))
            scope.not_compared.append(NotCompared(suite, backend, "new", new_label, len(a), f"another draw: {sa.describe()} against {sb.describe()}"))
            continue
        if sb is None or sa is None or sb == sa:
            kept_base += b
            kept_new += a
            scope.compared[pair] = (sa or sb).describe() if (sa or sb) else suite
            continue
        # same draw, different selections: the cases both ran
        common = {r["case_id"] for r in b} & {r["case_id"] for r in a}
        kept_base += [r for r in b if r["case_id"] in common]
        kept_new += [r for r in a if r["case_id"] in common]
        scope.compared[pair] = f"the {len(common):,} cases both ran"
        for side, label, rows, theirs in (("base", base_label, b, sa), ("new", new_label, a, sb)):
            left = sum(r["case_id"] not in common for r in rows)
            if left:
                scope.not_compared.append(NotCompared(suite, backend, side, label, left, f"outside the other side's selection, {theirs.describe()}"))
    return kept_base, kept_new, scope


def _group(rows: Iterable[dict[str, Any]]) -> dict[Pair, list[dict[str, Any]]]:
    out: dict[Pair, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[(suite_of(r["case_id"]), r["backend"])].append(r)
    return out


def resolve_runs(texts: Iterable[str], stores: list[Path | str]) -> list[RunRef]:
    """RUN arguments -> run references. Without RUN: per store the runs a report shows by
    default (:func:`default_runs`: the newest full run of every suite and backend).

    A RUN is ``N``, ``latest`` or ``previous`` (in the only store), ``S:N`` where S is a store
    file or the 1-based position of a ``--store``, or a store file (its latest run).
    """
    stores = [Path(s) for s in stores]
    labels = _store_labels(stores)
    texts = list(texts)
    if not texts:
        refs = []
        for path, label in zip(stores, labels):
            if open_store(path).latest_run() is None:
                raise ReportError(f"{path} holds no runs yet")
            refs.extend(default_runs(path, label))
        return refs
    return [resolve_run(t, stores, labels) for t in texts]
