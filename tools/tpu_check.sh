#!/usr/bin/env bash
# The one TPU check (issue #29): on a machine with a TPU, libtpu and JAX 0.10.2 (the repo run
# from its source tree), run the TPU test tier, then a differential run of the corpus against
# JAX on the same chip (separate processes, one after the other: one process at a time can
# hold a TPU), and print a summary. About 5 minutes.
#
#   bash tools/tpu_check.sh            # PYTHON=/path/to/python to choose the interpreter
#   (the benchmark is separate: python benchmarks/tpu_bench.py, about 5 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
unset JAX_PLATFORMS TRAXLA_PLATFORMS
status=0
results=()

echo "== devices"
timeout 120 "$PY" -c '
import traxla
print("traxla", traxla.__version__, "default backend:", traxla.default_backend())
print("devices:", traxla.devices(), [d.device_kind for d in traxla.devices()])
assert traxla.default_backend() == "tpu", "the TPU is not the default backend"' || {
    echo "== summary: NO TPU (the TPU backend did not start; the lines above say why)"; exit 2; }
sleep 3  # the chip can refuse a process started right after another let it go

echo "== TPU tier: pytest -m tpu (tests/test_tpu*.py), then the platform tests"
# The tests that run JAX's kernels under the drop-in start a fresh interpreter on the chip:
# they run in a pytest process of their own, since one process at a time holds the chip and
# the in-process tests keep it open.
drop_in_tests=(tests/test_tpu_pallas_ops_dma.py
               tests/test_tpu_pallas.py::test_jax_tpu_kernels_compiled_agree_with_jax_reference_functions)
timeout 300 "$PY" -m pytest -q -o addopts="" -p no:cacheprovider -m tpu -rfEs "${drop_in_tests[@]}" 2>&1 | tail -20
rc=${PIPESTATUS[0]}; results+=("pytest -m tpu, drop-in scripts: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED ($rc)")")
[ "$rc" -eq 0 ] || status=1
sleep 3
# (pytest's --ignore does not apply to files named on its command line: leave the file out)
in_process_files=()
for f in tests/test_tpu*.py; do [ "$f" = "${drop_in_tests[0]}" ] || in_process_files+=("$f"); done
timeout 300 "$PY" -m pytest -q -o addopts="" -p no:cacheprovider -m tpu -rfEs "${in_process_files[@]}" \
    --deselect "${drop_in_tests[1]}" 2>&1 | tail -40
rc=${PIPESTATUS[0]}; results+=("pytest -m tpu: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED ($rc)")")
[ "$rc" -eq 0 ] || status=1
sleep 3
JAX_PLATFORMS=cpu timeout 200 "$PY" -m pytest -q -o addopts="" -p no:cacheprovider tests/test_tpu_platform.py 2>&1 | tail -5
rc=${PIPESTATUS[0]}; results+=("test_tpu_platform (CPU side): $([ "$rc" -eq 0 ] && echo passed || echo "FAILED ($rc)")")
[ "$rc" -eq 0 ] || status=1

echo "== differential run on the TPU: JAX first, then traxla (tools/tpu_diff.py)"
out=$(mktemp -d)/jax_results.pkl
timeout 300 "$PY" tools/tpu_diff.py jax "$out" 2>&1 | grep -v "Transparent hugepages\|warnings.warn" | tail -5
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
    sleep 3
    timeout 300 "$PY" tools/tpu_diff.py traxla "$out" 2>&1 | tail -40
    rc=${PIPESTATUS[0]}
fi
results+=("differential vs JAX: $([ "$rc" -eq 0 ] && echo "passed" || echo "FAILED ($rc)")")
[ "$rc" -eq 0 ] || status=1

echo "== summary"
printf '  %s\n' "${results[@]}"
echo "== $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
