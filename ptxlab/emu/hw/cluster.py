"""Thread-block clusters in the emulator: geometry, special registers, the shared::cluster address encoding, and
distributed-shared-memory (DSMEM) resolution with its fault checks.  ptx_docs/clusters.md has every rule.

Geometry.  A launch with cluster shape (cx, cy, cz) runs whole clusters in one wave; inside a wave the CTAs of a
cluster are consecutive in rank order, so wave CTA ``c`` has rank ``c % n`` in cluster ``c // n`` of the wave
(n = cx*cy*cz).  Without a cluster launch every CTA is an implicit 1x1x1 cluster (PTX ISA 10: %cluster_nctarank
= 1, %is_explicit_cluster = 0).  Ranks: %cluster_ctarank = x + y*cx + z*cx*cy of %cluster_ctaid (PTX ISA 10.x).

Addresses (PTX ISA 5.1.7: the .shared::cta window lies inside the .shared::cluster window; "a .shared::cta address
used as .shared::cluster refers to the executing CTA").  The emulator's 32-bit shared addresses are, as on hardware
(the SASS of cluster kernels adds %cluster_ctarank << 24 to every shared address; CUTLASS's
``Sm100MmaPeerBitMask = 0xFEFFFFFF`` clears bit 24 of a .shared::cta address to name the even CTA of a pair)::

    bits 31..24  the cluster rank of the CTA whose shared memory is addressed
    bits 23..0   the byte offset in that CTA's shared memory (at most 227 KiB are used)

so a .shared::cta address of the CTA of rank r (a shared symbol's address, cvta.to.shared of a generic pointer) is
``(r << 24) | offset`` -- in a launch without clusters r = 0 and addresses are plain offsets, as before -- and
``mapa`` returns ``(target rank << 24) | offset``.  Generic addresses of shared memory are
``memory.SHARED_WIN + shared address``.  A .shared::cta access must carry the executing CTA's own rank.

Faults (reported like every other emulator fault, at the accessing instruction):
* a shared::cluster address whose rank is outside the cluster;
* a .shared::cta access (or an mbarrier / TMA operand that must be in the executing CTA) given a peer's address;
* DSMEM lifetime (PTX ISA 2.2.2 / CUDA Programming Guide "Distributed Shared Memory": a CTA must not exit while
  other CTAs of its cluster may still access its shared memory): an access to the shared memory of a CTA that has
  exited, and, at the end of the wave, a peer access that was not ordered before the owner's exit by a cluster
  barrier or an mbarrier (vector clocks per CTA, see :class:`Lifetime`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

RANK_SHIFT = 24
OFF_MASK = (1 << RANK_SHIFT) - 1

__all__ = ["RANK_SHIFT", "OFF_MASK", "encode", "geometry", "size", "special", "peer", "rank_of", "mask_ctas", "resolve",
           "resolve_one", "check_alive", "Lifetime", "lifetime", "release", "acquire", "join"]


def encode(rank: int, offset: int) -> int:
    """The shared::cluster address of ``offset`` in the CTA of cluster rank ``rank``."""
    return (int(rank) << RANK_SHIFT) | int(offset)


# ------------------------------------------------------------------------------------------------ geometry
def geometry(st) -> tuple:
    """(cx, cy, cz) of the wave's launch (1, 1, 1 without a cluster launch)."""
    c = getattr(st, "cluster", None)
    return tuple(c.dims) if c is not None else (1, 1, 1)


def size(st) -> int:
    cx, cy, cz = geometry(st)
    return cx * cy * cz


def rank_of(st, cta) -> np.ndarray:
    """Cluster rank of wave CTA(s) ``cta``."""
    return np.asarray(cta) % size(st)


def peer(st, cta, rank) -> np.ndarray:
    """Wave CTA index of the CTA with cluster rank ``rank`` in wave CTA ``cta``'s cluster (no range check)."""
    n = size(st)
    return (np.asarray(cta) // n) * n + np.asarray(rank)


def special(st, name: str) -> Optional[np.ndarray]:
    """The cluster special registers (PTX ISA 10: %cluster_ctaid, %cluster_nctaid, %clusterid, %nclusterid,
    %cluster_ctarank, %cluster_nctarank, %is_explicit_cluster); None for other names."""
    T = st.T
    cx, cy, cz = dims = geometry(st)
    base, _, comp = name.partition(".")
    ax = "xyz".index(comp) if comp in ("x", "y", "z") else None
    if base == "cluster_ctaid":
        return (st.ctaid[ax] % dims[ax]).astype(np.uint32)
    if base == "cluster_nctaid":
        return np.full(T, dims[ax], np.uint32)
    if base == "clusterid":
        return (st.ctaid[ax] // dims[ax]).astype(np.uint32)
    if base == "nclusterid":
        return np.full(T, st.grid[ax] // dims[ax], np.uint32)
    if name == "cluster_ctarank":
        x, y, z = (st.ctaid[i] % dims[i] for i in range(3))
        return (x + y * cx + z * cx * cy).astype(np.uint32)
    if name == "cluster_nctarank":
        return np.full(T, cx * cy * cz, np.uint32)
    if name == "is_explicit_cluster":
        c = getattr(st, "cluster", None)
        return np.full(T, bool(c is not None and c.explicit), np.uint32)
    return None


def wave_order(grid: tuple, dims: tuple) -> list:
    """Linear CTA ids of the grid grouped by cluster, each cluster in rank order (clusters in clusterid order)."""
    gx, gy, gz = grid
    cx, cy, cz = dims
    out = []
    for kz in range(gz // cz):
        for ky in range(gy // cy):
            for kx in range(gx // cx):
                for z in range(cz):
                    for y in range(cy):
                        for x in range(cx):
                            X, Y, Z = kx * cx + x, ky * cy + y, kz * cz + z
                            out.append(X + Y * gx + Z * gx * gy)
    return out


def mask_ctas(st, ins, t: int, mask: int, what: str = ".multicast::cluster") -> list:
    """Wave CTA indices named by a 16-bit ctaMask (bit i = %cluster_ctarank i) of thread ``t``'s cluster, in rank
    order; faults on an empty mask or bits outside the cluster (PTX ISA 9.7.9.25.5.2, 9.7.16.x tcgen05.commit)."""
    n = size(st)
    mask = int(mask) & 0xFFFF
    if mask == 0:
        st.fault(ins, t, f"{what} with ctaMask 0x0000 names no destination CTA",
                 "the PTX ISA does not say what an empty mask does; the emulator refuses it (ptx_docs/clusters.md)")
    if mask >> n:
        st.fault(ins, t, f"{what} ctaMask {mask:#06x} names CTA rank {(mask >> n).bit_length() + n - 1}, outside the "
                 f"cluster of {n} CTA(s)",
                 "rule: each set bit of ctaMask is the %cluster_ctarank of a destination CTA (PTX ISA 9.7.9.25.5.2)")
    cta = int(st.cta_of[t])
    base = cta - cta % n
    return [base + r for r in range(n) if mask >> r & 1]


# ------------------------------------------------------------------------------------------------ addresses
def resolve(st, ins, sel: np.ndarray, a: np.ndarray, nbytes: int, write: bool, space: str):
    """Target wave CTA and in-CTA offset (int64 arrays) of shared accesses by threads ``sel`` at shared addresses
    ``a`` (``space`` 'shared' = .shared::cta: must be the executing CTA; 'shared::cluster': any CTA of the
    cluster).  Faults on a rank outside the cluster, a peer address used as .shared::cta, and DSMEM lifetime
    violations (bounds of the offset: the caller)."""
    a64 = a.astype(np.int64)
    own = st.cta_of[sel]
    hi = a64 >> RANK_SHIFT
    if st.smem_rank_bits is None and not hi.any():
        return own, a64
    n = size(st)
    myrank = own % n
    if space == "shared":
        other = hi != myrank
        if other.any():
            k = int(np.flatnonzero(other)[0])
            st.fault(ins, sel[k:], f".shared::cta {'store' if write else 'load'} at {int(a64[k]):#x}, outside the "
                     f"executing CTA's shared memory window",
                     f"the address names cluster rank {int(hi[k])} (bits 31..24, cluster.py), the executing CTA "
                     f"is rank "
                     f"{int(myrank[k])} of {n} and has {st.smem_size} bytes of shared memory; a .shared::cta access "
                     f"must stay in its own CTA (PTX ISA 5.1.7): use ld/st/atom .shared::cluster or a generic address "
                     f"for another CTA's shared memory")
        return own, a64 & OFF_MASK
    bad = hi >= n
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        st.fault(ins, sel[k:], f"shared::cluster address {int(a64[k]):#x} names CTA rank {int(hi[k])}, outside the "
                 f"cluster of {n} CTA(s)",
                 "rule: DSMEM addresses must belong to a CTA of the executing CTA's cluster (PTX ISA 5.1.7, 9.7.9.23 "
                 "mapa: the target rank must be < %cluster_nctarank); check the rank passed to mapa")
    tgt = own - myrank + hi
    remote = tgt != own
    if remote.any():
        lifetime(st).access(st, ins, sel[remote], tgt[remote], "store" if write else "load")
    return tgt, a64 & OFF_MASK


def resolve_one(st, ins, t: int, addr: int, what: str, allow_peer: bool = True, generic: bool = False) -> tuple:
    """(wave CTA, offset) of one shared(::cluster) operand value of thread ``t`` (``generic``: a generic address)."""
    from ..core.memory import SHARED_WIN, WIN_SHIFT
    a = int(addr)
    if generic:
        if (a >> WIN_SHIFT) != (SHARED_WIN >> WIN_SHIFT):
            st.fault(ins, t, f"{what}: generic address {a:#x} is not in the shared window",
                     "pass a shared memory address (cvta.shared / mapa)")
        a -= SHARED_WIN
    own = int(st.cta_of[t])
    n = size(st)
    rank = a >> RANK_SHIFT
    if rank >= n:
        st.fault(ins, t, f"{what}: shared::cluster address {a:#x} names CTA rank {rank}, outside the cluster of {n} "
                 f"CTA(s)", "rule: the target rank must be < %cluster_nctarank (PTX ISA 9.7.9.23 mapa)")
    tgt = own - own % n + rank
    if tgt != own and not allow_peer:
        st.fault(ins, t, f"{what}: address {a:#x} is in the shared memory of CTA rank {rank}, not the executing CTA",
                 "rule: this operand must be in the executing CTA's shared memory (.shared::cta window, PTX ISA "
                 "5.1.7)")
    return tgt, a & OFF_MASK


# ------------------------------------------------------------------------------------------------ lifetime
class Lifetime:
    """DSMEM lifetime check.  Vector clocks per wave CTA over the ranks of its cluster (``vc[cta, rank]``).

    * a *release* by a thread of CTA c (barrier.cluster.arrive, mbarrier.arrive) increments ``vc[c, rank(c)]`` and
      publishes ``vc[c]`` into the barrier;
    * an *acquire* (barrier.cluster.wait, a successful mbarrier wait) joins the barrier's clock into the waiter's CTA;
    * a synchronous access by CTA b to CTA a's shared memory is stamped ``s = vc[b, rank(b)]``; it is ordered before
      a's exit iff, at a's exit, ``vc[a, rank(b)] > s``.
    A CTA's clock stops changing when its last thread exits, so the check runs at the end of the wave; an access to a
    CTA that has already exited faults at once.  CTA-level clocks can miss a violation (another thread of b may
    release), never invent one for programs synchronized by cluster barriers / mbarriers.  Flags in memory
    (ld.acquire / st.release) are not modelled as synchronization: see ptx_docs/clusters.md."""

    def __init__(self, st):
        n = size(st)
        self.n = n
        self.vc = np.zeros((st.nctas, n), np.int64)
        # latest synchronous access of accessor b to owner a: its stamp (-1: none), thread, instruction
        self.stamp = np.full((st.nctas, st.nctas), -1, np.int64)
        self.thread = np.zeros((st.nctas, st.nctas), np.int64)
        self.ins = np.empty((st.nctas, st.nctas), dtype=object)

    def release(self, cta: int) -> np.ndarray:
        self.vc[cta, cta % self.n] += 1
        return self.vc[cta].copy()

    def acquire(self, cta: int, clock) -> None:
        if clock is not None:
            np.maximum(self.vc[cta], clock, out=self.vc[cta])

    def access(self, st, ins, threads: np.ndarray, targets: np.ndarray, what: str) -> None:
        """Synchronous DSMEM accesses by ``threads`` (wave thread indices) to wave CTAs ``targets``."""
        from ..core.thread_status import EXITED
        gone = (st.status.reshape(st.nctas, st.tpc) == EXITED).all(axis=1)[targets]
        if gone.any():
            k = int(np.flatnonzero(gone)[0])
            tgt = int(targets[k])
            st.fault(ins, threads[targets == tgt], f"DSMEM {what} to the shared memory of CTA {_block(st, tgt)} "
                     f"(cluster rank {tgt % self.n}), which has already exited",
                     f"the owner exited at {_exit_where(st, tgt)}; rule: a CTA's shared memory lives only while "
                     f"the CTA runs, so a CTA must not exit while its cluster peers may still access it (CUDA "
                     f"Programming Guide 'Distributed Shared Memory'; PTX ISA 2.2.2). Add a cluster barrier "
                     f"(barrier.cluster.arrive + wait, cluster.sync()) before the owner's exit")
        acc = st.cta_of[threads]
        pair, first = np.unique(targets * st.nctas + acc, return_index=True)
        a, b = pair // st.nctas, pair % st.nctas
        unknown = self.vc[b, a % self.n] == 0
        if unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            self.check_started(st, ins, int(threads[first[k]]), int(b[k]), int(a[k]), what)
        self.stamp[a, b] = self.vc[b, b % self.n]
        self.thread[a, b] = threads[first]
        self.ins[a, b] = ins

    def check_started(self, st, ins, t: int, b: int, a: int, what: str) -> None:
        """CTA b may access CTA a's shared memory only once a is known to run: b has acquired a release of a (a
        cluster barrier both passed, or an mbarrier a arrived on).  CUDA Programming Guide 'Distributed Shared
        Memory': "Accessing data in distributed shared memory requires all the thread blocks to exist"."""
        if self.vc[b, a % self.n] == 0:
            st.fault(ins, t, f"DSMEM {what} to the shared memory of CTA {_block(st, a)} (cluster rank {a % self.n}) "
                     f"before that CTA is known to have started",
                     "rule: accessing distributed shared memory requires all the thread blocks to exist (CUDA "
                     "Programming Guide 'Distributed Shared Memory'); execute a cluster barrier (barrier.cluster."
                     "arrive{.relaxed} + barrier.cluster.wait, cluster.sync()) before the first access to a peer")

    def check_exits(self, st) -> None:
        a_idx, b_idx = np.nonzero(self.stamp >= 0)
        late = self.vc[a_idx, b_idx % self.n] <= self.stamp[a_idx, b_idx]
        if not late.any():
            return
        k = int(np.flatnonzero(late)[0])
        a, b = int(a_idx[k]), int(b_idx[k])
        ins, t = self.ins[a, b], int(self.thread[a, b])
        st.fault(ins, t, f"DSMEM lifetime: CTA {_block(st, a)} (cluster rank {a % self.n}) exited while this access "
                 f"to its shared memory by CTA {_block(st, b)} (rank {b % self.n}) was not ordered before the exit",
                 f"the owner exited at {_exit_where(st, a)} without a cluster barrier (or mbarrier wait) after "
                 f"this access; on hardware the access may run after the owner's shared memory is gone. Rule: a "
                 f"CTA must not exit while its cluster peers may still access its shared memory (CUDA "
                 f"Programming Guide 'Distributed Shared Memory'; PTX ISA 2.2.2). Add barrier.cluster.arrive + "
                 f"barrier.cluster.wait (cluster.sync()) in every CTA before it exits")


def check_alive(st, ins, t: int, cta: int, what: str) -> None:
    """Fault if wave CTA ``cta`` (a peer of thread ``t``) has exited: its shared memory is gone (lifetime rule)."""
    from ..core.thread_status import EXITED
    if size(st) > 1:
        lifetime(st).check_started(st, ins, int(t), int(st.cta_of[t]), int(cta), what)
    lo = int(cta) * st.tpc
    if (st.status[lo:lo + st.tpc] == EXITED).all():
        st.fault(ins, int(t), f"DSMEM {what} on the shared memory of CTA {_block(st, cta)} (cluster rank "
                 f"{int(cta) % size(st)}), which has already exited",
                 f"the owner exited at {_exit_where(st, cta)}; rule: a CTA must not exit while its cluster peers may "
                 f"still access its shared memory (CUDA Programming Guide 'Distributed Shared Memory'; PTX ISA "
                 f"2.2.2). Add a cluster barrier (or an mbarrier wait for this operation) before the owner's exit")


def _block(st, cta: int) -> tuple:
    return st.coords(int(cta) * st.tpc)[0]


def _exit_where(st, cta: int) -> str:
    from ..core.program import K_EXIT
    lo = int(cta) * st.tpc
    p = int(st.pc[lo:lo + st.ntid].max())      # exited threads keep the pc of the block holding their exit
    code = st.prog.code
    while p < len(code) and code[p].kind != K_EXIT:
        p += 1
    ins = code[p].ins if p < len(code) else None
    return f"PTX line {ins.line} ({ins.text.strip()})" if ins is not None else "the end of the kernel"


def lifetime(st) -> Lifetime:
    lt = st.side.get("cluster_lifetime")
    if lt is None:
        lt = st.side["cluster_lifetime"] = Lifetime(st)
    return lt


def release(st, cta: int):
    """Release by a thread of ``cta`` (cluster launches only); returns the clock to publish, or None."""
    if size(st) <= 1:
        return None
    return lifetime(st).release(int(cta))


def acquire(st, cta: int, clock) -> None:
    if clock is not None and size(st) > 1:
        lifetime(st).acquire(int(cta), clock)


def join(a, b):
    """Join of two published clocks (None = nothing published)."""
    if a is None:
        return None if b is None else b.copy()
    if b is None:
        return a
    return np.maximum(a, b)


def _wave_end(st) -> None:
    lt = st.side.get("cluster_lifetime")
    if lt is not None:
        lt.check_exits(st)
