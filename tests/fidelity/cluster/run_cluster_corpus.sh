#!/usr/bin/env bash
# The cluster corpus on an sm_90 GPU and on the emulator with the same seed, inputs and PTX, compared bit for bit.
# From the repository root:  OUT=/tmp/cl bash tests/fidelity/cluster/run_cluster_corpus.sh [seed]
set -u
OUT=${OUT:-.}
SEED=${1:-20261124}
ONLY=$(PYTHONPATH=.:tests python3 -c "from corpus import kernels_cluster as k; print(' '.join(e.name for e in k.ENTRIES))")
nvidia-smi -L 2>/dev/null
PYTHONPATH=. python3 tests/fidelity/run_corpus.py run --backend cuda --seed "$SEED" --out "$OUT/cl_cuda.npz" --only $ONLY
PYTHONPATH=. python3 tests/fidelity/run_corpus.py run --backend emu --out "$OUT/cl_emu.npz" \
    --inputs-from "$OUT/cl_cuda.npz" --ptx-from "$OUT/cl_cuda.npz" --only $ONLY
PYTHONPATH=. python3 tests/fidelity/run_corpus.py compare "$OUT/cl_cuda.npz" "$OUT/cl_emu.npz"
echo "compare rc=$?"
