"""Host wrapper of the fused NVFP4 GEMMs for sm_100a.

``nvfp4_gemm(dev, problem) -> c`` runs the default variant, "cluster" (``ptxlab/kernels/nvfp4_gemm_cluster.cu``,
``ptxlab.production.gemm_cluster``: narrow N tiles, A multicast over an N-cluster, TMA-store epilogue); the rest of
this docstring is about the "1sm" / "2sm" variants (``ptxlab/kernels/nvfp4_gemm_tcgen05.cu``, ``variant="1sm"``).

``nvfp4_gemm(dev, problem, variant="1sm") -> c`` runs one gpu-mode nvfp4_gemm problem (:class:`ptxlab.gpumode.NvFp4Problem`) on a
ptxlab device that runs sm_100a code (the emulator, or a B200) and returns c as a new (M, N, L) fp16 array with
gpu-mode's memory order (L, M, N). The tensors are used as they are laid out by gpu-mode:

* a, b: physical (L, rows, K/2) bytes -> 3-D UINT8 tensor maps {K/2, rows, L}, box {128 B, 128 | BN rows, 1},
  SWIZZLE_128B (the SMEM image the UMMA K-major SW128 descriptor reads);
* sfa_permuted / sfb_permuted: physical (L, rest, K/64, 32, 4, 4) bytes -> 2-D UINT8 maps {128 B, total/128 rows},
  box {128, 16} (4 consecutive 512-B SF blocks = the SFs of 128 rows x 256 K), no swizzle;
* c: (L, M, N) fp16, poisoned before the launch (0xFF bytes = NaN), so an element the kernel misses shows up.

The map parameters come from ``ptxlab.production.submission_gemm.tensor_map_params``, the function the gpu-mode
adapter (and so the exported submission) encodes its maps with on a real GPU.

The kernel is built from ``ptxlab/kernels/blocks/*.cuh``; :func:`blocks_report` says which of the blocks it uses are
graduated in the lab state (``ptxlab.lab.state.graduated_blocks``).

Split-K (opt-in): ``nvfp4_gemm(dev, problem, splits=S)`` with S >= 2 runs the kernel built with ``-DGEMM_SPLITS=S``
on grid (M/128, N/BN, L*S); the S CTAs of a tile reduce their fp32 partials through a zeroed fp32 (L, M, N) workspace
plus one u32 counter per tile (:class:`SplitKWorkspace`; per call unless one is passed; every launch leaves it zero).
The default is splits=1 (the kernel as before, bit-exact vs the tensor-core model); :func:`choose_splits` is a
heuristic (one wave of at most `sms` CTAs) that nothing uses by default: its benefit on a B200 is unmeasured. The
reduction is ``reduce="ordered"`` (default, deterministic: bit-exact vs :func:`model_c_splitk`) or ``"atomic"``
(red.add, not deterministic).
:func:`check_splits` and :func:`choose_splits` live in ``submission_gemm`` (one implementation; the adapter's
``PTXLAB_GEMM_SPLITS=auto`` uses the same heuristic).

2-SM (opt-in): ``nvfp4_gemm(dev, problem, variant="2sm")`` runs the ``-DGEMM_PAIR=1`` build (schedule:
``gemm::run_pair`` in the kernel file): CTA pairs in (2,1,1) clusters, one tcgen05.mma.cta_group::2 of M = 256 per
K chunk, the B tile loaded once per pair (b map box {128 B, BN/2 rows}), grid (2 * ceil(M/256), N/BN, L). Bit-exact
against the same tensor-core model as the default; unmeasured on a B200, so "1sm" stays the default.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, List, Optional

import numpy as np

from ptxlab.production.host_io import POISON, free_all, physical, sf_physical
# the host-side plan (tile constants, shape checks, SMEM sizes, tensor maps, split-K choice) has one implementation,
# plan_gemm.py, which the self-contained gpu-mode adapter imports too (the exporter inlines it there)
from ptxlab.production.plan_gemm import (B200_SMS, BK_BYTES, BM, DEFAULT_STAGES, GEMM_VARIANT, KERNEL_FILE,
                                         KERNEL_NAME, PAIR_CLUSTER, SF_BOX, THREADS, check_shape, check_splits,
                                         choose_bn, choose_splits, parse_reduce, resolve_reduce, workspace_bytes,
                                         launch_grid, parse_variant, shared_bytes, stage_bytes, tensor_map_params,
                                         variant_is_pair)

__all__ = ["KERNEL_FILE", "KERNEL_NAME", "BLOCKS_USED", "THREADS", "compile_gemm", "choose_bn", "check_shape",
           "stage_bytes", "shared_bytes", "blocks_report", "nvfp4_gemm", "DEFAULT_STAGES", "check_splits",
           "choose_splits", "SplitKWorkspace", "B200_SMS", "BM", "BK_BYTES", "SF_BOX", "model_c", "model_c_splitk"]

BLOCKS_USED = ("common.cuh", "mbarrier.cuh", "tma.cuh", "tmem.cuh", "scales.cuh", "mma.cuh", "epilogue.cuh",
               "splitk.cuh", "pair.cuh")


@lru_cache(maxsize=None)
def _compile(bn: int, stages: int, wait_probes: int, splits: int = 1, pair: bool = False, atomic: bool = False) -> Any:
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR, read

    opts = [f"-DGEMM_BN={bn}", f"-DGEMM_STAGES={stages}"]
    if wait_probes:
        opts.append(f"-DPTXLAB_WAIT_PROBES={wait_probes}u")
    if splits > 1:  # splits == 1: no macro at all, i.e. exactly the default build
        opts.append(f"-DGEMM_SPLITS={splits}")
        if atomic:
            opts.append("-DGEMM_SPLITK_ATOMIC=1")
    if pair:
        opts.append("-DGEMM_PAIR=1")
    tag = (f"nvfp4_gemm_tcgen05_bn{bn}_s{stages}" + (f"_w{wait_probes}" if wait_probes else "")
           + (f"_k{splits}" if splits > 1 else "") + ("a" if splits > 1 and atomic else "") + ("_2sm" if pair else ""))
    return ptxlab.compile(read(KERNEL_FILE), arch="sm_100a", name=f"{tag}.cu", options=tuple(opts),
                          include_dirs=[KERNELS_DIR])


def compile_gemm(bn: int = 256, stages: Optional[int] = None, wait_probes: int = 0, splits: int = 1,
                 variant: str = "1sm", reduce: str = "ordered") -> Any:
    """The sm_100a module for a 128 x bn tile (bn 128 or 256) with a `stages`-deep TMA ring (cached per process).
    wait_probes > 0: every mbarrier wait traps after that many failed try_wait probes (hardware bring-up: an error
    instead of a hung GPU); 0: unbounded waits. splits >= 2: the split-K build (-DGEMM_SPLITS; two more kernel
    parameters, ws and counters; reduce "ordered" (deterministic, default) or "atomic" (-DGEMM_SPLITK_ATOMIC=1,
    NON-deterministic)); 1: the default build. variant "2sm": the CTA-pair build (-DGEMM_PAIR=1)."""
    if bn not in (128, 256):
        raise ValueError(f"nvfp4 GEMM: BN={bn} must be 128 or 256")
    s = DEFAULT_STAGES[bn] if stages is None else int(stages)
    if s < 2:
        raise ValueError("nvfp4 GEMM: at least 2 pipeline stages")
    if not 0 <= int(wait_probes) < 2**32:
        raise ValueError("nvfp4 GEMM: wait_probes must fit in 32 bits")
    if isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or splits < 1:
        raise ValueError(f"nvfp4 GEMM: splits must be an integer >= 1, got {splits!r}")
    pair = variant_is_pair(variant, splits)
    return _compile(bn, s, int(wait_probes), int(splits), pair, parse_reduce(reduce) == "atomic")


class SplitKWorkspace:
    """Device memory of split-K: counters, one u32 per 128 x bn tile, and ws, fp32: `splits` slots of (L, M, N) for the
    ordered reduction (default), one (L, M, N) image for the atomic one; zeroed at creation. Every split-K launch
    leaves the counters zero (and, atomic, ws; the ordered slots are overwritten before they are read), so one
    workspace serves any number of launches of that (M, N, L, bn, splits, reduce), one at a time."""

    def __init__(self, dev: Any, m: int, n: int, l: int, bn: int, splits: int, reduce: str = "ordered") -> None:
        self.dev, self.shape, self.bn = dev, (l, m, n), bn
        self.splits, self.reduce = int(splits), parse_reduce(reduce)
        self.tiles = l * (m // BM) * (n // bn)
        self.counter_bytes = self.tiles * 4
        self.ws_bytes = workspace_bytes(m, n, l, bn, max(2, self.splits), self.reduce) - self.counter_bytes
        self.ws = dev.empty(self.ws_bytes)
        try:
            self.counters = dev.empty(self.counter_bytes)
        except Exception:
            dev.free(self.ws)
            raise
        dev.memset(self.ws, 0)
        dev.memset(self.counters, 0)

    def matches(self, m: int, n: int, l: int, bn: int, splits: int, reduce: str) -> bool:
        return self.shape == (l, m, n) and self.bn == bn and self.splits == splits and self.reduce == reduce

    def is_zero(self) -> bool:
        """Read back what a launch must leave zero (test hook): the counters, and for the atomic reduction ws."""
        if self.dev.to_host(self.counters, np.uint32).any():
            return False
        return self.reduce == "ordered" or not self.dev.to_host(self.ws, np.uint32).any()

    def free(self) -> None:
        free_all(self.dev, (self.ws, self.counters))


def _check_module(module: Any, bn: int, splits: int, pair: bool = False, atomic: bool = False) -> None:
    """A caller-supplied module must be the build of this call's BN and split-K factor: a -DGEMM_SPLITS=4 module
    launched with splits=2 runs z = L*2 CTAs that each wait for 4 arrivals, so no tile is ever written and the
    workspace is left dirty (silently); a BN mismatch writes the wrong tiles. Checked from the module's compile
    options (objects without them, e.g. test doubles, are not checked)."""
    opts = getattr(module, "options", None)
    if not isinstance(opts, (tuple, list)):
        return
    got = {}
    for o in opts:
        m = re.fullmatch(r"-D(GEMM_SPLITS|GEMM_BN|GEMM_PAIR|GEMM_SPLITK_ATOMIC)=(\d+)", str(o))
        if m:
            got[m.group(1)] = int(m.group(2))
    mod_splits, mod_bn, mod_pair = got.get("GEMM_SPLITS", 1), got.get("GEMM_BN", 256), bool(got.get("GEMM_PAIR", 0))
    if splits > 1 and bool(got.get("GEMM_SPLITK_ATOMIC", 0)) != atomic:
        raise ValueError(f"nvfp4 GEMM: module {getattr(module, 'name', '?')!r} has the "
                         f"{'atomic' if not atomic else 'ordered'} split-K reduction, this call asks for the "
                         f"{'atomic' if atomic else 'ordered'} one: pass module=compile_gemm(..., reduce=...) or drop "
                         "module=")
    if mod_splits != splits or mod_bn != bn or mod_pair != pair:
        v, mv = "2sm" if pair else "1sm", "2sm" if mod_pair else "1sm"
        raise ValueError(f"nvfp4 GEMM: module {getattr(module, 'name', '?')!r} was built with GEMM_BN={mod_bn}, "
                         f"GEMM_SPLITS={mod_splits} but this call runs bn={bn}, splits={splits} (module variant "
                         f"{mv}, call variant {v}): pass module=compile_gemm({bn}, stages, wait_probes, splits={splits}"
                         + (", variant='2sm'" if pair else "") + ") or drop module=")


def blocks_report(variant: str = "1sm") -> Dict[str, List[str]]:
    """{block: [graduated stages covering it]} for each block the variant's kernel includes ([] = not graduated)."""
    if variant == "cluster":
        from ptxlab.production.gemm_cluster import BLOCKS_USED as used
    else:
        used = BLOCKS_USED
    try:
        from ptxlab.lab.state import graduated_blocks

        g = graduated_blocks()
    except Exception as exc:  # lab state unreadable: report it rather than fail the GEMM
        return {f"blocks/{b}": [f"lab state unavailable: {exc}"] for b in used}
    return {f"blocks/{b}": list(g.get(f"blocks/{b}", [])) for b in used}


def model_c(problem: Any) -> np.ndarray:
    """(M, N, L) fp16: c as the kernel must produce it, bit for bit (both variants, splits=1): the bit-exact
    tensor-core model ``ptxlab.mma.mma`` over the full K in the kernel's order (chained 64-wide MMAs, D of chunk i
    = C of chunk i+1), then fp32 -> fp16 round-to-nearest-even. The exact check of
    tests/production/test_production_gemm*.py and ``benchmarks/emu_gemm_tests.py --exact``."""
    from ptxlab.mma import mma
    from ptxlab.numerics import unpack_fp4

    out = []
    for l in range(problem.l):
        a = unpack_fp4(problem.a[:, :, l]).astype(np.uint8)
        b = unpack_fp4(problem.b[:, :, l]).astype(np.uint8)
        d = mma("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=np.ascontiguousarray(problem.sfa[:, :, l]),
                sfb=np.ascontiguousarray(problem.sfb[:, :, l]), scale_fmt="ue4m3", block=16)
        out.append(d.view(np.float32).astype(np.float16))
    return np.stack(out, axis=2)


def model_c_splitk(problem: Any, splits: int) -> np.ndarray:
    """(M, N, L) fp16: c as the ordered split-K build must produce it, bit for bit: per split s the bit-exact tensor-core
    model over its K blocks [floor(s KB / S), floor((s+1) KB / S)) (KB = K/256), the S fp32 partials added in split
    order ((p_0 + p_1) + ..) + p_{S-1}, then fp32 -> fp16 RNE. For data whose sums are exact in fp32 (gpu-mode's)
    this equals :func:`model_c`."""
    from ptxlab.mma import mma
    from ptxlab.numerics import unpack_fp4

    kb = problem.k // 256
    out = []
    for l in range(problem.l):
        a = unpack_fp4(problem.a[:, :, l]).astype(np.uint8)
        b = unpack_fp4(problem.b[:, :, l]).astype(np.uint8)
        acc = None
        for s in range(splits):
            k0, k1 = 256 * (s * kb // splits), 256 * ((s + 1) * kb // splits)
            d = mma("mxf4nvf4", a[:, k0:k1], b[:, k0:k1], a_fmt="e2m1", b_fmt="e2m1",
                    sfa=np.ascontiguousarray(problem.sfa[:, k0 // 16:k1 // 16, l]),
                    sfb=np.ascontiguousarray(problem.sfb[:, k0 // 16:k1 // 16, l]), scale_fmt="ue4m3", block=16)
            p = np.asarray(d).view(np.float32)
            acc = p.copy() if acc is None else (acc + p).astype(np.float32)
        with np.errstate(over="ignore"):
            out.append(acc.astype(np.float16))
    return np.stack(out, axis=2)


def nvfp4_gemm(dev: Any, problem: Any, *, bn: Optional[int] = None, stages: Optional[int] = None,
               module: Optional[Any] = None, report: Optional[Dict[str, Any]] = None,
               wait_probes: int = 0, splits: int = 1, workspace: Optional[SplitKWorkspace] = None,
               variant: str = GEMM_VARIANT, config: Optional[Dict[str, int]] = None,
               reduce: Optional[str] = None) -> np.ndarray:
    """Run the GEMM on `dev` (a ptxlab Device that runs sm_100a) for a gpu-mode problem; returns c (M, N, L) fp16.

    variant: "cluster" (the default: ``nvfp4_gemm_cluster.cu``, narrow N tiles, A multicast over an N-cluster,
    TMA-store epilogue; :func:`ptxlab.production.gemm_cluster.run_cluster`; bn / stages / config override
    ``choose_cluster_config``), "1sm" (``nvfp4_gemm_tcgen05.cu``, one CTA per 128 x bn tile, split-K opt-in) or "2sm"
    (CTA pairs, tcgen05 cta_group::2 on 256 x bn tiles, cluster launch; not with split-K).
    1sm / 2sm: bn: tile N (default choose_bn(N)); stages: ring depth (default DEFAULT_STAGES[bn]); module: a compiled
    module from compile_gemm(bn, stages, wait_probes, splits); wait_probes: see compile_gemm. splits: split-K factor
    (check_splits; default 1 = no split-K; choose_splits(m, n, k, l) proposes one); workspace: a SplitKWorkspace for
    this shape to reuse (splits >= 2; default: one allocated, zeroed and freed per call); reduce: the split-K
    reduction, "ordered" (deterministic: the default, resolve_reduce) or "atomic" (red.add in arrival order,
    NON-deterministic, opt-in). If `report` is a
    dict it receives bn, stages, splits, variant, grid, cluster, shared_bytes, tx_bytes (per CTA), workspace_bytes
    and the blocks report (graduated blocks used)."""
    if hasattr(dev, "arch_supported") and not dev.arch_supported("sm_100a"):
        from ptxlab.errors import DeviceUnavailable

        desc = dev.describe() if hasattr(dev, "describe") else repr(dev)
        raise DeviceUnavailable(f"nvfp4 GEMM (tcgen05) needs an sm_100a device or the emulator; {desc} cannot run "
                                "sm_100a code")
    if parse_variant(variant) == "cluster":
        if splits != 1 or workspace is not None:
            raise ValueError(f"nvfp4 GEMM: the cluster variant does not combine with split-K (splits={splits}); "
                             "split-K is an option of variant='1sm'")
        from ptxlab.production.gemm_cluster import run_cluster

        cfg = dict(config or {})
        cfg.update({k_: v for k_, v in (("bn", bn), ("stages", stages)) if v is not None})
        out = run_cluster(dev, problem, config=cfg, module=module, wait_probes=wait_probes, report=report)
        if report is not None:
            report["blocks"] = blocks_report("cluster")
        return out
    if config is not None:
        raise ValueError("nvfp4 GEMM: config= applies to variant='cluster' only")
    p = problem
    m, n, k, l = p.m, p.n, p.k, p.l
    bn = choose_bn(n) if bn is None else int(bn)
    s = DEFAULT_STAGES.get(bn, 4) if stages is None else int(stages)
    check_shape(m, n, k, l, bn)
    splits = check_splits(splits, k, l)
    variant = parse_variant(variant)
    pair = variant_is_pair(variant, splits)
    reduce = resolve_reduce(reduce)
    if workspace is not None and (splits == 1 or not workspace.matches(m, n, l, bn, splits, reduce)):
        raise ValueError(f"nvfp4 GEMM: workspace {workspace.shape} bn={workspace.bn} splits={workspace.splits} "
                         f"reduce={workspace.reduce} does not fit splits={splits}, (L, M, N)=({l}, {m}, {n}), bn={bn}, "
                         f"reduce={reduce}")
    if p.b.shape[0] != n:
        raise ValueError(f"nvfp4 GEMM: b has {p.b.shape[0]} rows, expected N={n}")
    mod = compile_gemm(bn, s, wait_probes, splits, variant, reduce) if module is None else module
    if module is not None:
        _check_module(module, bn, splits, pair, reduce == "atomic")
    a_h, b_h = physical(p.a), physical(p.b)
    sfa_h, sfb_h = sf_physical(p.sfa_permuted), sf_physical(p.sfb_permuted)
    # every map parameter comes from the gpu-mode adapter's pure function (one source of truth for both hosts)
    prm = tensor_map_params(m, n, k, l, bn, pair)
    for name, h in (("sfa", sfa_h), ("sfb", sfb_h)):
        if h.size != prm[name]["global_shape"][0] * prm[name]["global_shape"][1]:
            raise ValueError(f"nvfp4 GEMM: permuted {name} has {h.size} bytes, expected "
                             f"{prm[name]['global_shape'][0] * prm[name]['global_shape'][1]}")
    bufs: List[Any] = []
    own_ws: Optional[SplitKWorkspace] = None
    try:
        d_a, d_b, d_sfa, d_sfb = (dev.to_device(x) for x in (a_h, b_h, sfa_h, sfb_h))
        bufs += [d_a, d_b, d_sfa, d_sfb]
        d_c = dev.empty(l * m * n * 2)
        bufs.append(d_c)
        dev.memset(d_c, POISON)
        tm_a, tm_b, tm_sfa, tm_sfb = (dev.tensor_map(buf, **prm[name]) for name, buf in
                                      (("a", d_a), ("b", d_b), ("sfa", d_sfa), ("sfb", d_sfb)))
        tx = tm_a.spec.box_bytes + tm_b.spec.box_bytes + tm_sfa.spec.box_bytes + (bn // 128) * tm_sfb.spec.box_bytes
        if tx != stage_bytes(bn, pair):  # the kernel's compile-time expect_tx must equal what the boxes deliver
            raise AssertionError(f"nvfp4 GEMM: tensor-map boxes deliver {tx} B per stage, kernel expects "
                                 f"{stage_bytes(bn, pair)}")
        grid = launch_grid(m, n, l, bn, splits, pair)
        cluster = PAIR_CLUSTER if pair else None
        smem = shared_bytes(bn, s, pair)
        args = [tm_a, tm_b, tm_sfa, tm_sfb, d_c, np.uint32(m), np.uint32(n), np.uint32(k)]
        ws_bytes = 0
        if splits > 1:
            ws = workspace
            if ws is None:
                ws = own_ws = SplitKWorkspace(dev, m, n, l, bn, splits, reduce)
            args += [ws.ws, ws.counters]
            ws_bytes = ws.ws_bytes + ws.counter_bytes
        dev.launch(mod, KERNEL_NAME, grid=grid, block=(THREADS, 1, 1), args=args, shared_bytes=smem,
                   **({"cluster": cluster} if cluster else {}))
        out = dev.to_host(d_c, np.float16, (l, m, n))
    finally:
        free_all(dev, bufs)
        if own_ws is not None:
            own_ws.free()
    if report is not None:
        report.update(bn=bn, stages=s, splits=splits, reduce=reduce, variant=variant, grid=grid, cluster=cluster,
                      shared_bytes=smem, tx_bytes=tx,
                      workspace_bytes=ws_bytes, blocks=blocks_report())
    return out.transpose(1, 2, 0)
