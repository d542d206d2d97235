#!/usr/bin/env python3
"""mbarrier fidelity kit: run step sequences on one mbarrier on the H100 and on the emulator, observe the phase after
every prefix, and diff.

    python tests/fidelity/mbarrier/run_mbar_fidelity.py run --backend cuda --out mbar_cuda.json   # on the GPU (lead)
    python tests/fidelity/mbarrier/run_mbar_fidelity.py run --backend emu  --out mbar_emu.json    # CPU emulator
    python tests/fidelity/mbarrier/run_mbar_fidelity.py compare mbar_cuda.json mbar_emu.json      # exit 1 on a diff

The question this settles (ptx_docs/mbarrier.md, emulator decision of commit c5df2b9, unmeasured): does a plain
``mbarrier.expect_tx`` that brings tx-count back to 0 while no arrivals are pending complete the phase? PTX ISA
9.7.13.15.6 says a phase completes when pending arrivals == 0 and tx-count == 0, without saying which operations
check it. The sequences reach "pending 0, tx-count < 0" (bytes completed before they were expected) by a
``mbarrier.complete_tx`` instruction or by a cp.async.bulk copy, then announce the bytes with expect_tx. Related
sequences pin the neighbours: over-delivery in one complete_tx step, tx back to 0 with an arrival pending,
arrive.expect_tx, arrive with a count, arrive_drop, two phases. Every prefix of every sequence is one launch of
``mbar_probe`` (mbar_probe.cu), which reports test_wait.parity(0) / (1) after the prefix and the pending count
returned by each arrive; nothing ever blocks (the only wait is a bounded loop for the BULK step's landing).

Result JSON: {"backend", "device", "results": [{"seq", "k", "steps", "p0", "p1", "land", "pending", "raw",
"error"}...]}; the emulator's own model predictions (``model`` backend: ptxlab.emu.hw.mbarrier only, no kernel)
are available for a pure-model diff too.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# An emulator error containing this marker refuses a case whose H100 behaviour is measured and documented (e.g. a
# bulk copy over-delivering into a phase with no arrival pending: the H100 completes it mid-copy); compare counts it
# as "refused", not as a difference.
REFUSAL_MARK = "measured on an H100"
OPS = {"INIT": 1, "EXPECT": 2, "COMPLETE": 3, "ARRIVE": 4, "ARRIVE_EXPECT": 5, "BULK": 6, "ARRIVE_DROP": 7}
N = 64
# name -> (steps, what it asks). Every step is (op, argument).
SEQUENCES: dict[str, tuple[list[tuple[str, int]], str]] = {
    "base_arrive": ([("INIT", 1), ("ARRIVE", 1)], "sanity: the only arrival completes phase 0"),
    "base_arrive_expect": ([("INIT", 1), ("ARRIVE_EXPECT", N), ("COMPLETE", N)],
                           "sanity: arrive.expect_tx then complete_tx completes at complete_tx"),
    "base_bulk": ([("INIT", 1), ("ARRIVE_EXPECT", N), ("BULK", N)],
                  "sanity: arrive.expect_tx then a bulk copy completes when the copy lands"),
    "expect_arrive_bulk": ([("INIT", 1), ("EXPECT", N), ("ARRIVE", 1), ("BULK", N)],
                           "expect_tx, the only arrival (pending 0, tx N), then a bulk copy's complete_tx"),
    "split_complete": ([("INIT", 1), ("ARRIVE_EXPECT", N), ("COMPLETE", N // 2), ("COMPLETE", N - N // 2)],
                       "tx N -> N/2 -> 0 with pending 0: completes at the second complete_tx only"),
    "tx_zero_pending1": ([("INIT", 1), ("EXPECT", N), ("COMPLETE", N), ("ARRIVE", 1)],
                         "tx back to 0 by complete_tx while an arrival is pending: no completion until it arrives"),
    "complete_first": ([("INIT", 1), ("COMPLETE", N), ("ARRIVE", 1), ("EXPECT", N)],
                       "THE RULE (instruction): tx -N, then the only arrival (pending 0, tx -N), then expect_tx(N) "
                       "brings tx to 0 with no arrival pending"),
    "bulk_first": ([("INIT", 1), ("BULK", N), ("ARRIVE", 1), ("EXPECT", N)],
                   "THE RULE (bulk copy): the copy's complete_tx before any expect_tx, the only arrival, then "
                   "expect_tx(N)"),
    "complete_first_pend1": ([("INIT", 1), ("COMPLETE", N), ("EXPECT", N), ("ARRIVE", 1)],
                             "tx -N then expect_tx(N) back to 0 with the arrival still pending, then the arrival"),
    "complete_first_arrive_expect": ([("INIT", 1), ("COMPLETE", N), ("ARRIVE_EXPECT", N)],
                                     "tx -N, then arrive.expect_tx(N): expect first (tx 0), then the arrival"),
    "over_deliver": ([("INIT", 1), ("EXPECT", 16), ("ARRIVE", 1), ("COMPLETE", 32), ("EXPECT", 16)],
                     "tx 16 -> -16 in ONE complete_tx (no intermediate 0) with pending 0, then expect_tx(16) -> 0"),
    "over_deliver_bulk": ([("INIT", 1), ("ARRIVE_EXPECT", 32), ("BULK", N), ("EXPECT", N - 32)],
                          "arrive.expect_tx(32) then a 64-B copy (tx may cross 0 while its chunks land), then "
                          "expect_tx(32)"),
    "arrive_count": ([("INIT", 3), ("ARRIVE", 2), ("ARRIVE", 1)], "arrive with a count: 3 -> 1 -> completes"),
    "arrive_drop": ([("INIT", 2), ("ARRIVE_DROP", 1), ("ARRIVE", 1), ("ARRIVE", 1)],
                    "arrive_drop: phase 0 completes with the drop + one arrive; phase 1 needs only one arrival"),
    "two_phases_tx": ([("INIT", 1), ("ARRIVE_EXPECT", N), ("COMPLETE", N), ("ARRIVE_EXPECT", N), ("COMPLETE", N)],
                      "two tx phases back to back: parity flips twice"),
}


def program(steps: list[tuple[str, int]]) -> np.ndarray:
    return np.array([v for op, n in steps for v in (OPS[op], n)], dtype=np.uint32)


def src_data() -> np.ndarray:
    return (np.arange(512) * 7 + 3).astype(np.uint8)


_MOD: dict[str, Any] = {}


def run_device(dev: Any, steps: list[tuple[str, int]], k: int, read_raw: bool, max_polls: int) -> dict[str, Any]:
    """One launch: the first k steps, then one observation."""
    import ptxlab

    if "mod" not in _MOD:
        with open(os.path.join(HERE, "mbar_probe.cu")) as f:
            _MOD["mod"] = ptxlab.compile(f.read(), arch="sm_90a", name="mbar_probe.cu")
    prog = dev.to_device(program(steps[:k]))
    out = dev.empty(4 * (4 + k))
    dev.memset(out, 0xEE)
    raw = dev.empty(8 * (1 + k))
    dev.memset(raw, 0)
    src = dev.to_device(src_data())
    dev.launch(_MOD["mod"], "mbar_probe", grid=1, block=32,
               args=[prog, np.int32(k), out, raw, src, np.uint32(int(read_raw)), np.uint32(max_polls)])
    o = dev.to_host(out, np.uint32, (4 + k,))
    r = dev.to_host(raw, np.uint64, (1 + k,))
    return {"p0": int(o[0]), "p1": int(o[1]), "land": int(o[2]), "executed": int(o[3]),
            "pending": [int(x) for x in o[4:4 + k]], "raw": [f"0x{int(x):016x}" for x in r] if read_raw else []}


def run_model(steps: list[tuple[str, int]], k: int) -> dict[str, Any]:
    """The emulator's state machine alone (ptxlab.emu.hw.mbarrier), same observation."""
    from ptxlab.emu.hw.mbarrier import Mbarrier, decode_state

    bar: Optional[Mbarrier] = None
    pend, land = [], 0
    for i, (op, n) in enumerate(steps[:k]):
        pc = 0xFFFFFFFF
        if op == "INIT":
            bar = Mbarrier(addr=0x100, expected=n, pending=n)
        elif op == "EXPECT":
            bar.expect_tx(n)
        elif op in ("COMPLETE", "BULK"):
            bar.complete_tx(n, async_copy=op == "BULK")
            land |= (op == "BULK") << i
        elif op in ("ARRIVE", "ARRIVE_EXPECT", "ARRIVE_DROP"):
            fn = bar.arrive_drop if op == "ARRIVE_DROP" else bar.arrive
            tok = fn(1 if op == "ARRIVE_EXPECT" else n, expect_tx=n if op == "ARRIVE_EXPECT" else None)
            pc = decode_state(tok)[2]
        pend.append(pc)
    return {"p0": int(bar.test_wait_parity(0)), "p1": int(bar.test_wait_parity(1)), "land": land, "executed": k,
            "pending": pend, "raw": []}


def run_sequences(backend: str, names: list[str], jsonl: str, polls: int, verbose: bool) -> int:
    """Run every prefix of the named sequences in this process, appending one JSON line per launch to ``jsonl``.
    Returns 3 as soon as a launch leaves the CUDA context unusable (the caller restarts in a fresh process)."""
    dev = None
    if backend != "model":
        import ptxlab
        dev = ptxlab.open_device(backend)
    with open(jsonl, "a") as f:
        for name in names:
            steps, _ = SEQUENCES[name]
            for k in range(1, len(steps) + 1):
                rec: dict[str, Any] = {"seq": name, "k": k, "steps": [f"{op}({n})" for op, n in steps[:k]]}
                try:
                    rec.update(run_model(steps, k) if backend == "model" else
                               run_device(dev, steps, k, backend == "cuda", polls))
                    rec["error"] = ""
                except Exception as exc:  # recorded, compared, never hidden
                    rec["error"] = f"{type(exc).__name__}: {exc}"[:600]
                f.write(json.dumps(rec) + "\n")
                f.flush()
                if verbose or rec["error"]:
                    print(f"{name}[{k}] {' '.join(rec['steps'])}: {rec['error'] or _obs(rec)}"[:400], flush=True)
                if rec["error"] and "unusable" in rec["error"]:
                    return 3
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import subprocess
    import tempfile

    device = args.backend
    if args.backend != "model":
        import ptxlab
        device = ptxlab.open_device(args.backend).describe()
    polls = args.max_polls or (1_000_000 if args.backend == "cuda" else 64)
    names = [s for s in SEQUENCES if not args.only or s in args.only.split(",")]
    isolate = args.backend == "cuda" or args.isolate
    with tempfile.TemporaryDirectory() as tmp:
        jsonl = os.path.join(tmp, "results.jsonl")
        open(jsonl, "w").close()
        if not isolate:
            run_sequences(args.backend, names, jsonl, polls, args.verbose)
        else:
            # cuda: child processes; a launch that kills the context ends its child, the next sequence starts in a
            # fresh one (the rest of the dead sequence is recorded as not run)
            i = 0
            while i < len(names):
                try:
                    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "child", "--backend",
                                           args.backend, "--jsonl", jsonl, "--max-polls", str(polls),
                                           "--only", ",".join(names[i:])] + (["-v"] if args.verbose else []),
                                          timeout=args.child_timeout)
                    rc = proc.returncode
                except subprocess.TimeoutExpired:
                    rc = -1
                done = {json.loads(line)["seq"] for line in open(jsonl) if line.strip()}
                j = i
                while j < len(names) and names[j] in done:
                    j += 1
                if rc == 0 and j == len(names):
                    break
                if rc != 0:       # the child died or lost its context inside names[j - 1] (or names[j])
                    j = max(j, i + 1)
                    print(f"child rc={rc}; restarting at sequence {j} of {len(names)}", file=sys.stderr)
                i = j
        results = [json.loads(line) for line in open(jsonl) if line.strip()]
    save(args.out, args.backend, device, results)
    print(table({"backend": args.backend, "results": results}))
    print(f"{len(results)} launches on backend {args.backend}, {sum(bool(r['error']) for r in results)} errors "
          f"-> {args.out}")
    return 0


def cmd_child(args: argparse.Namespace) -> int:
    polls = args.max_polls or 64
    return run_sequences(args.backend, [s for s in args.only.split(",") if s], args.jsonl, polls, args.verbose)


def save(path: str, backend: str, device: str, results: list[dict[str, Any]]) -> None:
    with open(path, "w") as f:
        json.dump({"backend": backend, "device": device, "n": N, "results": results}, f, indent=1)


def _obs(r: dict[str, Any]) -> str:
    return f"p0={r['p0']} p1={r['p1']} pending={r['pending']} land={r['land']:#x}"


def _phase(r: dict[str, Any]) -> str:
    """One character per observation: 'C' phase 0 complete (p0=1, p1=0), '.' incomplete (p0=0, p1=1), '?' other."""
    if r.get("error"):
        return "E"
    return {(1, 0): "C", (0, 1): ".", (1, 1): "!", (0, 0): "?"}[(r["p0"], r["p1"])]


def table(data: dict[str, Any]) -> str:
    """Per sequence: the completion pattern after each step (phase parity: '.' = phase 0 still running or two
    phases completed, 'C' = an odd number of phases completed)."""
    lines = [f"{'sequence':30s} {'after step 1..k':18s} steps"]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in data["results"]:
        by.setdefault(r["seq"], []).append(r)
    for name, rs in by.items():
        rs = sorted(rs, key=lambda r: r["k"])
        lines.append(f"{name:30s} {''.join(_phase(r) for r in rs):18s} {' '.join(rs[-1]['steps'])}")
    return "\n".join(lines)


def cmd_compare(args: argparse.Namespace) -> int:
    a, b = (json.load(open(p)) for p in (args.a, args.b))
    la, lb = a["backend"], b["backend"]
    rb = {(r["seq"], r["k"]): r for r in b["results"]}
    same = differ = refused = 0
    print(f"compare {args.a} ({la}, {a.get('device', '')}) vs {args.b} ({lb}, {b.get('device', '')})")
    for r in a["results"]:
        o = rb.get((r["seq"], r["k"]))
        if o is None:
            continue
        msgs = []
        if bool(r["error"]) != bool(o["error"]) and REFUSAL_MARK in (r["error"] or o["error"]):
            refused += 1          # the emulator refuses a case whose hardware behaviour it documents (not a guess)
            print(f"  REFUSED {r['seq']}[{r['k']}] {' '.join(r['steps'])}: {(r['error'] or o['error'])[:160]}")
            continue
        if bool(r["error"]) != bool(o["error"]):
            msgs.append(f"{la}: {r['error'] or 'ok'} | {lb}: {o['error'] or 'ok'}")
        elif not r["error"]:
            if (r["p0"], r["p1"]) != (o["p0"], o["p1"]):
                msgs.append(f"phase: {la} p0={r['p0']} p1={r['p1']} vs {lb} p0={o['p0']} p1={o['p1']}")
            if r["pending"] != o["pending"]:
                msgs.append(f"pending_count: {la} {r['pending']} vs {lb} {o['pending']}")
            if r["land"] != o["land"]:
                msgs.append(f"bulk landed bits: {la} {r['land']:#x} vs {lb} {o['land']:#x}")
        if msgs:
            differ += 1
            print(f"  DIFF {r['seq']}[{r['k']}] {' '.join(r['steps'])}\n       " + "\n       ".join(msgs))
        else:
            same += 1
    print(f"\n{la}:\n{table(a)}\n\n{lb}:\n{table(b)}")
    for z, label in ((a, la), (b, lb)):
        if label == "cuda":
            print(f"\n{verdicts(z)}")
    print(f"\n{same} observations identical, {differ} differ, {refused} refused by the emulator (documented "
          "hardware behaviour)")
    return 1 if differ else 0


def verdicts(z: dict[str, Any]) -> str:
    """What the hardware run says about the emulator's decisions (one line each)."""
    res = {(r["seq"], r["k"]): r for r in z["results"]}

    def done(seq: str, k: int) -> Optional[int]:
        r = res.get((seq, k))
        return None if r is None or r["error"] else r["p0"]

    out = ["verdicts (p0 after the step; 1 = phase 0 completed):"]
    for seq, k_arrive, k_exp in (("complete_first", 3, 4), ("bulk_first", 3, 4)):
        a, e = done(seq, k_arrive), done(seq, k_exp)
        if a is None or e is None:
            out.append(f"  {seq}: no data")
        elif a == 0 and e == 1:
            out.append(f"  {seq}: expect_tx back to tx 0 with pending 0 COMPLETES the phase (emulator rule c5df2b9 "
                       "confirmed)")
        elif a == 0 and e == 0:
            out.append(f"  {seq}: expect_tx back to tx 0 with pending 0 does NOT complete the phase (emulator must "
                       "change: expect_tx never completes; such a phase then hangs)")
        else:
            out.append(f"  {seq}: phase completed already at the arrival with tx < 0 (p0={a}): the hardware does not "
                       "keep a negative tx-count the way PTX 9.7.13.15.2 describes (emulator must change)")
    a, e = done("over_deliver", 4), done("over_deliver", 5)
    out.append(f"  over_deliver: after complete_tx overshoot p0={a}, after expect_tx back to 0 p0={e} "
               "(emulator: 0 then 1)")
    a, e = done("over_deliver_bulk", 3), done("over_deliver_bulk", 4)
    out.append(f"  over_deliver_bulk: a 64-B bulk copy into tx 32 with pending 0: p0={a}, then expect_tx(32): p0={e} "
               "(H100 2026-11-22: 1 then 1, the phase completes mid-copy; the emulator refuses the over-delivery)")
    a = done("tx_zero_pending1", 3)
    out.append(f"  tx_zero_pending1: tx 0 with an arrival pending p0={a} (emulator: 0)")
    a, e = done("complete_first_pend1", 3), done("complete_first_pend1", 4)
    out.append(f"  complete_first_pend1: tx -N -> 0 by expect_tx with pending 1: p0={a}; after the arrival p0={e} "
               "(emulator: 0 then 1)")
    return "\n".join(out)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every prefix of every sequence on one backend and save a .json")
    r.add_argument("--backend", choices=["cuda", "emu", "model"], required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--only", default="", help="comma list of sequence names (default all)")
    r.add_argument("--max-polls", type=int, default=0, help="polls of the BULK landing wait (0 = backend default)")
    r.add_argument("-v", "--verbose", action="store_true")
    r.add_argument("--isolate", action="store_true", help="child processes also on emu/model (tests)")
    r.add_argument("--child-timeout", type=int, default=90, help="seconds per child process (cuda)")
    h = sub.add_parser("child", help=argparse.SUPPRESS)
    h.add_argument("--backend", required=True)
    h.add_argument("--jsonl", required=True)
    h.add_argument("--only", required=True)
    h.add_argument("--max-polls", type=int, default=0)
    h.add_argument("-v", "--verbose", action="store_true")
    c = sub.add_parser("compare", help="diff two result files")
    c.add_argument("a")
    c.add_argument("b")
    args = p.parse_args(argv)
    return {"run": cmd_run, "child": cmd_child, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
