#!/usr/bin/env bash
# Issue 24 corpus entries on the H100, then on the emulator with the H100's inputs and PTX, then compared bit for bit
# (tests/fidelity/run_corpus.py).  One device call:
#     bash tests/fidelity/isa/run_h100.sh            # writes $OUT/isa_cuda.npz, $OUT/isa_emu.npz, $OUT/compare.txt
# Without a GPU (CPU check of the pipeline): BACKEND=emu PYTHON=<python with the deps> bash tests/fidelity/isa/run_h100.sh
set -u
OUT=${OUT:-/tmp/isa_out}
PY=${PYTHON:-python3}
BACKEND=${BACKEND:-cuda}
SEED=${SEED:-20261127}
mkdir -p "$OUT"
export PYTHONPATH=. PTXLAB_CACHE=${PTXLAB_CACHE:-/tmp/ptxlab_cache}
ENTRIES="mma_sync_f16 mma_sync_fp8 mma_sync_tf32 mma_sync_int mma_sync_b1 mma_sync_f64 mma_sync_m8n8k4 \
ldmatrix_stmatrix wgmma bulk_reduce async_store tensormap_replace"
"$PY" tests/fidelity/run_corpus.py run --backend "$BACKEND" --seed "$SEED" --out "$OUT/isa_cuda.npz" \
    --only $ENTRIES > "$OUT/run_cuda.log" 2>&1; echo "run $BACKEND: rc=$?"
"$PY" tests/fidelity/run_corpus.py run --backend emu --out "$OUT/isa_emu.npz" --no-isolate \
    --inputs-from "$OUT/isa_cuda.npz" --ptx-from "$OUT/isa_cuda.npz" --only $ENTRIES > "$OUT/run_emu.log" 2>&1
echo "run emu: rc=$?"
"$PY" tests/fidelity/run_corpus.py compare "$OUT/isa_cuda.npz" "$OUT/isa_emu.npz" > "$OUT/compare.txt" 2>&1
echo "compare: rc=$?"
tail -40 "$OUT/compare.txt"
