#!/usr/bin/env python3
"""Does cuTensorMapEncodeTiled accept a global stride of 0 bytes? (issue 12, item 2)

CUTLASS passes a 0-byte stride for a size-1 batch mode (``make_cute_packed_stride`` with L == 1) and CuTe pads its
TMA descriptors with size-1 / stride-0 dimensions; ptxlab.tensormap.validate() used to refuse every 0 stride. This
probe asks the real driver, bypassing ptxlab's validation, and then loads through the accepted maps with TMA.

    python3 tools/probes/tmap_stride0_probe.py --out stride0.json        # GPU machine: the real driver
    python3 tools/probes/tmap_stride0_probe.py --mock --out x.json       # CPU dry run (encode mocked, no loads)

Stage ``encode``: for dtypes UINT8/FLOAT16/BFLOAT16/FLOAT32/INT64, ranks 2..5, every outer dimension p, a 0-byte
stride at p with global_shape[p] in {1, 2, 7} and box[p] in {1, 2}, the other dims dense (dim 0: 64 bytes, others
size 3); plus the control (same map with the dense stride at p), CuTe's padding shape (rank 5, dims 2..4 of size 1
with stride 0) and a 0 stride on every outer dim at once. Stage ``load`` (GPU only): UINT8 maps dims [64, 8, L],
strides [64, S], box [64, 8, 1]; one TMA load per z coordinate in -1..L; records per load whether SMEM holds
block 0 of the tensor, zeros (out-of-bounds fill), or something else. ptxlab's emulator is checked against the same
cases by tests/test_tensormap_stride0.py.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from ptxlab.tensormap import (DTYPE_CODES, INTERLEAVE_CODES, L2_PROMOTION_CODES, OOB_FILL_CODES,  # noqa: E402
                              SWIZZLE_CODES, TensorMap, TensorMapSpec)

ESIZE = {"UINT8": 1, "FLOAT16": 2, "BFLOAT16": 2, "FLOAT32": 4, "INT64": 8}


def _dense(dims: list[int], esize: int) -> list[int]:
    out, acc = [], dims[0] * esize
    for d in dims[1:]:
        out.append(acc)
        acc *= d
    return out


def encode_cases() -> list[dict[str, Any]]:
    """(name, dtype, dims, strides, box) of every encode; 'zero' lists the dims whose stride is 0."""
    cases = []
    for dt, es in ESIZE.items():
        inner = 64 // es
        for rank in range(2, 6):
            for p in range(1, rank):
                for size in (1, 2, 7):
                    for bp in (1, 2):
                        dims = [inner] + [3] * (rank - 1)
                        dims[p] = size
                        box = [inner] + [1] * (rank - 1)
                        box[p] = bp
                        dense = _dense(dims, es)
                        zero = list(dense)
                        zero[p - 1] = 0
                        tag = f"{dt} r{rank} dim{p}={size} box{p}={bp}"
                        cases.append(dict(name=f"zero {tag}", dtype=dt, dims=dims, strides=zero, box=box,
                                          zero=[p], size=size))
                        cases.append(dict(name=f"control {tag}", dtype=dt, dims=dims, strides=dense, box=box,
                                          zero=[], size=size))
        # CuTe padding: a 2-D tensor in a rank-5 descriptor, dims 2..4 of size 1 with stride 0
        dims = [inner, 8, 1, 1, 1]
        st = [64, 0, 0, 0]
        cases.append(dict(name=f"zero {dt} cute-pad r5 [.,8,1,1,1]", dtype=dt, dims=dims, strides=st,
                          box=[inner, 8, 1, 1, 1], zero=[2, 3, 4], size=1))
        # every outer stride 0, outer dims of size 1
        cases.append(dict(name=f"zero {dt} r3 all-outer size 1", dtype=dt, dims=[inner, 1, 1], strides=[0, 0],
                          box=[inner, 1, 1], zero=[1, 2], size=1))
        cases.append(dict(name=f"zero {dt} r3 all-outer size 4", dtype=dt, dims=[inner, 4, 4], strides=[0, 0],
                          box=[inner, 1, 1], zero=[1, 2], size=4))
    return cases


def encode_args(drv: Any, dtype: str, dims, strides, box, addr: int) -> tuple:
    rank = len(dims)
    return (drv.CUtensorMapDataType(DTYPE_CODES[dtype]), rank, addr,
            [drv.cuuint64_t(v) for v in dims], [drv.cuuint64_t(v) for v in strides],
            [drv.cuuint32_t(v) for v in box], [drv.cuuint32_t(1) for _ in range(rank)],
            drv.CUtensorMapInterleave(INTERLEAVE_CODES["none"]), drv.CUtensorMapSwizzle(SWIZZLE_CODES["none"]),
            drv.CUtensorMapL2promotion(L2_PROMOTION_CODES["none"]),
            drv.CUtensorMapFloatOOBfill(OOB_FILL_CODES["none"]))


LOAD_SRC = r'''
struct __align__(64) TmapT { unsigned long long v[16]; };
extern "C" __global__ void load3d(const __grid_constant__ TmapT tm, unsigned char* out, int z) {
    __shared__ __align__(1024) unsigned char buf[512];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar), d = (unsigned)__cvta_generic_to_shared(buf);
    for (int i = threadIdx.x; i < 512; i += blockDim.x) buf[i] = 0xA5;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;" :: "r"(b) : "memory");
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4, %5}], [%2];"
                     :: "r"(d), "l"((unsigned long long)&tm), "r"(b), "r"(0), "r"(0), "r"(z) : "memory");
    }
    __syncthreads();
    asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t"
                 "@!p bra W_%=;\n\t}" :: "r"(b) : "memory");
    for (int i = threadIdx.x; i < 512; i += blockDim.x) out[i] = buf[i];
}
'''

LOAD_CASES = [  # (L, stride of dim 2 in bytes)
    (1, 0), (1, 512), (3, 0), (3, 512), (2, 0),
]


def classify(got: np.ndarray, src: np.ndarray, block: int) -> str:
    if (got == 0).all():
        return "zeros"
    for k in range(src.size // 512):
        if np.array_equal(got, src[k * 512:(k + 1) * 512]):
            return f"block{k}"
    return "other"


def load_stage(dev: Any, spec_maker) -> list[dict[str, Any]]:
    import ptxlab

    mod = ptxlab.compile(LOAD_SRC, arch="sm_90a", name="stride0_load.cu")
    rng = np.random.default_rng(12)
    recs = []
    for L, S in LOAD_CASES:
        src = rng.integers(1, 256, size=512 * 4, dtype=np.uint8)   # 4 blocks of 8 x 64 bytes
        x = dev.to_device(src)
        spec = TensorMapSpec.make("UINT8", x.ptr, [64, 8, L], [64, S], [64, 8, 1])
        try:
            tm = spec_maker(dev, spec)
        except Exception as exc:  # noqa: BLE001 - record the driver's answer
            recs.append(dict(L=L, S=S, encoded=False, err=str(exc)[:300]))
            continue
        for z in range(-1, L + 1):
            y = dev.empty(512)
            dev.memset(y, 0x5A)
            dev.launch(mod, "load3d", grid=1, block=64, args=[tm, y, np.int32(z)])
            got = dev.to_host(y, np.uint8, (512,))
            recs.append(dict(L=L, S=S, z=z, encoded=True, result=classify(got, src, 512)))
    return recs


def raw_map(dev: Any, spec: TensorMapSpec) -> TensorMap:
    """A tensor map encoded by the backend without ptxlab's validation (the probe's point)."""
    raw = bytes(dev._encode_tensor_map(spec))  # noqa: SLF001
    tm = TensorMap(spec, raw)
    dev._made_maps.add(raw)  # noqa: SLF001
    return tm


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--mock", action="store_true", help="CPU dry run: accept every encode, no loads")
    a = ap.parse_args(argv)
    t0 = time.time()
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if a.mock:
        drv = None
        out["device"] = "mock"
    else:
        import ptxlab
        dev = ptxlab.open_device("cuda")
        drv = dev._drv  # noqa: SLF001
        arena = dev.empty(1 << 16)
        out["device"] = dev.describe()
        out["driver_version"] = drv.cuDriverGetVersion()[1]
    recs = []
    for c in encode_cases():
        if drv is None:
            ok, err = True, "mock"
        else:
            res = drv.cuTensorMapEncodeTiled(*encode_args(drv, c["dtype"], c["dims"], c["strides"], c["box"],
                                                          arena.ptr))
            ok = res[0] == drv.CUresult.CUDA_SUCCESS
            err = "CUDA_SUCCESS" if ok else getattr(res[0], "name", str(res[0]))
        recs.append({**c, "ok": ok, "err": err})
    out["encode"] = recs
    if drv is not None:
        try:
            out["load"] = load_stage(dev, raw_map)
        except Exception as exc:  # noqa: BLE001 - keep the encode results
            out["load_error"] = f"{type(exc).__name__}: {exc}"[:2000]
    out["seconds"] = round(time.time() - t0, 2)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    summarize(out)
    return 0


def summarize(out: dict[str, Any]) -> None:
    print(f"device: {out['device']}  driver {out.get('driver_version')}  {out['date']}  {out['seconds']} s")
    groups: dict[tuple, list[bool]] = {}
    for r in out["encode"]:
        kind = "zero" if r["zero"] else "control"
        key = (kind, "size1" if r["size"] == 1 else "size>1", r["dtype"])
        groups.setdefault(key, []).append(r["ok"])
    for k in sorted(groups):
        v = groups[k]
        print(f"  {k[0]:8s} {k[1]:7s} {k[2]:9s}: {sum(v)}/{len(v)} accepted")
    errs = sorted({r["err"] for r in out["encode"] if not r["ok"]})
    print(f"  rejection codes: {errs}")
    for r in out.get("load", []):
        print(f"  load L={r['L']} S={r['S']}: " + (f"z={r['z']} -> {r['result']}" if r["encoded"] else
                                                  f"encode failed: {r['err']}"))
    if "load_error" in out:
        print("  load stage error:", out["load_error"])


if __name__ == "__main__":
    sys.exit(main())
