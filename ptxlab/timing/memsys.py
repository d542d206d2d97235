"""The memory hierarchy a warp's global access meets: the SM's L1, then the GPU-wide L2 and DRAM.

**L1** (``L1Cache``): one per simulated SM, fed in the emulator's order (which keeps a CTA's warps close together
in program order, as the hardware's schedulers do).  Sector-granular LRU: a sector is resident while fewer than
``capacity`` other sectors were filled since its last use.  Capacity: the SM's 256 KB of L1 + shared memory minus
the shared-memory carveout the driver picks for the kernel (the smallest supported carveout that holds the resident
CTAs' shared memory; CUDA C++ Programming Guide, "Shared Memory" of cc 9.0: 0, 8, 16, 32, 64, 100, 132, 164, 196,
228 KB).  ``ld.global`` (``.ca``) and ``ld.global.nc`` allocate in L1; ``.cg`` / ``.cv`` and TMA bypass it; stores
write through to L2 (PTX ISA 9.7.9.8 cache operators).

**L2 or DRAM** (``GridFootprint``): decided by the whole grid's footprint, not by one SM's first touch.  From the
emulated CTAs (the busiest SM's, plus one "probe" CTA one step along each grid dimension, emulated for its addresses
only) the footprint of each *access stream* (the sectors one PTX load instruction reads: one array, typically) is
fitted as a translation in blockIdx: CTA b touches S0 + sum_d b_d * t_d
(t_d: the shift between the sets of CTA 0 and the probe of dimension d, accepted when it maps 90 % of one onto the
other; the fit is checked on every other emulated CTA and the check is reported).  A stream whose set does not
move along dimension d (t_d = 0) is shared by the CTAs along d: a sector one of them fetched from DRAM is an L2 hit
for the others if they read it while it is still in L2: their CTA ids differ by the stride of d (1, gridDim.x,
gridDim.x * gridDim.y), so they run concurrently when the stride is below the CTAs resident on the GPU, and
otherwise the sector survives if the unique bytes the CTAs in between bring (stride x bytes per CTA) fit in the L2.
A CTA's first read of a sector through stream a is then a DRAM read with probability p_a = 1 / (the CTAs sharing it
through L2); its re-reads of its own sectors are L2 hits unless the resident CTAs' footprint exceeds the L2 (then a
fraction).  A stream whose footprint is not a translation (gathers, data-dependent indices) keeps p_a = 1, except
that **no stream reads more from DRAM than its compulsory bytes** (``compulsory_cap``): the grid's first touches of
stream a number R_a (the sampled CTAs' count scaled to the grid), the buffers it reads hold U_a sectors, so at most
U_a of them miss L2 if the launch's footprint fits in L2, and a repeat misses with probability 1 - L2 / footprint
otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

CARVEOUTS_KB = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
WRITE_BACK_L2 = 0.25     # share of the L2 an output may occupy and stay there (H100 ncu, see infer)


def l1_bytes(p, ctas_per_sm: int, smem_per_cta: int) -> int:
    """L1 capacity of an SM running ``ctas_per_sm`` CTAs of ``smem_per_cta`` bytes of shared memory."""
    need = ctas_per_sm * (smem_per_cta + p.smem_per_cta_reserved) if smem_per_cta else 0
    carve = next((k * 1024 for k in CARVEOUTS_KB if k * 1024 >= need), CARVEOUTS_KB[-1] * 1024)
    return max(p.l1_sm_bytes - carve, 16 * 1024)


class L1Cache:
    """Sector-granular LRU (module docstring) over heap sector indices."""

    def __init__(self, capacity_bytes: int):
        self.cap = max(1, capacity_bytes // 32)
        self.fill = 0                                  # sectors filled so far
        self.at = np.zeros(1 << 16, np.int64)          # per sector: the fill count after its last use, + 1

    def access(self, sec: np.ndarray, allocate: bool = True) -> np.ndarray:
        """Hit mask for unique sector indices ``sec``; misses are filled (when ``allocate``)."""
        if sec.size == 0:
            return np.zeros(0, bool)
        top = int(sec.max()) + 1
        if top > self.at.size:
            self.at = np.concatenate([self.at, np.zeros(max(top - self.at.size, self.at.size), np.int64)])
        last = self.at[sec]
        hit = (last > 0) & (self.fill - (last - 1) < self.cap)
        if allocate:
            nmiss = int((~hit).sum())
            self.fill += nmiss
            self.at[sec] = self.fill + 1
        return hit


class GlobalAccess(tuple):
    """Event data of one warp's global load (trace.py): sectors it touched (L1 / LSU traffic), those that missed
    L1 (L2 traffic), of which first touches by its CTA (DRAM with probability p of its stream), the stream (the
    PTX pc of the load) and the 128-byte lines it touched (the L1 looks
    up one line per clock: an uncoalesced access of 32 lines takes 32 clocks, H100 ncu of the naive SGEMM)."""
    __slots__ = ()

    def __new__(cls, sectors: int, misses: int, first: int, stream: int, lines: int = 0):
        return tuple.__new__(cls, (sectors, misses, first, stream, lines or -(-sectors // 4)))

    sectors = property(lambda s: s[0])
    misses = property(lambda s: s[1])
    first = property(lambda s: s[2])
    stream = property(lambda s: s[3])
    lines = property(lambda s: s[4])

    def merged(self, other: "GlobalAccess") -> "GlobalAccess":
        """One wide SASS load made of several PTX loads (sass_join): the same sectors, the misses of all."""
        return GlobalAccess(max(self[0], other[0]), self[1] + other[1], self[2] + other[2], self[3],
                            max(self[4], other[4]))


@dataclass
class GridFootprint:
    """The grid-wide DRAM probabilities of a launch (module docstring)."""
    p: Dict[int, float] = field(default_factory=dict)     # stream (PTX pc) -> DRAM probability of a first read
    p_own: float = 0.0                                     # DRAM probability of a CTA's re-read of its own sector
    p_write: float = 1.0                                   # share of stored bytes written back to DRAM in the kernel
    note: str = ""
    shared: Dict[int, str] = field(default_factory=dict)  # stream -> "x,y" dims it is shared along

    def p_of(self, stream: int) -> float:
        return self.p.get(stream, 1.0)


def _shift(s0: np.ndarray, s1: np.ndarray) -> Optional[int]:
    """The translation t with s0 + t ~ s1 (90 % of the larger set), or None."""
    if s0.size == 0 or s1.size == 0:
        return None
    if s0.size == s1.size:
        d = s1 - s0
        vals, counts = np.unique(d, return_counts=True)
        t = int(vals[np.argmax(counts)])
    else:
        t = int(s1[0] - s0[0])
    if np.intersect1d(s0 + t, s1, assume_unique=True).size >= 0.9 * max(s0.size, s1.size):
        return t
    return None


def stream_extents(sets: Dict[int, Dict[int, np.ndarray]], heap) -> Dict[int, Dict[int, int]]:
    """{stream: {allocation start sector: its size in sectors}}: the allocations (cudaMalloc buffers) each stream's
    sectors lie in, over every emulated CTA.  A grid can never fetch more unique sectors of a stream from DRAM than
    those buffers hold: the compulsory bytes (``infer``'s cap)."""
    out: Dict[int, Dict[int, int]] = {}
    if heap is None or not hasattr(heap, "find"):
        return out
    for per in sets.values():
        for a, sec in per.items():
            if not sec.size:
                continue
            got = out.setdefault(a, {})
            for s in (int(sec[0]), int(sec[-1])):
                al = heap.find(s * 32)
                if al is not None:
                    got[al.start // 32] = -(-al.size // 32)
    return out


def compulsory_cap(u: float, reads: float, u_all: float, l2_sectors: float) -> float:
    """DRAM probability bound of a stream whose grid reads ``reads`` sectors (first touches that reach L2) of ``u``
    unique ones, the launch's streams together spanning ``u_all`` sectors: each unique sector is fetched once; a
    repeat read is an L2 hit while the footprint fits, and otherwise with the probability that L2 still holds it,
    L2 / footprint (uniform reuse over the footprint: 'L2 reach')."""
    if reads <= 0 or u <= 0:
        return 1.0
    once = min(1.0, u / reads)
    keep = min(1.0, l2_sectors / max(u_all, 1.0))
    return min(1.0, once + (1.0 - once) * (1.0 - keep))


def infer(sets: Dict[int, Dict[int, np.ndarray]], block_of: Dict[int, tuple], grid: tuple, busy_sms: int,
          ctas_per_sm: int, l2_bytes: int, store_bytes: float = 0.0, firsts: Optional[Dict[int, int]] = None,
          nsampled: int = 1, extents: Optional[Dict[int, Dict[int, int]]] = None,
          total_ctas: int = 0, store_unique: Optional[float] = None) -> GridFootprint:
    """GridFootprint from per-CTA sector sets {cta: {stream: sorted unique sectors}} of the emulated CTAs
    (``block_of``: cta -> blockIdx).  ``store_bytes``: bytes the grid stores (from the emulated CTAs' mean).  L2 is
    write-back: an output that fits in the part of L2 that keeps dirty lines (WRITE_BACK_L2) stays there and the
    next launch overwrites it, one larger is written to DRAM (in steady state of back-to-back launches, all of it:
    the next launch's first lines evict the last one's).  H100 ncu of single launches: a 2.1 MB output reaches
    DRAM not at all, 51 of a 64 MB one during the kernel (13 MB still dirty at its end: a quarter of the L2).  ``firsts``: per stream, the first
    touches of the ``nsampled`` simulated CTAs that missed their SM's L1; p_a = the grid's unique sectors of stream
    a / the grid's such reads (CTAs of one SM sharing through L1 make fewer L2 reads than sharers)."""
    fp = GridFootprint()
    fp.p_write = 1.0 if store_bytes > WRITE_BACK_L2 * l2_bytes else 0.0
    if store_unique is not None and store_bytes > 0:
        # write-back L2: partial writes of one sector merge; only the unique sectors (the output) are written back,
        # again only as far as the dirty lines exceed the share of L2 that keeps them (compulsory_cap)
        fp.p_write = 0.0 if store_unique <= WRITE_BACK_L2 * l2_bytes else \
            compulsory_cap(store_unique / 32, store_bytes / 32, store_unique / 32, WRITE_BACK_L2 * l2_bytes / 32)
    origin = next((c for c, b in block_of.items() if b == (0, 0, 0)), None)
    if origin is None or origin not in sets:
        fp.note = "grid footprint: CTA 0 not emulated; first touch = DRAM"
        return fp
    dims = [d for d in range(3) if grid[d] > 1]
    probe = {}
    for d in dims:
        e = tuple(1 if k == d else 0 for k in range(3))
        c = next((c for c, b in block_of.items() if b == e), None)
        if c is not None and c in sets:
            probe[d] = c
    stride = {0: 1, 1: grid[0], 2: grid[0] * grid[1]}
    resident = max(1, busy_sms * ctas_per_sm)
    s0 = sets[origin]
    shifts: Dict[int, Dict[int, Optional[int]]] = {}
    for a, base in s0.items():
        shifts[a] = {d: (_shift(base, sets[probe[d]].get(a, np.zeros(0, np.int64))) if d in probe else None)
                     for d in dims}
    # check the translation on every other emulated CTA
    checked = good = 0
    for c, b in block_of.items():
        if c in (origin, *probe.values()) or c not in sets:
            continue
        for a, base in s0.items():
            if any(shifts[a][d] is None for d in dims if b[d]):
                continue
            pred = base + sum(b[d] * shifts[a][d] for d in dims if b[d])
            act = sets[c].get(a, np.zeros(0, np.int64))
            checked += 1
            if act.size and np.intersect1d(pred, act, assume_unique=True).size >= 0.9 * max(pred.size, act.size):
                good += 1
    # bytes one CTA brings in that no CTA before it (in the L2's reach) did: per stream its set / sharers
    cta_bytes = 0.0
    for a, base in s0.items():
        k = 1
        for d in dims:
            if shifts[a][d] == 0:
                k *= grid[d]
        cta_bytes += base.size * 32 / k
    groups: Dict[str, list] = {}
    for a, base in s0.items():
        sh = shifts[a]
        if any(sh[d] is None for d in dims) or (checked and good < 0.9 * checked):
            fp.p[a] = 1.0
            groups.setdefault("not a translation (first touch = DRAM)", []).append(base.size)
            continue
        k = 1
        along = []
        for d in dims:
            if sh[d] != 0:
                continue
            if stride[d] < resident or stride[d] * cta_bytes < l2_bytes:
                k *= grid[d]
                along.append("xyz"[d])
            else:
                along.append("xyz"[d] + " (evicted before reuse)")
        fp.p[a] = 1.0 / k
        if firsts and firsts.get(a):
            fp.p[a] = min(1.0, base.size * nsampled / (k * firsts[a]))
        fp.shared[a] = ",".join(along)
        groups.setdefault(f"shared along {','.join(along)}: p(DRAM) {fp.p[a]:.3g}" if along else
                          "private to each CTA: p(DRAM) 1", []).append(base.size)
    # the compulsory cap (round 2 item 2): whatever the fit says, a stream's DRAM reads are bounded by the unique
    # sectors of the buffers it reads, re-fetched only as far as the footprint exceeds L2 (compulsory_cap).  Decides
    # the streams that are not a translation (1-D-indexed transposes: 608 MB modelled vs 67 MB measured)
    capped = []
    if extents and firsts and total_ctas:
        bufs: Dict[int, int] = {}
        for e in extents.values():
            bufs.update(e)
        u_all = float(sum(bufs.values()))
        for a in list(fp.p):
            u = float(sum(extents.get(a, {}).values()))
            reads = firsts.get(a, 0) / max(1, nsampled) * total_ctas
            cap = compulsory_cap(u, reads, u_all, l2_bytes / 32)
            if cap < fp.p[a]:
                fp.p[a] = cap
                capped.append(a)
    foot = cta_bytes * resident
    fp.p_own = 0.0 if foot <= l2_bytes else 1.0 - l2_bytes / foot
    chk = f"translation checked on {good}/{checked} emulated CTA x stream pairs" if checked else \
        "translation not checked (no further CTA emulated)"
    parts = [f"{len(v)} stream(s), {sum(v) * 32 / 1024:.0f} KB/CTA, {k}" for k, v in groups.items()]
    fp.note = (f"grid footprint: {chk}; resident CTAs' footprint {foot / 2**20:.1f} MB vs L2 "
               f"{l2_bytes / 2**20:.0f} MB; " + "; ".join(parts) +
               f"; stores {store_bytes / 2**20:.1f} MB, {100 * fp.p_write:.0f} % written back to DRAM")
    if capped:
        fp.note += (f"; {len(capped)} stream(s) capped at the compulsory bytes of their buffers (p(DRAM) "
                    + ", ".join(f"{fp.p[a]:.3g}" for a in capped) + ")")
    return fp


def probe_ctas(grid: tuple, have: List[int]) -> List[int]:
    """CTA ids one step along each grid dimension of more than one CTA, not already in ``have``."""
    out = []
    for d in range(3):
        if grid[d] > 1:
            cid = (1, grid[0], grid[0] * grid[1])[d]
            if cid not in have and cid not in out:
                out.append(cid)
    if 0 not in have:
        out.insert(0, 0)
    return out
