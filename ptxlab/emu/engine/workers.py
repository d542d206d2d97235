"""Every core: the waves of one launch run in parallel worker processes, with results identical to a serial run.

``PTXLAB_EMU_WORKERS`` (default: the machine's cores) sets how many processes a launch may use.  With the default,
the first wave runs in the parent and the rest go parallel only if the time they would save beats the cost of
forking (the heap snapshot and its comparison grow with global memory: ``worth_it``); a value set explicitly makes
every eligible launch parallel.  A launch goes parallel only when its waves cannot see each other:

* the kernel has no instruction through which CTAs of one launch exchange data or order themselves -- atomics and
  reductions (``atom``, ``red``, float atomics included), loads and stores with ``.volatile``, ``.relaxed``,
  ``.acquire``, ``.release`` or ``.mmio``, ``fence``/``membar``, cluster launch control, ``griddepcontrol``, and
  ``printf`` (its output order);
* more than one wave, no timing recording, no fidelity rule made strict at the device (a warning is part of the
  result: the workers' would be lost).

Workers are forked (they share the parent's memory copy-on-write); worker k runs a contiguous slice of the waves and
returns the bytes of global memory it changed (compared with a snapshot taken before the fork) plus its
statistics.  The parent applies the changes in wave order.  It runs the launch serially instead -- from the
unchanged heap, so the result is the serial one exactly -- when a worker raised (a fault's report then names the
fault a serial run meets first), warned, or when two workers changed the same byte (CTAs of different waves writing
one address: a data race, whose serial outcome is the last wave's write).  Ordinary loads of data another wave of
the same launch writes, without any of the instructions above, are a data race on a GPU too (PTX ISA 8, memory
consistency model): the parallel run gives one of the outcomes the GPU may give, not necessarily the serial one --
set PTXLAB_EMU_WORKERS=1 to see exactly the serial run.
"""
from __future__ import annotations

import os
import pickle
from typing import Callable, Optional

import numpy as np

ENV = "PTXLAB_EMU_WORKERS"
_SYNC_OPS = ("atom", "red", "fence", "membar", "clusterlaunchcontrol", "griddepcontrol", "ptxlab", "multimem")
_ORDERED = ("volatile", "relaxed", "acquire", "release", "mmio")


def workers() -> int:
    """PTXLAB_EMU_WORKERS, else the cores this process may use -- shared with the other pytest-xdist workers when it
    is one of them (a test run of -n 2 on two cores runs its launches serially)."""
    from ... import settings
    v = settings.get(ENV)                     # an integer >= 1, or None (a bad value: UsageError naming the variable)
    if v is not None:
        return v
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)))


def explicit() -> bool:
    """True when PTXLAB_EMU_WORKERS is set: then a launch that may go parallel always does."""
    from ... import settings
    return settings.get(ENV) is not None


# forking costs time in proportion to the global heap: the parent's snapshot copy and each worker's comparison
# with it (W1 GEMV, 64 MB heap, reference machine idle, 2026-11-28: ~0.2 s, more than the launch's own 0.2 s)
FORK_S_PER_BYTE = 4e-9
FORK_S = 0.01


def worth_it(first_wave_s: float, rest: int, nworkers: int, heap) -> int:
    """How many workers the remaining ``rest`` waves get after the first took ``first_wave_s`` serially: the time the
    workers would save against what forking costs (default worker count only; 1 = serial)."""
    n = min(nworkers, rest)
    if n < 2:
        return 1
    saved = first_wave_s * rest * (1.0 - 1.0 / n)
    return n if saved > 2.0 * (FORK_S + FORK_S_PER_BYTE * heap.buf.size) else 1


def independent_waves(prog) -> Optional[str]:
    """None when the kernel's waves cannot exchange data, else the first instruction that could (cached)."""
    v = getattr(prog, "_wave_coupling", False)
    if v is not False:
        return v
    v = None
    for e in prog.code:
        ins = e.ins
        if ins.opcode in _SYNC_OPS or (ins.opcode in ("ld", "st", "ldu") and any(m in _ORDERED for m in ins.mods)):
            v = f"PTX line {ins.line}: {ins.text.strip()}"
            break
    prog._wave_coupling = v
    return v


def parallel_plan(prog, device, nwaves: int) -> int:
    """How many workers this launch gets (1: serial)."""
    n = min(workers(), nwaves)
    if n < 2 or not hasattr(os, "fork") or getattr(device, "timing", None):
        return 1
    if getattr(device, "strict", None):
        return 1
    return n if independent_waves(prog) is None else 1


def run_parallel(waves: list, run_wave: Callable, heap, nworkers: int) -> Optional[list]:
    """Run ``run_wave(ids) -> stats`` for every wave in ``nworkers`` forked processes; apply their global-memory
    changes in wave order and return the per-wave stats, or None when the launch must run serially (nothing was
    changed then)."""
    snap = heap.buf.copy()
    written = getattr(heap, "written", None)
    wsnap = written.copy() if written is not None else None
    chunks = np.array_split(np.arange(len(waves)), nworkers)
    procs = []
    for chunk in chunks:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:                                          # the worker
            os.close(r)
            status = 0
            try:
                out = _work([waves[i] for i in chunk], run_wave, heap, snap, wsnap)
            except BaseException:                             # noqa: BLE001  (any failure: the parent reruns)
                out, status = None, 1
            try:
                with os.fdopen(w, "wb") as f:
                    pickle.dump(out, f, protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                os._exit(status)
        os.close(w)
        procs.append((pid, r))
    results = []
    for pid, r in procs:
        with os.fdopen(r, "rb") as f:
            try:
                results.append(pickle.load(f))
            except Exception:                                 # noqa: BLE001
                results.append(None)
        os.waitpid(pid, 0)
    if any(x is None for x in results):
        return None
    touched = np.zeros(heap.buf.size, dtype=np.bool_)
    for res in results:
        idx = res["idx"]
        if touched[idx].any():                                # two workers wrote one byte: run it serially
            return None
        touched[idx] = True
    for res in results:
        heap.buf[res["idx"]] = res["val"]
        if written is not None:
            written[res["widx"]] = True
    return [s for res in results for s in res["stats"]]


def _work(waves, run_wave, heap, snap, wsnap) -> Optional[dict]:
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = [run_wave(ids) for ids in waves]
    if caught or any(s.get("warned") for s in stats):
        return None                                           # warnings belong to the serial run
    n = min(heap.buf.size, snap.size)
    idx = np.flatnonzero(heap.buf[:n] != snap[:n])
    out = {"idx": idx, "val": heap.buf[idx], "stats": stats, "widx": np.zeros(0, np.int64)}
    written = getattr(heap, "written", None)
    if written is not None and wsnap is not None:
        out["widx"] = np.flatnonzero(written[:n] & ~wsnap[:n])
    return out
