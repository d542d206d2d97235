"""PTX rules that shipped NVIDIA code breaks while hardware is known to tolerate it: warn by default, error when strict.

Fidelity policy (ptx_docs/fidelity.md, ptx_docs/tcgen05.md "tcgen05.ld without wait::ld", ptx_docs/tma.md "Proxy
fences"): where shipped NVIDIA code or hardware evidence relies on behaviour the PTX text forbids, the emulator's
default models what the hardware does and warns at the site; the strict PTX-text rule is one switch away.

Rules (name: default, evidence):
  tcgen05_wait_ld  warn   a register written by tcgen05.ld is read before tcgen05.wait::ld (PTX ISA 9.7.16.8.5).
                          ptxas gives every LDTM a write scoreboard and makes the first reader of each destination
                          register wait on it, with or without tcgen05.wait::ld (tools/probes/ldtm_scoreboard.py);
                          the value read is the loaded value, which the emulator wrote at issue.
  wgmma_wait       warn   a wgmma.mma_async accumulator register is read before the wgmma.wait_group covering it
                          (PTX ISA 9.7.15.7.3). ptxas guards the first use with WARPGROUP.DEPBAR with or without
                          the wait (sm_90a SASS, tests/emu/ops/test_emu_wgmma.py); the emulator wrote D at issue.
  proxy_fence      warn   SMEM written by generic stores is read by the async proxy without fence.proxy.async
                          (PTX ISA 8.6 proxies, 9.7.13.4). H100: no stale data in 86.5 M 16-byte chunks read by
                          cp.async.bulk (NOTES.md, 2026-11-22 seventh lead run); CuTe tutorial 01 omits it before
                          tcgen05.mma; tcgen05 readers are unmeasured. The emulator reads its one memory image.

  barrier_exit     warn   a CTA barrier completes without threads that exited before it (synccheck.py; PTX ISA
                          9.7.13.1 leaves an exit in a CTA-divergent condition undefined under .aligned).
  barrier_divergence warn whole warps at different .aligned bar.sync instructions (H100: completes, ordered).
  barrier_count    warn   a counted barrier completed by more arrivals than its count (H100: once yes, in a loop hang).
  mapa_rank        warn   mapa with a target rank outside the cluster (PTX ISA 9.7.9.23: b is "the rank of the target
                          CTA"). NVIDIA's compiler emits it: the CuTe DSL 4.8.1 build of NVIDIA's fp16_gemm_3_1 hoists
                          a mapa with the lane id as rank out of a branch taken by lanes < cluster size only. mapa
                          computes an address; the emulator returns it (rank b in bits 31..24), and any access
                          through it faults (rank outside the cluster).
  clc_failed_ctaid warn   clusterlaunchcontrol.query_cancel.get_first_ctaid of a failed response (PTX ISA 9.7.13: the
                          value is undefined). The CuTe DSL 4.8.1 CLC tile scheduler (NVIDIA's fp16_gemm_3_1) queries
                          it unconditionally and uses it only when is_canceled; the emulator returns 0xFFFFFFFF.
  mbarrier_init_lanes warn several lanes of one warp execute one mbarrier.init on the same barrier with the same
                          count (PTX ISA 9.7.13.15.9: init of a location holding a valid mbarrier is undefined). The
                          CuTe DSL's pipelines before 4.6.0 (``MbarrierArray.mbarrier_init``: warp 0, no elect_one)
                          do it for every barrier of every kernel; the emulator initialises the barrier once.

Switches: ``EmuDevice(strict="all" | True | "rule,rule" | ())`` or ``PTXLAB_EMU_STRICT`` (same syntax; the device argument
wins), and ``dev.strict_rules(...)`` (a context manager, used by ptxlab.lab, whose stages teach the PTX text).
A warning is an :class:`EmuFidelityWarning` (Python ``warnings``): the first site of a rule in a launch in full,
then one summary naming the PTX line of every other site; ``dev.last_stats["fidelity_warnings"]`` has the full text
of each site (once per kernel, rule and PTX line).
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from typing import Iterable, Optional, Union

from ...errors import EmuError, UsageError
from .sitewarn import EmuWarning, emu_warn

RULES = {
    "tcgen05_wait_ld": "tcgen05.ld destination read before tcgen05.wait::ld",
    "wgmma_wait": "wgmma.mma_async accumulator read before the wgmma.wait_group that covers it",
    "proxy_fence": "generic SMEM stores read by the async proxy without fence.proxy.async",
    "barrier_exit": "a CTA barrier completed without threads that exited before reaching it (synccheck.py)",
    "barrier_divergence": "whole warps of a CTA completed one barrier at different .aligned bar.sync instructions",
    "barrier_count": "a barrier with a thread count completed with more arrivals than its count",
    "mapa_rank": "mapa with a target CTA rank outside the cluster",
    "clc_failed_ctaid": "clusterlaunchcontrol.query_cancel.get_first_ctaid of a failed try_cancel response",
    "mbarrier_init_lanes": "lanes of one warp initialise the same mbarrier alike in one mbarrier.init",
}
HARDWARE = {
    "wgmma_wait": "sm_90a SASS: ptxas puts WARPGROUP.DEPBAR.LE before the first use of every wgmma accumulator "
                  "register, with or without wgmma.wait_group, so the value read is the MMA result "
                  "(tests/emu/ops/test_emu_wgmma.py)",
    "tcgen05_wait_ld": "sm_100a SASS: ptxas guards every LDTM destination register with a scoreboard wait before "
                       "its first use, with or without tcgen05.wait::ld, so the loaded value is read (ptx_docs/"
                       "tcgen05.md)",
    "proxy_fence": "an H100 showed no stale data for unfenced generic->cp.async.bulk reads (NOTES.md); tcgen05 readers "
                   "are unmeasured",
    "barrier_exit": "sm_70+ hardware completes bar.sync with the non-exited threads (CUDA Programming Guide, "
                    "independent thread scheduling; H100 probe tools/probes/barrier_divergence_probe.py; "
                    "ptx_docs/emulator_checks.md)",
    "barrier_divergence": "an H100 completes the barrier and orders both sides' shared-memory accesses "
                          "(tools/probes/barrier_divergence_probe.py, ptx_docs/emulator_checks.md); compute-sanitizer "
                          "synccheck reports it",
    "barrier_count": "an H100 completes one such barrier, but a loop of two hung (tools/probes/"
                     "barrier_divergence_probe.py, ptx_docs/emulator_checks.md)",
    "mapa_rank": "NVIDIA's compiler (CuTe DSL 4.8.1, NVIDIA's fp16_gemm_3_1 tutorial) emits mapa with lane-dependent "
                 "ranks beyond the cluster whose results only in-range lanes use; mapa is an address computation "
                 "(not measured on hardware; ptx_docs/clusters.md)",
    "clc_failed_ctaid": "the PTX text makes the value undefined, not the instruction; NVIDIA's CuTe DSL CLC tile "
                        "scheduler reads it unconditionally and uses it only for canceled responses",
    "mbarrier_init_lanes": "the CuTe DSL's pipelines before 4.6.0 initialise every mbarrier from all 32 lanes of warp 0 "
                           "(MbarrierArray.mbarrier_init, no elect_one), and the kernels built with them ran on GPUs; "
                           "every lane writes the same initial state (not measured here; ptx_docs/fidelity.md)",
}
# what the emulator does by default (not strict) after the warning
DEFAULT_ACTION = {
    "wgmma_wait": "continues with the MMA result",
    "tcgen05_wait_ld": "continues with the loaded value",
    "proxy_fence": "continues with the data the generic stores wrote",
    "barrier_exit": "completes the barrier with the non-exited threads",
    "barrier_divergence": "completes the barrier",
    "barrier_count": "releases every arrival",
    "mapa_rank": "returns the address with that rank (an access through it faults)",
    "clc_failed_ctaid": "returns 0xFFFFFFFF",
    "mbarrier_init_lanes": "initialises the barrier once",
}

# asynchronous register writers and the rule that guards reading their registers early (engine/machine.py)
PENDING_RULES = {
    "tcgen05.ld": ("tcgen05_wait_ld", "rule: registers written by tcgen05.ld are valid only after tcgen05.wait::ld "
                                      "(PTX ISA 9.7.16.8.5); add 'tcgen05.wait::ld.sync.aligned;' before using them"),
    "wgmma": ("wgmma_wait", "rule: the accumulator registers of wgmma.mma_async are undefined until a "
                            "wgmma.wait_group covers its commit group (PTX ISA 9.7.15.5.2, 9.7.15.7.3); add "
                            "'wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;' before using them"),
}

__all__ = ["RULES", "EmuFidelityWarning", "parse_strict", "is_strict", "strict_of", "violation", "strict_rules"]


class EmuFidelityWarning(EmuWarning):
    """A PTX rule broken in a way hardware is known to tolerate (see ptxlab.emu.checks.fidelity)."""


def parse_strict(spec: Union[None, str, Iterable[str]]) -> frozenset:
    """Rule names from ``"all"``, ``"a,b"``, an iterable, a bool, or None (= PTXLAB_EMU_STRICT, default none).
    ``True`` / ``"1"`` / ``"true"`` mean every rule, ``False`` / ``"0"`` / ``"false"`` none."""
    if spec is None:
        spec = os.environ.get("PTXLAB_EMU_STRICT", "")
    if isinstance(spec, bool):
        return frozenset(RULES) if spec else frozenset()
    if isinstance(spec, str) and spec.strip().lower() in ("1", "true", "yes", "on"):
        return frozenset(RULES)
    if isinstance(spec, str) and spec.strip().lower() in ("0", "false", "no", "off"):
        return frozenset()
    if isinstance(spec, str):
        items = [s.strip() for s in spec.split(",") if s.strip()]
    else:
        items = [str(s).strip() for s in spec]
    if "all" in items:
        return frozenset(RULES)
    bad = [s for s in items if s not in RULES]
    if bad:
        raise UsageError(f"strict rule(s) {bad} unknown; use 'all' or some of {sorted(RULES)} "
                         "(EmuDevice(strict=...) / PTXLAB_EMU_STRICT; ptxlab/emu/checks/fidelity.py)")
    return frozenset(items)


def strict_of(device, rule: str) -> bool:
    """True when ``rule`` is strict for the device (``EmuDevice(strict=...)``, else PTXLAB_EMU_STRICT)."""
    rules = getattr(device, "strict", None)
    return rule in (parse_strict(None) if rules is None else rules)


def is_strict(st, rule: str) -> bool:
    dev = getattr(st, "device", None)
    rules = getattr(dev, "strict", None)
    if rules is None:
        rules = parse_strict(None)
    return rule in rules


def violation(st, ins, threads, rule: str, msg: str, detail: str = "") -> bool:
    """Report a broken ``rule`` at ``ins``: raise (strict) or warn once per site and launch. Returns True when it
    only warned (the caller then continues as hardware does)."""
    if is_strict(st, rule):
        st.fault(ins, threads, msg, detail + f"\n  strict rule '{rule}' (PTXLAB_EMU_STRICT / EmuDevice(strict=...)); "
                 f"what hardware is known to do: {HARDWARE[rule]}; strict mode stops here (by default the emulator "
                 f"warns and {DEFAULT_ACTION[rule]})")
    dev = getattr(st, "device", None)
    log = getattr(dev, "fidelity_log", None)
    key = (st.kernel, rule, getattr(ins, "line", None))
    seen = st.side.setdefault("fidelity_seen", set()) if log is None else None
    if log is not None:
        if any(k == key for k, _ in log):
            return True
    elif key in seen:
        return True
    else:
        seen.add(key)
    try:
        st.fault(ins, threads, f"[{rule}] {msg}", detail)
    except EmuError as exc:
        ann = getattr(dev, "_annotate_text", None)
        if ann is not None and exc.src_loc is None and exc.ptx_line is not None:   # the CUDA line (lineinfo.py)
            m = re.search(r"\[([^\[\]]+:\d+)\]$", ann(f"PTX line {exc.ptx_line}"))
            exc.src_loc = m.group(1) if m else None
        text = (f"{exc.report(label='')}\n  not an error by default: {HARDWARE[rule]}; the emulator "
                f"{DEFAULT_ACTION[rule]}. PTXLAB_EMU_STRICT={rule} (or EmuDevice(strict='{rule}')) makes it one "
                "(ptxlab/emu/checks/fidelity.py)")
    first = log is None or not any(k[:2] == key[:2] for k, _ in log)
    if log is not None:
        log.append((key, text))
    if first:   # the other sites of this rule in this launch: one summary warning at the end (summarize)
        emu_warn(text, dev, key=("fidelity",) + key, category=EmuFidelityWarning)
    return True


def summarize(log: list, device=None) -> None:
    """After a launch: one warning per (kernel, rule) that broke at more than one site, listing the PTX lines."""
    sites: dict = {}
    for (kernel, rule, line), _ in log:
        sites.setdefault((kernel, rule), []).append(line)
    for (kernel, rule), lines in sites.items():
        if len(lines) > 1:
            shown = ", ".join(str(x) for x in lines[:40]) + (f", ... ({len(lines) - 40} more)" if len(lines) > 40 else "")
            emu_warn(f"[{rule}] {RULES[rule]}: {len(lines)} sites in kernel {kernel[:80]} (the first was "
                     f"reported in full): PTX lines {shown}; dev.last_stats['fidelity_warnings'] has each site",
                     device, category=EmuFidelityWarning)


@contextmanager
def strict_rules(dev, spec: Union[str, Iterable[str]] = "all"):
    """Temporarily make ``spec``'s rules strict on emulator device ``dev`` (no-op for devices without rules)."""
    if not hasattr(dev, "strict"):
        yield dev
        return
    old = dev.strict
    dev.strict = (old if old is not None else parse_strict(None)) | parse_strict(spec)
    try:
        yield dev
    finally:
        dev.strict = old


def rules_of(spec: Optional[Union[str, Iterable[str]]]) -> Optional[frozenset]:
    """EmuDevice's stored form: None (follow PTXLAB_EMU_STRICT at each launch) or a frozenset."""
    return None if spec is None else parse_strict(spec)
