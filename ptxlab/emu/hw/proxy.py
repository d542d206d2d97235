"""Generic-proxy → async-proxy ordering check for shared memory (PTX ISA 8.6 proxies, 9.7.13.4 fence.proxy.async).

On hardware, SMEM written by the *generic proxy* (st.shared / st via a generic address, atom/red on shared, non-bulk
cp.async — "treated as a weak memory operation performed in the generic proxy", PTX ISA 9.7.9.25.3.1) is not
guaranteed visible to the *async proxy* (TMA stores cp.async.bulk.tensor .global.shared::cta, cp.async.bulk
shared::cta → global, tcgen05.cp sources, tcgen05.mma A/B operands read through SMEM descriptors) unless a
``fence.proxy.async`` orders the two.  The emulator keeps one coherent memory image, so without this module a missing
fence runs fine here and races on the GPU (anchors: "missing fence.proxy.async after generic SMEM stores read by
tcgen05/TMA").

Model (one shadow word per SMEM byte of every CTA of the wave, allocated only for kernels that contain an async-proxy
SMEM reader; PTXLAB_EMU_PROXYCHECK=0 turns it off):

* 0 = clean.  A generic store makes its bytes dirty: ``(pub << 11) | (writer local tid + 1)`` with ``pub = 0``.
* A CTA barrier release (bar/barrier .sync/.arrive/.red, any id) bumps the CTA's release counter G; the dirty,
  unpublished bytes whose writer *arrived* at that barrier get ``pub = G`` and every thread that *waited* there gets
  ``passed[t] = G``.
* ``fence.proxy.async`` (no space, ``.shared::cta``, ``.shared::cluster``) executed by thread T cleans the bytes T
  wrote itself, and — the permissive, cumulative reading — every byte published at a release ``pub <= passed[T]``
  (written by a barrier participant before a barrier that T has since completed).  ``.global`` cleans nothing here.
* ``bar.warp.sync`` (``__syncwarp``) orders memory among its member lanes (PTX ISA 9.7.13.2): each (warp, membermask)
  group that completes it is a release scoped to its lanes -- their unpublished bytes get a fresh ``pub`` (a new G)
  and the lanes pass it.  Lanes outside the mask neither publish nor pass.
* Arrivals are kept per barrier id (one bit per id per thread): bar.arrive on A and then on B before A is released
  is published at A's release.
* Async-proxy *writes* into SMEM (TMA / bulk loads) make their bytes clean: generic readers are ordered after them by
  the mbarrier complete_tx, not by a proxy fence.
* An async-proxy read of a dirty byte raises an EmuError at the issuing instruction.

Not modelled: ordering through mbarrier arrive/wait (a fence in the *writing* threads is what CUTLASS does and is
always accepted); the named-barrier / warp-sync participant sets are not intersected (a byte published at an earlier
release, CTA barrier or __syncwarp, is cleaned by a fence after any later release T passed, even another warp's
__syncwarp); a generic store followed by an async-proxy *write* (TMA / bulk load) to the same bytes without a fence
-- a write-after-write race across proxies -- is not flagged (the load just cleans the bytes).  A .cp_mask bulk copy
is checked on the bytes its mask selects only.  See ptx_docs/tma.md "Proxy fences".
"""
from __future__ import annotations


import numpy as np

from ... import settings as _settings
from ..checks import fidelity as _fidelity

_WBITS = 11                      # writer local tid + 1 (1..1024) in the low bits
_WMASK = (1 << _WBITS) - 1
ENABLED = _settings.get("PTXLAB_EMU_PROXYCHECK", fallback=True) != "0"
FORCE = _settings.get("PTXLAB_EMU_PROXYCHECK", fallback=True) == "force"   # shadow every kernel (overhead runs)
_READERS = ("tcgen05.cp", "tcgen05.mma", "cp.reduce.async.bulk")   # always read SMEM through the async proxy
_SPACES = ("global", "shared::cta", "shared::cluster", "shared")


def _reads_smem_async(ins) -> bool:
    """True for an instruction whose async proxy reads SMEM: tcgen05.cp / tcgen05.mma, cp.reduce.async.bulk*, and a
    cp.async.bulk{.tensor} whose *source* (second state space: dst, src) is shared -- not the TMA / bulk loads
    (.shared::cluster.global), prefetches or commit/wait groups, so a kernel that only loads is not shadowed."""
    name = ".".join((ins.opcode,) + tuple(ins.mods))
    if name.startswith(_READERS):
        return True
    if not name.startswith("cp.async.bulk"):
        return False
    spaces = [m_ for m_ in ins.mods if m_ in _SPACES]
    return len(spaces) >= 2 and spaces[1].startswith("shared")


def program_has_async_smem_readers(prog) -> bool:
    """True if the kernel contains an instruction that may read SMEM through the async proxy (cached on ``prog``)."""
    if FORCE:
        return True
    v = getattr(prog, "_proxy_readers", None)
    if v is None:
        v = False
        for e in prog.code:
            ins = e.ins
            if ins is None:
                continue
            if _reads_smem_async(ins):
                v = True
                break
        prog._proxy_readers = v
    return v


class ProxyShadow:
    """Per-wave shadow of SMEM bytes written by the generic proxy (see the module docstring)."""

    def __init__(self, st):
        self.stride = st.smem_stride
        self.shadow = np.zeros(st.nctas * st.smem_stride, dtype=np.int64)
        self.unpub = np.zeros(st.nctas, bool)      # CTA has dirty bytes with pub == 0
        self.dirty = np.zeros(st.nctas, bool)      # CTA may have dirty bytes
        self.G = np.zeros(st.nctas, np.int64)      # CTA barrier releases so far
        self.passed = np.zeros(st.T, np.int64)     # last release each thread waited through
        self.arrived = np.zeros(st.T, np.int32)    # bit b: the thread arrived at barrier b, not yet released
        self.wtag = (st.local_tid + 1).astype(np.int64)
        self.lo, self.hi = self.stride, 0           # CTA-relative extent that may hold dirty bytes (any CTA)

    # ---- generic writes -----------------------------------------------------------------------------------
    def mark(self, st, sel: np.ndarray, flat: np.ndarray, nbytes: int) -> None:
        tag = self.wtag[sel]
        rel = flat % self.stride        # the owning CTA is flat // stride: a DSMEM store marks the peer's bytes
        self.lo = min(self.lo, int(rel.min()))
        self.hi = max(self.hi, int(rel.max()) + nbytes)
        if nbytes == 1:
            self.shadow[flat] = tag
        else:
            self.shadow[flat[:, None] + np.arange(nbytes)] = tag[:, None]
        ctas = np.unique(flat // self.stride) if sel.size < st.T or st.cluster is not None else slice(None)
        self.unpub[ctas] = True
        self.dirty[ctas] = True

    # ---- async writes -------------------------------------------------------------------------------------
    def clean(self, cta: int, addrs=None, lo: int = 0, hi: int = 0) -> None:
        if not self.dirty[cta]:
            return
        base = cta * self.stride
        if addrs is None:
            self.shadow[base + lo: base + hi] = 0
        else:
            self.shadow[base + np.asarray(addrs, np.int64)] = 0

    # ---- barriers -----------------------------------------------------------------------------------------
    def arrive(self, sel_mask: np.ndarray, bid: int) -> None:
        # one bit per barrier id: bar.arrive on A then on B before A is released keeps both arrivals, so the bytes
        # are published at A's release (a single slot would forget A and publish one barrier late)
        self.arrived[sel_mask] |= np.int32(1 << bid)

    def release(self, st, bid: int, done: np.ndarray, waiting: np.ndarray) -> None:
        part = (((self.arrived >> bid) & 1) != 0) & done[st.cta_of]
        self.arrived[part] &= np.int32(~(1 << bid))
        self.G[done] += 1
        self.passed[waiting] = self.G[st.cta_of[waiting]]
        for c in np.flatnonzero(done & self.unpub):
            c = int(c)
            who = np.zeros(_WMASK + 1, bool)
            who[self.wtag[part & (st.cta_of == c)]] = True
            sub = self.shadow[c * self.stride:(c + 1) * self.stride]
            unp = (sub > 0) & (sub <= _WMASK)
            pub = unp & who[sub & _WMASK]
            sub[pub] |= int(self.G[c]) << _WBITS
            self.unpub[c] = bool((unp & ~pub).any())

    def warp_sync(self, st, threads: np.ndarray, masks: np.ndarray) -> None:
        """bar.warp.sync that completed for ``threads`` (indices) with membermasks ``masks`` (PTX ISA 9.7.13.2:
        "guarantees memory ordering among threads participating in barrier").  Each (warp, membermask) group is a
        release scoped to its lanes: their unpublished bytes get a fresh ``pub`` and the lanes ``passed`` it, so a
        fence.proxy.async by any member after the sync cleans them (the same cumulative reading as CTA barriers).
        Lanes outside the mask neither publish nor pass."""
        if threads.size == 0:
            return
        ctas = st.cta_of[threads]
        keep = self.dirty[ctas]          # a CTA with no dirty byte has nothing to publish or clean later
        if not keep.any():
            return
        threads, ctas, masks = threads[keep], ctas[keep], masks[keep].astype(np.int64)
        key = ((threads // 32).astype(np.int64) << 32) | masks   # warps never span CTAs: sorted by key = by CTA
        uk, inv = np.unique(key, return_inverse=True)
        gcta = ctas[np.unique(inv, return_index=True)[1]]
        rank = np.arange(uk.size) - np.searchsorted(gcta, gcta, "left") + 1
        val = self.G[gcta] + rank                                # one fresh release number per group
        self.passed[threads] = val[inv]
        np.add.at(self.G, gcta, 1)
        for c in np.unique(ctas):
            c = int(c)
            if not self.unpub[c]:
                continue
            f = ctas == c
            newpub = np.zeros(_WMASK + 1, np.int64)
            newpub[self.wtag[threads[f]]] = val[inv[f]]
            if self.lo >= self.hi:
                continue
            sub = self.shadow[c * self.stride + self.lo:c * self.stride + self.hi]
            unp = (sub > 0) & (sub <= _WMASK)
            idx = np.flatnonzero(unp)
            pv = newpub[sub[idx]]
            sub[idx] |= pv << _WBITS
            self.unpub[c] = bool((pv == 0).any())

    # ---- fence.proxy.async --------------------------------------------------------------------------------
    def fence(self, st, m) -> None:
        sel = np.flatnonzero(st.status == 0) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return
        ctas = st.cta_of[sel]
        for c in np.unique(ctas):
            c = int(c)
            if not self.dirty[c]:
                continue
            f = sel[ctas == c]
            who = np.zeros(_WMASK + 1, bool)
            who[self.wtag[f]] = True
            maxpass = int(self.passed[f].max())
            sub = self.shadow[c * self.stride:(c + 1) * self.stride]
            nz = sub != 0
            pub = sub >> _WBITS
            clean = nz & (who[sub & _WMASK] | ((pub > 0) & (pub <= maxpass)))
            sub[clean] = 0
            left = nz & ~clean
            self.dirty[c] = bool(left.any())
            self.unpub[c] = bool((left & (pub == 0)).any())
        if not self.dirty.any():
            self.lo, self.hi = self.stride, 0

    # ---- async reads --------------------------------------------------------------------------------------
    def check_read(self, st, ins, t: int, cta: int, what: str, addrs=None, lo: int = 0, hi: int = 0) -> None:
        """Fault if any SMEM byte the async proxy reads (``addrs`` or [lo, hi)) is still dirty."""
        if not self.dirty[cta]:
            return
        base = cta * self.stride
        if addrs is None:
            if hi <= self.lo or lo >= self.hi:
                return
            hi = min(hi, self.stride)
            a = np.arange(max(lo, 0), max(hi, lo), dtype=np.int64)
            sub = self.shadow[base + a] if a.size else a
        else:
            a = np.asarray(addrs, np.int64).ravel()
            if a.size == 0 or int(a.max()) < self.lo or int(a.min()) >= self.hi:
                return
            a = a[(a >= 0) & (a < self.stride)]
            sub = self.shadow[base + a]
        bad = np.flatnonzero(sub != 0)
        if bad.size == 0:
            return
        ba = a[bad]
        first = int(ba.min())
        w = int(sub[bad][int(np.argmin(ba))])
        writer_lt = (w & _WMASK) - 1
        bx, by = st.block[0], st.block[1]
        wtid = (writer_lt % bx, (writer_lt // bx) % by, writer_lt // (bx * by))
        nw = np.unique(sub[bad] & _WMASK).size
        pub = w >> _WBITS
        how = ("after its last barrier" if pub == 0 else "before a CTA barrier, but no fence.proxy.async ran after it "
               "in the writer or in a thread that passed that barrier")
        # default: warn and read the one memory image; strict: error (fidelity.py, rule 'proxy_fence')
        _fidelity.violation(
            st, ins, t, "proxy_fence",
            f"[proxy:fence-async] SMEM bytes written by generic stores are read by the async proxy ({what}) without "
            f"fence.proxy.async",
            f"shared bytes: {bad.size} of the {a.size} read are dirty, in [{first:#x}, {int(ba.max()) + 1:#x}); "
            f"byte {first:#x} was written by thread {wtid} (warp {writer_lt // 32}) {how}"
            f"{f'; {nw} writing threads in all' if nw > 1 else ''}\n"
            f"  what to do: execute fence.proxy.async.shared::cta in the writing threads after their stores and "
            f"before the barrier that precedes this instruction (CUTLASS fence_view_async_shared(); PTX ISA 8.6 "
            f"proxies, 9.7.13.4 fence.proxy.async)")


def shadow_of(st):
    """The wave's ProxyShadow, or None when the check is off for this kernel."""
    return st.proxy
