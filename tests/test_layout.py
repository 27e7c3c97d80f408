"""The layout shows the architecture: no import circle among the modules of ``harness/``, none of
them over 800 lines, and the README's architecture section names every folder of ``harness/``.

Every import counts, an import inside a function too (it only hides the circle until the
function runs); an import under ``if TYPE_CHECKING:`` does not, and neither does a submodule's
implicit import of its own package."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "harness"


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    hidden = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
              for n in ast.walk(node)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module] if node.module else
                            package[:len(package) - node.level + 1]) if node.level else (node.module or "")
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            found.update(subs if len(subs) == len(node.names) else [base, *subs])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in modules and m != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_in_harness():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _circles(graph) == []


def test_the_circle_finder_sees_a_circle_hidden_in_a_function(tmp_path):
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    modules = {"harness.x": tmp_path / "x.py", "harness.y": tmp_path / "y.py"}
    modules["harness.x"].write_text("def f():\n    from .y import g\n")
    assert _imports("harness.x", modules["harness.x"], modules) == {"harness.y"}
    modules["harness.x"].write_text("if TYPE_CHECKING:\n    from .y import g\n")
    assert _imports("harness.x", modules["harness.x"], modules) == set()


def test_no_module_of_harness_over_800_lines():
    """A module that long mixes ideas: split it by idea (report/: sources, matrix, failures, ...)."""
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > 800}
    assert long == {}


def test_the_readme_architecture_section_maps_every_folder_of_harness():
    section = (ROOT.parent / "README.md").read_text().split("\n## Architecture", 1)[1].split("\n## ", 1)[0]
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if f"harness/{f}/" not in section] == []
