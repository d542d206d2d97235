"""Stage A: NVFP4 operand tiles (A1) and scale-factor blocks (A2) through TMA + a multi-stage mbarrier pipeline.

The kernel (``a_load.cu``, built from ``ptxlab/kernels/blocks/{common,mbarrier,tma}.cuh``) copies every stage buffer
it consumed to global memory. This driver computes the expected SMEM images on the host with its own code (the
SWIZZLE_128B 16-B-chunk XOR and the gpu-mode permuted-SF offset formula are written out here, not taken from
``ptxlab.emu.hw.swizzle`` or ``ptxlab.scales``) and compares byte for byte.

Fault injection (for tests and for seeing what a failure looks like): ``run_a1(ctx, fault=...)`` or the
environment variable ``PTXLAB_STAGE_A_FAULT`` = ``swizzle_none`` (A tensor map without swizzle) or
``expect_tx`` (expect_tx 16 bytes more than the boxes deliver -> the pipeline hangs).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import ptxlab
from ptxlab import gpumode
from ptxlab.debug import DEFAULT_DUMP_DIR
from ptxlab.errors import PtxlabError, UsageError
from ptxlab.kernels import KERNELS_DIR
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult
from ptxlab.lab.seed import stage_seed
from ptxlab.toolchain import sass

HERE = Path(__file__).resolve().parent
KERNEL_FILE = HERE / "a_load.cu"
KERNEL = "stage_a_load"
BLOCKS_USED = ("common.cuh", "mbarrier.cuh", "tma.cuh")
ENV_FAULT = "PTXLAB_STAGE_A_FAULT"
ENV_ARCH = "PTXLAB_STAGE_A_ARCH"  # emulator only: which build to run (default sm_100a)
FAULTS = ("none", "swizzle_none", "expect_tx")

BM = 128            # A rows per tile (UMMA M)
BK_BYTES = 128      # K bytes per stage (256 fp4), = the SWIZZLE_128B span
SF_STAGE = 4 * 512  # SF bytes per operand per stage: 4 blocks of (128 rows x 4 SFs)
NUM_THREADS = 160   # 4 consumer warps + 1 producer warp
TRACE_WORDS = 4
DIAG_WORDS = 8
WAIT_PROBES = 1 << 22  # hardware runs: give up a barrier wait after this many try_wait probes
FORCE_BOUNDED_WAIT = False  # tests: build the bounded-wait (hardware) variant for the emulator too
POISON_SMEM = 0xA5  # what the kernel writes into its stage buffers before the first TMA
POISON_DUMP = 0xFF  # what the host writes into the dump buffer before the launch


class StageAError(PtxlabError):
    """Stage A failed in a way that produced no comparable output (hang, launch failure, bad setup)."""


@dataclass(frozen=True)
class Case:
    """One problem: gpu-mode data kind and shape, B rows per tile, pipeline depth."""

    name: str
    kind: str  # "gemv" | "gemm"
    m: int
    n: int
    k: int
    l: int
    bn: int
    stages: int

    @property
    def num_kb(self) -> int:
        return self.k // (2 * BK_BYTES)

    def describe(self) -> str:
        return f"{self.kind} M={self.m} N={self.n} K={self.k} L={self.l}"


# K-blocks > stages in every case, so each ring wraps and the phase bit flips at least once.
A1_CASES = (
    Case("gemv_256x1024x2", "gemv", 256, 1, 1024, 2, bn=16, stages=3),
    Case("gemm_128x256x768", "gemm", 128, 256, 768, 1, bn=128, stages=2),
)
A2_CASES = (
    Case("gemv_256x1024x2", "gemv", 256, 1, 1024, 2, bn=16, stages=3),
    Case("gemm_128x256x768", "gemm", 128, 256, 768, 1, bn=128, stages=2),
)


# ----------------------------------------------------------------------------------------------- host-side images
def swizzle_rows_xor(dense: np.ndarray, mask: int) -> np.ndarray:
    """SMEM image of a dense box whose rows are exactly 128 B and which starts 1024-B aligned.

    PTX ISA 5.5.7: 16-B chunk c of 128-B line L goes to chunk c ^ (L & mask) (mask 7 = SWIZZLE_128B, 3 = 64B,
    1 = 32B, 0 = none). Row r of the box is line r. Written out here, independent of ptxlab.emu.hw.swizzle.
    """
    rows = dense.shape[0]
    assert dense.shape[1] == 128
    chunks = dense.reshape(rows, 8, 16)
    out = np.empty_like(chunks)
    r = np.arange(rows)[:, None]
    c = np.arange(8)[None, :]
    out[r, c ^ (r & mask)] = chunks
    return out.reshape(rows, 128)


def sf_blocked_formula(sf: np.ndarray) -> np.ndarray:
    """Scatter reference-layout SFs (MN, K/16, L) into the blocked byte order with ptx_facts section 8's formula:

    off = l*(rest_m*rest_k*512) + (m//128)*(rest_k*512) + (j//4)*512 + (m%32)*16 + ((m%128)//32)*4 + (j%4)

    Positions no SF maps to (padding) are left 0; all shapes here are multiples of 128 x 4, so there are none.
    """
    mn, sfk, nl = sf.shape
    rest_m, rest_k = -(-mn // 128), -(-sfk // 4)
    out = np.zeros(nl * rest_m * rest_k * 512, np.uint8)
    m = np.arange(mn)[:, None, None]
    j = np.arange(sfk)[None, :, None]
    l = np.arange(nl)[None, None, :]
    off = (l * (rest_m * rest_k * 512) + (m // 128) * (rest_k * 512) + (j // 4) * 512 + (m % 32) * 16
           + ((m % 128) // 32) * 4 + (j % 4))
    out[off] = sf
    return out


def sf_physical(sf_perm: np.ndarray) -> np.ndarray:
    """gpu-mode (32, 4, rest_m, 4, rest_k, L) tensor -> its bytes in memory order (L, rest_m, rest_k, 32, 4, 4)."""
    return np.ascontiguousarray(sf_perm.transpose(5, 2, 4, 0, 1, 3)).reshape(-1)


@dataclass
class Region:
    """A named byte range [off, off+size) of one stage buffer, with 128-B rows."""

    name: str
    off: int
    size: int


def regions(case: Case, load_ab: bool, load_sf: bool) -> List[Region]:
    out: List[Region] = []
    off = 0
    if load_ab:
        out += [Region("A", 0, BM * BK_BYTES), Region("B", BM * BK_BYTES, case.bn * BK_BYTES)]
        off = (BM + case.bn) * BK_BYTES
    if load_sf:
        out += [Region("SFA", off, SF_STAGE), Region("SFB", off + SF_STAGE, SF_STAGE)]
    return out


def stage_bytes(case: Case, load_ab: bool, load_sf: bool) -> int:
    return sum(r.size for r in regions(case, load_ab, load_sf))


# ----------------------------------------------------------------------------------------------- build
def build(case: Case, arch: str, load_ab: bool, load_sf: bool, bounded_wait: bool = False) -> Any:
    opts = [f"-DA_STAGES={case.stages}", f"-DA_BN={case.bn}", f"-DA_LOAD_AB={int(load_ab)}",
            f"-DA_LOAD_SF={int(load_sf)}"]
    if bounded_wait:
        opts.append(f"-DPTXLAB_WAIT_PROBES={WAIT_PROBES}u")
    tag = f"a_load_s{case.stages}_bn{case.bn}_{'ab' if load_ab else ''}{'sf' if load_sf else ''}"
    return ptxlab.compile(KERNEL_FILE.read_text(), arch=arch, name=f"{tag}.cu", options=opts,
                          include_dirs=[KERNELS_DIR])


def run_arch(ctx: StageContext) -> str:
    """Arch of the module that runs: the emulator runs the sm_100a build (the target) unless ``$PTXLAB_STAGE_A_ARCH``
    says otherwise (``sm_90a``: the exact build an H100 runs); a GPU runs sm_100a if it can, else sm_90a."""
    dev = ctx.device
    if ctx.backend_name == "emu":
        arch = os.environ.get(ENV_ARCH, "sm_100a") or "sm_100a"
        if arch not in ("sm_90a", "sm_100a"):
            raise StageAError(f"{ENV_ARCH}={arch!r}: use sm_90a or sm_100a")
        return arch
    return "sm_100a" if dev.arch_supported("sm_100a") else "sm_90a"


# ----------------------------------------------------------------------------------------------- one case
@dataclass
class CaseRun:
    case: Case
    seed: int
    dump: np.ndarray       # (tiles, kb, stage_bytes)
    expected: np.ndarray   # same
    trace: np.ndarray      # (tiles, kb, 4)
    tiles: List[Tuple[int, int, int]]  # (m_tile, n_tile, l) per tile index
    regions: List[Region]
    sf_table_ok: Optional[Tuple[bool, str]]
    tx_bytes: int
    box_sum: int
    swizzle_a: str


def _problem(case: Case, seed: int) -> Any:
    if case.kind == "gemv":
        return gpumode.generate_gemv(case.m, case.k, case.l, seed)
    return gpumode.generate_gemm(case.m, case.n, case.k, case.l, seed)


def check_fault(fault: str) -> None:
    """A usage error (lab.py exits 2, records nothing) unless `fault` is one of FAULTS."""
    if fault not in FAULTS:
        raise UsageError(f"unknown Stage A fault {fault!r} ({ENV_FAULT}); use one of {', '.join(FAULTS)}")


def preflight() -> None:
    """lab.py's check before any stage runs: the fault named by the environment must exist."""
    check_fault(os.environ.get(ENV_FAULT, "none") or "none")


def run_case(ctx: StageContext, case: Case, load_ab: bool, load_sf: bool, fault: str = "none") -> CaseRun:
    check_fault(fault)
    dev = ctx.device
    backend = ctx.backend_name
    arch = run_arch(ctx)
    mod = build(case, arch, load_ab, load_sf, bounded_wait=(backend != "emu" or FORCE_BOUNDED_WAIT))
    seed = stage_seed()  # fresh data every run (PTXLAB_SEED / lab.py --seed N replays one); printed for reproduction
    p = _problem(case, seed)

    nb = p.b.shape[0]  # GEMV: 128 padded rows
    kbytes = case.k // 2
    rest_m, rest_n, rest_k = case.m // 128, -(-nb // 128), case.k // 64
    n_tiles = max(1, case.n // case.bn) if case.kind == "gemm" else 1
    a_phys = np.ascontiguousarray(p.a.transpose(2, 0, 1))  # (L, M, K/2), gpu-mode memory order
    b_phys = np.ascontiguousarray(p.b.transpose(2, 0, 1))  # (L, NB, K/2)
    sfa_bytes, sfb_bytes = sf_physical(p.sfa_permuted), sf_physical(p.sfb_permuted)

    bufs = []
    try:
        d_a, d_b = dev.to_device(a_phys), dev.to_device(b_phys)
        d_sfa, d_sfb = dev.to_device(sfa_bytes), dev.to_device(sfb_bytes)
        bufs += [d_a, d_b, d_sfa, d_sfb]
        swz_a = "none" if fault == "swizzle_none" else "128B"
        # UINT8 view on every arch (16U4_ALIGN8B is Blackwell-only; the H100 driver rejects it).
        tm_a = dev.tensor_map(d_a, dtype=np.uint8, global_shape=[kbytes, case.m, case.l],
                              global_strides=[kbytes, case.m * kbytes], box=[BK_BYTES, BM, 1], swizzle=swz_a)
        tm_b = dev.tensor_map(d_b, dtype=np.uint8, global_shape=[kbytes, nb, case.l],
                              global_strides=[kbytes, nb * kbytes], box=[BK_BYTES, case.bn, 1], swizzle="128B")
        tm_sfa = dev.tensor_map(d_sfa, dtype=np.uint8, global_shape=[128, sfa_bytes.size // 128],
                                global_strides=[128], box=[128, SF_STAGE // 128], swizzle="none")
        tm_sfb = dev.tensor_map(d_sfb, dtype=np.uint8, global_shape=[128, sfb_bytes.size // 128],
                                global_strides=[128], box=[128, SF_STAGE // 128], swizzle="none")
        box_sum = (tm_a.spec.box_bytes + tm_b.spec.box_bytes if load_ab else 0) + \
                  (tm_sfa.spec.box_bytes + tm_sfb.spec.box_bytes if load_sf else 0)
        tx_bytes = box_sum + (16 if fault == "expect_tx" else 0)

        sb = stage_bytes(case, load_ab, load_sf)
        tiles = [(mt, nt, l) for l in range(case.l) for nt in range(n_tiles) for mt in range(rest_m)]
        ntile, nkb = len(tiles), case.num_kb
        d_dump, d_trace, d_diag = dev.empty(ntile * nkb * sb), dev.empty(ntile * nkb * TRACE_WORDS * 4), \
            dev.empty(DIAG_WORDS * 4)
        bufs += [d_dump, d_trace, d_diag]
        dev.memset(d_dump, POISON_DUMP)
        dev.memset(d_trace, 0xFF)
        dev.memset(d_diag, 0)
        shared = case.stages * sb + 16 * case.stages + 1024  # stage ring + full/empty barriers + alignment slack
        try:
            dev.launch(mod, KERNEL, grid=(rest_m, n_tiles, case.l), block=NUM_THREADS,
                       args=[tm_a, tm_b, tm_sfa, tm_sfb, d_dump, d_trace, d_diag, np.int32(nkb), np.int32(rest_n),
                             np.uint32(tx_bytes)], shared_bytes=shared)
        except PtxlabError as exc:
            hint = ""
            if tx_bytes != box_sum:
                hint = (f" CAUSE: expect_tx per stage = {tx_bytes} B but the TMA boxes of a stage deliver {box_sum} B, "
                        "so the full barrier's tx-count never reaches 0 and the consumers wait forever; pass the sum of "
                        "TensorMap.spec.box_bytes of every box loaded into the stage.")
            raise StageAError(f"{case.name} ({case.describe()}, {backend}, {arch}): kernel {KERNEL} failed: {exc}"
                              f"{hint}") from exc
        diag = dev.to_host(d_diag, np.uint32)
        if diag[0]:
            role = {1: "producer waiting on empty", 2: "consumer waiting on full"}.get(int(diag[3]), "?")
            mt, nt, l = tiles[int(diag[1])] if int(diag[1]) < ntile else (-1, -1, -1)
            raise StageAError(
                f"{case.name} ({backend}, {arch}): an mbarrier wait gave up after {WAIT_PROBES} probes: {role}, tile "
                f"(m_tile={mt}, n_tile={nt}, l={l}), k-block {int(diag[2])}, stage {int(diag[4])}, parity {int(diag[5])}; "
                f"expect_tx={tx_bytes} B vs box bytes {box_sum} B; check the expect_tx count and the phase bookkeeping")
        dump = dev.to_host(d_dump, np.uint8, (ntile, nkb, sb))
        trace = dev.to_host(d_trace, np.uint32, (ntile, nkb, TRACE_WORDS))
    finally:
        for b in bufs:
            dev.free(b)

    regs = regions(case, load_ab, load_sf)
    expected = np.empty((ntile, nkb, sb), np.uint8)
    sfa_blk = sfb_blk = None
    sf_table_ok = None
    if load_sf:
        sfa_blk, sfb_blk = sf_blocked_formula(p.sfa), sf_blocked_formula(p.sfb)
        bad = [n for n, blk, dev_bytes in (("sfa", sfa_blk, sfa_bytes), ("sfb", sfb_blk, sfb_bytes))
               if not np.array_equal(blk, dev_bytes)]
        sf_table_ok = (not bad, "gpu-mode sfa_permuted/sfb_permuted bytes == section-8 formula scatter of sfa/sfb"
                       + (f"; MISMATCH in {bad}: the permuted tensor is not the blocked layout" if bad else ""))
    for t, (mt, nt, l) in enumerate(tiles):
        for kb in range(nkb):
            img = expected[t, kb]
            for r in regs:
                if r.name == "A":
                    dense = a_phys[l, mt * BM:(mt + 1) * BM, kb * BK_BYTES:(kb + 1) * BK_BYTES]
                    img[r.off:r.off + r.size] = swizzle_rows_xor(dense, 7).reshape(-1)
                elif r.name == "B":
                    dense = b_phys[l, nt * case.bn:(nt + 1) * case.bn, kb * BK_BYTES:(kb + 1) * BK_BYTES]
                    img[r.off:r.off + r.size] = swizzle_rows_xor(dense, 7).reshape(-1)
                else:
                    blk = sfa_blk if r.name == "SFA" else sfb_blk
                    rows = rest_m if r.name == "SFA" else rest_n
                    g = mt if r.name == "SFA" else nt * case.bn // 128
                    start = l * rows * rest_k * 512 + g * rest_k * 512 + kb * 4 * 512
                    img[r.off:r.off + r.size] = blk[start:start + SF_STAGE]
    return CaseRun(case, seed, dump, expected, trace, tiles, regs, sf_table_ok, tx_bytes, box_sum, swz_a)


# ----------------------------------------------------------------------------------------------- diagnosis
def _guess(run: CaseRun, t: int, kb: int, reg: Region) -> str:
    """Name a likely cause for a region that does not match."""
    act = run.dump[t, kb, reg.off:reg.off + reg.size]
    exp = run.expected[t, kb, reg.off:reg.off + reg.size]
    if np.all(act == POISON_DUMP):
        return "the dump still holds the host poison 0xFF: the consumer never copied this stage out"
    if np.all(act == POISON_SMEM):
        return "the SMEM poison 0xA5 is still there: the TMA never wrote this box (wrong dst / box / barrier)"
    if reg.name in ("A", "B"):
        dense = exp.reshape(-1, 128)
        # undo the expected SW128 to get the dense box, then try the other swizzle modes on it
        dense = swizzle_rows_xor(dense, 7)  # XOR with the same mask is an involution
        for mask, mode in ((0, "none"), (1, "32B"), (3, "64B")):
            if np.array_equal(swizzle_rows_xor(dense, mask).reshape(-1), act):
                return (f"the bytes are the right box laid out with swizzle {mode!r}, not '128B': the tensor map's swizzle "
                        "is wrong (the MMA stage's SMEM descriptor expects SWIZZLE_128B); build it with swizzle='128B'")
    return "content differs: check the TMA coordinates (K byte offset, row, batch) and the box shape"


def compare(run: CaseRun, label: str) -> List[Check]:
    rows: List[Check] = []
    c = run.case
    for reg in run.regions:
        act = run.dump[:, :, reg.off:reg.off + reg.size]
        exp = run.expected[:, :, reg.off:reg.off + reg.size]
        diff = act != exp
        n_bad = int(diff.sum())
        total = act.size
        tiles_n, kb_n = act.shape[:2]
        what = (f"{tiles_n} tiles x {kb_n} k-blocks x {reg.size} B = {total} B"
                + (f", swizzle {run.swizzle_a if reg.name == 'A' else '128B'} (16-B chunk c of row r at c^(r%8))"
                   if reg.name in ("A", "B") else ", no swizzle, 4 x 512-B blocks, section-8 formula"))
        if n_bad == 0:
            rows.append(Check(f"{label} {c.name}: {reg.name} SMEM image", True, f"{what}: all equal"))
            continue
        t, kb, byte = (int(x) for x in np.argwhere(diff)[0])
        mt, nt, l = run.tiles[t]
        row, col = divmod(byte, 128)
        rows.append(Check(
            f"{label} {c.name}: {reg.name} SMEM image", False,
            f"{n_bad} of {total} bytes differ; first at tile (m_tile={mt}, n_tile={nt}, l={l}) k-block {kb} "
            f"(stage {kb % c.stages}), {reg.name} row {row} byte {col} (stage offset {reg.off + byte}): expected "
            f"0x{int(exp[t, kb, byte]):02x}, got 0x{int(act[t, kb, byte]):02x}; likely cause: {_guess(run, t, kb, reg)}; "
            f"data seed {run.seed}"))
    # pipeline bookkeeping recorded by the consumers
    kb_idx = np.arange(c.num_kb)[None, :]
    tr = run.trace
    ok_stage = np.array_equal(tr[:, :, 0], np.broadcast_to(kb_idx % c.stages, tr.shape[:2]))
    ok_phase = np.array_equal(tr[:, :, 1], np.broadcast_to((kb_idx // c.stages) & 1, tr.shape[:2]))
    ok_kb = np.array_equal(tr[:, :, 3], np.broadcast_to(kb_idx, tr.shape[:2]))
    ok_align = bool(np.all(tr[:, :, 2] % 1024 == 0))
    rows.append(Check(
        f"{label} {c.name}: pipeline", ok_stage and ok_phase and ok_kb and ok_align,
        f"{c.stages} stages, {c.num_kb} k-blocks per tile, {len(run.tiles)} tiles: stage = kb % {c.stages} "
        f"{'ok' if ok_stage else 'WRONG'}, parity = (kb // {c.stages}) & 1 {'ok' if ok_phase else 'WRONG'}, "
        f"every k-block consumed once in order {'ok' if ok_kb else 'WRONG'}, stage buffers 1024-B aligned "
        f"{'ok' if ok_align else 'WRONG (SW128 needs 1024 B)'}; expect_tx {run.tx_bytes} B/stage"))
    if run.sf_table_ok is not None:
        rows.append(Check(f"{label} {c.name}: SF layout", run.sf_table_ok[0], run.sf_table_ok[1]))
    return rows


def _dump_npz(ctx: StageContext, label: str, run: CaseRun) -> Optional[Path]:
    """Write the SMEM images as a lab dump (``got``/``expected`` + JSON metadata) for ``lab.py diff``."""
    explicit = os.environ.get("PTXLAB_DUMP_DIR") or Path(ctx.dump_dir) != Path(DEFAULT_DUMP_DIR)
    if not explicit:
        return None
    from ptxlab.lab.dumps import write_dump
    from ptxlab.lab.state import current_source_hash

    arrays = {"got": run.dump, "expected": run.expected, "trace": run.trace, "tiles": np.array(run.tiles),
              "region_names": np.array([r.name for r in run.regions]),
              "region_offsets": np.array([r.off for r in run.regions]),
              "region_sizes": np.array([r.size for r in run.regions]), "seed": np.array(run.seed)}
    meta = {"backend": ctx.backend_name, "arch": "sm_90a" if ctx.backend_name == "cuda" else "sm_100a",
            "source_hash": current_source_hash(label), "case": run.case.name, "pipeline_stages": run.case.stages,
            "layout": "(tile, k-block, stage bytes): SMEM image of each consumed pipeline stage"}
    return write_dump(ctx.dump_dir, label, run.case.name, arrays, meta)


def sass_check(case: Case, load_ab: bool, load_sf: bool) -> Check:
    mod = build(case, "sm_100a", load_ab, load_sf)
    try:
        counts = sass.require(mod, ["UTMALDG", "SYNCS"], kernel=KERNEL)
    except PtxlabError as exc:
        return Check(f"sm_100a SASS ({case.name})", False, str(exc))
    return Check(f"sm_100a SASS ({case.name})", True,
                 f"UTMALDG x{counts['UTMALDG']} (TMA tile loads), SYNCS x{counts['SYNCS']} (mbarrier ops)")


def run_stage(ctx: StageContext, label: str, cases: Tuple[Case, ...], load_ab: bool, load_sf: bool,
              fault: Optional[str] = None) -> StageResult:
    fault = fault if fault is not None else os.environ.get(ENV_FAULT, "none") or "none"
    check_fault(fault)
    rows: List[Check] = []
    dumps: List[Path] = []
    metrics: Dict[str, Any] = {}
    t0 = time.perf_counter()
    compared = 0
    for case in cases:
        rows.append(sass_check(case, load_ab, load_sf))
        run = run_case(ctx, case, load_ab, load_sf, fault=fault)
        compared += run.dump.size
        rows += compare(run, label)
        p = _dump_npz(ctx, label, run)
        if p is not None:
            dumps.append(p)
    backend, arch = ctx.backend_name, run_arch(ctx)
    rows.insert(0, Check(f"{label} setup", True,
                         f"backend {backend}, run arch {arch} (+ sm_100a SASS check), UINT8 tensor maps, "
                         f"A/B box 128 B x rows SWIZZLE_128B, SF box 128 B x 16 rows no swizzle"
                         + (f", FAULT INJECTED: {fault}" if fault != "none" else "")))
    metrics.update(bytes_compared=compared, seconds=round(time.perf_counter() - t0, 2), backend=backend, arch=arch)
    return StageResult.from_rows(rows, metrics=metrics, dump_paths=dumps)


def run_a1(ctx: StageContext, fault: Optional[str] = None) -> StageResult:
    return run_stage(ctx, "A1", A1_CASES, load_ab=True, load_sf=False, fault=fault)


def run_a2(ctx: StageContext, fault: Optional[str] = None) -> StageResult:
    return run_stage(ctx, "A2", A2_CASES, load_ab=True, load_sf=True, fault=fault)


STAGES = [
    Stage("A1", "TMA: NVFP4 A/B tiles, SW128, multi-stage mbarrier pipeline",
          "SMEM image of every consumed stage (A 128x128 B, B rows x128 B, SWIZZLE_128B) == host image; stage/parity "
          "sequence; sm_100a SASS has UTMALDG", run_a1, preflight=preflight),
    Stage("A2", "TMA: SFA/SFB 512-B blocks from the gpu-mode permuted tensor (+ A/B in the same stages)",
          "SF stage images (4 x 512 B per operand, no swizzle) == section-8 formula; A/B images; pipeline", run_a2,
          preflight=preflight),
]
