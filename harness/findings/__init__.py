"""Findings a vendor can file: real bugs the harness found in runtimes, one TOML record each
(``harness/findings/<id>.toml``).

A record describes a minimal model as data (its nodes with their attributes, the inputs as
literal arrays, the opset), the expected outputs (our reference, from the spec), the runtime's
actual outputs (or its error), the spec text that decides (a quote from
``onnx.defs.get_schema(op, version, domain).doc``), who else agrees, the releases verified and
the upstream status. From it :func:`script` writes a portable repro (onnx, numpy and the
runtime, no harness import) that exits 1 while the bug is there, 0 once fixed and 2 when the
runtime is not installed (3 when it fails in another way); :func:`issue` writes a ready-to-file Markdown issue around it.

``onnx-harness findings`` lists the records, ``findings show ID`` prints the issue and
``findings check [ID]`` runs each repro against the installed runtime.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent

#: the runtimes a repro can drive: how the script imports it and runs a model
RUNTIMES = {
    "onnxruntime": {"module": "onnxruntime", "pip": "onnxruntime", "name": "ONNX Runtime"},
    "onnx.reference": {"module": "onnx.reference", "pip": "onnx", "name": "onnx.reference"},
    # a bug in torch itself (our PyTorch backend lowers ONNX nodes onto torch ops): the record's
    # ``call`` is the torch expression a lowering makes of its node, over the inputs by name, and
    # the repro runs that call alone (the ONNX model is still built and checked, as the node it stands for)
    "torch": {"module": "torch", "pip": "torch", "name": "PyTorch"},
}

#: every record has these (``test_findings`` checks them)
REQUIRED = ("id", "title", "runtime", "op", "version", "opset", "dtypes", "affected", "summary", "spec",
            "agrees", "upstream", "nodes", "inputs", "outputs")
#: a record verified only in an earlier measured note (a runtime not installed here) says so
NOT_RECHECKED = "not re-checked here"

#: outcomes of ``findings check``
REPRODUCES, FIXED, UNAVAILABLE = "reproduces", "fixed", "unavailable"


def load(folder: Path = HERE) -> dict[str, dict]:
    """Every record by id, in id order; a record whose id differs from its file name is an error."""
    found = {}
    for path in sorted(folder.glob("*.toml")):
        with open(path, "rb") as fh:
            record = tomllib.load(fh)
        if record.get("id") != path.stem:
            raise ValueError(f"{path.name}: id {record.get('id')!r} differs from the file name")
        found[record["id"]] = record
    return found


def counted(record: dict) -> bool:
    """A finding that reproduces here with its own script (not one recorded from an earlier note)."""
    return record.get("status") != NOT_RECHECKED


def op_version(record: dict) -> str:
    domain = record.get("domain", "")
    return f"{domain + '.' if domain else ''}{record['op']}-{record['version']}"


def named_by_expectations(folder: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(backend, case glob, the reason a result carries, finding id) of each expectation entry that
    names a finding (``finding = "ID"`` in ``harness/expectations/<backend>.toml``)."""
    from ..expectations import BUILTIN_DIR

    named = []
    for path in sorted((folder or BUILTIN_DIR).glob("*.toml")):
        with open(path, "rb") as fh:
            entries = tomllib.load(fh).get("expect", [])
        for e in entries:
            if e.get("finding"):
                reason = e["reason"] + (f" ({e['link']})" if e.get("link") else "")
                named += [(e.get("backend", path.stem), glob, reason, e["finding"]) for glob in e.get("cases", [e.get("case")])]
    return named


def finding_of(named: list[tuple[str, str, str, str]], backend: str, case_id: str, reason: str) -> str | None:
    """The finding a result's expectation names: the entry whose glob matches the case and whose
    reason is the one the result carries (so an earlier entry that decided the result wins)."""
    from fnmatch import fnmatchcase

    return next((f for b, glob, why, f in named if b == backend and why == reason and fnmatchcase(case_id, glob)), None)


# -- the repro script ---------------------------------------------------------------------------
def _literal(value) -> str:
    """A nested list of numbers or strings as Python source (nan and inf are names in the script)."""
    return repr(value)


def _array(spec: dict, key: str = "value") -> str:
    dtype = spec["dtype"]
    numpy_dtype = "object" if dtype == "string" else f"np.{dtype if dtype != 'bool' else 'bool_'}"
    text = f"np.array({_literal(spec[key])}, dtype={numpy_dtype})"
    return f"{text}.reshape({spec['shape']!r})" if "shape" in spec else text


def _value(spec: dict, key: str = "value") -> str:
    if spec.get("kind") == "sequence":
        return "[" + ", ".join(_array({**spec, key: item}, key) for item in spec[key]) + "]"
    return _array(spec, key)


def _elem_type(dtype: str) -> str:
    return "onnx.TensorProto.STRING" if dtype == "string" else f"helper.np_dtype_to_tensor_dtype(np.dtype({dtype!r}))"


def _value_info(spec: dict, with_shape: bool) -> str:
    if spec.get("kind") == "sequence":
        return f"helper.make_tensor_sequence_value_info({spec['name']!r}, {_elem_type(spec['dtype'])}, None)"
    shape = spec.get("shape", list(_shape_of(spec["value"] if with_shape else spec["expected"])))
    if not with_shape:  # outputs: the rank only, so that a wrong shape is the runtime's own
        shape = [None] * len(shape)
    return f"helper.make_tensor_value_info({spec['name']!r}, {_elem_type(spec['dtype'])}, {shape!r})"


def _shape_of(value) -> tuple:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _node(node: dict) -> str:
    attrs = "".join(f", {k}={v!r}" for k, v in node.get("attributes", {}).items())
    domain = f", domain={node['domain']!r}" if node.get("domain") else ""
    return f"helper.make_node({node['op']!r}, {node['inputs']!r}, {node['outputs']!r}{domain}{attrs})"


_RUN = {
    "onnxruntime": '''\
def run(model):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.{level}
    session = ort.InferenceSession(model.SerializeToString(), options, providers={providers!r})
    return dict(zip(EXPECTED, session.run(list(EXPECTED), FEEDS)))
''',
    "onnx.reference": '''\
def run(model):
    from onnx.reference import ReferenceEvaluator

    return dict(zip(EXPECTED, ReferenceEvaluator(model).run(list(EXPECTED), FEEDS)))
''',
}

_RUN["torch"] = '''\
def run(model):
    import torch

{bind}
{setup}    got = {call}
    got = got if isinstance(got, tuple) else (got,)
    return dict(zip(EXPECTED, (value.numpy() for value in got)))
'''

_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}

_MAIN = '''\
def is_float(dtype):
    return dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name)  # bfloat16, float8 ... (ml_dtypes)


def ulps(want, got):
    """Units in the last place between finite values of one float dtype (-0 == +0)."""
    if want.dtype.kind == "f":
        width = {{2: np.int16, 4: np.int32, 8: np.int64}}[want.dtype.itemsize]

        def ordered(x):
            i = np.ascontiguousarray(x).reshape(x.shape).view(width).astype(np.int64)
            return np.where(i < 0, np.iinfo(width).min - i, i).astype(np.float64)

        return np.abs(ordered(got) - ordered(want))
    bits = np.arange(1 << (8 * want.dtype.itemsize), dtype=np.uint16 if want.dtype.itemsize == 2 else np.uint8)
    with np.errstate(invalid="ignore"):
        table = np.unique(bits.view(want.dtype).astype(np.float64))
    table = table[np.isfinite(table)]
    rank = lambda x: np.searchsorted(table, x.astype(np.float64))  # noqa: E731
    return np.abs(rank(got) - rank(want)).astype(np.float64)


def same(want, got, name=""):
    """Equal shape and dtype; NaN where NaN is expected, infinities equal; other floats within
    ATOL + RTOL * |expected| (plus BOUND, an allowance per element) or ULP units in the last place
    (exact by default); other types equal. An output of a random op (RANDOM): shape and dtype only."""
    if isinstance(want, dict):
        key = lambda k: k.decode() if isinstance(k, bytes) else k  # noqa: E731
        want, got = {{key(k): v for k, v in want.items()}}, {{key(k): v for k, v in got.items()}} if isinstance(got, dict) else got
        return isinstance(got, dict) and set(got) == set(want) and all(same(np.asarray(w), np.asarray(got[k], dtype=np.asarray(w).dtype)) for k, w in want.items())
    if isinstance(want, list):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(same(w, g) for w, g in zip(want, got))
    if want is None or got is None:
        return want is None and got is None
    got = np.asarray(got)
    text = want.dtype.kind in "OUS"
    if text != (got.dtype.kind in "OUS") or (not text and got.dtype != want.dtype) or got.shape != want.shape:
        return False
    if name in RANDOM:
        return True
    if text:
        plain = lambda x: [v.decode() if isinstance(v, bytes) else str(v) for v in x.reshape(-1)]  # noqa: E731
        return plain(want) == plain(got)
    if not is_float(want.dtype):
        return bool(np.array_equal(want, got))
    with np.errstate(invalid="ignore", over="ignore"):
        w, g = want.astype(np.float64), got.astype(np.float64)
        finite = np.isfinite(w) & np.isfinite(g)
        allowed = ATOL + RTOL * np.abs(np.where(finite, w, 0.0)) + np.asarray(BOUND.get(name, 0.0), dtype=np.float64)
        close = np.where(finite, np.abs(np.where(finite, g - w, 0.0)) <= allowed, (w == g) | (np.isnan(w) & np.isnan(g)))
    if ULP is not None and finite.any():
        zero = np.zeros((), want.dtype)
        close |= finite & (ulps(np.where(finite, want, zero), np.where(finite, got, zero)) <= ULP)
    return bool(close.all())


def show(value):
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict) or value is None:
        return repr(value)
    value = np.asarray(value)
    return f"{{value.dtype}}{{list(value.shape)}} {{np.array2string(value, precision=17, separator=', ', threshold=200)}}"


def differences(got):
    """The outputs that match neither the expected value nor a reading the spec allows, each printed."""
    wrong = [name for name in EXPECTED
             if not any(same(want, got[name], name) for want in [EXPECTED[name], *READINGS.get(name, [])])]
    for name in wrong:
        print(f"{{name}}: expected {{show(EXPECTED[name])}}")
        print(f"{{' ' * len(name)}}  got      {{show(got[name])}}")
    return wrong


def main():
    model = build()
    if CHECK:
        onnx.checker.check_model(model)
    try:
        import {module} as runtime
    except ImportError as exc:
        print(f"unavailable: {{exc}}")
        if ACTUAL:
            print("the outputs it gave when the harness ran it (actual/):")
            print("they differ from the expected ones" if differences(ACTUAL) else "they match the expected ones")
        return 2
    print(f"{name} {{getattr(runtime, '__version__', None) or onnx.__version__}}, onnx {{onnx.__version__}}, numpy {{np.__version__}}")
    try:
        got = run(model)
    except Exception as exc:
        said = f"{{type(exc).__name__}}: {{str(exc).strip()[:500]}}"
        if not BUG_IS_A_FAILURE:
            print(f"the runtime fails, which is not the reported bug (wrong outputs): {{said}}")
            return 3
        print(f"BUG REPRODUCES: the runtime fails: {{said}}")
        return 1
    wrong = differences(got)
    print("BUG REPRODUCES" if wrong else "fixed: the outputs match the spec")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
'''

#: what a script may set beyond its data (FEEDS, EXPECTED, READINGS, BUG_IS_A_FAILURE) and ``build()``,
#: with the value a finding takes: exact values, the model checked, nothing recorded
SETTINGS = {"RTOL": 0.0, "ATOL": 0.0, "ULP": None, "BOUND": {}, "RANDOM": set(), "CHECK": True, "ACTUAL": {}}


def compose(doc: list[str], data: list[str], build: list[str], run: str, module: str, name: str, imports: tuple[str, ...] = (),
            **settings) -> str:
    """A portable repro script (numpy, onnx and the runtime; no harness import), the one text a
    finding (:func:`script`) and a repro bundle (:func:`harness.repro.bundle_script`) share:
    ``doc`` (its docstring's lines), ``data`` (the lines that set FEEDS, EXPECTED, READINGS and
    BUG_IS_A_FAILURE), ``build`` (the body of ``build()``, which gives the model), ``run`` (the
    source of ``run(model)``), the ``module`` imported as the runtime and its display ``name``,
    ``imports`` (lines before the common ones) and :data:`SETTINGS` (Python source where given as a string;
    a setting the data lines assign is theirs)."""
    values = {**SETTINGS, **settings}
    lines = [
        "#!/usr/bin/env python3",
        f'"""{doc[0]}', *doc[1:],
        "Exits 1 while the bug is there, 0 once the outputs match the spec, 2 when the runtime is not installed,",
        '3 when it fails in another way."""',
        *imports,
        "import sys", "", "import numpy as np", "import onnx", "from onnx import helper, numpy_helper", "",
        "nan, inf = np.nan, np.inf",
        *data,
        *[f"{key} = {value if isinstance(value, str) else repr(value)}" for key, value in values.items()
          if not any(line.startswith(f"{key} = ") for line in data)],  # what the data sets itself stays
        "", "", "def build():", *build, "", "", run, "", _MAIN.format(module=module, name=name),
    ]
    return "\n".join(lines)


def script(record: dict) -> str:
    """The portable repro: builds the model, runs it on the runtime, compares with the spec's values."""
    runtime = RUNTIMES[record["runtime"]]
    opsets = {record.get("domain", ""): record["opset"], **{d: v for d, v in record.get("opsets", {}).items()}}
    inputs = [i for i in record["inputs"] if not i.get("initializer")]
    inits = [i for i in record["inputs"] if i.get("initializer")]
    doc = [f"Repro: {record['title']}", "",
           f"{runtime['name']}, {op_version(record)} at opset {record['opset']}. Needs onnx, numpy and {runtime['pip']}.",
           *([f"The node is run as the torch call it lowers to: {record['call']}"] if "call" in record else []),
           *([f"after: {record['setup']}"] if "setup" in record else [])]
    data = [
        "FEEDS = {",
        *[f"    {i['name']!r}: {_value(i)}," for i in inputs],
        "}",
        "EXPECTED = {",
        *[f"    {o['name']!r}: {_value(o, 'expected')}," for o in record["outputs"]],
        "}",
        "#: other readings the spec allows (where it is silent), each computed: a match with any of them is no bug",
        "READINGS = {",
        *[f"    {o['name']!r}: [{', '.join(_value({**o, 'value': r['value']}) for r in o['readings'])}],  # "
          + "; ".join(r["name"] for r in o["readings"]) for o in record["outputs"] if o.get("readings")],
        "}",
        "#: the bug is the runtime failing on this valid model (otherwise a failure is some other problem: exit 3)",
        f"BUG_IS_A_FAILURE = {bool(record.get('actual_error'))}",
    ]
    build = [
        "    nodes = [",
        *[f"        {_node(n)}," for n in record["nodes"]],
        "    ]",
        "    inputs = [",
        *[f"        {_value_info(i, True)}," for i in inputs],
        "    ]",
        "    outputs = [",
        *[f"        {_value_info(o, False)}," for o in record["outputs"]],
        "    ]",
        "    initializers = [",
        *[f"        numpy_helper.from_array({_value(i)}, {i['name']!r})," for i in inits],
        "    ]",
        '    graph = helper.make_graph(nodes, "repro", inputs, outputs, initializer=initializers)',
        "    # the oldest IR version that holds these opsets, so that an older release can load the model",
        f"    return helper.make_model_gen_version(graph, opset_imports=[{', '.join(f'helper.make_opsetid({d!r}, {v})' for d, v in opsets.items())}])",
    ]
    run = runner(record["runtime"], level=record.get("optimization", "all"), call=record.get("call"),
                 setup=f"    {record['setup']}\n" if "setup" in record else "",
                 bind="\n".join(f"    {i['name']} = torch.from_numpy(FEEDS[{i['name']!r}])" for i in inputs))
    return compose(doc, data, build, run, runtime["module"], runtime["name"],
                   RTOL=float(record.get("rtol", 0.0)), ATOL=float(record.get("atol", 0.0)))


def runner(runtime: str, level: str = "all", providers: tuple[str, ...] = ("CPUExecutionProvider",), call: str | None = None,
           bind: str = "", setup: str = "") -> str:
    """The source of ``run(model)`` on ``runtime`` (a key of :data:`_RUN`); ``setup``: torch
    statements (indented lines) run before the call."""
    return _RUN[runtime].format(level=_LEVELS[level], providers=list(providers), call=call, bind=bind, setup=setup)


# -- the issue ----------------------------------------------------------------------------------
def _squeeze(text: str) -> str:
    return " ".join(text.split())


def spec_source(record: dict) -> str | None:
    """Where the record's quote stands in the op-version's schema: the doc, an attribute's or an
    input's description; None when it is in none of them (the record is then wrong)."""
    import onnx.defs

    schema = onnx.defs.get_schema(record["op"], record["version"], record.get("domain", ""))
    if schema.since_version != record["version"]:
        return None
    quote = _squeeze(record["spec"])
    places = [("doc", schema.doc or "")] + [(f"attribute {name}", a.description) for name, a in schema.attributes.items()] \
        + [(f"input {i.name}", i.description) for i in schema.inputs]
    return next((where for where, text in places if quote in _squeeze(text)), None)


def _outputs_table(record: dict) -> list[str]:
    rows = ["| output | expected (spec) | actual |", "| --- | --- | --- |"]
    for o in record["outputs"]:
        actual = f"`{o['actual']}`" if "actual" in o else f"error: `{record.get('actual_error', '')}`"
        rows.append(f"| {o['name']} ({o['dtype']}) | `{o['expected']}` | {actual} |")
        rows += [f"| {o['name']}, also accepted ({r['name']}) | `{r['value']}` | |" for r in o.get("readings", [])]
    return rows


def issue(record: dict) -> str:
    """A ready-to-file issue in Markdown: title, summary, spec quote, expected vs actual, environment, repro."""
    runtime = RUNTIMES[record["runtime"]]["name"]
    upstream = record["upstream"]
    nodes = "; ".join(f"{n['op']}({', '.join(n['inputs'])})" + (f" with {n['attributes']}" if n.get("attributes") else "")
                      for n in record["nodes"])
    parts = [
        f"# {record['title']}",
        "",
        record["summary"].strip(),
        "",
        f"**Operator:** {op_version(record)} (opset {record['opset']}), dtypes: {', '.join(record['dtypes'])}. "
        f"**Model:** {nodes}." + (f" **As a torch call:** `{record['call']}`." if "call" in record else "")
        + (f" **After:** `{record['setup']}`." if "setup" in record else ""),
        "",
        "**Inputs:** " + "; ".join(f"{i['name']} = {i['dtype']}{' ' + str(i['shape']) if 'shape' in i else ''} `{i['value']}`"
                                   + (" (initializer)" if i.get("initializer") else "") for i in record["inputs"]) + ".",
        "",
        f"**Spec** ({spec_source(record) or 'quote not found in'} of `onnx.defs.get_schema({record['op']!r}, {record['version']}, "
        f"{record.get('domain', '')!r})`):",
        "",
        *[f"> {line}" for line in record["spec"].strip().splitlines()],
        "",
        "**Expected vs actual:**",
        "",
        *_outputs_table(record),
        "",
        f"**Who agrees:** {record['agrees'].strip()}",
        "",
        f"**Environment:** {runtime} {', '.join(record['affected'])} (CPU, Python wheel), onnx 1.23.2, numpy; "
        f"status: {record.get('status', 'reproduces here')}."
        + (f" Not affected: {', '.join(record['unaffected'])} (the repro passes there: a regression)." if record.get("unaffected") else ""),
        "",
        f"**Upstream:** {upstream}",
        "",
        "**Repro** (exits 1 while the bug is there, 0 once fixed):",
        "",
        "```python",
        script(record).rstrip(),
        "```",
    ]
    return "\n".join(parts) + "\n"


# -- checking -----------------------------------------------------------------------------------
def run_here(source: str) -> tuple[int, str]:
    """Run a repro script in this process (its imports are then shared): (exit code, what it printed)."""
    import contextlib
    import io

    namespace = {"__name__": "__repro__"}
    exec(compile(source, "<repro>", "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = namespace["main"]()
    return code, out.getvalue()


def check(record: dict, isolated: bool = True, timeout: float = 120.0) -> tuple[str, str]:
    """Run the record's repro (in a fresh interpreter unless ``isolated`` is False):
    (reproduces | fixed | unavailable | error, the line that says why)."""
    if not counted(record):
        return UNAVAILABLE, NOT_RECHECKED
    crashes = bool(record.get("crashes"))
    if isolated or crashes:  # a record whose runtime dies is never run in this process
        try:
            done = subprocess.run([sys.executable, "-c", script(record)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "error", f"no answer within {timeout:.0f} s"
        code, text = done.returncode, done.stdout + done.stderr
    else:
        code, text = run_here(script(record))
    lines = text.strip().splitlines() or [f"exit {code}, no output"]
    if crashes and code < 0:  # killed by a signal: the reported crash
        return REPRODUCES, f"BUG REPRODUCES: the runtime's process died (signal {-code})"
    status = {1: REPRODUCES, 0: FIXED, 2: UNAVAILABLE}.get(code, "error")
    if status == "error":
        return status, f"exit {code}: {lines[-1]}"
    return status, next((line for line in lines if line.startswith(("BUG", "unavailable", "fixed"))), lines[-1])


# -- the command ---------------------------------------------------------------------------------
def cmd_findings(args) -> int:
    from tabulate import tabulate

    records = load()
    if args.action == "show":
        if args.id not in records:
            raise KeyError(f"no finding {args.id!r}; see: onnx-harness findings")
        print(issue(records[args.id]), end="")
        return 0
    if args.action == "check":
        chosen = [records[args.id]] if args.id else list(records.values())
        if args.id and args.id not in records:
            raise KeyError(f"no finding {args.id!r}; see: onnx-harness findings")
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            verdicts = list(pool.map(check, chosen))
        print(tabulate([[r["id"], r["runtime"], status, detail[:100]] for r, (status, detail) in zip(chosen, verdicts)],
                       headers=["finding", "runtime", "status", "repro says"], tablefmt="github"))
        tally = {s: sum(v[0] == s for v in verdicts) for s in (REPRODUCES, FIXED, UNAVAILABLE, "error")}
        print(", ".join(f"{n} {s}" for s, n in tally.items() if n))
        return 1 if tally["error"] else 0
    print(tabulate([[r["id"], r["runtime"], op_version(r), ", ".join(r["dtypes"]), ", ".join(r["affected"]), r["title"][:70],
                     r["upstream"].removeprefix("https://github.com/")] for r in records.values()],
                   headers=["finding", "runtime", "op-version", "dtypes", "reproduces in", "title", "upstream"], tablefmt="github"))
    print(f"{len(records)} findings ({sum(counted(r) for r in records.values())} checked here); "
          "onnx-harness findings show ID prints one as an issue")
    return 0


def register(sub) -> None:
    p = sub.add_parser("findings", help="real runtime bugs the harness found: list, show one as an issue, check which still reproduce")
    p.add_argument("action", nargs="?", choices=["list", "show", "check"], default="list")
    p.add_argument("id", nargs="?", help="a finding's id (show: required; check: default all)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="repro scripts run at once (check)")
    p.set_defaults(func=lambda args: (p.error("findings show needs an ID") if args.action == "show" and not args.id
                                      else cmd_findings(args)))
