#!/usr/bin/env python3
"""Barrier divergence on hardware vs the emulator (issue 14 follow-up; ptx_docs/emulator_checks.md "Barrier
divergence"): what an H100 does with a CTA barrier that only part of the CTA reaches, or that the CTA reaches at
different barrier instructions, and what compute-sanitizer's synccheck says about it.

    python3 tools/probes/barrier_divergence_probe.py all --out DIR          # GPU machine: H100 + compute-sanitizer
    python3 tools/probes/barrier_divergence_probe.py emu --out emu.json     # CPU: the emulator on the same kernels
    python3 tools/probes/barrier_divergence_probe.py run CASE... --backend cuda --log x.jsonl   # one worker

Every kernel is bounded except at a barrier: delays are clock64 loops of fixed length and nothing polls memory. A
kernel that never leaves a barrier cannot be stopped from inside, so ``all`` runs the cases in a worker process and
watches its progress log: a case that has not finished HANG_S seconds after it started is recorded as "hang", the
worker is killed (the driver tears its context down) and a new worker goes on with the next case.

Each case: block of 128 threads (4 warps), GRID CTAs, ITERS iterations in one launch, REPEATS launches. In an
iteration every participating thread writes ``hv(seed, cta, it, t)`` into its shared slot, reaches the barrier under
test, then reads the slot of a partner thread on the *other side* of the divergence (another warp, or the other half
of its warp) and counts the read as good when it holds the partner's value of this iteration; a second barrier of the
same shape ends the iteration. The side that writes late (a clock64 delay of DELAY cycles before the write) alternates
per iteration, so a barrier that does not order the two sides shows up as stale reads. Per thread the kernel stores
(good, bad, flag): poisoned before each launch, an exited thread leaves the poison.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

BLOCK = 128
POISON = 0xDEADBEEF
HANG_S = 6.0

SRC = r'''
typedef unsigned long long u64;
__device__ __forceinline__ u64 clk() { u64 c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); return c; }
__device__ __forceinline__ void spin(u64 cyc) { u64 t0 = clk(); while (clk() - t0 < cyc) { } }
__device__ __forceinline__ unsigned hv(unsigned s, unsigned c, unsigned i, unsigned t) {
  unsigned h = s ^ (c * 0x9E3779B1u) ^ (i * 0x85EBCA77u) ^ (t * 0xC2B2AE3Du);
  h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15; return h | 1u;
}
#define ARGS unsigned* out, unsigned iters, unsigned seed, u64 delay
#define REC(g, b, f) do { unsigned gt = blockIdx.x * blockDim.x + threadIdx.x; \
  out[3 * gt] = (g); out[3 * gt + 1] = (b); out[3 * gt + 2] = (f); } while (0)
// one exchange step: write own slot (late side delayed), barrier BAR, read partner p, barrier BAR2
#define STEP(late, BAR, p, chk, BAR2) do { \
  if (late) spin(delay); \
  s[t] = hv(seed, blockIdx.x, it, t); \
  BAR; \
  if (chk) { unsigned v = s[p]; if (v == hv(seed, blockIdx.x, it, p)) ++good; else ++bad; } \
  BAR2; } while (0)
#define SYNC asm volatile("bar.sync 0;" ::: "memory")

// control: the whole CTA at one __syncthreads(); partner in the other half of the CTA
extern "C" __global__ void uniform(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 6) ^ it) & 1u;
    STEP(late, __syncthreads(), t ^ 64u, true, __syncthreads());
  }
  REC(good, bad, 0u);
}

// warps 2-3 exit before any barrier; warps 0-1 exchange across __syncthreads()
extern "C" __global__ void exit_warps(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (t >= 64u) return;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 5) ^ it) & 1u;
    STEP(late, __syncthreads(), t ^ 32u, true, __syncthreads());
  }
  REC(good, bad, 0u);
}

// warps 2-3 stay busy 16*delay cycles, set a flag, then exit; does the first barrier of warps 0-1 wait for them?
extern "C" __global__ void exit_warps_late(ARGS) {
  __shared__ unsigned s[128]; __shared__ volatile unsigned flag; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (t == 0) flag = 0u;
  if (t >= 64u) { spin(16u * delay); flag = 1u; __threadfence_block(); return; }
  // (flag = 0 by thread 0 is ordered before the other warps' flag = 1 only by the late warps' delay)
  unsigned seen = 0;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 5) ^ it) & 1u;
    STEP(late, __syncthreads(), t ^ 32u, true, __syncthreads());
    if (it == 0) seen = flag;
  }
  REC(good, bad, seen);
}

// lanes 16-31 of warp 1 and lanes 0-7 of warp 3 exit; the rest exchange with t ^ 64 where that thread is alive
__device__ __forceinline__ bool alive_lanes(unsigned q) { return !((q >> 5) == 1u && (q & 31u) >= 16u) &&
                                                                  !((q >> 5) == 3u && (q & 31u) < 8u); }
extern "C" __global__ void exit_lanes(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (!alive_lanes(t)) return;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 6) ^ it) & 1u;
    STEP(late, __syncthreads(), t ^ 64u, alive_lanes(t ^ 64u), __syncthreads());
  }
  REC(good, bad, 0u);
}

// lanes 16-31 of warp 1 stay busy 16*delay, set a flag, exit; the other lanes of warp 1 are at __syncthreads()
extern "C" __global__ void exit_lanes_late(ARGS) {
  __shared__ unsigned s[128]; __shared__ volatile unsigned flag; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (t == 0) flag = 0u;
  if ((t >> 5) == 1u && (t & 31u) >= 16u) { spin(16u * delay); flag = 1u; __threadfence_block(); return; }
  unsigned seen = 0;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 6) ^ it) & 1u;
    unsigned p = t ^ 64u;
    STEP(late, __syncthreads(), p, !((p >> 5) == 1u && (p & 31u) >= 16u), __syncthreads());
    if (it == 0) seen = flag;
  }
  REC(good, bad, seen);
}

// warps 0-1 and warps 2-3 reach barrier 0 at different instructions (if / else), partner in the other side.
// The asm strings differ (a PTX comment) so that the compiler keeps two instructions.
#define DIVW(NAME, A1, A2, B1, B2, PRE) \
extern "C" __global__ void NAME(ARGS) { \
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0; \
  for (unsigned it = 0; it < iters; ++it) { \
    bool late = ((t >> 6) ^ it) & 1u; \
    if (late) spin(delay); \
    s[t] = hv(seed, blockIdx.x, it, t); \
    PRE; \
    if (t < 64u) asm volatile(A1 ::: "memory"); else asm volatile(B1 ::: "memory"); \
    { unsigned p = t ^ 64u; unsigned v = s[p]; if (v == hv(seed, blockIdx.x, it, p)) ++good; else ++bad; } \
    PRE; \
    if (t < 64u) asm volatile(A2 ::: "memory"); else asm volatile(B2 ::: "memory"); \
  } \
  REC(good, bad, 0u); }
DIVW(div_warps_aligned, "bar.sync 0; // side A1", "bar.sync 0; // side A2",
     "bar.sync 0; // side B1", "bar.sync 0; // side B2", (void)0)
DIVW(div_warps_aligned_syncwarp, "bar.sync 0; // side A1", "bar.sync 0; // side A2",
     "bar.sync 0; // side B1", "bar.sync 0; // side B2", __syncwarp())
DIVW(div_warps_nonaligned, "barrier.sync 0; // side A1", "barrier.sync 0; // side A2",
     "barrier.sync 0; // side B1", "barrier.sync 0; // side B2", (void)0)

// the same split inside every warp: lanes 0-15 at one instruction, lanes 16-31 at another;
// partner: the other half-warp of the neighbouring warp (t ^ 48)
#define DIVL(NAME, A1, A2, B1, B2) \
extern "C" __global__ void NAME(ARGS) { \
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0; \
  for (unsigned it = 0; it < iters; ++it) { \
    bool hi = (t & 16u) != 0u; bool late = (hi ^ (it & 1u)); \
    if (late) spin(delay); \
    s[t] = hv(seed, blockIdx.x, it, t); \
    if (!hi) asm volatile(A1 ::: "memory"); else asm volatile(B1 ::: "memory"); \
    { unsigned p = t ^ 48u; unsigned v = s[p]; if (v == hv(seed, blockIdx.x, it, p)) ++good; else ++bad; } \
    if (!hi) asm volatile(A2 ::: "memory"); else asm volatile(B2 ::: "memory"); \
  } \
  REC(good, bad, 0u); }
DIVL(div_lanes_nonaligned, "barrier.sync 0; // lo 1", "barrier.sync 0; // lo 2",
     "barrier.sync 0; // hi 1", "barrier.sync 0; // hi 2")
DIVL(div_lanes_aligned, "bar.sync 0; // lo 1", "bar.sync 0; // lo 2", "bar.sync 0; // hi 1", "bar.sync 0; // hi 2")

// barrier 1 with a count of 64 reached by all 128 threads (more than the count): two generations per instruction?
// partner t ^ 32 (the warp the hardware most likely pairs first is unknown: the flag counts good reads only)
extern "C" __global__ void count_more(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 5) ^ it) & 1u;
    STEP(late, asm volatile("bar.sync 1, 64;" ::: "memory"), t ^ 32u, true,
         asm volatile("bar.sync 1, 64;" ::: "memory"));
  }
  REC(good, bad, 0u);
}

// control: barrier 1 with a count of 64 reached by exactly warps 0-1; warps 2-3 exit
extern "C" __global__ void count_exact(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (t >= 64u) return;
  for (unsigned it = 0; it < iters; ++it) {
    bool late = ((t >> 5) ^ it) & 1u;
    STEP(late, asm volatile("bar.sync 1, 64;" ::: "memory"), t ^ 32u, true,
         asm volatile("bar.sync 1, 64;" ::: "memory"));
  }
  REC(good, bad, 0u);
}

// one bar.sync 1, 64 reached by all 128 threads at about the same time, then exit
extern "C" __global__ void count_more_once(ARGS) {
  unsigned t = threadIdx.x;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  REC(1u, 0u, 0u);
}

// one bar.sync 1, 64: warps 0-1 first, warps 2-3 16*delay cycles later (long after the first generation completed)
extern "C" __global__ void count_more_staggered(ARGS) {
  unsigned t = threadIdx.x;
  if (t >= 64u) spin(16u * delay);
  asm volatile("bar.sync 1, 64;" ::: "memory");
  REC(1u, 0u, 0u);
}

// barrier 1 with a count of 64 reached by warp 0 only; warps 1-3 exit (fewer than the count: expected to hang)
extern "C" __global__ void count_fewer_exit(ARGS) {
  __shared__ unsigned s[128]; unsigned t = threadIdx.x, good = 0, bad = 0;
  if (t >= 32u) return;
  for (unsigned it = 0; it < iters; ++it) {
    STEP(false, asm volatile("bar.sync 1, 64;" ::: "memory"), t ^ 1u, true,
         asm volatile("bar.sync 1, 64;" ::: "memory"));
  }
  REC(good, bad, 0u);
}

// warps 0-1 at __syncthreads(), warps 2-3 at bar.sync 1, 96 (never complete): the emulator's deadlock case
extern "C" __global__ void partial_deadlock(ARGS) {
  unsigned t = threadIdx.x;
  if (t < 64u) { __syncthreads(); REC(1u, 0u, 0u); }
  else { asm volatile("bar.sync 1, 96;" ::: "memory"); REC(2u, 0u, 0u); }
}
'''

# name -> (threads expected to store a record, what it asks). Order: likely-safe first, expected hangs last.
CASES = {
    "uniform": ("all", "control: the whole CTA at one __syncthreads()"),
    "exit_warps": ("t<64", "warps 2-3 exit before __syncthreads(); warps 0-1 exchange across it"),
    "exit_warps_late": ("t<64", "warps 2-3 busy 16*DELAY cycles then exit: does the barrier wait for them?"),
    "exit_lanes": ("alive", "lanes 16-31 of warp 1 and 0-7 of warp 3 exit; the rest exchange across it"),
    "exit_lanes_late": ("notw1hi", "lanes 16-31 of warp 1 busy then exit while lanes 0-15 of warp 1 wait"),
    "div_warps_nonaligned": ("all", "warps 0-1 / 2-3 at two different barrier.sync 0 (non-aligned)"),
    "div_warps_aligned": ("all", "warps 0-1 / 2-3 at two different bar.sync 0 (= barrier.sync.aligned)"),
    "div_warps_aligned_syncwarp": ("all", "as div_warps_aligned, __syncwarp() before each barrier"),
    "count_exact": ("t<64", "control: bar.sync 1, 64 reached by exactly warps 0-1"),
    "count_more": ("all", "bar.sync 1, 64 reached by all 128 threads"),
    "count_more_staggered": ("all", "one bar.sync 1, 64: warps 0-1, then warps 2-3 16*DELAY cycles later"),
    "count_more_once": ("all", "one bar.sync 1, 64 reached by all 128 threads at once"),
    "div_lanes_nonaligned": ("all", "lanes 0-15 / 16-31 of every warp at two different barrier.sync 0"),
    "div_lanes_aligned": ("all", "lanes 0-15 / 16-31 of every warp at two different bar.sync 0 (.aligned)"),
    "count_fewer_exit": ("t<32", "bar.sync 1, 64 reached by warp 0 only, warps 1-3 exit"),
    "partial_deadlock": ("all", "warps 0-1 at __syncthreads(), warps 2-3 at bar.sync 1, 96"),
}


NO_DATA = ("partial_deadlock", "count_more_once", "count_more_staggered")   # no exchange: records only


def expected_mask(kind: str) -> np.ndarray:
    t = np.arange(BLOCK)
    w, ln = t >> 5, t & 31
    return {"all": np.ones(BLOCK, bool), "t<64": t < 64, "t<32": t < 32,
            "alive": ~(((w == 1) & (ln >= 16)) | ((w == 3) & (ln < 8))),
            "notw1hi": ~((w == 1) & (ln >= 16))}[kind]


def compile_module():
    import ptxlab
    return ptxlab.compile(SRC, arch="sm_90a", name="barrier_divergence_probe.cu", options=("-lineinfo",))


def run_case(dev, mod, name: str, grid: int, iters: int, repeats: int, delay: int, rng) -> dict:
    """Launch one case ``repeats`` times; returns the summary (completed threads, good/bad reads, flags)."""
    import ptxlab  # noqa: F401
    exp = np.tile(expected_mask(CASES[name][0]), grid)
    n = grid * BLOCK
    out = dev.empty(4 * 3 * n)
    tot = {"launches": 0, "records": 0, "missing_records": 0, "extra_records": 0, "good": 0, "bad": 0,
           "flag_set": 0, "bad_ctas": 0}
    for _ in range(repeats):
        dev.memset(out, 0xEF)      # poison (0xEFEFEFEF)
        seed = int(rng.integers(1, 2**31))
        dev.launch(mod, name, grid=(grid, 1, 1), block=(BLOCK, 1, 1),
                   args=[out, np.uint32(iters), np.uint32(seed), np.uint64(delay)])
        r = dev.to_host(out, np.uint32).reshape(n, 3)
        wrote = r[:, 0] != 0xEFEFEFEF
        tot["launches"] += 1
        tot["records"] += int(wrote.sum())
        tot["missing_records"] += int((exp & ~wrote).sum())
        tot["extra_records"] += int((~exp & wrote).sum())
        g, b = r[wrote, 0].astype(np.int64), r[wrote, 1].astype(np.int64)
        tot["good"] += int(g.sum()) if name not in NO_DATA else 0
        tot["bad"] += int(b.sum())
        tot["flag_set"] += int((r[wrote, 2] == 1).sum())
        badc = np.zeros(n, bool)
        badc[wrote] = r[wrote, 1] != 0
        tot["bad_ctas"] += int(badc.reshape(grid, BLOCK).any(1).sum())
    tot["completed"] = tot["missing_records"] == 0
    return tot


def worker(args) -> int:
    """Run the named cases in order, one JSON line per event into --log (flushed: the parent watches it)."""
    import ptxlab
    log = open(args.log, "a", buffering=1)
    dev = ptxlab.open_device(args.backend, **({"strict": False} if args.backend == "emu" else {}))
    mod = compile_module()
    log.write(json.dumps({"event": "ready", "device": dev.describe()}) + "\n")
    rng = np.random.default_rng(args.seed)
    for name in args.cases:
        log.write(json.dumps({"event": "start", "case": name, "t": time.time()}) + "\n")
        rec = {"event": "done", "case": name}
        t0 = time.time()
        try:
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                rec.update(run_case(dev, mod, name, args.grid, args.iters, args.repeats, args.delay, rng))
            rec["warnings"] = [str(w.message) for w in ws if "EmuWarning" in type(w.message).__name__]
            rec["outcome"] = "completed" if rec["completed"] else "incomplete"
        except Exception as exc:  # noqa: BLE001  (recorded: the emulator's errors are results here)
            rec["outcome"] = "error"
            rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["seconds"] = round(time.time() - t0, 3)
        log.write(json.dumps(rec) + "\n")
        if args.backend == "cuda" and rec["outcome"] == "error" and "unusable" in rec.get("error", ""):
            return 3
    return 0


def drive(cases, backend: str, log: str, grid: int, iters: int, repeats: int, delay: int,
          prefix=(), hang_s: float = HANG_S, start_s: float = 120.0) -> list[dict]:
    """Run ``cases`` in worker processes, restarting after a hang; returns one record per case."""
    todo, results = list(cases), []
    while todo:
        open(log, "w").close()
        cmd = [*prefix, sys.executable, os.path.abspath(__file__), "run", *todo, "--backend", backend, "--log", log,
               "--grid", str(grid), "--iters", str(iters), "--repeats", str(repeats), "--delay", str(delay)]
        so = open(log + ".stdout", "a")
        p = subprocess.Popen(cmd, stdout=so, stderr=subprocess.STDOUT, start_new_session=True)
        t_start, cur, t_cur, seen, progressed, exited = time.time(), None, None, 0, False, False
        while True:
            time.sleep(0.1)
            lines = [json.loads(x) for x in open(log).read().splitlines() if x.strip().endswith("}")]
            for ev in lines[seen:]:
                if ev["event"] == "start":
                    cur, t_cur = ev["case"], time.time()
                elif ev["event"] == "done":
                    results.append(ev)
                    todo.remove(ev["case"])
                    cur, progressed = None, True
                elif ev["event"] == "ready":
                    print("worker ready:", ev["device"], flush=True)
            seen = len(lines)
            if exited:            # one more read of the log after the worker exited
                break
            exited = p.poll() is not None
            if exited:
                continue
            if cur is not None and time.time() - t_cur > hang_s:
                os.killpg(p.pid, 9)
                p.wait()
                results.append({"event": "done", "case": cur, "outcome": "hang",
                                "error": f"no completion within {hang_s} s (worker killed)"})
                todo.remove(cur)
                cur, progressed = None, True
                break
            if cur is None and time.time() - t_start > start_s and not progressed:
                os.killpg(p.pid, 9)
                p.wait()
                break
        if cur is not None:       # the worker died inside a case (a crash, not a hang)
            results.append({"event": "done", "case": cur, "outcome": "error",
                            "error": f"worker exited with {p.returncode} (see {log}.stdout)"})
            todo.remove(cur)
        elif todo and not progressed:    # it died or stalled before its first case: do not retry forever
            results += [{"event": "done", "case": c, "outcome": "not run",
                         "error": f"worker exited with {p.returncode} before it (see {log}.stdout)"} for c in todo]
            todo = []
        so.close()
    return results


def find_sanitizer() -> str | None:
    import shutil
    import glob
    c = shutil.which("compute-sanitizer")
    if c:
        return c
    for pat in ("/usr/local/cuda*/bin/compute-sanitizer", "/opt/nvidia/*/compute-sanitizer/compute-sanitizer",
                os.path.join(os.path.dirname(sys.executable), "..", "lib", "python3*", "site-packages", "nvidia",
                             "*", "bin", "compute-sanitizer")):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[-1]
    return None


def dump_sass(out: str) -> None:
    """The cubin and its SASS (cuobjdump next to compute-sanitizer), to check the two-instruction cases survive."""
    import shutil
    mod = compile_module()
    cub = os.path.join(out, "probe.cubin")
    open(cub, "wb").write(mod.cubin)
    san = find_sanitizer()
    tool = shutil.which("cuobjdump") or (san and os.path.join(os.path.dirname(os.path.dirname(san)), "bin",
                                                              "cuobjdump"))
    try:
        r = subprocess.run([tool, "-sass", cub], capture_output=True, text=True, timeout=30)
        open(os.path.join(out, "probe.sass"), "w").write(r.stdout + r.stderr)
    except Exception as exc:  # noqa: BLE001
        open(os.path.join(out, "probe.sass"), "w").write(f"cuobjdump not run: {exc}")


def table(results: list[dict]) -> str:
    rows = []
    for r in results:
        rows.append(f"{r['case']:28s} {r['outcome']:10s} launches={r.get('launches', '-')} "
                    f"missing={r.get('missing_records', '-')} good={r.get('good', '-')} bad={r.get('bad', '-')} "
                    f"bad_ctas={r.get('bad_ctas', '-')} flag={r.get('flag_set', '-')} "
                    f"warn={len(r.get('warnings', []))} {r.get('error', '')[:200]}")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("run")
    w.add_argument("cases", nargs="+", choices=list(CASES))
    w.add_argument("--backend", default="cuda")
    w.add_argument("--log", required=True)
    for a in (w,):
        a.add_argument("--grid", type=int, default=264)
        a.add_argument("--iters", type=int, default=64)
        a.add_argument("--repeats", type=int, default=8)
        a.add_argument("--delay", type=int, default=4000)
        a.add_argument("--seed", type=int, default=None)
    al = sub.add_parser("all")
    al.add_argument("--out", required=True)
    al.add_argument("--cases", nargs="*", default=list(CASES))
    e = sub.add_parser("emu")
    e.add_argument("--out", required=True)
    e.add_argument("--cases", nargs="*", default=list(CASES))
    args = ap.parse_args()
    if args.cmd == "run":
        return worker(args)
    if args.cmd == "emu":
        res = drive(args.cases, "emu", args.out + ".log", grid=2, iters=4, repeats=1, delay=64, hang_s=120)
        json.dump({"backend": "emu", "results": res}, open(args.out, "w"), indent=1)
        print(table(res))
        return 0
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    dump_sass(args.out)
    res = drive(args.cases, "cuda", os.path.join(args.out, "hw.jsonl"), grid=264, iters=64, repeats=8, delay=4000)
    print(table(res), flush=True)
    print(f"hardware: {time.time() - t0:.1f} s", flush=True)
    doc = {"backend": "cuda", "results": res, "grid": 264, "iters": 64, "repeats": 8, "delay": 4000}
    san = find_sanitizer()
    doc["sanitizer"] = san
    if san:
        t1 = time.time()
        hangs = {r["case"] for r in res if r["outcome"] == "hang"}
        safe = [c for c in args.cases if c not in hangs]
        slog = os.path.join(args.out, "synccheck.jsonl")
        sres = drive(safe, "cuda", slog, grid=2, iters=2, repeats=1, delay=200,
                     prefix=(san, "--tool", "synccheck", "--print-limit", "40", "--error-exitcode", "0"),
                     hang_s=15, start_s=60)
        doc["synccheck_results"] = sres
        print(table(sres), flush=True)
        print(f"synccheck: {time.time() - t1:.1f} s (hangs skipped under sanitizer: {sorted(hangs)})", flush=True)
    json.dump(doc, open(os.path.join(args.out, "barrier_probe.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
