#!/usr/bin/env bash
# The one GPU check (issue #21): on a machine with an NVIDIA GPU and the CUDA plugin installed
# (pip install -e ".[cuda12,test]" or ".[cuda13,test]"), run the GPU tests, a CPU-suite smoke
# subset on the GPU, and the JAX-vs-traxla benchmark on the GPU; print a summary. Under 8 minutes.
#
#   bash tools/gpu_check.sh            # PYTHON=/path/to/python to choose the interpreter
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
status=0

echo "== devices"
JAX_PLATFORMS=cuda timeout 120 "$PY" -c '
import traxla
print("traxla", traxla.__version__, "default backend:", traxla.default_backend())
print("devices:", traxla.devices(), [d.device_kind for d in traxla.devices()])' || {
    echo "== summary: NO GPU (the CUDA backend did not start; the line above says why)"; exit 2; }

echo "== GPU tests (tests/test_gpu.py) and a smoke subset of the suite on the GPU"
JAX_PLATFORMS=cuda timeout 300 "$PY" -m pytest -q -n 0 -rs tests/test_gpu.py \
    tests/test_article.py tests/test_jit.py tests/test_examples_training.py 2>&1 | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== benchmark on the GPU (traxla and JAX in the same run)"
JAX_PLATFORMS=cuda timeout 240 "$PY" benchmarks/bench_vs_jax.py --steps 500 --compile-steps 100 \
    --repeats 3 --calls 5000 2>&1 | tail -20
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== summary: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
