#!/usr/bin/env bash
# Build the Python environment MXNet 1.9.1 needs: its own interpreter (3.9 by default: MXNet's
# contrib.onnx predates numpy 2 and today's onnx), mxnet, numpy < 1.24, onnx 1.12, protobuf 3.
#   examples/mxnet-runner/make_env.sh DIR [PYTHON]   ->   DIR/bin/python runs runner.py
set -euo pipefail
dir=${1:?usage: make_env.sh DIR [PYTHON]}
python=${2:-${MXNET_BASE_PYTHON:-python3.9}}
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c "import mxnet" 2>/dev/null; then
    "$python" -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check 'mxnet==1.9.1' 'numpy<1.24' 'onnx==1.12.0' 'protobuf<4'
fi
"$dir/bin/python" -c "import mxnet, onnx; print('mxnet', mxnet.__version__, 'onnx', onnx.__version__)"
