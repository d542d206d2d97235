"""``python lab.py cutlass [EXAMPLE] [--m M --n N --k K --alpha A --beta B --seed S] [emulator options]``:
build a CUTLASS example from the installed wheel, run it on the emulator (or a GPU) and compare bit for bit with
the example's host reference (ptx_docs/cutlass_examples.md). Without EXAMPLE: list the examples."""
from __future__ import annotations

import argparse
import time
import warnings
from typing import List

import numpy as np


def main(argv: List[str]) -> int:
    from . import EXAMPLES, run

    p = argparse.ArgumentParser(prog="lab.py cutlass", description=__doc__.split("\n")[0])
    p.add_argument("example", nargs="?", choices=sorted(EXAMPLES))
    for dim in ("m", "n", "k"):
        p.add_argument(f"--{dim}", type=int, help="problem size (default: the example's smallest)")
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--beta", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=None, help="input seed (default: fresh)")
    p.add_argument("--variant", type=int, default=None,
                   help="which of the kernels the example's main() runs one after another (71, 49; default 0)")
    p.add_argument("--backend", choices=("emu", "cuda"), default="emu")
    p.add_argument("--strict", default=None, help="emulator fidelity rules to enforce: all | rule,rule (ptxlab/emu/checks/fidelity.py)")
    p.add_argument("--clc", default=None, help="clusterlaunchcontrol policy: every-other | all | never | first:N")
    p.add_argument("--wave-ctas", type=int, default=None, help="emulator CTAs per wave (models a smaller GPU)")
    p.add_argument("--prebuild", action="store_true",
                   help="build every example (or EXAMPLE) into the compile cache and check it once at its smallest "
                        "shape: 1.5-2 minutes and up to 4 GB of memory per example, once per machine")
    a = p.parse_args(argv)
    from ptxlab.errors import UsageError
    for dim in ("m", "n", "k"):
        v = getattr(a, dim)
        if v is not None and not 1 <= v <= 1 << 14:
            raise UsageError(f"--{dim} {v}: use 1 .. {1 << 14} (the emulator runs CUTLASS examples at small sizes)")
    if a.seed is not None and not 0 <= a.seed < 2**31:
        raise UsageError(f"--seed {a.seed}: use an integer in 0 .. 2**31-1")
    if a.wave_ctas is not None and a.wave_ctas < 1:
        raise UsageError(f"--wave-ctas {a.wave_ctas}: must be >= 1")
    for name, v in (("--alpha", a.alpha), ("--beta", a.beta)):
        if not np.isfinite(v):
            raise UsageError(f"{name} {v}: must be a finite number")
    if a.variant is not None:
        from .gemm_examples import GEMM_EXAMPLES
        nv = {e.wrapper.removesuffix(".cu"): len(e.variants) for e in GEMM_EXAMPLES}
        if not nv.get(a.example):
            raise UsageError(f"--variant: {a.example} has one kernel; examples with several: "
                             + ", ".join(k for k, v in nv.items() if v))
    if a.prebuild:
        return _prebuild([a.example] if a.example else sorted(EXAMPLES))
    if a.example is None:
        for name, (_, desc, smallest) in sorted(EXAMPLES.items()):
            print(f"{name:14s} {desc}  (smallest: {smallest})")
        return 0
    import ptxlab

    kw = {}
    if a.backend == "emu":
        kw = {k: v for k, v in (("strict", a.strict), ("clc", a.clc), ("wave_ctas", a.wave_ctas)) if v is not None}
    dev = ptxlab.open_device(a.backend, **kw)
    shape = {k: getattr(a, k) for k in ("m", "n", "k", "variant") if getattr(a, k) is not None}
    seed = a.seed if a.seed is not None else int(np.random.SeedSequence().entropy % (2**31))
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            res = run(a.example, dev, alpha=a.alpha, beta=a.beta, seed=seed, **shape)
        except ValueError as exc:     # the example's own shape rules, checked before it builds or runs anything
            raise UsageError(f"{a.example} --m/--n/--k/--variant: {exc}") from None
    fw = [w for w in rec if w.category.__name__ == "EmuFidelityWarning"]
    print(f"{a.example} {res.shape} seed={seed} on {dev.describe()}: grid {res.launch.grid} block "
          f"{res.launch.block} cluster {res.launch.cluster} smem {res.launch.smem_bytes} B")
    print(f"  times: " + ", ".join(f"{k} {v:.2f} s" for k, v in res.seconds.items())
          + f" (total {time.perf_counter() - t0:.1f} s)")
    for w in fw[:4]:
        print("  fidelity warning: " + str(w.message).splitlines()[0])
    mism = res.mismatches()
    print(("  BIT-EXACT: " if res.exact else "  MISMATCH: ") + ", ".join(f"{k} {v} differing" for k, v in mism.items()))
    return 0 if res.exact else 1


def _prebuild(names: List[str]) -> int:
    """``lab.py cutlass --prebuild``: NVRTC-build each example (progress and an estimate on stderr), then run it once
    at its smallest shape on the emulator; one line per example."""
    import ptxlab

    from . import run
    from ..progress import track

    bad = 0
    for name in track(names, "cutlass prebuild"):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = run(name, ptxlab.open_device("emu"), seed=1)
        build = res.seconds.get("build", 0.0)
        print(f"{name}: built in {build:.1f} s ({'cached' if build < 1 else 'NVRTC'}), "
              f"{'BIT-EXACT' if res.exact else 'MISMATCH'} at {res.shape} ({time.perf_counter() - t0:.1f} s)",
              flush=True)
        bad += not res.exact
    return 1 if bad else 0
