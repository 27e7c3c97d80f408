#!/usr/bin/env bash
# Fill one store per runtime release with the official node suite and a reduced draw of the
# operators suite, then build the conformance site from all of them:
#
#   bash examples/site/fill.sh [OUT]        (default OUT: site-data; the site goes to OUT/site)
#
# Environment: EXAMPLES (operators examples per op-version and dtype, default 3), JOBS (default 2),
# BACKENDS (default below), TF_PYTHON (a Python whose environment has the 'tensorflow' extra: the
# TensorFlow backends run there, so the default install stays light).
# A run that ends with unexpected results (exit 1) is data for the site; exit 2 or more means the
# run itself failed, which is said and stops nothing else.
set -uo pipefail
OUT=${1:-site-data}
EXAMPLES=${EXAMPLES:-3}
JOBS=${JOBS:-2}
BACKENDS=${BACKENDS:-"reference kernels onnxruntime onnxruntime@1.30 onnxruntime@1.28 onnxruntime@1.24 onnxruntime-noopt pytorch pytorch-compile"}
mkdir -p "$OUT"

run() {  # run NAME PYTHON ARGS...: one store per backend, its log beside it
    local name=$1 python=$2; shift 2
    local t0=$SECONDS
    "$python" -m harness.cli run --store "$OUT/$name.sqlite" -j "$JOBS" --suite onnx-node --suite operators --examples "$EXAMPLES" "$@" \
        > "$OUT/$name.log" 2>&1
    local rc=$?
    if [ "$rc" -ge 2 ]; then echo "$name: the run failed (exit $rc), see $OUT/$name.log" >&2; else echo "$name: done in $((SECONDS - t0)) s"; fi
}

for b in $BACKENDS; do
    run "${b//[@:]/-}" python3 --backend "$b"
done
if [ -n "${TF_PYTHON:-}" ]; then
    for b in tensorflow tensorflow-xla; do
        run "$b" "$TF_PYTHON" --backend "$b"
    done
fi
python3 -m harness.cli site "$OUT"/*.sqlite -o "$OUT/site"
