"""hello tcgen05 (ptx_docs/hello_tcgen05.md): the host side of one raw-PTX tcgen05.mma.kind::f16 on the emulator.

    python ptx_docs/hello_tcgen05/hello_tcgen05.py [--seed N] [--swap-lbo-sbo]

Builds the three descriptors exactly as `python lab.py desc encode ...` prints them, lays A and B out in shared-memory
order for their descriptors (ptxlab.desc.layout.layout_tile, the inverse of the descriptor's address walk), checks
each descriptor against its tile before the launch (check_descriptor), runs the kernel on open_device("emu") and
compares D with numpy, exactly (small integers: every product and sum is exact in f32). --swap-lbo-sbo launches with
the A descriptor's LBO and SBO swapped: the pre-launch check names the swap (and without the check the MMA would
read a permuted tile: wrong numbers, no error). Exit status 0 = exact, 1 = mismatch, 2 = the check refused.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import ptxlab
from ptxlab.desc import InstrDesc, SmemDesc
from ptxlab.desc.fields import DescError
from ptxlab.desc.layout import check_descriptor, layout_tile
from ptxlab.kernels import KERNELS_DIR

HERE = Path(__file__).resolve().parent
M, N, K = 128, 16, 16
# `python lab.py desc encode smem --start 0 --lbo 128 --sbo 256 --swizzle none`: K-major, no swizzle; core matrices of
# 8 rows x 16 B; the two 16-B halves of a row's 32 B of K are LBO = 128 B apart, 8-row groups SBO = 256 B apart
A_DESC = SmemDesc.encode(start_address=0, lbo=128, sbo=256, swizzle="NONE")
B_DESC = SmemDesc.encode(start_address=0, lbo=128, sbo=256, swizzle="NONE")
# `python lab.py desc encode idesc --kind f16 --m 128 --n 16 --a F16 --b F16 --d F32`
IDESC = InstrDesc.encode("f16", M, N, a_fmt="F16", b_fmt="F16", d_fmt="F32")


def swapped(desc: int) -> int:
    d = SmemDesc.decode(desc)
    return SmemDesc.encode(start_address=d["start_address"], lbo=d["sbo"], sbo=d["lbo"], swizzle=d.swizzle_name)


def run(seed: int, swap: bool = False, dev=None, check: bool = True, idesc: int = IDESC) -> int:
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (N, K)).astype(np.float16)
    a_start, a_img = layout_tile(a, A_DESC)           # bytes for shared memory, in the descriptor's order
    b_start, b_img = layout_tile(b, B_DESC)
    a_desc = swapped(A_DESC) if swap else A_DESC
    try:
        if check:
            check_descriptor(a_desc, a, a_img, a_start, what="A")
            check_descriptor(B_DESC, b, b_img, b_start, what="B")
    except DescError as exc:
        print(f"refused before the launch: {exc}")
        return 2
    mod = ptxlab.compile((HERE / "hello_tcgen05.cu").read_text(), arch="sm_100a", name="hello_tcgen05.cu",
                         include_dirs=[KERNELS_DIR])
    dev = dev or ptxlab.open_device("emu")
    d = dev.empty(M * N * 4)
    dev.memset(d, 0xFF)
    dev.launch(mod, "hello_tcgen05", grid=1, block=128,
               args=[dev.to_device(a_img), dev.to_device(b_img), d, np.uint64(a_desc), np.uint64(B_DESC),
                     np.uint32(idesc)])
    got = dev.to_host(d, np.float32).reshape(M, N)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    ok = np.array_equal(got, want)
    print(f"seed {seed}: A desc {a_desc:#018x}, B desc {B_DESC:#018x}, idesc {idesc:#010x}: D "
          f"{'== A @ B.T exactly' if ok else 'MISMATCH'} ({M}x{N}, K={K})")
    return 0 if ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=None, help="data seed (default: fresh)")
    ap.add_argument("--swap-lbo-sbo", action="store_true", help="swap the A descriptor's LBO and SBO (the bug)")
    ap.add_argument("--no-check", action="store_true", help="skip the pre-launch descriptor check")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
    if not 0 <= seed < 2**32:
        ap.error("--seed must be in 0 .. 2**32-1")
    return run(seed, args.swap_lbo_sbo, check=not args.no_check)


if __name__ == "__main__":
    sys.exit(main())
