"""``onnx-harness site STORE... -o site/``: a static conformance site from merged stores.

Pages (each with its data as JSON beside it, every link relative, nothing fetched from
elsewhere, so it works from the file system or any static host):

- ``index.html``: runtimes x releases, conformance per suite over like-for-like case sets,
  wrong answers, not implemented, errors and unspecified apart; runs that look broken flagged
  instead of scored (see :mod:`harness.site.data`).
- ``ops.html``: op-version x column cells by outcome mix, filters by family, opset, dtype and
  outcome kept in the URL.
- ``op/<op-version>.html``: the spec's summary and link, our reference's module, the spec-silent
  points with their readings, the tolerances that apply, every column's results with the
  expectation and finding that explain each non-pass.
- ``runtime/<runtime>.html``: its releases side by side and its findings with the first and
  last release where a case they name fails.
- ``finding/<id>.html``: the finding as a ready-to-file issue, with its repro script.
- ``case/<release>/<case>.html``: the example case of each cause group on an op-version page,
  with its repro bundle as ``<case>.zip`` beside it (:func:`harness.repro.zip_bundle`) and the
  commands that run it on a machine without the harness.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from .data import collect
from ..repro import zip_bundle
from .pages import case_pages, finding_page, front_page, op_page, ops_page, runtime_page

TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class Built:
    pages: int
    seconds: float
    largest: tuple[str, int]
    total_bytes: int  # pages, their JSON and the downloads
    downloads: int = 0  # repro bundles as zips, one per cause group's example case


#: a web address in a reason (an expectation's link)
_URL = re.compile(r"https?://[^\s()<>\"']+")


def linked(text: str) -> Markup:
    """``text`` escaped, each web address in it a link."""
    parts, last = [], 0
    for m in _URL.finditer(text or ""):
        parts += [escape(text[last:m.start()]), Markup('<a href="{0}" rel="noreferrer">{0}</a>').format(m.group())]
        last = m.end()
    return Markup("").join([*parts, escape((text or "")[last:])])


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["linked"] = linked
    return env


def build_site(stores: list[Path], out: Path, title: str = "ONNX conformance") -> Built:
    """Write the site for ``stores`` into ``out`` (replacing a site written there before)."""
    t0 = time.perf_counter()
    site = collect(stores)
    out = Path(out)
    if (out / "index.html").is_file() and (out / "site.json").is_file():
        shutil.rmtree(out)  # a site we wrote: replaced whole, so no page of an op gone stays behind
    out.mkdir(parents=True, exist_ok=True)
    env = environment()
    written: list[Path] = []

    def write(name: str, template: str, data: dict) -> None:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        depth = "../" * name.count("/")
        html = env.get_template(template).render(data=data, title=title, root=depth, json_name=Path(name).with_suffix(".json").name)
        path.write_text(html)
        path.with_suffix(".json").write_text(json.dumps(data, indent=1, sort_keys=True))
        written.extend([path, path.with_suffix(".json")])

    write("ops.html", "ops.html.j2", ops_page(site))
    zips: list[Path] = []
    example: dict | None = None  # the front page's example of a case to reproduce: a wrong answer of a runtime a script drives alone
    for key in sorted(site.ops):
        write(f"op/{key}.html", "op.html.j2", op_page(site, key))
        for name, data, bundle in case_pages(site, key):
            write(name, "case.html.j2", data)
            if bundle:
                zips.append((out / name).with_suffix(".zip"))
                zips[-1].write_bytes(zip_bundle(Path(bundle)))
                if example is None and data["raw"] in ("mismatch", "wrong-shape", "wrong-dtype") and data["runtime"]["runtime"]:
                    example = {"href": name, "case": data["case"], "column": data["column"]}
    write("index.html", "front.html.j2", front_page(site, example))
    for runtime in sorted({c.runtime for c in site.columns}):
        write(f"runtime/{runtime}.html", "runtime.html.j2", runtime_page(site, runtime))
    for fid in sorted(site.findings):
        write(f"finding/{fid}.html", "finding.html.j2", finding_page(site, fid))
    (out / "site.json").write_text(json.dumps({"stores": site.stores, "columns": [c.key for c in site.columns],
                                               "pages": len(written) // 2}, indent=1))
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in written}
    largest = max(sizes.items(), key=lambda kv: kv[1])
    return Built(len(written) // 2, time.perf_counter() - t0, largest, sum(sizes.values()) + sum(z.stat().st_size for z in zips), len(zips))


def cmd_site(args) -> int:
    import sys

    from ..report.sources import ReportError

    try:
        built = build_site([Path(s) for s in args.stores], Path(args.output), args.title)
    except ReportError as exc:
        print(f"onnx-harness site: {exc}", file=sys.stderr)
        return 2
    print(f"site: {built.pages} pages and {built.downloads} repro downloads in {args.output} ({built.total_bytes / 1e6:.1f} MB, the largest {built.largest[0]} "
          f"{built.largest[1] / 1e6:.2f} MB) in {built.seconds:.1f} s; open {Path(args.output) / 'index.html'}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("site", help="a static conformance site (runtimes x releases, operators, findings) from merged stores")
    p.add_argument("stores", nargs="+", help="result stores (sqlite) to merge; each one's default runs are shown")
    p.add_argument("-o", "--output", default="site", help="folder to write (default: site/)")
    p.add_argument("--title", default="ONNX conformance", help="the site's title")
    p.set_defaults(func=cmd_site)
