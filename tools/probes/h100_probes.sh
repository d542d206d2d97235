#!/usr/bin/env bash
# ONE H100 device call that settles three open fidelity items (NOTES.md "H100 runs"); host + tiny kernels, ~1 min.
#
#   run (device tool, repo root):  OUT=$OUT bash tools/probes/h100_probes.sh
#
# Writes 4 files under $OUT (hard wall limit ~225 s, every step under `timeout`):
#   h100_probes.log  everything below (device line, tables, verdicts)
#   tmap_rule.json   1. cuTensorMapEncodeTiled limit: random specs (fuzz generator, failing seed + 8 fixed seeds),
#                       one-field-at-a-time shrinks of rejected specs, boundary sweeps
#                       (tools/probes/tmap_driver_probe.py)
#   mbar_cuda.json   2. mbarrier: expect_tx back to tx 0 with no arrival pending, and neighbours, every prefix of 15
#                       step sequences observed with test_wait.parity (tests/fidelity/mbarrier/run_mbar_fidelity.py)
#   tma_cuda3.npz    3. TMA kit probes narrow (incl. stores 128B x 32/96/48 B, loads 128B x 80/112 B), nanfill (OOB
#                       NaN of BFLOAT16/FLOAT64/TFLOAT32/*_FTZ + in-bound special values), txnarrow (complete_tx of
#                       narrow boxes); seed 20261122, child-process isolation (tests/fidelity/tma/run_tma_fidelity.py)
#
# CPU side afterwards (this machine, DIR = the folder the device tool returned):
#   python tools/probes/h100_probes_absorb.py all DIR          # or: tmap DIR | mbar DIR | tma DIR
# which runs
#   python tools/probes/tmap_driver_probe.py analyze DIR/tmap_rule.json
#   python tests/fidelity/mbarrier/run_mbar_fidelity.py run --backend emu --out /tmp/mbar_emu.json
#   python tests/fidelity/mbarrier/run_mbar_fidelity.py compare DIR/mbar_cuda.json /tmp/mbar_emu.json
#   python tests/fidelity/tma/run_tma_fidelity.py run --backend emu --seed 20261122 --probes narrow,nanfill,txnarrow \
#          --out /tmp/tma_emu3.npz
#   python tests/fidelity/tma/run_tma_fidelity.py compare DIR/tma_cuda3.npz /tmp/tma_emu3.npz
# and prints "ABSORB:" lines: which emulator code / doc to change for the outcome measured.
#
# Dry run on a CPU machine (emulator backends, mocked cuTensorMapEncodeTiled; same files, emulator data):
#   PROBES_BACKEND=emu PROBES_ENCODER=mock:bytes19 OUT=/tmp/dry bash tools/probes/h100_probes.sh
set -u
OUT="${OUT:-./h100_probes_out}"; mkdir -p "$OUT"
export PYTHONPATH=.:${PYTHONPATH:-} PYTHONUNBUFFERED=1 PTXLAB_CACHE="${PTXLAB_CACHE:-${TMPDIR:-/tmp}/ptxlab_cache}"
SEED=20261122
BACKEND="${PROBES_BACKEND:-cuda}"; ENCODER="${PROBES_ENCODER:-driver}"
ISOLATE=""; [ "$BACKEND" != cuda ] && ISOLATE="--isolate"     # dry run: exercise the child-process path too
PY="${PYTHON:-python3}"
step() { echo; echo "=== $* ($(date +%T)) ==="; }
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || echo "(no nvidia-smi: dry run?)"
  $PY -c "import cuda.bindings, numpy; print('cuda-bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null || true

  step "1. tensor-map driver rule (host only)"
  timeout 90 $PY tools/probes/tmap_driver_probe.py run --out "$OUT/tmap_rule.json" --budget-s 40 \
    --encoder "$ENCODER"
  echo "rc=$?"

  step "2. mbarrier expect_tx / complete_tx probe (cuda, child processes)"
  timeout 45 $PY tests/fidelity/mbarrier/run_mbar_fidelity.py run --backend "$BACKEND" --out "$OUT/mbar_cuda.json" \
    --child-timeout 30 $ISOLATE
  echo "rc=$?"
  $PY -c "
import json, sys; sys.path.insert(0, 'tests/fidelity/mbarrier')
import run_mbar_fidelity as k; print(k.verdicts(json.load(open('$OUT/mbar_cuda.json'))))" || true

  step "3. TMA kit: narrow, nanfill, txnarrow (cuda, child processes)"
  timeout 90 $PY tests/fidelity/tma/run_tma_fidelity.py run --backend "$BACKEND" --seed "$SEED" \
    --probes narrow,nanfill,txnarrow --child-timeout 30 --out "$OUT/tma_cuda3.npz"
  echo "rc=$?"
  $PY - "$OUT/tma_cuda3.npz" <<'PYEOF' || true
import json, sys
import numpy as np
sys.path.insert(0, "tests/fidelity/tma")
import run_tma_fidelity as k
z = np.load(sys.argv[1])
cases = {c["name"]: k.Case(**c) for c in json.loads(str(z["cases_json"]))}
for n in cases:
    e = str(z[n + ":error"])
    print(f"  {n}: {e[:200] or 'ran'}")
print(k.tx_verdicts(z, cases))
PYEOF

  step "done"
  ls -la "$OUT"
} 2>&1 | tee "$OUT/h100_probes.log"
