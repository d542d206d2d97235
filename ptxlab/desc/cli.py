"""`lab.py desc ...`: print, check and build tcgen05 descriptors.

    desc smem 0x4000404000010040 [--major k|mn] [--elem e2m1|8bit|16bit|32bit] [--rows 16] [--chunks 4]
    desc idesc --kind mxf4nvf4 0x08040480 [--cta-group 1|2] [--ws] [--block 16|32]
    desc tmem 0x00200040
    desc encode smem --start 0x400 --sbo 1024 [--lbo 16] --swizzle 128B [--base-offset 0] [--lbo-mode 0]
    desc encode idesc --kind mxf4nvf4 --m 128 --n 16 [--a E2M1 --b E2M1 --d F32 --scale UE4M3 ...]

EXAMPLES below (shown by `--help` and in the README) lists a valid example for every decoder and encoder.

Exit status: 0 = valid, 2 = invalid descriptor or bad arguments (errors are printed, never a traceback).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, Sequence

from rich.console import Console
from rich.table import Table

from ptxlab.desc.fields import DescError
from ptxlab.desc.idesc import AB_FORMATS, D_FORMATS, IDESC_LAYOUTS, KINDS, SCALE_FORMATS, InstrDesc, decode_idesc
from ptxlab.desc.smem import (SMEM_DESC, SWIZZLE_CODES, SWIZZLE_WIDTH, SmemDesc, _norm_swizzle,
                              smem_operand_addresses)
from ptxlab.desc.tmem import TMEM_ADDR, TmemAddr

__all__ = ["main", "EXAMPLES"]

ELEM_BITS = {"e2m1": 4, "fp4": 4, "8bit": 8, "16bit": 16, "32bit": 32}


def _int(s: str) -> int:
    return int(s, 0)


MAX_ROWS, MAX_CHUNKS = 1024, 64      # display bounds: a table this size is already more than a screen


def _bounded(lo: int, hi: int, what: str):
    """argparse type: an integer (decimal or 0x...) in [lo, hi]; argparse turns the ValueError into a usage error."""
    def parse(s: str) -> int:
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} {v} is out of range [{lo:#x}, {hi:#x}]" if hi > 4096 else
                                             f"{what} {v} is out of range [{lo}, {hi}]")
        return v
    parse.__name__ = what
    return parse


_U64 = _bounded(0, (1 << 64) - 1, "a 64-bit descriptor")
_U32 = _bounded(0, (1 << 32) - 1, "a 32-bit value")
_SMEM_BYTES = _bounded(0, (1 << 18) - 1, "a shared-memory byte value")


# (subcommand, arguments after `lab.py desc`, what it shows): every example is valid (tests run each one); the same
# lines are printed by `lab.py desc --help` / `lab.py desc SUB --help` and listed in the README.
EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("smem", "smem 0x4000404000010040 --elem e2m1 --rows 8",
     "K-major SWIZZLE_128B E2M1 operand at 0x400, LBO 16 B, SBO 1024 B: fields and chunk addresses"),
    ("smem", "smem 0x0000400400400040 --major mn --rows 4",
     "MN-major, no swizzle: start 0x400, LBO 1024 B, SBO 64 B"),
    ("idesc", "idesc --kind mxf4nvf4 0x08040480 --block 16",
     "NVFP4 E2M1 x E2M1 -> F32, UE4M3 scales, M=128 N=16 (the GEMV MMA)"),
    ("idesc", "idesc --kind f16 0x08400490",
     "BF16 x BF16 -> F32, M=128 N=256"),
    ("tmem", "tmem 0x00200040", "TMEM address: lane 32 (warp quarter 1), column 64"),
    ("encode smem", "encode smem --start 0x400 --lbo 16 --sbo 1024 --swizzle 128B --elem e2m1",
     "-> 0x4000404000010040"),
    ("encode idesc", "encode idesc --kind mxf4nvf4 --m 128 --n 16 --a E2M1 --b E2M1 --scale UE4M3 --block 16",
     "-> 0x08040480"),
    ("encode idesc", "encode idesc --kind f16 --m 128 --n 256 --a BF16 --b BF16 --d F32", "-> 0x08400490"),
)

AB_CHOICES = sorted({f for fmts in AB_FORMATS.values() for f in fmts.values()})
MAJORS = ["K", "MN"]


def _examples(cmd: Optional[str] = None) -> str:
    rows = [(c, a, w) for c, a, w in EXAMPLES if cmd is None or c == cmd]
    return "examples:\n" + "\n".join(f"  python lab.py desc {a}\n      {w}" for _, a, w in rows)


def _upper(s: str) -> str:
    return s.upper()


def _swizzle(s: str) -> str:
    return str(_norm_swizzle(s))


def _sub(sub: Any, name: str, cmd: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help, epilog=_examples(cmd),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _view_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--major", type=_upper, choices=MAJORS, default="K",
                   help="operand layout the descriptor is read as: K-major (default) or MN-major")
    p.add_argument("--elem", choices=sorted(ELEM_BITS), default=None,
                   help="element type: also show element indices per 16-B chunk (e2m1 = fp4)")
    p.add_argument("--rows", type=_bounded(1, MAX_ROWS, "--rows"), default=16,
                   help=f"rows (K-major) / K rows (MN-major) to show (default 16, at most {MAX_ROWS})")
    p.add_argument("--chunks", type=_bounded(1, MAX_CHUNKS, "--chunks"), default=None,
                   help=f"16-B chunks to show per row (default: one swizzle row, at most {MAX_CHUNKS})")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lab.py desc", description="Decode, validate and encode tcgen05 descriptors.",
                                epilog=_examples(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="{smem,idesc,tmem,encode}")
    s = _sub(sub, "smem", "smem", "decode a 64-bit shared-memory matrix descriptor (PTX ISA 9.7.16.4.1)")
    s.add_argument("desc", type=_U64, help="the descriptor, e.g. 0x4000404000010040")
    _view_args(s)
    i = _sub(sub, "idesc", "idesc", "decode a 32-bit instruction descriptor (PTX ISA 9.7.16.4.2)")
    i.add_argument("desc", type=_U32, help="the descriptor, e.g. 0x08040480")
    _idesc_ctx(i)
    t = _sub(sub, "tmem", "tmem", "decode a TMEM address (lane in bits 31..16, column in bits 15..0)")
    t.add_argument("addr", type=_U32, help="the address, e.g. 0x00200040")
    e = sub.add_parser("encode", help="build a descriptor from fields", description="build a descriptor from fields",
                       epilog=_examples("encode smem") + "\n" + _examples("encode idesc").split("\n", 1)[1],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    esub = e.add_subparsers(dest="what", required=True)
    es = _sub(esub, "smem", "encode smem", "build a shared-memory matrix descriptor (byte values; 16-B aligned)")
    es.add_argument("--start", type=_SMEM_BYTES, required=True, help="operand start address in shared memory (bytes)")
    es.add_argument("--lbo", type=_SMEM_BYTES, default=0, help="leading-dimension byte offset (default 0)")
    es.add_argument("--sbo", type=_SMEM_BYTES, default=0, help="stride-dimension byte offset (default 0)")
    es.add_argument("--swizzle", type=_swizzle, default="128B", choices=list(SWIZZLE_CODES.values()),
                    help="swizzling mode (default 128B; SW128 / SWIZZLE_128B / 128 are accepted too)")
    es.add_argument("--base-offset", type=_int, default=0, choices=range(8), metavar="{0..7}",
                    help="matrix base offset (swizzle pattern phase; default 0)")
    es.add_argument("--lbo-mode", type=_int, default=0, choices=[0, 1],
                    help="leading-byte-offset mode: 0 relative (default), 1 absolute")
    _view_args(es)
    ei = _sub(esub, "idesc", "encode idesc", "build a tcgen05.mma instruction descriptor")
    ei.add_argument("--m", type=_bounded(1, 1 << 16, "--m"), required=True, help="MMA M (e.g. 64, 128, 256)")
    ei.add_argument("--n", type=_bounded(1, 1 << 16, "--n"), required=True,
                    help="MMA N (multiple of 8 or 16, e.g. 16, 128, 256)")
    ei.add_argument("--a", dest="a_fmt", type=_upper, choices=AB_CHOICES,
                    help="A element type (default: the kind's usual one; legal ones depend on --kind)")
    ei.add_argument("--b", dest="b_fmt", type=_upper, choices=AB_CHOICES, help="B element type (as --a)")
    ei.add_argument("--d", dest="d_fmt", type=_upper, choices=list(D_FORMATS.values()),
                    help="accumulator type (dense kinds; default F32, S32 for i8)")
    ei.add_argument("--scale", dest="scale_fmt", type=_upper, choices=list(SCALE_FORMATS.values()),
                    help="scale-factor type (block-scaled kinds; default UE4M3 for mxf4nvf4, else UE8M0)")
    ei.add_argument("--a-major", type=_upper, choices=MAJORS, default="K", help="A layout (default K)")
    ei.add_argument("--b-major", type=_upper, choices=MAJORS, default="K", help="B layout (default K)")
    ei.add_argument("--neg-a", type=int, choices=[0, 1], default=0, help="negate A (default 0)")
    ei.add_argument("--neg-b", type=int, choices=[0, 1], default=0, help="negate B (default 0)")
    ei.add_argument("--sfa-id", type=int, choices=range(4), default=0, metavar="{0..3}",
                    help="SFA ID: byte / half-word of the SF TMEM word (block-scaled kinds; default 0)")
    ei.add_argument("--sfb-id", type=int, choices=range(4), default=0, metavar="{0..3}", help="SFB ID (as --sfa-id)")
    ei.add_argument("--sparse", type=int, choices=[0, 1], default=0, help="sparse MMA (default 0, dense)")
    _idesc_ctx(ei)
    return p


def _idesc_ctx(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", required=True, type=str.lower, choices=list(KINDS), help="the MMA's .kind")
    p.add_argument("--cta-group", type=int, default=1, choices=[1, 2], help="cta_group::1 (default) or ::2")
    p.add_argument("--ws", action="store_true", help="the .ws (weight-stationary) variant")
    p.add_argument("--block", type=int, default=None, choices=[16, 32],
                   help="scale vector size (.block16 / .block32) if known")


def _field_table(title: str, rows: list[tuple[str, str, str, str, str]]) -> Table:
    tab = Table(title=title, title_justify="left")
    for col in ("bits", "field", "code", "value", "meaning"):
        tab.add_column(col)
    for bits, name, code, value, meaning in rows:
        if name.startswith("_") and code == "0x0":
            continue
        tab.add_row(bits, name, code, value, meaning)
    return tab


def _errors(con: Console, errs: list[str]) -> int:
    if not errs:
        return 0
    con.print(f"[bold red]INVALID[/] ({len(errs)} error{'s' if len(errs) > 1 else ''}):")
    for e in errs:
        con.print(f"  - {e}", markup=False, highlight=False)
    return 2


def _smem(con: Console, desc: int, major: str, elem: Optional[str], nrows: int, nchunks: Optional[int]) -> int:
    major = major.upper()
    d = SmemDesc.decode(desc, major=major)
    con.print(_field_table(f"SMEM matrix descriptor {desc:#018x} (PTX ISA 9.7.16.4.1)", SMEM_DESC.rows(desc)))
    if _errors(con, d.errors):
        return 2
    sw = SWIZZLE_CODES[d.codes["swizzle"]]
    w = SWIZZLE_WIDTH[sw]
    con.print(f"{major}-major{' (default; --major mn for MN-major)' if major == 'K' else ''}, swizzle {sw}, "
              f"start {d['start_address']:#x}, LBO {d['lbo']} B, SBO {d['sbo']} B", highlight=False)
    if major == "K":
        con.print("  K-major: row r, K byte kb -> start + " + (
            "(r%8)*16 + (r/8)*SBO + (kb%16) + (kb/16)*LBO  (LBO = next core matrix along K)" if sw == "NONE" else
            f"(r%8)*{w} + (r/8)*SBO + kb, kb < {w}  (LBO unused), then swizzle {sw}"), highlight=False)
    else:
        con.print("  MN-major: MN byte mnb, K row k -> start + " + (
            "(mnb%16) + (mnb/16)*SBO + (k%8)*16 + (k/8)*LBO" if sw == "NONE" else
            f"(mnb%{w}) + (mnb/{w})*LBO + (k%8)*{w} + (k/8)*SBO, then swizzle {sw}"), highlight=False)
    chunks = nchunks if nchunks is not None else (2 if sw == "NONE" else max(2, min(w // 16, 8)))
    bits = ELEM_BITS[elem] if elem else None
    try:
        if major == "K":
            addrs = smem_operand_addresses(desc, nrows, 16 * chunks, "K")
        else:
            addrs = smem_operand_addresses(desc, 16 * chunks, nrows, "MN").T
    except DescError as exc:
        return _errors(con, exc.errors)
    start = d["start_address"]
    lead = "row" if major == "K" else "k row"
    tab = Table(title=f"byte address (offset from start) of each 16-B chunk, first {nrows} "
                      f"{'rows' if major == 'K' else 'K rows'}", title_justify="left")
    tab.add_column(lead, justify="right")
    for c in range(chunks):
        hdr = f"{'K' if major == 'K' else 'MN'} bytes {16 * c}..{16 * c + 15}"
        if bits:
            epc = 128 // bits
            hdr += f"\n{'k' if major == 'K' else 'mn'} {epc * c}..{epc * c + epc - 1}"
        tab.add_column(hdr, justify="right")
    for r in range(nrows):
        tab.add_row(str(r), *[f"{int(addrs[r, 16 * c]):#x} (+{int(addrs[r, 16 * c]) - start})" for c in range(chunks)])
    con.print(tab)
    return 0


def _idesc(con: Console, kind: str, word: int, cta_group: int, ws: bool, block: Optional[int]) -> int:
    info = decode_idesc(kind, word, cta_group=cta_group, ws=ws, block=block, strict=False)
    con.print(_field_table(f"kind::{kind} instruction descriptor {word:#010x} (PTX ISA 9.7.16.4.2)",
                           IDESC_LAYOUTS[kind].rows(word)))
    scale = f", scales {info.scale_fmt}" if info.scale_fmt else ""
    con.print(f"MMA shape M x N x K = {info.shape} (cta_group::{cta_group}{' .ws' if ws else ''}); "
              f"A {info.a_fmt} {info.a_major}-major{' negated' if info.negate_a else ''} x "
              f"B {info.b_fmt} {info.b_major}-major{' negated' if info.negate_b else ''} -> D {info.d_fmt}{scale}"
              f"{'; sparse' if info.sparse else '; dense'}", highlight=False)
    return _errors(con, info.errors)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point; `argv` is what follows `desc` on the lab.py command line. Returns the exit status."""
    con = Console(width=160, highlight=False)
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse printed the usage error
        return int(exc.code or 0) and 2
    try:
        if args.cmd == "smem":
            return _smem(con, args.desc, args.major, args.elem, args.rows, args.chunks)
        if args.cmd == "idesc":
            return _idesc(con, args.kind, args.desc, args.cta_group, args.ws, args.block)
        if args.cmd == "tmem":
            d = TmemAddr.decode(args.addr)
            con.print(_field_table(f"TMEM address {args.addr:#010x} (PTX ISA 9.7.16.1.1)", TMEM_ADDR.rows(args.addr)))
            con.print(f"lane {d['lane']} (warp quarter {d['lane'] // 32 % 4}), column {d['col']}")
            return _errors(con, d.errors)
        if args.what == "smem":
            word = SmemDesc.encode(start_address=args.start, lbo=args.lbo, sbo=args.sbo, swizzle=args.swizzle,
                                   base_offset=args.base_offset, lbo_mode=args.lbo_mode)
            con.print(f"smem descriptor = {word:#018x}")
            return _smem(con, word, args.major, args.elem, args.rows, args.chunks)
        word = InstrDesc.encode(args.kind, args.m, args.n, a_fmt=args.a_fmt, b_fmt=args.b_fmt, d_fmt=args.d_fmt,
                                scale_fmt=args.scale_fmt, a_major=args.a_major, b_major=args.b_major,
                                negate_a=args.neg_a, negate_b=args.neg_b, sfa_id=args.sfa_id, sfb_id=args.sfb_id,
                                sparse=args.sparse, cta_group=args.cta_group, ws=args.ws, block=args.block)
        con.print(f"idesc = {word:#010x}")
        return _idesc(con, args.kind, word, args.cta_group, args.ws, args.block)
    except DescError as exc:
        return _errors(con, exc.errors)


if __name__ == "__main__":
    sys.exit(main())
