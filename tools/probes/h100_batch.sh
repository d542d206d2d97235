#!/usr/bin/env bash
# One batched H100 session (device tool): GPU tests, TMA fidelity, stage A on cuda, corpus fidelity, GEMV benchmark.
# Run from the repo root on the GPU machine:  bash tools/probes/h100_batch.sh [quick]
# Writes logs and .npz results under $OUT (default ./h100_out). The CPU-side halves (emu runs, compares) are run
# on the development machine with the same seeds; see NOTES.md "H100 runs".
set -u
OUT="${OUT:-./h100_out}"; mkdir -p "$OUT"
export PYTHONPATH=.:${PYTHONPATH:-} PYTHONUNBUFFERED=1 PTXLAB_CACHE="${PTXLAB_CACHE:-${TMPDIR:-/tmp}/ptxlab_cache}"
SEED="${SEED:-20261122}"
step() { echo; echo "=== $* ==="; }
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$OUT/device.txt"
python3 -c "import cuda.bindings, numpy, ml_dtypes; print('cuda-bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
step "GPU tests"
python3 -m pytest tests -m gpu -q -p no:cacheprovider -rs 2>&1 | tee "$OUT/gpu_tests.log" | tail -60
step "stage A on cuda"
python3 lab.py --stage A1 --backend cuda 2>&1 | tail -25 | tee "$OUT/stage_a1.log"
python3 lab.py --stage A2 --backend cuda 2>&1 | tail -25 | tee "$OUT/stage_a2.log"
python3 lab.py --stage B1 --backend cuda 2>&1 | tail -8 | tee "$OUT/stage_b1_refusal.log"
step "TMA fidelity (cuda)"
python3 tests/fidelity/tma/run_tma_fidelity.py run --backend cuda --seed "$SEED" --out "$OUT/tma_cuda.npz" 2>&1 | tail -30
if [ -f tests/fidelity/run_corpus.py ]; then
  step "corpus fidelity (cuda)"
  python3 tests/fidelity/run_corpus.py run --backend cuda --seed "$SEED" --out "$OUT/corpus_cuda.npz" 2>&1 | tail -40
fi
if [ "${1:-}" != "quick" ] && [ -f benchmarks/bench_gemv_h100.py ]; then
  step "GEMV benchmark"
  python3 benchmarks/bench_gemv_h100.py 2>&1 | tee "$OUT/bench_gemv.log" | tail -40
fi
echo; echo "done"
