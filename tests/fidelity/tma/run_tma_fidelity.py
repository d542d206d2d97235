#!/usr/bin/env python3
"""TMA fidelity kit: run the same TMA probes on real hardware, on the emulator, and through the pure model, then diff.

    python tests/fidelity/tma/run_tma_fidelity.py run --backend cuda --out tma_cuda.npz      # on the H100 (lead)
    python tests/fidelity/tma/run_tma_fidelity.py run --backend emu  --out tma_emu.npz       # CPU emulator
    python tests/fidelity/tma/run_tma_fidelity.py run --backend model --out tma_model.npz    # ptxlab.emu.hw.tma only
    python tests/fidelity/tma/run_tma_fidelity.py compare tma_cuda.npz tma_model.npz        # bit-for-bit diff

Probes (``--probes``, default all):
  images  : every swizzle mode x dtype (UINT8, FLOAT16, 16U4_ALIGN8B) x rank 2..5 x {in bounds, OOB low, OOB high};
            the whole 1024-aligned shared window is dumped, so stray writes and untouched (0xA5) bytes show.
  tx      : the complete_tx byte count of partially-OOB boxes (ptx_facts UNCONFIRMED #10). tx_mode 1: expect_tx(E)
            without arriving, the load, a ~100 us sleep, then the only arrival, so the phase completes iff E equals
            the bytes the hardware counted (no intermediate tx==0 crossing can complete it). Run with E = full box,
            in-bound bytes and full-16: exactly one should complete; compare prints the verdict.
  narrow  : inner box narrower than the swizzle span (UNCONFIRMED #3): the hardware image shows the layout; loads
            for 128B x 112/96/80/64/48/32/16 B, 64B x 48/32/16 B, 32B x 16 B, and stores for 128B x 32/64/96 B and
            64B x 32 B, and stores of 128B x 48 B / 64B x 16 B. H100 (runs 1-3, 2026-11-22): legal iff inner
            bytes % 32 == 0, loads and stores alike; every case of this probe measured.
  txnarrow: the complete_tx byte count of narrow swizzled boxes (128B x 64/32 B, 64B x 32 B; tx_mode 1): expect_tx =
            box bytes ('full') vs rows x swizzle span ('padded'); exactly one should complete.
  nanfill : oob_fill='nan' on every float type: the OOB-NaN bit pattern (hw.tma.OOB_NAN_BITS; H100 runs 2-3: all
            seven measured). Plus, for BFLOAT16 / FLOAT64 / TFLOAT32 / *_FTZ, an in-bounds load of special values
            (denormals, NaN payloads, low mantissa bits: SPECIAL_BITS) that shows whether the load converts data
            (H100 run 3: TFLOAT32/_FTZ round to TF32, hw.tma.tf32_round; the others copy bytes).
  store   : TMA store, in bounds and partially OOB (OOB elements must not be written).
  align   : destination offsets 16..512 B off a 1024-B boundary (UNCONFIRMED #7).
On cuda every probe group runs in child processes: a case that faults (ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS)
poisons its CUDA context, so the child checks the context after any error and exits; the parent restarts a fresh
child at the next case. No fault can take later cases down with it.
All inputs derive from --seed, so every backend sees identical data. Nothing here needs a GPU except --backend cuda.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import traceback
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if ROOT not in sys.path:            # children are started as scripts; make `import ptxlab` work without PYTHONPATH
    sys.path.insert(0, ROOT)
POISON_SMEM = 0xA5
POISON_GMEM = 0x5A
BITS = {"UINT8": 8, "FLOAT16": 16, "FLOAT32": 32, "16U4_ALIGN8B": 4, "BFLOAT16": 16, "FLOAT64": 64, "TFLOAT32": 32,
        "FLOAT32_FTZ": 32, "TFLOAT32_FTZ": 32}
# nanfill probe: float types whose OOB-NaN pattern (and in-bound handling) the H100 has not shown yet
NANFILL_MORE = ("BFLOAT16", "FLOAT64", "TFLOAT32", "FLOAT32_FTZ", "TFLOAT32_FTZ")
# in-bound values that a converting load (flush-to-zero, TF32 rounding, NaN canonicalization) would change
SPECIAL_BITS = {
    16: [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7C01, 0x7E00, 0x7FFF, 0xFFFF,
         0x3C00, 0x3C01, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0x7F81, 0x7FC0, 0xFFC1, 0x8080, 0x0101],
    32: [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
         0xFF800000, 0x7F800001, 0x7FBFFFFF, 0x7FC00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x3F800000, 0x3F800001,
         0x3F800FFF, 0x3F801000, 0x3F801FFF, 0x3F802000, 0x3F803000, 0x3F807FFF, 0x3FFFFFFF, 0x00400000],
    64: [0x0, 0x8000000000000000, 0x1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
         0x7FF0000000000000, 0xFFF0000000000000, 0x7FF0000000000001, 0x7FF8000000000000, 0x7FFFFFFFFFFFFFFF,
         0x3FF0000000000001, 0x3FF00000FFFFFFFF, 0x36A0000000000000, 0x3800000000000000, 0x47EFFFFFE0000000],
}
SPAN = {"none": 64, "32B": 32, "64B": 64, "128B": 128, "128B_ATOM_32B": 128, "128B_ATOM_32B_FLIP_8B": 128,
        "128B_ATOM_64B": 128}


@dataclass
class Case:
    """One probe launch; everything a backend needs to reproduce it."""

    name: str
    probe: str
    kind: str                      # "load" | "store"
    dtype: str
    swizzle: str
    shape: list[int]
    strides: list[int]
    box: list[int]
    estr: list[int]
    coords: list[int]
    dst_off: int = 0
    expect: str = "full"           # "full" | "inbound" | "fullm16" (full - 16) | "padded" (rows x swizzle span)
    tx_mode: int = 0               # 1: deferred arrival (tx probe), see tma_probe.cu
    oob_fill: str = "none"
    seed: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def box_bytes(self) -> int:
        n = self.box[0] * BITS[self.dtype] // 8
        for b, e in zip(self.box[1:], self.estr[1:]):
            n *= -(-b // e)
        return n

    def inbound_bytes(self) -> int:
        """Bytes of in-bound elements (separable per dimension)."""
        n = 1
        for d in range(self.rank):
            step = 1 if d == 0 else self.estr[d]
            cnt = self.box[0] if d == 0 else -(-self.box[d] // step)
            n *= sum(1 for i in range(cnt) if 0 <= self.coords[d] + i * step < self.shape[d])
        return n * BITS[self.dtype] // 8

    def region(self) -> int:
        return -(-(self.dst_off + self.box_bytes()) // 1024) * 1024 + 1024

    def gmem_bytes(self) -> int:
        end = (self.shape[0] * BITS[self.dtype] + 7) // 8
        for d, s in zip(self.shape[1:], self.strides):
            end += (d - 1) * s
        return -(-end // 256) * 256 + 256


def _strides(shape: list[int], dtype: str, rng: np.random.Generator) -> list[int]:
    row = -(-(shape[0] * BITS[dtype] // 8) // 16) * 16 + 16 * int(rng.integers(0, 2))
    out, acc = [], row
    for d in shape[1:]:
        out.append(acc)
        acc = acc * d + 16 * int(rng.integers(0, 2))
    return out


def _case(probe: str, name: str, dtype: str, swizzle: str, rank: int, pos: str, rng: np.random.Generator,
          seed: int, inner_bytes: Optional[int] = None, estr: Optional[list[int]] = None, **kw: Any) -> Case:
    bits = BITS[dtype]
    inner = inner_bytes or SPAN[swizzle]
    box0 = inner * 8 // bits
    box = [box0] + [int(rng.integers(2, 6)) for _ in range(rank - 1)]
    es = estr or [1] * rank
    shape = [box0 * 2 + (0 if bits == 4 else int(rng.integers(0, 3)) * 16 // max(bits // 8, 1))] + \
            [box[d] * 2 + int(rng.integers(0, 3)) for d in range(1, rank)]
    if pos == "in":
        coords = [box0 // 2 if bits != 4 else box0 // 2 - (box0 // 2) % 2] + [1] * (rank - 1)
    elif pos == "lo":
        coords = [-(box0 // 2) - ((box0 // 2) % 2 if bits == 4 else 0)] + [-1] * (rank - 1)
    else:  # "hi": past the end in every dim
        coords = [shape[0] - box0 // 2 - ((shape[0] - box0 // 2) % 2 if bits == 4 else 0)] + \
                 [shape[d] - 1 for d in range(1, rank)]
    return Case(name=name, probe=probe, kind=kw.pop("kind", "load"), dtype=dtype, swizzle=swizzle, shape=shape,
                strides=_strides(shape, dtype, rng), box=box, estr=es, coords=coords, seed=seed, **kw)


def build_cases(seed: int, probes: set[str], quick: bool) -> list[Case]:
    """The deterministic case list for the given seed."""
    cases: list[Case] = []

    def rng_for(name: str) -> tuple[np.random.Generator, int]:
        s = (seed * 1_000_003 + zlib.crc32(name.encode())) & 0xFFFF_FFFF
        return np.random.default_rng(s), s

    def add(probe: str, name: str, *a: Any, **kw: Any) -> None:
        rng, s = rng_for(name)
        cases.append(_case(probe, name, *a, rng=rng, seed=s, **kw))

    swizzles = ["none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"]
    dtypes = ["UINT8", "FLOAT16", "16U4_ALIGN8B"]
    ranks = [2, 3] if quick else [2, 3, 4, 5]
    if "images" in probes:
        for sw in swizzles:
            for dt in dtypes:
                for r in ranks:
                    for pos in ("in", "lo", "hi"):
                        add("images", f"img/{sw}/{dt}/{r}d/{pos}", dt, sw, r, pos)
        for sw in ("none", "128B"):
            add("images", f"img/{sw}/UINT8/3d/estr", "UINT8", sw, 3, "in", estr=[1, 2, 3])
            add("images", f"img/{sw}/UINT8/3d/estr_hi", "UINT8", sw, 3, "hi", estr=[1, 3, 2])
    if "tx" in probes:
        for dt, sw in (("UINT8", "none"), ("UINT8", "128B"), ("FLOAT16", "128B"), ("16U4_ALIGN8B", "128B")):
            for pos in ("lo", "hi"):
                for exp in ("full", "inbound", "fullm16"):
                    add("tx", f"tx/{sw}/{dt}/2d/{pos}/{exp}", dt, sw, 2, pos, expect=exp, tx_mode=1)
        for exp in ("full", "inbound", "fullm16"):
            add("tx", f"tx/128B/UINT8/2d/allout/{exp}", "UINT8", "128B", 2, "hi", expect=exp, tx_mode=1,
                meta={"all_out": True})
            cases[-1].coords = [cases[-1].shape[0], cases[-1].shape[1]]
    if "narrow" in probes:
        for sw, inner in (("128B", 64), ("128B", 32), ("64B", 32), ("32B", 16), ("128B_ATOM_32B", 64)):
            for pos in ("in", "hi"):
                add("narrow", f"narrow/{sw}/inner{inner}/{pos}", "UINT8", sw, 2, pos, inner_bytes=inner)
        for sw, inner in (("128B", 16), ("128B", 48), ("128B", 96), ("64B", 16), ("64B", 48)):   # unmeasured
            add("narrow", f"narrow/{sw}/inner{inner}/in", "UINT8", sw, 2, "in", inner_bytes=inner)
        for sw, inner in (("128B", 80), ("128B", 112)):     # the multiple-of-32 rule predicts faults (unmeasured)
            add("narrow", f"narrow/{sw}/inner{inner}/in", "UINT8", sw, 2, "in", inner_bytes=inner)
        add("narrow", "narrow/128B/inner64/3d/in", "UINT8", "128B", 3, "in", inner_bytes=64)
        for sw, inner in (("128B", 64), ("64B", 32), ("128B", 32), ("128B", 96)):               # narrow stores
            for pos in ("in", "hi"):
                add("narrow", f"narrow/store/{sw}/inner{inner}/{pos}", "UINT8", sw, 2, pos, inner_bytes=inner,
                    kind="store")
        for sw, inner in (("128B", 48), ("64B", 16)):       # the multiple-of-32 rule on stores (unmeasured)
            add("narrow", f"narrow/store/{sw}/inner{inner}/in", "UINT8", sw, 2, "in", inner_bytes=inner, kind="store")
    if "nanfill" in probes:
        for dt in ("FLOAT16", "FLOAT32") + NANFILL_MORE:
            add("nanfill", f"nan/{dt}/2d/hi", dt, "128B", 2, "hi", oob_fill="nan")
        for dt in NANFILL_MORE:           # in-bound special values: does the load convert them (FTZ, TF32)?
            add("nanfill", f"nan/{dt}/2d/special", dt, "128B", 2, "in", meta={"special": True})
    if "txnarrow" in probes:              # complete_tx of a narrow swizzled box: box bytes or the padded rows?
        for sw, inner in (("128B", 64), ("128B", 32), ("64B", 32)):
            for exp in ("full", "padded"):
                add("tx", f"tx/narrow/{sw}/inner{inner}/2d/in/{exp}", "UINT8", sw, 2, "in", inner_bytes=inner,
                    expect=exp, tx_mode=1)
    if "store" in probes:
        for dt, sw in (("UINT8", "none"), ("UINT8", "128B"), ("FLOAT16", "64B"), ("16U4_ALIGN8B", "128B")):
            for r in (2, 3):
                for pos in ("in", "hi"):
                    add("store", f"store/{sw}/{dt}/{r}d/{pos}", dt, sw, r, pos, kind="store")
    if "align" in probes:
        for sw in ("none", "128B", "64B"):
            for off in (16, 32, 64, 128, 256, 512):
                add("align", f"align/{sw}/off{off}", "UINT8", sw, 2, "in", dst_off=off)
    return cases


# ---------------------------------------------------------------------------------------------------- backends
def gmem_data(case: Case) -> np.ndarray:
    g = np.random.default_rng(case.seed ^ 0x5EED).integers(0, 256, size=case.gmem_bytes(), dtype=np.uint8)
    if case.meta.get("special"):        # every other element a special value, cycling through SPECIAL_BITS
        bits = BITS[case.dtype]
        pat = SPECIAL_BITS[bits]
        view = g.view({16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
        n = view.size // 2
        view[0:2 * n:2] = np.array([pat[i % len(pat)] for i in range(n)], dtype=view.dtype)
    return g


def smem_data(case: Case) -> np.ndarray:
    return np.random.default_rng(case.seed ^ 0x5AFE).integers(0, 256, size=case.region(), dtype=np.uint8)


def expect_bytes(case: Case) -> int:
    if case.expect == "fullm16":
        return case.box_bytes() - 16
    if case.expect == "padded":         # narrow swizzled box: rows one swizzle span apart in shared memory
        return case.box_bytes() // (case.box[0] * BITS[case.dtype] // 8) * SPAN[case.swizzle]
    return case.box_bytes() if case.expect == "full" else case.inbound_bytes()


def run_model(case: Case) -> dict[str, np.ndarray]:
    """Expected results from ptxlab.emu.hw.tma (no emulator): window image / global image, completion flag."""
    from ptxlab.emu.hw import tma as tma_model
    from ptxlab.emu.hw.tma import complete_tx_bytes, plan_tensor_load, plan_tensor_store
    from ptxlab.tensormap import TensorMapSpec

    base = 0x10000
    g = gmem_data(case)
    spec = TensorMapSpec.make(case.dtype, base, case.shape, case.strides, case.box, case.estr, swizzle=case.swizzle,
                              oob_fill=case.oob_fill).validate()
    info = np.zeros(8, np.uint64)
    if case.kind == "load":
        win = np.full(case.region(), POISON_SMEM, np.uint8)
        plan = plan_tensor_load(spec, case.coords, case.dst_off, lambda a, n: g[a - base:a - base + n])
        win[plan.smem_addrs] = plan.values
        info[0] = int(complete_tx_bytes(spec) == expect_bytes(case))
        info[5] = case.dst_off
        return {"image": win, "info": info}
    s = smem_data(case)
    out = np.full(g.size, POISON_GMEM, np.uint8)
    plan = plan_tensor_store(spec, case.coords, case.dst_off)
    out[plan.gmem_addrs - base] = s[plan.smem_addrs]
    return {"image": out, "info": info}


_MODULE: dict[str, Any] = {}


def run_device(dev: Any, case: Case, max_polls: int, read_raw: bool) -> dict[str, np.ndarray]:
    """Run one case on a ptxlab device ("cuda" or "emu") through the public device API."""
    import ptxlab

    if "mod" not in _MODULE:
        with open(os.path.join(HERE, "tma_probe.cu")) as f:
            _MODULE["mod"] = ptxlab.compile(f.read(), arch="sm_90a", name="tma_probe.cu")
    mod = _MODULE["mod"]
    g = gmem_data(case)
    gbuf = dev.to_device(g)
    tmap = dev.tensor_map(gbuf, dtype=case.dtype, global_shape=case.shape, global_strides=case.strides, box=case.box,
                          element_strides=case.estr, swizzle=case.swizzle, oob_fill=case.oob_fill)
    c = list(case.coords) + [0] * (5 - case.rank)
    region = case.region()
    if case.kind == "load":
        out = dev.empty(region)
        dev.memset(out, 0x00)
        info = dev.empty(64)
        dev.memset(info, 0x00)
        args = [tmap, out, info, np.int32(case.rank)] + [np.int32(x) for x in c] + \
               [np.uint32(case.dst_off), np.uint32(region), np.uint32(expect_bytes(case)), np.uint32(int(read_raw)),
                np.uint32(max_polls), np.uint32(case.tx_mode)]
        try:
            dev.launch(mod, "tma_load", grid=(1, 1, 1), block=(128, 1, 1), args=args, shared_bytes=region + 1024)
        except Exception as exc:
            # The emulator turns a phase that can never complete into a deadlock error; for the tx probe that IS the
            # answer "did not complete" (hardware: the bounded poll loop gives up). No image then (kernel aborted).
            if case.probe == "tx" and "deadlock" in str(exc) and dev.__class__.__name__ == "EmuDevice":
                return {"image": np.zeros(0, np.uint8), "info": np.zeros(8, np.uint64)}
            raise
        return {"image": dev.to_host(out, dtype=np.uint8, shape=(region,)),
                "info": dev.to_host(info, dtype=np.uint64, shape=(8,))}
    dev.memset(gbuf, POISON_GMEM)
    sbuf = dev.to_device(smem_data(case))
    args = [tmap, sbuf, np.int32(case.rank)] + [np.int32(x) for x in c] + [np.uint32(case.dst_off), np.uint32(region)]
    dev.launch(mod, "tma_store", grid=(1, 1, 1), block=(128, 1, 1), args=args, shared_bytes=region + 1024)
    return {"image": dev.to_host(gbuf, dtype=np.uint8, shape=(g.size,)), "info": np.zeros(8, np.uint64)}


def run_one(backend: str, case: Case, max_polls: int, dev: Any = None) -> dict[str, Any]:
    """Run a case, turning any exception into an 'error' entry."""
    try:
        if backend == "model":
            res = run_model(case)
        else:
            res = run_device(dev, case, max_polls, read_raw=(backend == "cuda"))
        res["error"] = ""
        return res
    except Exception as exc:  # recorded, compared, never hidden
        msg = f"{type(exc).__name__}: {exc}".strip()
        if os.environ.get("TMA_FIDELITY_TRACE"):
            traceback.print_exc()
        return {"image": np.zeros(0, np.uint8), "info": np.zeros(8, np.uint64), "error": msg}


def context_ok(dev: Any) -> bool:
    """False when the CUDA context is poisoned (a sticky fault shows up on the next API call)."""
    if os.environ.get("TMA_FIDELITY_FAKE_POISON"):     # tests: treat every error as context-killing
        return False
    try:
        b = dev.empty(256)
        dev.memset(b, 0x11)
        return bool((dev.to_host(b, dtype=np.uint8, shape=(256,)) == 0x11).all())
    except Exception:
        return False


def run_children(cases: list[Case], args: argparse.Namespace, polls: int) -> list[dict[str, Any]]:
    """cuda: run the cases in child processes, one probe group after another; a child stops after a case that left
    its context unusable, and the next case starts in a fresh child. A child that dies or hangs costs one case."""
    import tempfile

    results: list[Optional[dict[str, Any]]] = [None] * len(cases)
    groups: list[tuple[int, int]] = []
    for i, c in enumerate(cases):
        if groups and cases[groups[-1][0]].probe == c.probe:
            groups[-1] = (groups[-1][0], i + 1)
        else:
            groups.append((i, i + 1))
    with tempfile.TemporaryDirectory() as tmp:
        cfile = os.path.join(tmp, "cases.json")
        with open(cfile, "w") as f:
            json.dump([asdict(c) for c in cases], f)
        for g0, g1 in groups:
            i = g0
            while i < g1:
                try:
                    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "batch", "--cases", cfile,
                                           "--backend", args.child_backend,
                                           "--start", str(i), "--stop", str(g1), "--dir", tmp,
                                           "--max-polls", str(polls)], capture_output=True, text=True,
                                          timeout=args.child_timeout)
                    tail = (proc.stderr or proc.stdout).strip()[-600:]
                    rc = proc.returncode
                except subprocess.TimeoutExpired:
                    tail, rc = f"timed out after {args.child_timeout} s", -1
                j = i
                while j < g1 and os.path.exists(os.path.join(tmp, f"{j}.npz")):
                    z = np.load(os.path.join(tmp, f"{j}.npz"))
                    results[j] = {"image": z["image"], "info": z["info"], "error": str(z["error"])}
                    j += 1
                if j == i:      # the child died inside case i without a result
                    results[i] = {"image": np.zeros(0, np.uint8), "info": np.zeros(8, np.uint64),
                                  "error": f"child process died in this case (rc={rc}): {tail}"}
                    j = i + 1
                i = j
    return [r for r in results if r is not None]


def cmd_run(args: argparse.Namespace) -> int:
    probes = set(args.probes.split(",")) if args.probes else {"images", "tx", "narrow", "nanfill", "store", "align",
                                                              "txnarrow"}
    cases = build_cases(args.seed, probes, args.quick)
    dev = None
    if args.backend == "emu":
        import ptxlab
        dev = ptxlab.open_device(args.backend)
    polls = args.max_polls if args.max_polls else (200_000 if args.backend == "cuda" else 64)
    arrays: dict[str, Any] = {"cases_json": np.array(json.dumps([asdict(c) for c in cases])),
                              "backend": np.array(args.backend), "seed": np.array(args.seed)}
    n_err = 0
    isolate = args.backend == "cuda" or args.child_backend != "cuda"
    results = run_children(cases, args, polls) if isolate else None
    for i, case in enumerate(cases):
        res = results[i] if results is not None else run_one(args.backend, case, polls, dev)
        for k in ("image", "info"):
            arrays[f"{case.name}:{k}"] = res[k]
        arrays[f"{case.name}:error"] = np.array(res["error"])
        n_err += bool(res["error"])
        if args.verbose or res["error"]:
            print(f"[{i + 1}/{len(cases)}] {case.name}: {res['error'] or 'ok'}"[:300])
    np.savez_compressed(args.out, **arrays)
    print(f"{len(cases)} cases on backend {args.backend}, {n_err} recorded errors -> {args.out}")
    return 0


def cmd_batch(args: argparse.Namespace) -> int:
    """Child side of run_children: run cases[start:stop], one .npz per case; exit 3 after a context-killing fault."""
    import ptxlab

    with open(args.cases) as f:
        cases = [Case(**c) for c in json.load(f)]
    dev = ptxlab.open_device(args.backend)
    for i in range(args.start, args.stop):
        res = run_one(args.backend, cases[i], args.max_polls, dev)
        poisoned = bool(res["error"]) and not context_ok(dev)
        if poisoned:
            res["error"] += " [CUDA context unusable afterwards: the next case runs in a fresh process]"
        np.savez(os.path.join(args.dir, f"{i}.npz"), image=res["image"], info=res["info"],
                 error=np.array(res["error"]))
        if poisoned:
            return 3
    return 0


# ---------------------------------------------------------------------------------------------------- compare
def cmd_compare(args: argparse.Namespace) -> int:
    a, b = np.load(args.a), np.load(args.b)
    ca = {c["name"]: Case(**c) for c in json.loads(str(a["cases_json"]))}
    names_b = {c["name"] for c in json.loads(str(b["cases_json"]))}
    la, lb = str(a["backend"]), str(b["backend"])
    same = differ = skipped = 0
    both = host_refused = unexplained = 0
    print(f"compare {args.a} ({la}) vs {args.b} ({lb})")
    for name, case in ca.items():
        if name not in names_b:
            continue
        ea, eb = str(a[f"{name}:error"]), str(b[f"{name}:error"])
        if ea or eb:
            if bool(ea) != bool(eb) or args.verbose:
                print(f"  ERR  {name}\n       {la}: {ea or 'ok'}\n       {lb}: {eb or 'ok'}"[:900])
            skipped += 1
            if ea and eb:
                both += 1
            elif host_refusal(ea or eb):
                host_refused += 1
            else:
                unexplained += 1
            continue
        ia, ib = a[f"{name}:image"], b[f"{name}:image"]
        fa, fb = a[f"{name}:info"], b[f"{name}:info"]
        msgs = []
        if ia.shape != ib.shape:
            msgs.append(f"image size {ia.shape} vs {ib.shape}")
        else:
            diff = np.nonzero(ia != ib)[0]
            if diff.size:
                o = int(diff[0])
                msgs.append(f"{diff.size} bytes differ; first at +0x{o:x}: {ia[o]:#04x} vs {ib[o]:#04x}")
        if case.probe == "tx" and (ia.size == 0 or ib.size == 0):
            msgs = []               # no image when the emulator reports the never-completing phase as a deadlock
        if case.kind == "load" and int(fa[0]) != int(fb[0]):
            msgs.append(f"phase completed with expect_tx={case.expect} ({expect_bytes(case)} B): "
                        f"{la}={int(fa[0])} {lb}={int(fb[0])}")
        if msgs:
            differ += 1
            print(f"  DIFF {name}: " + "; ".join(msgs))
        else:
            same += 1
    # Conclusions for the UNCONFIRMED items, from whichever file is hardware.
    for z, label in ((a, la), (b, lb)):
        if label != "cuda":
            continue
        print(f"\nfindings from {label}:")
        for name, case in ca.items():
            if case.probe == "tx" and f"{name}:info" in z.files and not str(z[f"{name}:error"]):
                print(f"  tx   {name}: expect {expect_bytes(case)} B ({case.expect}; box {case.box_bytes()} B, "
                      f"in-bound {case.inbound_bytes()} B) -> completed={int(z[f'{name}:info'][0])}")
            if case.probe in ("align", "nanfill", "narrow") and f"{name}:error" in z.files:
                print(f"  {case.probe:5s} {name}: {str(z[f'{name}:error']) or 'ok'}"[:300])
        print(tx_verdicts(z, ca))
    print(f"\n{same} identical, {differ} differ, {skipped} with errors on either side "
          f"({both} on both sides, {host_refused} refused by the host before launch, {unexplained} unexplained)")
    return 1 if differ or unexplained else 0


def host_refusal(err: str) -> bool:
    """An error raised on the host before any launch because the encoding does not exist on that GPU (e.g. a
    Blackwell-only dtype or swizzle on an H100): it carries no information about the other side."""
    return err.startswith("TensorMapError") and "needs a compute capability" in err


def tx_verdicts(z: Any, cases: dict[str, Case]) -> str:
    """For each tx_mode-1 group: which expect_tx value completed the phase, i.e. what the hardware counts."""
    groups: dict[str, dict[str, int]] = {}
    for name, case in cases.items():
        if case.probe == "tx" and case.tx_mode == 1 and f"{name}:info" in z.files and not str(z[f"{name}:error"]):
            groups.setdefault(name.rsplit("/", 1)[0], {})[case.expect] = int(z[f"{name}:info"][0])
    lines = ["tx verdicts (deferred arrival: completes iff expect_tx == counted bytes):"]
    for g, r in sorted(groups.items()):
        done = sorted(k for k, v in r.items() if v)
        verdict = {("full",): "complete_tx = FULL box (model assumption confirmed)",
                   ("inbound",): "complete_tx = IN-BOUND bytes only (model must change)",
                   ("padded",): "complete_tx = PADDED rows (row pitch = swizzle span; model must change)",
                   ("full", "inbound"): "full == in-bound here (no information)"}.get(tuple(done),
                                                                                       f"INCONCLUSIVE ({done})")
        lines.append(f"  {g}: completed for {done or 'none'} of {sorted(r)} -> {verdict}")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the probes on one backend and save an .npz")
    r.add_argument("--backend", choices=["cuda", "emu", "model"], required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--seed", type=int, default=20250101)
    r.add_argument("--probes", default="",
                   help="comma list of images,tx,narrow,nanfill,store,align,txnarrow (default all)")
    r.add_argument("--quick", action="store_true", help="ranks 2-3 only")
    r.add_argument("--max-polls", type=int, default=0, help="test_wait polls before giving up (0 = backend default)")
    r.add_argument("--child-timeout", type=int, default=300, help="seconds per cuda child process")
    r.add_argument("--child-backend", default="cuda", help=argparse.SUPPRESS)   # tests run the children on emu
    r.add_argument("-v", "--verbose", action="store_true")
    o = sub.add_parser("batch", help=argparse.SUPPRESS)
    o.add_argument("--cases", required=True)
    o.add_argument("--start", type=int, required=True)
    o.add_argument("--stop", type=int, required=True)
    o.add_argument("--dir", required=True)
    o.add_argument("--max-polls", type=int, default=200_000)
    o.add_argument("--backend", default="cuda")
    c = sub.add_parser("compare", help="diff two .npz files bit for bit")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    return {"run": cmd_run, "batch": cmd_batch, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
