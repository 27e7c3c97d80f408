"""The oracle and our kernels stay independent of what they judge, checked on the source (ast,
so imports inside functions count too) of EVERY module under operator_cases/ and
harness/backends/kernels/, found by glob so modules added later are covered:

- an operator_cases module imports no engine (harness.backends: kernels, pytorch, onnxruntime,
  ...; nor onnxruntime, torch, tensorflow, openvino themselves) and not onnx.reference;
- a kernels module imports neither operator_cases nor onnx.reference (nor harness.backends.reference,
  which wraps it).

Imports are followed through the project's own modules (harness.*, operator_cases.*), so a
helper module cannot carry a forbidden import in on the side."""

from __future__ import annotations

import ast
import textwrap
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("harness", "operator_cases")
ENGINES = ("harness.backends", "onnxruntime", "torch", "tensorflow", "openvino", "onnx_tf", "onnx.reference")
RULES = {
    "operator_cases": ENGINES,
    "harness/backends/kernels": ("operator_cases", "onnx.reference", "harness.backends.reference"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports_of(path: Path, name: str | None = None) -> frozenset[str]:
    """Every module ``path`` imports, absolute: ``import a.b``, ``from a import b`` (a and a.b),
    relative imports, and ``importlib.import_module``/``__import__`` with a literal name."""
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                found.add(node.args[0].value)
    return frozenset(found)


def _path_of(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _closure(module: str) -> frozenset[str]:
    """``module``'s imports, followed through our own modules (and their packages' __init__)."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        path = _path_of(current)
        if path is None:
            continue
        for imported in imports_of(path, current):
            parts = imported.split(".")
            for k in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b too
                prefix = ".".join(parts[:k])
                if prefix not in seen:
                    seen.add(prefix)
                    if prefix.startswith(OURS):
                        todo.append(prefix)
    return frozenset(seen)


def _banned(found: set[str] | frozenset[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in found if any(m == b or m.startswith(b + ".") for b in banned))


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", sorted(RULES))
def test_every_module_imports_nothing_it_must_stay_independent_of(folder):
    paths = _modules(folder)
    assert len(paths) > 20, paths  # the glob found the package
    offenders = []
    for path in paths:
        direct = _banned(imports_of(path), RULES[folder])
        through = _banned(_closure(module_name(path)), RULES[folder])
        if direct or through:
            offenders.append(f"{path.relative_to(ROOT)} imports {direct or '-'}, through our modules {through}")
    assert not offenders, "\n".join(offenders)


def test_the_import_finder_sees_every_form(tmp_path):
    """The check above is only as good as ``imports_of``: each way of importing is seen."""
    source = textwrap.dedent("""
        import onnxruntime as ort
        from onnx import reference
        from ..backends.kernels import registry
        from . import _common

        def lazy():
            import torch.nn
            importlib.import_module("onnx.reference.ops")
            return __import__("tensorflow")
    """)
    path = tmp_path / "operator_cases" / "sub" / "fake.py"
    path.parent.mkdir(parents=True)
    path.write_text(source)
    found = imports_of(path, "harness.suites.fake")
    assert {"onnxruntime", "onnx.reference", "harness.backends.kernels.registry", "harness.suites._common", "torch.nn",
            "onnx.reference.ops", "tensorflow"} <= found
    assert _banned(found, ENGINES) == ["harness.backends.kernels", "harness.backends.kernels.registry", "onnx.reference",
                                       "onnx.reference.ops", "onnxruntime", "tensorflow", "torch.nn"]


def test_a_forbidden_import_through_a_helper_module_is_followed():
    # operator_cases.math.abs imports operator_cases._unary_util, which imports harness modules: the
    # closure holds them, so a forbidden import there would count against abs too
    closure = _closure("operator_cases.math.abs")
    assert "operator_cases._unary_util" in closure and "harness.registry" in closure
