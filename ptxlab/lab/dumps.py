"""Stage outputs: dumps (``.npz`` + JSON metadata), the guarded launch every B/C stage uses, mismatch reports.

Dump format: ``<dir>/<stage>_<name>.npz`` holds the arrays (e.g. ``got``, ``expected`` as lanes x columns uint32
TMEM images), a ``__meta__`` entry (JSON text) and, written last, the completeness marker ``__complete__`` (the
sha256 of every array's name, dtype, shape and bytes); ``<dir>/<stage>_<name>.json`` holds the same metadata for
people and tools: stage, name, shape, dtype, backend, arch, source hash, decode hint (``fp32`` / ``ue4m3x4`` /
``u32``), axes (``["lane", "column"]``), created (UTC ISO time). Both files are written atomically
(ptxlab/fileio.py). ``python lab.py diff a.npz b.npz`` compares two dumps; it refuses a dump whose marker is missing
or does not match its arrays (interrupted, damaged, or not written by :func:`write_dump`).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from ptxlab.errors import DeviceUnavailable, EmuError, LaunchError, PtxlabError, UsageError

__all__ = ["write_dump", "load_dump", "launch_guarded", "LaunchOutcome", "mismatch_report", "decode_word",
           "ue4m3_value", "EMU_RULE_HINTS", "NEEDS_SM100"]

META_KEY = "__meta__"
COMPLETE_KEY = "__complete__"


def _digest(arrays: Mapping[str, np.ndarray]) -> str:
    import hashlib

    h = hashlib.sha256()
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(f"{k}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()
NEEDS_SM100 = "needs an sm_100a GPU or --backend emu"


# ------------------------------------------------------------------------------------------------ dumps
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def write_dump(dump_dir: os.PathLike, stage: str, name: str, arrays: Mapping[str, np.ndarray],
               meta: Optional[Mapping[str, Any]] = None) -> Path:
    """Write ``<dump_dir>/<stage>_<name>.npz`` (+ ``.json``) atomically; returns the .npz path."""
    d = Path(dump_dir)
    d.mkdir(parents=True, exist_ok=True)
    first = next(iter(arrays.values())) if arrays else np.zeros(0)
    info: Dict[str, Any] = {
        "stage": stage,
        "name": name,
        "shape": list(np.shape(first)),
        "dtype": str(np.asarray(first).dtype),
        "arrays": {k: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype)} for k, v in arrays.items()},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    info.update(dict(meta or {}))
    base = d / f"{_safe(stage)}_{_safe(name)}"
    npz, js = base.with_suffix(".npz"), base.with_suffix(".json")
    from ptxlab.fileio import atomic_open, atomic_write

    payload = {k: np.asarray(v) for k, v in arrays.items()}
    if META_KEY in payload or COMPLETE_KEY in payload:
        raise ValueError(f"write_dump: array names {META_KEY!r} / {COMPLETE_KEY!r} are reserved")
    payload[META_KEY] = np.array(json.dumps(info, sort_keys=True))
    payload[COMPLETE_KEY] = np.array(_digest(payload))     # last entry of the archive: the completeness marker
    with atomic_open(npz, "wb") as f:
        np.savez_compressed(f, **payload)
    atomic_write(js, json.dumps(info, indent=1, sort_keys=True))
    return npz


def load_dump(path: os.PathLike) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """Arrays and metadata of a dump (metadata from the npz, else the sibling .json, else {})."""
    p = Path(path)
    if p.is_dir():
        found = sorted(q.name for q in p.glob("*.npz"))
        raise UsageError(f"{p} is a directory; pass one of its dumps" +
                         (f" ({', '.join(found[:5])}{', ...' if len(found) > 5 else ''})" if found else
                          " (it holds no .npz dumps)"))
    if not p.is_file():
        raise UsageError(f"dump {p} does not exist; stages write dumps to --dump DIR (default ./ptxlab_dump)")
    with open(p, "rb") as f:
        head = f.read(4)
    if head != b"PK\x03\x04":   # every .npz is a zip archive; anything else (a pickle, text, .npy) is not a dump
        raise UsageError(f"{p} is not a lab dump: not an .npz (zip) file; pass a .npz written by a stage's --dump")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k not in (META_KEY, COMPLETE_KEY)}
            raw_meta = z[META_KEY] if META_KEY in z.files else None
            marker = str(z[COMPLETE_KEY]) if COMPLETE_KEY in z.files else None
            meta = json.loads(str(raw_meta)) if raw_meta is not None else {}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, json.JSONDecodeError) as exc:
        raise UsageError(f"{p} is not a readable lab dump (truncated or damaged: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}); re-run the stage with --dump") from exc
    if marker is None:
        raise UsageError(f"{p} is an incomplete lab dump: its completeness marker ({COMPLETE_KEY}) is missing, so some "
                         f"arrays may be missing too (it has {', '.join(sorted(arrays)) or 'none'}); it was interrupted "
                         "or not written by a stage's --dump; re-run the stage with --dump")
    check = dict(arrays)
    if raw_meta is not None:
        check[META_KEY] = raw_meta
    if marker != _digest(check):
        raise UsageError(f"{p} is a damaged lab dump: its arrays do not match its completeness marker; re-run the "
                         "stage with --dump")
    return arrays, meta


# ------------------------------------------------------------------------------------------------ launches
# Emulator rule tags -> what it means in the kernel (ptx_facts §1/§2/§7; ptx_docs/tcgen05.md table).
EMU_RULE_HINTS = {
    "tmem:ncols": "cause: tcgen05.alloc/dealloc column count must be a power of 2 in [32, 512] (PTX 9.7.16.7.1)",
    "tmem:leak": "cause: TMEM still allocated at kernel exit; every tcgen05.alloc needs a tcgen05.dealloc by one "
                 "warp before the kernel exits (PTX 9.7.16.7.1)",
    "tmem:warp-quarter": "cause: a warp read/wrote TMEM lanes outside its 32-lane quarter; warp w may access only "
                         "lanes 32*(w%4)..+31 (PTX 9.7.16.8.1) - build taddr from tmem_warp_lane_base()",
    "tmem:alloc-after-relinquish": "cause: tcgen05.alloc after tcgen05.relinquish_alloc_permit in the same CTA "
                                   "(PTX 9.7.16.7.1)",
    "tmem:alloc-increasing": "cause: a later tcgen05.alloc asked for more columns than an earlier one in the CTA "
                             "(PTX 9.7.16.7.1)",
    "tmem:dealloc-mismatch": "cause: tcgen05.dealloc address/column count differ from the allocation",
    "tmem:read-before-complete": "cause: TMEM read before the async op (tcgen05.cp/mma) completed; wait on the "
                                 "mbarrier its tcgen05.commit arrives on, then tcgen05.fence::after_thread_sync",
    "tmem:unallocated": "cause: TMEM access outside every live allocation (column range or freed columns)",
    "proxy:fence-async": "cause: SMEM written by generic stores (st.shared) is read by the async proxy (tcgen05.cp/"
                         "mma operand, TMA store, cp.async.bulk) without fence.proxy.async: the writing threads must "
                         "run fence.proxy.async.shared::cta (fence_sf_smem_to_async / fence_view_async_shared) after "
                         "their stores and before the barrier (PTX 8.6 proxies, 9.7.13.4)",
    "wait::ld": "cause: registers of a tcgen05.ld used before tcgen05.wait::ld (tcgen05.ld is asynchronous, "
                "PTX 9.7.16.8.3) - call tmem_wait_ld() before using them",
}


def hint_for(message: str) -> str:
    for tag, hint in EMU_RULE_HINTS.items():
        if (f"[{tag}]" in message) or (tag == "wait::ld" and "before the asynchronous tcgen05.ld" in message):
            return hint
    return ""


class LaunchOutcome:
    """Result of launch_guarded: ok, and the Check row to report when not ok (name, detail, refused)."""

    def __init__(self, ok: bool, detail: str = "", refused: bool = False) -> None:
        self.ok, self.detail, self.refused = ok, detail, refused


def launch_guarded(dev_getter: Any, mod: Any, kernel: str, **kw: Any) -> LaunchOutcome:
    """Open the device (``dev_getter()``) and launch; map DeviceUnavailable to a clean 'needs an sm_100a GPU' refusal
    and emulator/launch errors to a detail with the error text plus the likely cause."""
    try:
        dev = dev_getter()
        strict = getattr(dev, "strict_rules", None)   # the lab checks the PTX ISA text: strict emulator rules
        if callable(strict):                          # (ptxlab/emu/checks/fidelity.py; hardware-tolerated breaks error)
            with strict("all"):
                dev.launch(mod, kernel, **kw)
        else:
            dev.launch(mod, kernel, **kw)
        sync = getattr(dev, "synchronize", None)
        if callable(sync):  # surface sticky errors here, in the stage that caused them
            sync()
    except DeviceUnavailable as exc:
        return LaunchOutcome(False, f"{NEEDS_SM100}: {exc}", refused=True)
    except (EmuError, LaunchError) as exc:
        msg = str(exc)
        hint = hint_for(msg)
        return LaunchOutcome(False, (hint + "\n" if hint else "") + msg)
    return LaunchOutcome(True)


# ------------------------------------------------------------------------------------------------ decoding
def ue4m3_value(code: int) -> float:
    """UE4M3 (e4m3fn, sign ignored) byte -> value; 0x7F/0xFF NaN (ptx_facts §8)."""
    c = int(code) & 0x7F
    if c == 0x7F:
        return float("nan")
    e, m = c >> 3, c & 7
    return (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)


def decode_word(word: int, decode: str = "all") -> str:
    """Human text for one 32-bit TMEM word: hex, fp32 value, UE4M3 bytes (byte 0 first)."""
    w = int(word) & 0xFFFFFFFF
    f = float(np.array([w], dtype=np.uint32).view(np.float32)[0])
    b = [(w >> (8 * i)) & 0xFF for i in range(4)]
    ue = "[" + " ".join(f"{x:02x}={ue4m3_value(x):g}" for x in b) + "]"
    if decode == "fp32":
        return f"0x{w:08x} fp32={f:.9g}"
    if decode == "ue4m3x4":
        return f"0x{w:08x} ue4m3{ue}"
    if decode == "u32":
        return f"0x{w:08x}"
    return f"0x{w:08x} fp32={f:.9g} ue4m3{ue}"


def mismatch_report(got: np.ndarray, expected: np.ndarray, decode: str = "all", limit: int = 5,
                    col_label: Any = None) -> str:
    """'N of M words differ; first: lane L col C got ... expected ...' for lanes x columns arrays ('' if equal).
    col_label(c) -> str may annotate a column (e.g. 'SFA k-chunk 2 col 1')."""
    g, e = np.asarray(got), np.asarray(expected)
    if g.shape != e.shape:
        return f"shape differs: got {g.shape}, expected {e.shape}"
    bad = np.argwhere(g != e)
    if bad.size == 0:
        return ""
    lines = [f"{len(bad)} of {e.size} words differ (lanes with errors: {len(np.unique(bad[:, 0]))}, "
             f"columns with errors: {len(np.unique(bad[:, 1]))}); first:"]
    for lane, col in bad[:limit]:
        lab = f" ({col_label(int(col))})" if col_label else ""
        lines.append(f"  lane {lane} col {col}{lab}: got {decode_word(g[lane, col], decode)}, "
                     f"expected {decode_word(e[lane, col], decode)}")
    return "\n".join(lines)
