"""The OpenVINO example plug-in is discovered through the harness.backends entry point in an
environment where it is installed, without any edit to this repository."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_example_backend_is_discovered_through_its_entry_point(tmp_path):
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(ROOT / "examples" / "openvino-backend")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    code = ("from harness.backends import known_backends, load_backend_class\n"
            "print(known_backends().get('openvino'))\n"
            "cls = load_backend_class('openvino'); ok, why = cls.available(); print(cls.__name__, ok, why)\n")
    env = {"PYTHONPATH": f"{target}:{ROOT}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first == "harness_openvino:OpenVinoBackend"
    name, ok, *why = second.split(" ", 2)
    assert name == "OpenVinoBackend"
    # available exactly when this interpreter can import openvino, and otherwise saying so
    if importlib.util.find_spec("openvino") is not None:
        assert ok == "True", why
    else:
        assert ok == "False" and "openvino is not installed" in " ".join(why), why
