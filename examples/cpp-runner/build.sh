#!/bin/sh
# Build the C++ exec runner against the C++ API the `openvino` wheel ships (include/ and libs/
# inside the installed package); no other dependency. Usage:
#   ./build.sh [PYTHON] [OUTPUT]      PYTHON: an interpreter with openvino installed (default python3)
# The command it runs is, with OV the package folder:
#   g++ -std=c++17 -O1 -I$OV/include runner.cpp $OV/libs/libopenvino.so.* -Wl,-rpath,$OV/libs -o ovrunner
set -eu
PYTHON=${1:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${2:-$HERE/ovrunner}
OV=$("$PYTHON" -c "import openvino, os; print(os.path.dirname(openvino.__file__))")
LIB=$(ls "$OV"/libs/libopenvino.so* | grep -E 'libopenvino\.so(\.[0-9]+)*$' | head -n 1)
[ -n "$LIB" ] || { echo "no libopenvino.so in $OV/libs" >&2; exit 1; }
exec ${CXX:-g++} -std=c++17 -O1 -I"$OV/include" "$HERE/runner.cpp" "$LIB" -Wl,-rpath,"$OV/libs" -o "$OUT"
