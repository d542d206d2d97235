#!/usr/bin/env bash
# Issue 24 corpus entries on the H100, then on the emulator with the H100's inputs and PTX, then compared bit for bit
# (tests/fidelity/run_corpus.py).  One device call, under 5 minutes:
#     bash tests/fidelity/isa/run_h100.sh            # writes $OUT/isa_cuda.npz, $OUT/isa_emu.npz, $OUT/compare.txt
# Without a GPU (CPU check of the pipeline): BACKEND=emu PYTHON=<python with the deps> bash tests/fidelity/isa/run_h100.sh
# The entries are every entry of the issue-24 corpus modules (one CUDA process each: an illegal instruction kills only
# its own entry); entries that expect a refusal (Entry.refused) agree when the refusing side raises as expected.
# Keep isa_cuda.npz: the hardware outputs of the refused forms are the data a future model is fitted to.
set -u
OUT=${OUT:-/tmp/isa_out}
PY=${PYTHON:-python3}
BACKEND=${BACKEND:-cuda}
SEED=${SEED:-20261127}
BUDGET=${BUDGET:-150}
mkdir -p "$OUT"
export PYTHONPATH=. PTXLAB_CACHE=${PTXLAB_CACHE:-/tmp/ptxlab_cache}
ENTRIES=${ENTRIES:-$("$PY" -c "
import sys; sys.path.insert(0, 'tests')
from corpus import kernels_async_store, kernels_bulk_reduce, kernels_mma, kernels_wgmma, kernels_wmma
mods = (kernels_async_store, kernels_bulk_reduce, kernels_mma, kernels_wgmma, kernels_wmma)   # crash diagnostics first
print(' '.join(e.name for m in mods for e in m.ENTRIES))")}
echo "entries: $ENTRIES"
T0=$(date +%s)
"$PY" tests/fidelity/run_corpus.py run --backend "$BACKEND" --seed "$SEED" --out "$OUT/isa_cuda.npz" \
    --budget "$BUDGET" --only $ENTRIES > "$OUT/run_cuda.log" 2>&1; echo "run $BACKEND: rc=$? ($(( $(date +%s) - T0 )) s)"
"$PY" tests/fidelity/run_corpus.py run --backend emu --out "$OUT/isa_emu.npz" --no-isolate \
    --inputs-from "$OUT/isa_cuda.npz" --ptx-from "$OUT/isa_cuda.npz" --only $ENTRIES > "$OUT/run_emu.log" 2>&1
echo "run emu: rc=$? ($(( $(date +%s) - T0 )) s)"
"$PY" tests/fidelity/run_corpus.py compare "$OUT/isa_cuda.npz" "$OUT/isa_emu.npz" > "$OUT/compare.txt" 2>&1
echo "compare: rc=$?"
grep -E "^== |REFUSED|refus|error|NOT explained" "$OUT/compare.txt" | grep -v " ok   B: ok$" | tail -60
tail -3 "$OUT/compare.txt"
