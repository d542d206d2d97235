"""What each SASS opcode costs the SM: its execution pipe and, for variable-latency opcodes, which latency applies.

Fixed-latency dependences need no table: ptxas encodes them in each instruction's stall count (sass_text.Ctrl), and
the simulator honours it.  Variable-latency results (memory, MUFU, conversions, S2R, shuffles) are tracked through
the scoreboards in the control codes; their latency comes from the event the emulator recorded (memory: sim.py) or
from ``GpuParams.var_latency_clk[key]`` for the keys below.

Pipes (per SM sub-partition; cost = cycles a warp-instruction occupies the pipe, sim._pipe_cost): ``fma`` (FP32:
FMA-heavy and FMA-lite alternate, 16 lanes each), ``fmah`` (FMA-heavy only: IMAD, IDP, HFMA2.MMA is on the tensor
datapath but ptxas uses it as a move, modelled as ``fmah``), ``alu`` (integer/logic/compare/select, 16 lanes),
``sfu`` (MUFU, 4 lanes), ``xu`` (conversions F2I/I2F/F2F, POPC/FLO/BREV: 4 lanes), ``lsu`` (the MIO queue: memory,
shuffles, barriers, async copies), ``uniform`` (the uniform datapath, U* opcodes), ``cbu`` (branches, convergence
barriers), ``tensor`` (HMMA/IMMA/HGMMA), ``free`` (NOP).  Sources: NVIDIA H100 whitepaper (per-SM lane counts), CUDA
C++ Programming Guide "Arithmetic Instructions" throughput table (cc 9.0 / 10.0).
"""
from __future__ import annotations

from typing import Tuple

# base opcode -> (pipe, variable-latency key or "")
_TABLE = {
    **dict.fromkeys(("FFMA", "FADD", "FMUL", "FFMA2", "FADD2", "FMUL2", "HFMA2", "HADD2", "HMUL2", "FSWZADD",
                     "I2FP", "F2FP"), ("fma", "")),
    **dict.fromkeys(("IMAD", "IMUL", "IDP", "IDP4A", "IDP2A", "DFMA", "DADD", "DMUL"), ("fmah", "")),
    **dict.fromkeys(("IADD3", "IADD", "VIADD", "LOP3", "LOP", "SHF", "SHL", "SHR", "LEA", "ISETP", "SEL", "MOV",
                     "PRMT", "IABS", "IMNMX", "VIMNMX", "VIMNMX3", "FSETP", "FSEL", "FMNMX", "FCHK", "P2R", "R2P",
                     "PLOP3", "SGXT", "BMSK", "CS2R", "FSET", "ISET", "VOTE", "ELECT", "IADD32I", "FMNMX3",
                     "VABSDIFF", "VABSDIFF4", "FRND", "DSETP", "HSETP2", "HMNMX2"), ("alu", "")),
    "MUFU": ("sfu", "mufu"),
    **dict.fromkeys(("F2I", "I2F", "F2F", "I2I", "POPC", "FLO", "BREV", "F2IP"), ("xu", "cvt")),
    **dict.fromkeys(("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDG", "STG", "LD", "ST", "LDL", "STL", "ATOM", "ATOMG",
                     "RED", "REDG", "LDGSTS", "LDGDEPBAR", "MEMBAR", "ERRBAR", "CCTL", "CCTLL", "FENCE", "SYNCS",
                     "BAR", "UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UTMACMDFLUSH", "UBLKCP", "UBLKRED",
                     "UBLKPF", "LDTM", "STTM", "UTCBAR", "UTCCP", "UTCQMMA", "UTCHMMA", "UTCOMMA", "UTCIMMA",
                     "UTCMMA", "UTCATOMSWS", "UTCSHIFT", "ARRIVES", "UCGABAR_ARV", "UCGABAR_WAIT", "CGAERRBAR",
                     "MATCH", "REDUX", "QSPC", "SUST", "SULD", "TLD", "TEX", "ACQBULK", "FENCE"), ("lsu", "mem")),
    "SHFL": ("lsu", "shfl"),
    "LDC": ("lsu", "ldc"),
    "S2R": ("alu", "s2r"),
    "S2UR": ("uniform", "s2r"),
    **dict.fromkeys(("HMMA", "IMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "DMMA", "WARPGROUP", "OMMA", "QMMA"),
                    ("tensor", "")),
    **dict.fromkeys(("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK", "KILL",
                     "YIELD", "NANOSLEEP", "BPT", "DEPBAR", "WARPGROUPSET", "ENDCOLLECTIVE", "ACQSHMINIT",
                     "USETMAXREG", "PMTRIG", "VOTEU", "R2UR"), ("cbu", "")),
    "NOP": ("free", ""),
}
_UNIFORM_VAR = {"ULDC": "", "UMOV": "", "UIADD3": "", "ULOP3": ""}


def classify(base: str) -> Tuple[str, str]:
    """(pipe, variable-latency key) of a SASS base opcode (module docstring); unknown opcodes: ``alu``."""
    hit = _TABLE.get(base)
    if hit is not None:
        return hit
    if base.startswith("U"):          # uniform datapath: ULDC, UMOV, UIADD3, ULOP3, USHF, ULEA, UISETP, ...
        return ("uniform", "")
    return ("alu", "")


# the emulator's event kinds each SASS opcode may carry (sass_join.py attaches recorded events to SASS instructions)
EVENT_OPS = {
    "GLD": ("LDG", "LD", "ATOMG", "ATOM", "LDGSTS", "SULD", "TLD", "TEX"),
    "GST": ("STG", "ST", "RED", "REDG", "ATOMG", "ATOM", "SUST"),
    "SMEM": ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LD", "ST", "LDGSTS"),
    "LOCAL": ("LDL", "STL", "LD", "ST"),
    "BAR": ("BAR",),
    "MB_CONTRIB": ("SYNCS", "UTCBAR", "ARRIVES", "LDGDEPBAR"),
    "MB_WAIT": ("SYNCS", "DEPBAR"),       # DEPBAR: cp.async.wait_group / wait_all (trace.cp_async_waits)
    "ASYNC": ("UTMALDG", "UTMASTG", "UBLKCP", "UBLKRED", "UTCBAR", "LDGSTS", "ARRIVES", "UTMACMDFLUSH"),
    "MMA": ("UTCQMMA", "UTCHMMA", "UTCOMMA", "UTCIMMA", "UTCMMA", "UTCCP"),
    "TMEM_LD": ("LDTM",),
    "DSMEM": ("LD", "ST", "LDS", "STS", "ATOM", "ATOMS", "RED"),
    "CBAR_ARRIVE": ("UCGABAR_ARV",),
    "CBAR_WAIT": ("UCGABAR_WAIT",),
}
