"""``onnx-harness fuzz``: the command line of a campaign."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .budget import MIN_SHRINK_S, SHRINK_EACH, SHRINK_SHARE, parse_budget

if TYPE_CHECKING:
    from .campaign import Campaign, FuzzReport


# =============================================================================================
# the command line
# =============================================================================================
def register(subparsers: Any) -> None:
    """Add the ``fuzz`` subcommand (``harness.cli`` calls this)."""
    p = subparsers.add_parser("fuzz", help="property-based differential testing with generated graphs")
    p.add_argument("--backend", action="append", help="backend to test (repeatable; default onnxruntime)")
    p.add_argument("--option", action="append", default=[], metavar="BACKEND.NAME=VALUE", help="backend option, e.g. onnxruntime.threads=2")
    p.add_argument("--budget", default="10m", help="wall-clock budget: seconds or 90s, 10m, 1h (default 10m)")
    p.add_argument("--opset", type=int, help="draw every graph at this opset (default: 13 up to the newest every backend loads)")
    p.add_argument("--ops", help="comma-separated op types to draw from (default: every op with a template and a reference)")
    p.add_argument("--dtypes", default="all",
                   help="element types of the graphs (default all: every float, integer and bool type); with both float and "
                        "integer or bool types, half the graphs are integer or bool ones; among the floats the first gets 80%%")
    p.add_argument("--max-nodes", type=int, default=20, help="nodes per graph at most (default 20)")
    p.add_argument("--seed", type=int, help="seed of the campaign (default: random, printed)")
    p.add_argument("--nan-rate", type=float, default=0.1, help="share of graphs whose inputs carry NaN (default 0.1)")
    p.add_argument("--edge-rate", type=float, default=0.1,
                   help="share of float graphs whose inputs carry edge values: +-inf, -0.0, subnormals or values that "
                        "overflow downstream (default 0.1)")
    p.add_argument("--patterns", default="all",
                   help="optimizer patterns to draw besides single ops: comma-separated names, 'all' or 'none' "
                        "(default all; harness.generated.patterns)")
    p.add_argument("--regressions", default=None, metavar="DIR",
                   help="write each new distinct finding as a regression case here, replayed by the generated suite "
                        "(default: regressions/<store name> next to the store; 'none' to write none; the generated suite "
                        "replays the checked-in harness/generated/regressions, where a real finding's case is copied)")
    p.add_argument("--no-opt-diff", action="store_true", help="do not run ONNX Runtime a second time without graph optimizations")
    p.add_argument("--in-process", action="store_true", help="run backends in this process (faster; a crash ends the campaign)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per graph and backend (default 30)")
    p.add_argument("--shrink-time", type=float, default=120.0,
                   help="seconds to shrink one disagreement at most (default 120). Shrinking waits for the end of the "
                        f"budget: graphs are tested until the budget less a reserve of {SHRINK_EACH:g} s (at most this) for "
                        f"each distinct multi-node disagreement waiting, at most {100 * SHRINK_SHARE:g}%% of the budget; "
                        "the waiting ones are then shrunk most valuable first (crash, hang, optimizer, error, wrong values, "
                        f"the rest), each in its share of the time left (at least {MIN_SHRINK_S:g} s); those left over are "
                        "reported 'not shrunk' with their whole graph")
    p.add_argument("--store", default=str(Path("reports") / "results.sqlite"), help="results store (default: reports/results.sqlite)")
    p.add_argument("--bundles", help="repro bundle folder (default: next to the store)")
    p.add_argument("--keep-passes", type=int, default=100, help="passing graphs stored in the run (default 100)")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: fan the campaign out over a Ray cluster, one part of the seed's sessions per CPU; findings dedup")
    p.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: the cluster (default: RAY_ADDRESS, else a local one)")
    p.add_argument("--parts", type=int, help="with --executor ray: campaigns in parallel (default: the cluster's CPUs)")
    p.set_defaults(func=cmd_fuzz)


def _progress_printer(budget: float) -> Callable[[Campaign], None]:
    tty = sys.stderr.isatty()
    state = {"last": 0.0}

    def show(c: Campaign) -> None:
        s = c.stats
        now = time.monotonic()
        if not tty and now - state["last"] < 30:
            return
        state["last"] = now
        rate = s.tested / s.elapsed if s.elapsed else 0.0
        unique = sum(1 for f in c.findings.values() if f.outcome != "unsupported")
        lacking = len(c.findings) - unique
        line = (f"graphs {s.graphs} | valid {100 * s.valid_rate:.2f}% | {rate:.1f} graphs/s | disagreements {s.disagreements} | "
                f"unique bugs {unique}" + (f" (+{lacking} unsupported)" if lacking else "") + f" | {_clock(s.elapsed)} / {_clock(budget)}")
        if tty:
            sys.stderr.write("\r" + line[: os.get_terminal_size(sys.stderr.fileno()).columns - 1].ljust(20) + "\x1b[K")
            sys.stderr.flush()
        else:
            print(line, file=sys.stderr, flush=True)

    return show


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def regressions_folder(option: str | None, store: str) -> Path | None:
    """Where a campaign writes its regression cases: ``--regressions DIR``, none for 'none', else
    beside the store (never the checked-in folder of the package)."""
    from .regressions import regressions_root

    if option == "none":
        return None
    return Path(option) if option else regressions_root(store)


def chosen_dtypes(text: str) -> tuple[str, ...]:
    """``--dtypes``: ``all`` (every float, integer and bool type) or a comma-separated list of them."""
    from .spec import ALL_DTYPES

    dtypes = ALL_DTYPES if text == "all" else tuple(d.strip() for d in text.split(",") if d.strip())
    bad = [d for d in dtypes if d not in ALL_DTYPES]
    if bad:
        raise ValueError(f"--dtypes: {', '.join(bad)} not supported; use all or {', '.join(ALL_DTYPES)}")
    return dtypes


def cmd_fuzz(args: Any) -> int:
    from ..cliutil import CliError, parse_options
    from .campaign import Campaign, FuzzConfig, expand_backends, max_opset
    from .engine import InProcess, Isolated
    from .graph import available_ops, templated_ops, templates
    from .spec import MIN_OPSET, GenConfig

    try:
        budget = parse_budget(args.budget)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    options = parse_options(args.option)
    names = args.backend or ["onnxruntime"]
    unknown = set(options) - set(names)
    if unknown:
        raise CliError(f"--option names backend(s) not in this campaign: {', '.join(sorted(unknown))}")
    from ..backends import load_backend_class

    for name in names:
        load_backend_class(name)
    specs = expand_backends(names, options, opt_diff=not args.no_opt_diff)
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip()) if args.ops else None
    if ops:
        missing = [o for o in ops if o not in templates()]
        if missing:
            raise CliError(f"no graph template for {', '.join(missing)}; templates exist for: {', '.join(templated_ops())}")
    from .patterns import PATTERNS

    chosen = {"all": tuple(PATTERNS), "none": ()}.get(args.patterns)
    patterns = chosen if chosen is not None else tuple(p.strip() for p in args.patterns.split(",") if p.strip())
    if set(patterns) - set(PATTERNS):
        raise CliError(f"--patterns: no pattern {', '.join(sorted(set(patterns) - set(PATTERNS)))}; "
                       f"there are: {', '.join(PATTERNS)}")
    try:
        dtypes = chosen_dtypes(args.dtypes)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")

    # the opsets every backend loads
    probe = InProcess(specs) if args.in_process else Isolated(specs, args.timeout)
    try:
        if args.opset:
            opsets: tuple[int, ...] = (args.opset,)
        else:
            tops = {s.name: max_opset(probe, s.name) for s in specs}
            for name, top in tops.items():
                if top is None:
                    raise CliError(f"backend {name} runs no one-node graph at opset {MIN_OPSET} or later")
            opsets = tuple(range(MIN_OPSET, min(tops.values()) + 1))
    finally:
        probe.close()
    gen = GenConfig(opsets=opsets, dtypes=dtypes, ops=ops, max_nodes=args.max_nodes, nan_rate=args.nan_rate,
                    edge_rate=args.edge_rate, patterns=patterns)
    if not any(available_ops(o, d, ops) for o in opsets for d in dtypes):
        raise CliError("no op can be drawn with these --ops, --opset and --dtypes")
    config = FuzzConfig(backends=specs, gen=gen, budget_s=budget, seed=seed, isolate=not args.in_process, timeout=args.timeout,
                        shrink_s=args.shrink_time, store=Path(args.store), bundles=Path(args.bundles) if args.bundles else None,
                        keep_passes=args.keep_passes,
                        regressions=regressions_folder(args.regressions, args.store))
    print(f"fuzzing {', '.join(s.name for s in specs)} for {_clock(budget)}: opsets {opsets[0]}..{opsets[-1]}, "
          f"up to {args.max_nodes} nodes, seed {seed}", file=sys.stderr)
    say = lambda m: print(("\n" if sys.stderr.isatty() else "") + m, file=sys.stderr)  # noqa: E731
    if args.executor == "ray":
        try:
            from .on_ray import fuzz_on_ray
        except ImportError as exc:
            raise CliError(f"--executor ray needs ray: pip install 'onnx-harness[ray]' ({exc})") from exc
        report = fuzz_on_ray(config, parts=args.parts, address=args.ray_address, say=say)
    else:
        report = Campaign(config, say=say, progress=_progress_printer(budget)).run()
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print_report(report)
    if report.interrupted:
        print(f"interrupted: the findings above are kept in run {report.run_id} of {config.store}")
        return 130
    return 1 if report.findings else 0


def print_report(report: FuzzReport) -> None:
    from .campaign import SUITE

    s = report.stats
    rate = s.rate
    bugs = [f for f in report.findings if f.outcome != "unsupported"]
    print(f"{s.graphs} graphs built ({s.empty} draws without a node skipped), {s.valid} valid ({100 * s.valid_rate:.2f}%), "
          f"{s.tested} tested ({rate:.1f}/s), {s.nodes / max(1, s.valid):.1f} nodes on average, {len(s.op_versions)} op-versions; "
          f"{s.disagreements} disagreements, {s.duplicates} of them known, {len(bugs)} unique bugs, "
          f"{s.shrunk} shrunk and {s.unshrunk} left unshrunk by the budget, "
          f"{len(report.findings) - len(bugs)} unsupported op-versions")
    print("graphs by input values: " + ", ".join(f"{k or 'plain'} {n}" for k, n in sorted(s.edge.items())))
    if s.patterns:
        print("optimizer patterns exercised: " + ", ".join(f"{p} {n}" for p, n in sorted(s.patterns.items())))
    if s.silent_reached:
        print("spec-silent points reached: " + ", ".join(f"{p} {n}" for p, n in sorted(s.silent_reached.items()))
              + (f"; judged unspecified: {', '.join(f'{p} {n}' for p, n in sorted(s.unspecified.items()))}" if s.unspecified else ""))
    for f in sorted(report.findings, key=lambda f: (f.group, f.symptom, f.pattern)):
        print(f"  {f.summary()}")
        print(f"      {f.message[:240]}")
    if report.excluded:
        print(f"not drawn after their one-node finding: {', '.join(report.excluded)}")
    if report.run_id is not None:
        print(f"results: run {report.run_id} (suite {SUITE})")
