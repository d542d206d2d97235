"""Host wrapper of the cluster NVFP4 GEMM (``ptxlab/kernels/nvfp4_gemm_cluster.cu``), the default production GEMM.

``run_cluster(dev, problem) -> c`` runs one gpu-mode nvfp4_gemm problem on a ptxlab device that runs sm_100a code
and returns c as a new (M, N, L) fp16 array (memory order (L, M, N)). ``ptxlab.production.gemm.nvfp4_gemm`` calls it
for ``variant="cluster"`` (the default). The plan (tile N, cluster size, stages, warm-up K blocks, tensor-map
parameters, launch geometry) comes from ``plan_gemm`` (:func:`choose_cluster_config`, :func:`cluster_launch_plan`,
:func:`cluster_tensor_map_params`), the functions the gpu-mode adapter uses on a GPU.

The tensors are read as gpu-mode lays them out (a, b: (L, rows, K/2) bytes; the permuted scale tensors' memory);
c is poisoned (0xFF bytes = fp16 NaN) before the launch, so an element the kernel misses shows up.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, List, Optional

import numpy as np

from ptxlab.production.host_io import POISON, free_all, physical, sf_physical
from ptxlab.production.plan_gemm import (CLUSTER_KERNEL_FILE, CLUSTER_KERNEL_NAME, cluster_launch_plan,
                                         cluster_options, cluster_stage_bytes, cluster_tensor_map_params, sfb_share)

__all__ = ["compile_cluster", "run_cluster", "BLOCKS_USED"]

BLOCKS_USED = ("common.cuh", "mbarrier.cuh", "tma.cuh", "tmem.cuh", "scales.cuh", "mma.cuh", "cluster.cuh",
               "tma_store.cuh", "splitk.cuh", "cluster_splitk.cuh")


@lru_cache(maxsize=None)
def _compile(bn: int, cluster: int, stages: int, wait_probes: int, splits: int, exchange: str) -> Any:
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR, read

    opts = cluster_options(bn, cluster, stages, splits, exchange)
    if wait_probes:
        opts += (f"-DPTXLAB_WAIT_PROBES={wait_probes}u",)
    tag = f"{CLUSTER_KERNEL_NAME}_bn{bn}_c{cluster}_s{stages}" + (f"_k{splits}" if splits > 1 else "") + \
        ("_xbar" if splits > 1 and exchange == "barrier" else "") + \
        (f"_w{wait_probes}" if wait_probes else "")
    return ptxlab.compile(read(CLUSTER_KERNEL_FILE), arch="sm_100a", name=f"{tag}.cu", options=opts,
                          include_dirs=[KERNELS_DIR])


def compile_cluster(bn: int, cluster: int, stages: int, wait_probes: int = 0, splits: int = 1,
                    exchange: str = "signal") -> Any:
    """The sm_100a module of one cluster-kernel build (cached per process). wait_probes > 0: every mbarrier wait
    traps after that many failed probes (hardware bring-up); splits > 1: split-K over the cluster, its exchange
    "signal" (default) or "barrier" (plan_gemm.CLUSTER_EXCHANGES)."""
    if not 0 <= int(wait_probes) < 2**32:
        raise ValueError("nvfp4 GEMM: wait_probes must fit in 32 bits")
    return _compile(int(bn), int(cluster), int(stages), int(wait_probes), int(splits), str(exchange))


def run_cluster(dev: Any, problem: Any, *, config: Optional[Dict[str, int]] = None, module: Optional[Any] = None,
                wait_probes: int = 0, report: Optional[Dict[str, Any]] = None) -> np.ndarray:
    """c (M, N, L) fp16 of a gpu-mode problem by the cluster kernel. config: overrides of
    :func:`choose_cluster_config` (bn, cluster, stages, warm, splits; exchange "signal" | "barrier"); module:
    a :func:`compile_cluster` build of that config. report (a dict) receives the launch plan and the tensor-map boxes."""
    p = problem
    m, n, k, l = p.m, p.n, p.k, p.l
    if p.b.shape[0] != n:
        raise ValueError(f"nvfp4 GEMM: b has {p.b.shape[0]} rows, expected N={n}")
    plan = cluster_launch_plan(m, n, k, l, config)
    bn, c, s, ks = plan["bn"], plan["cluster_size"], plan["stages"], plan["splits"]
    mod = compile_cluster(bn, c, s, wait_probes, ks, plan["exchange"]) if module is None else module
    _check_module(mod, bn, c, s, ks, plan["exchange"])
    prm = cluster_tensor_map_params(m, n, k, l, bn, c)
    hosts = {"a": physical(p.a), "b": physical(p.b), "sfa": sf_physical(p.sfa_permuted),
             "sfb": sf_physical(p.sfb_permuted)}
    for name in ("sfa", "sfb"):
        want = prm[name]["global_shape"][0] * prm[name]["global_shape"][1]
        if hosts[name].size != want:
            raise ValueError(f"nvfp4 GEMM: permuted {name} has {hosts[name].size} bytes, expected {want}")
    bufs: List[Any] = []
    try:
        for name in ("a", "b", "sfa", "sfb"):
            bufs.append(dev.to_device(hosts[name]))
        d_c = dev.empty(l * m * n * 2)
        bufs.append(d_c)
        # split-K's exchange workspace: written before the cluster barrier, read after it (never zeroed)
        ws = dev.empty(plan["workspace_bytes"]) if ks > 1 else None
        if ws is not None:
            bufs.append(ws)   # after c: the maps below take bufs[:5]
        dev.memset(d_c, POISON)
        maps = [dev.tensor_map(buf, **prm[name]) for name, buf in zip(("a", "b", "sfa", "sfb", "c"), bufs)]
        # the kernel's compile-time expect_tx must equal what one stage's boxes deliver to each CTA
        share = sfb_share(bn, c)
        tx = (c * maps[0].spec.box_bytes + maps[1].spec.box_bytes + c * maps[2].spec.box_bytes
              + (share if bn < 128 else bn // 128) * maps[3].spec.box_bytes)
        if tx != cluster_stage_bytes(bn):
            raise AssertionError(f"nvfp4 GEMM (cluster): boxes deliver {tx} B per stage, kernel expects "
                                 f"{cluster_stage_bytes(bn)}")
        args = maps + [np.uint32(m), np.uint32(n), np.uint32(k), np.uint32(plan["warm"]),
                       ws if ws is not None else np.uint64(0)]
        kw: Dict[str, Any] = {}
        if plan["cluster"]:
            kw["cluster"] = plan["cluster"]
            if plan["non_portable"]:
                kw["non_portable_cluster"] = True
        dev.launch(mod, CLUSTER_KERNEL_NAME, grid=plan["grid"], block=plan["block"], args=args,
                   shared_bytes=plan["shared_bytes"], **kw)
        out = dev.to_host(d_c, np.float16, (l, m, n))
    finally:
        free_all(dev, bufs)
    if report is not None:
        report.update(plan, tx_bytes=tx, boxes={k_: prm[k_]["box"] for k_ in prm})
    return out.transpose(1, 2, 0)


def _check_module(module: Any, bn: int, cluster: int, stages: int, splits: int = 1, exchange: str = "signal") -> None:
    """A caller-supplied module must be the build of this launch's config (a BN or cluster mismatch writes wrong
    tiles or waits forever). Checked from its compile options when it has them."""
    opts = getattr(module, "options", None)
    if not isinstance(opts, (tuple, list)):
        return
    want = set(cluster_options(bn, cluster, stages, splits, exchange))
    got = {o for o in opts if str(o).startswith(("-DGEMM_BN=", "-DGEMM_CLUSTER=", "-DGEMM_STAGES=", "-DGEMM_SPLITS=",
                                                 "-DGEMM_XCHG="))}
    if got != want:
        raise ValueError(f"nvfp4 GEMM (cluster): module {getattr(module, 'name', '?')!r} was built with "
                         f"{sorted(got)}, this launch needs {sorted(want)}: pass module=compile_cluster({bn}, "
                         f"{cluster}, {stages}, splits={splits}, exchange={exchange!r}) or drop module=")
