"""Device printf and assert: calls to the CUDA system functions ``vprintf`` and ``__assertfail``.

NVRTC lowers ``printf(fmt, ...)`` to ``call vprintf, (fmt, args)`` where ``fmt`` is a generic pointer to a global string
and ``args`` a generic pointer to a per-thread local buffer holding the arguments, each aligned to its size (ints 4 or
8 bytes, floats promoted to double, pointers 8) — CUDA Programming Guide "Formatted Output".  ``assert`` lowers to
``call __assertfail, (message, file, line, function, charSize)``.  The call inliner (program.py) turns these calls into
the pseudo-instructions ``ptxlab.vprintf`` / ``ptxlab.assertfail`` handled here.  Output goes to stdout in thread
order, at most PRINTF_LIMIT lines per launch (the device printf buffer is finite too).
"""
from __future__ import annotations

import re
import struct
import sys

import numpy as np

from ..core import ir
from ..core.isa import Ctx, register
from ..core.memory import GLOBAL_BASE, LOCAL_WIN, WIN_SHIFT

PRINTF_LIMIT = 10000
_CONV = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXcsfFeEgGaAp%])")


def _cstring(st, ptr: int, limit: int = 4096) -> str:
    """Read a NUL-terminated string at a generic global (or local) address."""
    if (ptr >> WIN_SHIFT) == (GLOBAL_BASE >> WIN_SHIFT):
        buf = st.heap.buf
        off = ptr - GLOBAL_BASE
    else:
        return f"<string at {ptr:#x}>"
    end = off
    while end < min(buf.size, off + limit) and buf[end] != 0:
        end += 1
    return bytes(buf[off:end]).decode("utf-8", errors="replace")


def format_printf(fmt: str, arg_bytes: bytes, read_string) -> str:
    """Format like C printf with arguments packed as vprintf packs them."""
    out, pos, off = [], 0, 0
    for m in _CONV.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if conv in "fFeEgGaA":
            size, code = 8, "d"
        elif conv in "sp" or length in ("l", "ll", "z", "j", "t"):
            size, code = 8, ("Q" if conv in "uxXop" else "q")
        else:
            size, code = 4, ("I" if conv in "uxXoc" else "i")
        off = (off + size - 1) // size * size
        if off + size > len(arg_bytes):
            out.append(m.group(0))
            continue
        val = struct.unpack_from("<" + code, arg_bytes, off)[0]
        off += size
        spec = "%" + (flags or "") + (width or "") + (("." + prec) if prec is not None else "")
        if conv == "s":
            out.append((spec + "s") % read_string(val))
        elif conv == "p":
            out.append((spec + "s") % hex(val))
        elif conv == "c":
            out.append((spec + "c") % chr(val & 0xFF))
        elif conv in "aA":
            out.append(float(val).hex())
        elif conv in "diu":
            out.append((spec + "d") % val)
        else:
            out.append((spec + conv) % val)
    out.append(fmt[pos:])
    return "".join(out)


def _local_bytes(st, t: int, ptr: int, n: int) -> bytes:
    a = ptr - LOCAL_WIN
    lim = st.prog.local_size
    a0 = max(0, min(a, lim))
    a1 = max(a0, min(a + n, lim))
    base = t * st.lstride
    return bytes(st.lmem[base + a0: base + a1])


def build_vprintf(ins: ir.Instr, ctx: Ctx):
    fmt_a = ctx.address(ins.args[0])
    arg_a = ctx.address(ins.args[1])
    ret_w = ctx.address(ins.args[2]) if len(ins.args) > 2 else None

    def run(st, m):
        sel = np.arange(st.T) if m is None else np.flatnonzero(m)
        fmts = st.load(ins, "local", fmt_a(st), m, np.uint64)
        args = st.load(ins, "local", arg_a(st), m, np.uint64)
        count = st.side.get("printf_lines", 0)
        lines = []
        for t in sel:
            if count >= PRINTF_LIMIT:
                break
            fmt = _cstring(st, int(fmts[t]))
            ap = int(args[t])
            raw = _local_bytes(st, int(t), ap, 512) if (ap >> WIN_SHIFT) == (LOCAL_WIN >> WIN_SHIFT) else b""
            lines.append(format_printf(fmt, raw, lambda p: _cstring(st, int(p))))
            count += 1
        if count >= PRINTF_LIMIT and not st.side.get("printf_capped"):
            lines.append(f"[ptxlab emu] printf output capped at {PRINTF_LIMIT} lines for this launch\n")
            st.side["printf_capped"] = True
        st.side["printf_lines"] = count
        sys.stdout.write("".join(lines))
        sys.stdout.flush()
        if ret_w is not None:
            st.store(ins, "local", ret_w(st), m, np.zeros(st.T, np.uint32), np.uint32)
    return run


def build_assertfail(ins: ir.Instr, ctx: Ctx):
    addrs = [ctx.address(a) for a in ins.args[:4]]

    def run(st, m):
        sel = np.arange(st.T) if m is None else np.flatnonzero(m)
        msg_p, file_p, line_p, func_p = (st.load(ins, "local", a(st), m, np.uint64) for a in addrs)
        t = int(sel[0])
        line = int(line_p[t]) & 0xFFFFFFFF
        st.fault(ins, sel, f"device-side assert failed: {_cstring(st, int(msg_p[t]))}",
                 f"at {_cstring(st, int(file_p[t]))}:{line} in {_cstring(st, int(func_p[t]))}")
    return run


# ---------------------------------------------------------------------------------------------------------------
# the emulator's own pseudo-instructions (program.py rewrites the CUDA runtime's vprintf / __assertfail calls)
# ---------------------------------------------------------------------------------------------------------------
FORMS = register({}, [
    ("ptxlab.vprintf",       "", build_vprintf),
    ("ptxlab.assertfail",    "", build_assertfail),
])
