"""Notes appended to emulator errors for PTX rules that hardware is known or reported to tolerate
(ptx_docs/emulator_checks.md "Rules hardware may tolerate").  The emulator keeps the PTX rule (an error); the report
says what is known about hardware, the evidence, and where it is documented, so a user of shipped code that relies
on the behaviour knows why the emulator stops where a GPU may not.
"""
from __future__ import annotations

import re

_NOTES = [
    (re.compile(r"\[tmem:warp-quarter\]"),
     None,
     "hardware may tolerate this: DeepGEMM's SM100 GEMM epilogue (shipped code, sm100_fp8_fp4_gemm_1d1d.cuh) passes lane 0 in the tcgen05.ld "
     "address from every epilogue warp, with a comment that the hardware ignores the warp-quarter bits of the lane "
     "field (so warp w reads lanes 32*(w%4).. whatever the address says). Not confirmed: the PTX text (9.7.16.8.1) "
     "restricts warp w to lanes 32*(w%4)..+31 and no sm_100 measurement exists here (the H100 has no tcgen05). The "
     "emulator keeps the PTX rule; documented in ptx_docs/tcgen05.md and ptx_docs/emulator_checks.md (\"Rules "
     "hardware may tolerate\")."),
    (re.compile(r"tcgen05\.commit: generic address (0x[0-9a-fA-F]+) is not in the shared window"),
     lambda m: int(m.group(1), 16) < (1 << 32),
     "this looks like a 32-bit shared::cta address given to a generic-address tcgen05.commit: ptxas accepts it "
     "(the kernel compiled), and hardware is reported to treat it as a shared address (issue 14; not measured here: "
     "no sm_100 device, the H100 has no tcgen05). By the PTX text an address outside the shared window is "
     "undefined, so the emulator keeps the error. Write tcgen05.commit...shared::cluster.b64 [bar] with the 32-bit "
     "shared address, as CUTLASS's umma_arrive does (cutlass/arch/barrier.h). Documented in ptx_docs/tcgen05.md "
     "and ptx_docs/emulator_checks.md (\"Rules hardware may tolerate\")."),
]


def note_for(message: str):
    for pat, cond, note in _NOTES:
        m = pat.search(message)
        if m and (cond is None or cond(m)):
            return note
    return None


def annotate(err) -> None:
    """Append the hardware note to an EmuError's message, in place (once)."""
    msg = getattr(err, "message", None)
    if not msg or "hardware note:" in msg:
        return
    note = note_for(msg)
    if note:
        err.message = msg + "\n  hardware note: " + note
        err.args = (err.message,)
