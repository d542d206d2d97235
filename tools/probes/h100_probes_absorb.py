#!/usr/bin/env python3
"""CPU side of tools/probes/h100_probes.sh: read what the H100 run wrote and say what the emulator must do.

    python tools/probes/h100_probes_absorb.py all  DIR    # DIR = the folder the device tool returned ($OUT)
    python tools/probes/h100_probes_absorb.py tmap DIR    # tensor-map driver rule: tables + separating features
    python tools/probes/h100_probes_absorb.py mbar DIR    # mbarrier: emulator run of the same kit + compare + verdicts
    python tools/probes/h100_probes_absorb.py tma  DIR    # TMA kit: emulator run + compare + measured candidates

Every section ends with "ABSORB:" lines naming the emulator code / doc to change for the outcome it saw.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from typing import Any

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
SEED = 20261122
TMA_PROBES = "narrow,nanfill,txnarrow"


def _load(name: str, path: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod          # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------------------------- tmap
def tmap(d: str) -> int:
    probe = _load("tmap_driver_probe", "tools/probes/tmap_driver_probe.py")
    path = os.path.join(d, "tmap_rule.json")
    if not os.path.exists(path):
        print(f"[tmap] {path} missing (see h100_probes.log)")
        return 1
    with open(path) as f:
        data = json.load(f)
    print(probe.report(data))
    print("\nABSORB (tensor maps): take the 0-wrong rule of '[separation: all encodes]' that the shrink 'accepted "
          "after' lines and the scan boundaries agree with; add it to ptxlab/tensormap.py validate() (a new row in "
          "ptx_docs/tensor_maps.md 'Validation rules', marked 'H100 driver 580.159.04, not in the driver docs'), a "
          "valid/invalid pair at the boundary to tests/test_tensormap.py RULES (the GPU test "
          "test_driver_agrees_with_rule then checks it on the next run), and drop the '40 of 300 ... not yet "
          "identified' sentence. If no single feature separates (>0 wrong everywhere), read the shrink lines: the "
          "fields that cannot be reduced are the rule's inputs.")
    return 0


# ------------------------------------------------------------------------------------------------------- mbar
def mbar(d: str) -> int:
    kit = _load("run_mbar_fidelity", "tests/fidelity/mbarrier/run_mbar_fidelity.py")
    hw = os.path.join(d, "mbar_cuda.json")
    if not os.path.exists(hw):
        print(f"[mbar] {hw} missing (see h100_probes.log)")
        return 1
    emu = os.path.join(tempfile.mkdtemp(), "mbar_emu.json")
    kit.main(["run", "--backend", "emu", "--out", emu])
    rc = kit.main(["compare", hw, emu])
    with open(hw) as f:
        z = json.load(f)
    longest: dict[str, dict[str, Any]] = {}
    for r in z["results"]:
        if r.get("raw") and not r["error"] and r["k"] >= longest.get(r["seq"], {"k": 0})["k"]:
            longest[r["seq"]] = r
    if longest:
        print("\nraw 64-bit mbarrier word on the H100 after each step (to decode phase / pending / tx-count fields):")
        for seq, r in longest.items():
            print(f"  {seq}: " + "  ".join(f"{st}={w[2:]}" for st, w in zip(r["steps"], r["raw"][1:])))
    print("\nABSORB (mbarrier): no DIFF -> the emulator rules are hardware-confirmed: cite the H100 run in "
          "ptxlab/emu/hw/mbarrier.py Mbarrier.expect_tx's docstring, replace '**unmeasured**' in "
          "ptx_docs/mbarrier.md (expect_tx row) by that reference, and vendor mbar_cuda.json under tests/fidelity/mbarrier/data/ with a replay test. "
          "DIFF in complete_first/bulk_first at the EXPECT step (H100 p0=0) -> expect_tx must NOT complete: drop "
          "`return self._maybe_complete()` from Mbarrier.expect_tx (keep the tx update), make the deadlock text of "
          "describe() mention 'bytes completed before expect_tx' and revisit test_mbarrier_model's random-sequence "
          "oracle (commit c5df2b9). DIFF at the ARRIVE step with tx < 0 (H100 p0=1) -> the hardware completes at "
          "pending 0 regardless of a negative tx-count (or clamps tx at 0): change _maybe_complete / complete_tx "
          "accordingly and document it. DIFF in over_deliver(_bulk) only -> over-delivery semantics "
          "(ptx_docs/mbarrier.md 'Over-delivery').")
    return rc


# ------------------------------------------------------------------------------------------------------- tma
def _oob_positions(kit: Any, tm: Any, case: Any) -> np.ndarray:
    """Window byte offsets the model fills with the OOB pattern (two sentinels differ exactly there)."""
    old = tm.OOB_NAN_BITS.get(case.dtype)
    eb = kit.BITS[case.dtype] // 8
    try:
        imgs = []
        for sentinel in (0, (1 << (8 * eb)) - 1):
            tm.OOB_NAN_BITS[case.dtype] = sentinel
            imgs.append(kit.run_model(case)["image"])
    finally:
        tm.OOB_NAN_BITS[case.dtype] = old
    return np.flatnonzero(imgs[0] != imgs[1])


def tma_findings(kit: Any, z: Any) -> list[str]:
    """Measured values / rules in a hardware kit result, checked against the model with the candidate set."""
    from ptxlab.emu.hw import tma as tm

    cases = {c["name"]: kit.Case(**c) for c in json.loads(str(z["cases_json"]))}
    out: list[str] = []
    absorb: list[str] = []

    def err(n: str) -> str:
        return str(z[f"{n}:error"]) if f"{n}:error" in z.files else "(not run)"

    # OOB-NaN patterns
    for name, case in cases.items():
        if not (name.startswith("nan/") and name.endswith("/hi")):
            continue
        if err(name):
            out.append(f"nanfill {name}: {err(name)[:160]}")
            continue
        hw = z[f"{name}:image"]
        pos = _oob_positions(kit, tm, case)
        eb = kit.BITS[case.dtype] // 8
        if pos.size == 0 or pos.size % eb:
            out.append(f"nanfill {name}: cannot locate the OOB elements ({pos.size} bytes)")
            continue
        vals = hw[pos].reshape(-1, eb)
        ints = [int.from_bytes(bytes(v), "little") for v in vals]
        uniq = sorted(set(ints))
        line = f"nanfill {case.dtype}: {len(ints)} OOB elements, patterns {[hex(u) for u in uniq]}"
        if len(uniq) == 1:
            old = tm.OOB_NAN_BITS.get(case.dtype)
            tm.OOB_NAN_BITS[case.dtype] = uniq[0]
            try:
                same = np.array_equal(kit.run_model(case)["image"], hw)
            finally:
                tm.OOB_NAN_BITS[case.dtype] = old
            line += f"; model with OOB_NAN_BITS[{case.dtype!r}] = {uniq[0]:#x}: " + \
                ("whole window bit-identical" if same else "window DIFFERS (in-bound data converted? see special)")
            if same and old != uniq[0]:
                absorb.append(f"hw.tma.OOB_NAN_BITS[{case.dtype!r}] = {uniq[0]:#x}")
        out.append(line)
    # in-bound special values
    for name, case in cases.items():
        if not name.endswith("/special"):
            continue
        if err(name):
            out.append(f"special {name}: {err(name)[:160]}")
            continue
        hw, model = z[f"{name}:image"], kit.run_model(case)["image"]
        eb = kit.BITS[case.dtype] // 8
        dt = {2: np.uint16, 4: np.uint32, 8: np.uint64}[eb]
        h, m = hw.view(dt), model.view(dt)
        diff = np.flatnonzero(h != m)
        if diff.size == 0:
            out.append(f"special {case.dtype}: " + (
                "in-bound bytes converted exactly as the model does (hw.tma.LOAD_CONVERT: confirmed)"
                if case.dtype in getattr(tm, "LOAD_CONVERT", {}) else
                "in-bound bytes copied unchanged (model = raw copy: confirmed)"))
            continue
        pairs = sorted({(int(m[i]), int(h[i])) for i in diff})
        out.append(f"special {case.dtype}: {diff.size} of {h.size} elements CHANGED by the load; input -> H100: " +
                   ", ".join(f"{a:#x}->{b:#x}" for a, b in pairs[:24]))
        absorb.append(f"{case.dtype} loads convert data (see the 'special' pairs): model it in "
                      "hw.tma.load_box_image (FTZ: denormal -> signed 0; TF32: low mantissa bits) or refuse it")
    # narrow stores and loads
    for name, case in cases.items():
        if not name.startswith("narrow/"):
            continue
        inner = case.box[0] * kit.BITS[case.dtype] // 8
        key = (case.swizzle, inner)
        e = err(name)
        if case.kind == "store" and key not in tm.NARROW_STORE_CONFIRMED:
            if e:
                out.append(f"narrow store {name}: {e[:140]}")
                if "ILLEGAL" in e and tm.narrow_inner_legal(*key):
                    absorb.append(f"narrow store {key} FAULTS although its inner bytes are a multiple of 32: "
                                  "stores need their own rule in hw.tma._check_supported")
                continue
            old = tm.NARROW_STORE_CONFIRMED
            tm.NARROW_STORE_CONFIRMED = frozenset(old | {key})
            try:
                same = np.array_equal(kit.run_model(case)["image"], z[f"{name}:image"])
            except Exception as exc:  # noqa: BLE001 - the model refusing is a finding too
                same = f"model raised {type(exc).__name__}: {exc}"[:160]
            finally:
                tm.NARROW_STORE_CONFIRMED = old
            out.append(f"narrow store {name}: ran; model with {key} in NARROW_STORE_CONFIRMED: "
                       f"{'bit-identical' if same is True else same or 'DIFFERS'}")
            if same is True:
                absorb.append(f"add {key} to hw.tma.NARROW_STORE_CONFIRMED")
        elif case.kind == "load" and inner in (80, 112):
            out.append(f"narrow load {name}: {e[:140] or 'ran'} (rule predicts a fault)")
            if not e:
                absorb.append(f"narrow load {key} RAN: the multiple-of-32 rule is wrong; see its image")
    out.append(kit.tx_verdicts(z, {n: c for n, c in cases.items() if n.startswith("tx/narrow/")}))
    for g in ("128B/inner64", "128B/inner32", "64B/inner32"):
        r = {e: int(z[f"tx/narrow/{g}/2d/in/{e}:info"][0]) for e in ("full", "padded")
             if f"tx/narrow/{g}/2d/in/{e}:info" in z.files and not err(f"tx/narrow/{g}/2d/in/{e}")}
        if r == {"full": 0, "padded": 1}:
            absorb.append(f"complete_tx of narrow box {g} = rows x span: hw.tma.complete_tx_bytes must count the "
                          "padded footprint (BoxGeometry.footprint) for narrow boxes")
        elif r == {"full": 1, "padded": 0}:
            absorb.append(f"complete_tx of narrow box {g} = box bytes (model confirmed): drop 'narrow swizzled "
                          "boxes' from the 'Not measured' sentence of hw/tma.py's docstring")
    absorb = list(dict.fromkeys(absorb))
    out.append("\nABSORB (TMA): " + ("\n  - ".join([""] + absorb) if absorb else "nothing new (see lines above)") +
               "\n  then vendor the cases: python tests/fidelity/tma/data/extract.py DIR/tma_cuda3.npz "
               "tests/fidelity/tma/data/h100_<date>_run3.npz narrow/ nan/ tx/narrow/ and add replay tests next to "
               "tests/emu/hw/test_tma_model.py::test_h100_run2_*; update NARROW_* / OOB_NAN_BITS comments and "
               "ptx_docs/tma.md.")
    return out


def tma(d: str) -> int:
    kit = _load("run_tma_fidelity", "tests/fidelity/tma/run_tma_fidelity.py")
    hw = os.path.join(d, "tma_cuda3.npz")
    if not os.path.exists(hw):
        print(f"[tma] {hw} missing (see h100_probes.log)")
        return 1
    emu = os.path.join(tempfile.mkdtemp(), "tma_emu3.npz")
    kit.main(["run", "--backend", "emu", "--seed", str(SEED), "--probes", TMA_PROBES, "--out", emu])
    rc = kit.main(["compare", hw, emu])
    print("\nfindings (hardware vs the model with the candidate settings):")
    print("\n".join(tma_findings(kit, np.load(hw))))
    return rc


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("all", "tmap", "mbar", "tma"):
        print(__doc__)
        return 2
    what, d = argv
    rc = 0
    for name, fn in (("tmap", tmap), ("mbar", mbar), ("tma", tma)):
        if what in ("all", name):
            print(f"\n{'=' * 30} {name} {'=' * 30}")
            rc |= fn(d)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
