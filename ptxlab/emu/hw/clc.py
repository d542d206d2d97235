"""Cluster launch control model (PTX ISA 9.7.13.x ``clusterlaunchcontrol``, PTX 8.6, sm_100+): which clusters of a
launch have not started yet, which ``try_cancel`` requests succeed, and the emulator's 16-byte response encoding.
No dependency on the machine; ops/clc.py holds the instruction handlers. ptx_docs/cluster_launch_control.md.

Launch order.  The emulator runs a launch as a sequence of *waves* (co-resident CTAs, whole clusters). The
:class:`LaunchQueue` holds the clusters not yet started, in launch order (cluster.wave_order; clusterid order
without clusters); each wave takes clusters from its front. A successful ``try_cancel`` also takes the cluster at
the front: that cluster never starts (its CTAs are not run by any later wave) and the requester gets the ctaid of
its first CTA (cluster rank 0) -- "a successful cancel hands a not-yet-started cluster's work to the requester".
Clusters of the running wave have started, so they are never cancelled; a request when no cluster is left fails.

Which requests succeed is a deterministic *policy* (``EmuDevice(clc=...)`` or ``PTXLAB_EMU_CLC``), applied to the
n-th request of the launch (n = 0, 1, ... in the order the emulator executes them; requests of one instruction in
thread order):
  'every-other'  (default) n even succeeds, n odd fails: persistent schedulers run both their work-stealing loop
                 and their exit path, and later waves still run the clusters nobody took;
  'all'          every request succeeds while a cluster is left (a GPU that never frees an SM);
  'never'        every request fails (every cluster already resident: a small grid on a large GPU);
  'first:N'      the first N requests succeed, the rest fail.
Every policy is a legal schedule: the hardware does not promise which requests succeed.

Waves.  By default a wave holds WAVE_THREADS threads (machine.py). ``EmuDevice(wave_ctas=N)`` /
``PTXLAB_EMU_WAVE_CTAS`` caps it at N CTAs (rounded down to whole clusters, at least one cluster): a model of a
smaller GPU, so that small grids have clusters that are not yet started when the first wave runs.

Response (16 bytes, opaque in PTX; programs must not depend on the layout): u32 word 0 = RESPONSE_TAG | 1 if
canceled, RESPONSE_TAG if not; words 1, 2, 3 = ctaid.x, .y, .z of the first CTA of the canceled cluster (0 when
not canceled). The tag lets query_cancel report a value that is not a response (e.g. uninitialized memory).
"""
from __future__ import annotations

import os
from collections import deque
from typing import Iterable, Iterator, Optional

import numpy as np

from ...errors import UsageError

POLICIES = ("every-other", "all", "never", "first:N")
DEFAULT_POLICY = "every-other"
RESPONSE_TAG = 0xC1C0_0000
RESPONSE_BYTES = 16

__all__ = ["POLICIES", "DEFAULT_POLICY", "RESPONSE_TAG", "RESPONSE_BYTES", "parse_policy", "LaunchQueue",
           "encode_response", "decode_response"]


def parse_policy(policy: Optional[str]) -> tuple:
    """('every-other' | 'all' | 'never', None) or ('first', N); None = PTXLAB_EMU_CLC or the default."""
    p = policy if policy is not None else os.environ.get("PTXLAB_EMU_CLC", DEFAULT_POLICY)
    p = str(p).strip().lower()
    if p in ("every-other", "all", "never"):
        return (p, None)
    if p.startswith("first:") and p[6:].isdigit():
        return ("first", int(p[6:]))
    raise UsageError(f"clusterlaunchcontrol policy {p!r} is not one of {list(POLICIES)} (EmuDevice(clc=...) / "
                     "PTXLAB_EMU_CLC; ptx_docs/cluster_launch_control.md)")


def wave_ctas_cap(device) -> Optional[int]:
    v = getattr(device, "wave_ctas", None)
    if v is None:
        from ... import settings
        v = settings.get("PTXLAB_EMU_WAVE_CTAS")
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1):
        raise UsageError(f"wave_ctas={v!r}: must be an integer >= 1 (EmuDevice(wave_ctas=...) / PTXLAB_EMU_WAVE_CTAS)")
    return None if v is None else int(v)


class LaunchQueue:
    """The not-yet-started clusters of one launch (lists of linear CTA ids, rank 0 first), in launch order."""

    def __init__(self, order: Iterable[int], cluster_size: int, per_wave: int, grid: tuple,
                 policy: Optional[str] = None, wave_ctas: Optional[int] = None):
        ids = list(order)
        n = max(1, int(cluster_size))
        self.clusters: deque = deque(ids[i:i + n] for i in range(0, len(ids), n))
        self.cluster_size = n
        cap = per_wave if wave_ctas is None else min(per_wave, wave_ctas)
        self.clusters_per_wave = max(1, cap // n)
        self.grid = tuple(grid)
        self.policy = parse_policy(policy)
        self.requests = 0
        self.granted: list = []          # first-CTA linear ids handed out, in order

    def waves(self) -> Iterator[list]:
        """CTA ids of each wave; clusters cancelled while a wave runs are gone from the queue before the next."""
        while self.clusters:
            ids: list = []
            for _ in range(min(self.clusters_per_wave, len(self.clusters))):
                ids.extend(self.clusters.popleft())
            yield ids

    def _succeeds(self, n: int) -> bool:
        kind, arg = self.policy
        if kind == "all":
            return True
        if kind == "never":
            return False
        if kind == "every-other":
            return n % 2 == 0
        return n < arg

    def try_cancel(self) -> Optional[tuple]:
        """One request: the ctaid (x, y, z) of the canceled cluster's first CTA, or None (request failed)."""
        n = self.requests
        self.requests += 1
        if not self.clusters or not self._succeeds(n):
            return None
        first = self.clusters.popleft()[0]
        self.granted.append(first)
        gx, gy, _ = self.grid
        return (first % gx, (first // gx) % gy, first // (gx * gy))

    def stats(self) -> dict:
        return {"clc_requests": self.requests, "clc_canceled": len(self.granted)}


def encode_response(ctaid: Optional[tuple]) -> np.ndarray:
    """The 16 response bytes for a canceled cluster's first ctaid, or for a failed request (None)."""
    if ctaid is None:
        w = (RESPONSE_TAG, 0, 0, 0)
    else:
        w = (RESPONSE_TAG | 1,) + tuple(int(c) for c in ctaid)
    return np.array(w, dtype="<u4").view(np.uint8)


def decode_response(words: np.ndarray) -> tuple:
    """(valid, canceled, x, y, z) arrays from (T, 4) uint32 response words."""
    w0 = words[:, 0]
    valid = (w0 & np.uint32(0xFFFF_FFFE)) == np.uint32(RESPONSE_TAG)
    canceled = valid & ((w0 & np.uint32(1)) == 1)
    return valid, canceled, words[:, 1], words[:, 2], words[:, 3]
