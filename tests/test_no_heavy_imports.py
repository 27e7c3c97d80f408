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


def test_the_command_line_is_built_without_the_fuzz_campaign():
    # every command builds the whole parser first: the fuzz command's options must not import the
    # campaign (hypothesis and its plugins: a third of a second, more where trio is installed), which
    # `run --suite onnx`, `report` and `diff` never use
    code = (
        "import sys\nfrom harness.cli import build_parser\nbuild_parser().parse_args(['fuzz', '--budget', '1m'])\n"
        "print(','.join(m for m in ('hypothesis', 'harness.generated.campaign', 'harness.strategies') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"building the command line imported: {out.stdout.strip()}"
