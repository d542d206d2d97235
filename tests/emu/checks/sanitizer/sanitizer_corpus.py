"""The sanitizer-parity corpus: classic kernel bugs (and correct controls) with what each tool is expected to report.

Each :class:`Entry` names a kernel of ``kernels_sm90.cu`` (runs on an H100 under compute-sanitizer and on the
emulator) or ``kernels_sm100.cu`` (Blackwell, emulator only), how to launch it, what the emulator must report with
its default settings (``emu``: ``("error", regex)`` for an :class:`~ptxlab.errors.EmuError`, ``("warning", regex)``
for an entry of ``dev.emu_warnings``, ``("clean", None)``), and which compute-sanitizer tool is expected to report it
(``cs``: ``memcheck`` / ``racecheck`` / ``initcheck`` / ``synccheck``, ``"none"`` when no tool checks it, ``""`` for
emulator-only entries). The measured compute-sanitizer results (tools/audit/sanitizer_parity.py on the H100) and the
emulator's form the table in ptx_docs/emulator_checks.md "Sanitizer parity".

Used by tests/emu/checks/test_sanitizer_corpus.py (emulator, CI) and tools/audit/sanitizer_parity.py (both sides).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
WORDS = 1024


@dataclass(frozen=True)
class Entry:
    name: str                    # kernel name (extern "C")
    bug: str                     # the class, for the table
    emu: Tuple[str, Optional[str]]
    cs: str                      # compute-sanitizer tool expected to report it ("none": no tool; "": not run)
    arch: str = "sm_90a"
    grid: int = 1
    block: int = 128
    smem: int = 0
    inputs: str = "written"      # written | empty | half
    null_out: bool = False
    emu_options: Dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> Path:
        return HERE / ("kernels_sm100.cu" if self.arch == "sm_100a" else "kernels_sm90.cu")


E = Entry
RACE = r"racecheck: {} hazard \({}\) on shared memory"
ENTRIES: Tuple[Entry, ...] = (
    E("race_raw_no_barrier", "shared race, no barrier (RAW)", ("error", RACE.format("read-after-write", "RAW")),
      "racecheck"),
    E("race_war_loop", "shared race, missing 2nd __syncthreads in a loop (WAR)",
      ("error", RACE.format("write-after-read", "WAR")), "racecheck"),
    E("race_waw", "shared race, two warps store one word (WAW)", ("error", RACE.format("write-after-write", "WAW")),
      "racecheck"),
    E("race_barrier_misplaced", "shared race, barrier before the store", ("error", RACE.format("read-after-write",
                                                                                                "RAW")), "racecheck"),
    E("race_fence_not_barrier", "shared race, a fence instead of a barrier",
      ("error", RACE.format("read-after-write", "RAW")), "racecheck"),
    E("race_syncwarp_cross_warp", "shared race, __syncwarp across warps",
      ("error", RACE.format("read-after-write", "RAW")), "racecheck"),
    E("race_intra_warp", "shared race inside a warp, no __syncwarp",
      ("error", RACE.format("read-after-write", "RAW")), "racecheck"),
    E("race_plain_flag", "shared race, data + plain flag, no synchronization",
      ("error", RACE.format("read-after-write", "RAW")), "racecheck"),
    E("ok_barrier", "control: __syncthreads between", ("clean", None), "none"),
    E("ok_syncwarp", "control: __syncwarp inside a warp", ("clean", None), "none"),
    E("ok_mbarrier_handoff", "control: mbarrier arrive / wait hand-off", ("clean", None), "none"),
    E("ok_loop_two_barriers", "control: tiled loop with both barriers", ("clean", None), "none"),
    E("race_global_waw", "global race, two blocks store one word", ("clean", None), "none", grid=2),
    E("race_global_raw", "global race, block 1 reads block 0's stores", ("clean", None), "none", grid=2),
    E("uninit_global", "read of never-written global memory (cudaMalloc)",
      ("error", r"initcheck: read of never-written global memory"), "initcheck", inputs="empty"),
    E("uninit_global_partial", "read of global memory the host wrote half of",
      ("error", r"initcheck: read of never-written global memory"), "initcheck", inputs="half"),
    E("uninit_shared", "read of never-written shared memory (initcheck='all')",
      ("error", r"initcheck: read of never-written shared memory"), "none", emu_options={"initcheck": "all"}),
    E("oob_global_read", "out-of-bounds global load", ("error", r"out-of-bounds global load"), "memcheck"),
    E("oob_global_write", "out-of-bounds global store", ("error", r"out-of-bounds global store"), "memcheck"),
    E("oob_shared", "out-of-bounds dynamic shared store", ("error", r"out-of-bounds shared store"), "memcheck",
      smem=512),
    E("null_global_write", "store through a null pointer",
      ("error", r"outside every state space|out-of-bounds global store"), "memcheck", null_out=True),
    E("misaligned_global", "misaligned global load", ("error", r"misaligned 4-byte load"), "memcheck"),
    E("misaligned_shared", "misaligned shared load", ("error", r"misaligned 4-byte load"), "memcheck"),
    E("barrier_divergent_warps", "warps at different __syncthreads()",
      ("warning", r"synccheck: divergent barrier"), "synccheck"),
    E("barrier_divergent_lanes", "lanes of one warp at different __syncthreads()",
      ("error", r"(?s)lanes of warp|deadlock|divergen"), "synccheck"),
    E("syncwarp_bad_mask", "__syncwarp mask leaves out executing lanes",
      ("error", r"(?s)membermask|mask"), "synccheck"),
    E("mbar_missing_arrive", "mbarrier waits for arrivals that never come",
      ("error", r"deadlock"), "none"),
    E("mbar_uninitialized", "arrive on an uninitialized mbarrier", ("error", r"(?i)not initiali[sz]ed|uninitiali"),
      "none"),
    E("mbar_tx_mismatch", "expect_tx bytes larger than the copy brings", ("error", r"deadlock"), "none"),
    E("tmem_leak", "TMEM not freed at exit", ("error", r"\[tmem:leak\]"), "", arch="sm_100a"),
    E("tmem_ld_without_wait", "tcgen05.ld registers used before wait::ld", ("warning", r"\[tcgen05_wait_ld\]"), "",
      arch="sm_100a"),
    E("tmem_wrong_quarter", "tcgen05.st outside the warp's lane quarter", ("error", r"\[tmem:warp-quarter\]"), "",
      arch="sm_100a"),
    E("tmem_alloc_bad_ncols", "tcgen05.alloc of 48 columns", ("error", r"\[tmem:ncols\]"), "", arch="sm_100a"),
    E("tmem_read_other_quarter", "tcgen05.ld of another warp's lane quarter", ("error", r"\[tmem:warp-quarter\]"), "",
      arch="sm_100a"),
    E("tmem_dealloc_mismatch", "tcgen05.dealloc column count differs", ("error", r"\[tmem:dealloc-mismatch\]"), "",
      arch="sm_100a"),
)
BY_NAME = {e.name: e for e in ENTRIES}


def compile_entry(e: Entry, hw_bounded: bool = False, lineinfo: bool = False):
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR

    opts = (["-DHW_BOUNDED"] if hw_bounded else []) + (["-lineinfo"] if lineinfo else [])
    return ptxlab.compile(e.source.read_text(), arch=e.arch, name=e.source.name, options=opts,
                          include_dirs=[KERNELS_DIR])


def launch(dev, mod, e: Entry, rng: np.random.Generator):
    """Set up the entry's buffers on ``dev`` and launch it; returns the out buffer (None for null_out)."""
    data = rng.integers(1, 2**31, WORDS, dtype=np.uint32)
    if e.inputs == "written":
        inp = dev.to_device(data)
    else:
        inp = dev.empty(4 * WORDS)
        if e.inputs == "half":
            dev.write(inp, data[:64])
    out = None if e.null_out else dev.to_device(rng.integers(1, 2**31, WORDS, dtype=np.uint32))
    dev.launch(mod, e.name, grid=e.grid, block=e.block, shared_bytes=e.smem,
               args=[np.uint64(0) if out is None else out, inp])
    return out
