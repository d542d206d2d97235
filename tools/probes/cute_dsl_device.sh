#!/usr/bin/env bash
# One device call for issue 23 (ptx_docs/cute_dsl.md "Evidence still to collect"): on an H100 (or any GPU),
#   1. the GPU driver's cuTensorMapEncodeTiled images, decoded with ptxlab/tensormap_hw.py (the layout was measured
#      on the CuTe DSL's own encoder): do the plain cases decode to their inputs, which bits do L2 promotion, NaN
#      fill and element strides set;
#   2. mapa with target ranks outside the cluster (fidelity rule mapa_rank): does the launch complete.
# Run from the repository root:  bash tools/probes/cute_dsl_device.sh     (results under $OUT, ~30 s)
set -u
OUT="${OUT:-/tmp/cute_dsl_device}"
mkdir -p "$OUT"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 tools/probes/cute_tmap_probe.py driver --out "$OUT/tmap_driver.json" 2>&1 | tee "$OUT/tmap_driver.txt"
echo "tmap_driver rc=${PIPESTATUS[0]}"
python3 tools/probes/mapa_rank_probe.py cuda 2>&1 | tee "$OUT/mapa_rank.txt"
echo "mapa_rank rc=${PIPESTATUS[0]}"
