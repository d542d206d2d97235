"""A CTA that exits while asynchronous copies into its own shared memory are still in flight
(ptx_docs/emulator_checks.md "Copies in flight at CTA exit").

The async engine completes copies lazily (only when no thread can run), so a copy that completes after every thread
of its destination CTA has exited was in flight when the CTA exited: nothing waited for it (no mbarrier wait, no
``cp.async.bulk.wait_group``, no ``cp.async.wait_group``).  Shared memory is the memory of the CTA that owns it
(PTX ISA 5.1.7): once the CTA has exited, its shared memory may be given to a new CTA, which the late write would
corrupt; CUTLASS's producer "tail" (``load_tail``) waits for every issued TMA load before its warp exits for this
reason.  No source says what the hardware does with such a write, so the emulator raises (one switch,
``PTXLAB_EMU_EXITCHECK=0``, turns the check off).

Checked: TMA tensor loads, ``cp.async.bulk`` global->shared, ``cp.async`` (non-bulk).  Not checked: operations that
only *read* a dead CTA's shared memory (TMA stores, bulk shared->global; CUTLASS waits with
``cp.async.bulk.wait_group.read`` before exit), and tcgen05 operations (their TMEM leak check covers exit).
"""
from __future__ import annotations


import numpy as np

from ... import settings as _settings
from ..core import hooks
from ..core.thread_status import EXITED

ENABLED = _settings.get("PTXLAB_EMU_EXITCHECK", fallback=True)


def _dest_ctas(st, op):
    f = getattr(op, "smem_dest", None)      # -> [(cta, issuing thread)] of the CTAs whose shared memory op writes
    return f(st) if f is not None else ()


def check(st, op) -> None:
    if not ENABLED:
        return
    dests = _dest_ctas(st, op)
    if not dests:
        return
    live = np.bincount(st.cta_of[st.valid & (st.status != EXITED)], minlength=st.nctas)
    for cta, thread in dests:
        if live[cta]:
            continue
        block = st.coords(int(thread))[0]
        st.fault(op.ins, int(thread),
                 f"block {block} exited while an asynchronous copy into its shared memory was still in flight: "
                 f"{op.describe()}",
                 "rule: shared memory belongs to its CTA (PTX ISA 5.1.7); a copy that lands after the CTA exited "
                 "writes memory the CTA no longer owns. Nothing waited for this copy's completion.\n"
                 "  what to do: wait for it before the CTA exits (mbarrier try_wait on its barrier's phase, "
                 "cp.async.bulk.wait_group 0, or cp.async.wait_all); if the data is not needed, do not issue the copy "
                 "(PTXLAB_EMU_EXITCHECK=0 turns this check off)")


hooks.ASYNC_COMPLETE_HOOKS.append(check)
