import subprocess
import sys


def test_import_harness_loads_no_heavy_library():
    code = (
        "import sys, harness, harness.cli, harness.run, harness.runner, harness.backends, harness.suites, harness.compare, harness.executors\n"
        "from harness.backends import known_backends; known_backends()\n"
        "heavy = [m for m in ('onnxruntime', 'tensorflow', 'torch', 'openvino', 'onnx_tf', 'ray') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import harness pulled in: {out.stdout.strip()}"
