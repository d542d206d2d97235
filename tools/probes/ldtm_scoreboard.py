#!/usr/bin/env python3
"""Does ptxas guard tcgen05.ld (SASS LDTM) destination registers with a scoreboard wait before their first use,
with or without tcgen05.wait::ld?  (issue 12, item 5; evidence in ptx_docs/tcgen05.md "tcgen05.ld without wait::ld")

Reads nvdisasm --print-instruction-encoding output and decodes each instruction's control bits from the high
64-bit word (bits 105..125 of the 128-bit instruction: stall 4, yield 1, write scoreboard 3, read scoreboard 3,
wait mask 6, reuse 4 -- the Volta..Hopper layout documented by public reverse-engineering work; the decoded
producer/consumer pairs of ordinary loads (LDC/S2R -> first use) are checked as a sanity test of that layout).
For every LDTM: its destination registers and write scoreboard; the first later instruction (straight-line, by
address) that reads one of them; whether that consumer or an instruction between waits on the scoreboard.

    python tools/probes/ldtm_scoreboard.py                  # probes (x4 / x32 loads, with / without wait::ld)
    python tools/probes/ldtm_scoreboard.py --tutorial01     # + CuTe tutorial 01 (reads without wait::ld)
    python tools/probes/ldtm_scoreboard.py --sass file.sass # any nvdisasm -hex listing
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, ROOT)

_INS = re.compile(r"^\s+/\*([0-9a-f]{4,6})\*/\s+(.*?)\s*/\* 0x([0-9a-f]{16}) \*/")
_HI = re.compile(r"^\s+/\* 0x([0-9a-f]{16}) \*/")
_SEC = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_REG = re.compile(r"\bR(\d+)\b")

PROBE_SRC = r'''
#define LD4(a,b,c,d,t) asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];" \
    : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(t))
extern "C" __global__ void x4_nowait(unsigned* out, unsigned taddr) {
    unsigned a, b, c, d; LD4(a, b, c, d, taddr);
    out[threadIdx.x] = a + b * 3 + c * 5 + d * 7;
}
extern "C" __global__ void x4_wait(unsigned* out, unsigned taddr) {
    unsigned a, b, c, d; LD4(a, b, c, d, taddr);
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    out[threadIdx.x] = a + b * 3 + c * 5 + d * 7;
}
// two loads in flight, consumed in reverse order, no wait::ld
extern "C" __global__ void two_nowait(unsigned* out, unsigned taddr) {
    unsigned a, b, c, d, e, f, g, h;
    LD4(a, b, c, d, taddr); LD4(e, f, g, h, taddr + 4);
    out[threadIdx.x] = (e ^ f ^ g ^ h) * 3 + (a ^ b ^ c ^ d);
}
// loaded values kept across a loop (consumer far from the load)
extern "C" __global__ void loop_nowait(unsigned* out, unsigned taddr, int n) {
    unsigned a, b, c, d, s = 0; LD4(a, b, c, d, taddr);
    for (int i = 0; i < n; ++i) s = s * 33 + out[i];
    out[threadIdx.x] = s + a + b + c + d;
}
'''


def decode(hi: int) -> dict:
    c = hi >> 41
    return {"stall": c & 15, "wr": (c >> 5) & 7, "rd": (c >> 8) & 7, "wait": (c >> 11) & 63}


def parse(sass: str) -> dict:
    """{function: [(addr, text, ctrl)]}"""
    out: dict = {}
    cur = None
    lines = sass.splitlines()
    for i, ln in enumerate(lines):
        m = _SEC.match(ln)
        if m:
            cur = m.group(1)
            out.setdefault(cur, [])
            continue
        m = _INS.match(ln)
        if m and cur is not None and i + 1 < len(lines):
            m2 = _HI.match(lines[i + 1])
            if m2:
                out[cur].append((int(m.group(1), 16), m.group(2).rstrip(" ;"), decode(int(m2.group(1), 16))))
    return out


def _dests(text: str) -> list:
    """Registers written by an LDTM: 'LDTM.x4 R4, tmem[..]' -> R4..R7 (x1 when no .xN)."""
    m = re.match(r"LDTM(\S*)\s+R(\d+)", text)
    mods, base = m.group(1), int(m.group(2))
    n = 1
    mm = re.search(r"\.x(\d+)", mods)
    if mm:
        n = int(mm.group(1))
    if ".16dp" in mods or "16x" in mods:   # shapes with several registers per x are reported, not guessed
        n = None
    return list(range(base, base + n)) if n else [base]


def _sources(text: str) -> set:
    op, _, rest = text.partition(" ")
    parts = [p.strip() for p in rest.split(",")]
    if op.startswith(("ST", "RED", "ATOM")) and not op.startswith("STL"):
        srcs = parts                        # stores read every operand
    else:
        srcs = parts[1:]                    # first operand is the destination
    regs = set()
    for p in srcs:
        for r in _REG.findall(p):
            regs.add(int(r))
        m = re.search(r"R(\d+)\.64", p)
        if m:
            regs.add(int(m.group(1)) + 1)
    return regs


def analyse(fn: list) -> list:
    """One row per LDTM: (addr, text, wr, consumer addr/text, guarded: bool|None (branch in between))."""
    rows = []
    for k, (addr, text, ctrl) in enumerate(fn):
        if not text.startswith("LDTM"):
            continue
        dests = set(_dests(text))
        sb = ctrl["wr"]
        waited = False
        verdict = None
        cons = None
        crossed = False
        for a2, t2, c2 in fn[k + 1:]:
            if sb != 7 and (c2["wait"] >> sb) & 1:
                waited = True
            if _sources(t2) & dests:
                cons = (a2, t2 + (" [after a branch]" if crossed else ""))
                verdict = waited
                break
            if t2.startswith(("EXIT", "RET", "CALL")) or " CALL" in t2:
                verdict = "before-transfer" if waited else None
                break
            if t2.startswith(("BRA", "@")) and "BRA" in t2:
                crossed = True          # scan on in address order (the fall-through / loop-exit path)
            # a later write of a destination register ends the search (value dead)
            op_dst = _REG.findall(t2.partition(" ")[2].split(",")[0])
            if op_dst and int(op_dst[0]) in dests and not t2.startswith(("ST", "RED", "ATOM")):
                dests.discard(int(op_dst[0]))
                if not dests:
                    break
        rows.append((addr, text, sb, cons, verdict))
    return rows


def report(sass: str, title: str) -> Counter:
    total: Counter = Counter()
    for fn, ins in parse(sass).items():
        tally: Counter = Counter()
        rows = analyse(ins)
        if not rows:
            continue
        print(f"== {title}: {fn[:60]}{'...' if len(fn) > 60 else ''}: {len(rows)} LDTM")
        for addr, text, sb, cons, verdict in rows[:6]:
            c = f"{cons[0]:05x} {cons[1]}" if cons else "(no straight-line consumer)"
            v = {True: f"waits on SB{sb}", False: "NO WAIT", None: "unknown",
                 "before-transfer": f"SB{sb} waited before the next call/exit"}[verdict]
            print(f"   {addr:05x} {text:34s} wr=SB{sb}  first use {c}: {v}")
        for *_, verdict in rows:
            tally[{True: "guarded", False: "UNGUARDED", None: "unknown",
                   "before-transfer": "waited-before-call"}[verdict]] += 1
        print(f"   summary: {dict(tally)}")
        total.update(tally)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sass")
    ap.add_argument("--tutorial01", action="store_true")
    a = ap.parse_args(argv)
    from ptxlab.toolchain import sass as S
    if a.sass:
        report(open(a.sass).read(), a.sass)
        return 0
    import ptxlab
    mod = ptxlab.compile(PROBE_SRC, arch="sm_100a", name="ldtm_probe.cu")
    report(S.disassemble(mod.cubin, extra_args=["--print-instruction-encoding"]), "probe")
    if a.tutorial01:
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        from cutlass_tutorial import build
        m = build.compile_tutorial()
        report(S.disassemble(m.cubin, extra_args=["--print-instruction-encoding"]), "tutorial 01")
    return 0


if __name__ == "__main__":
    sys.exit(main())
