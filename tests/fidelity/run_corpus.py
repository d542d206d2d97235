#!/usr/bin/env python3
"""Fidelity corpus harness: run every corpus kernel (tests/corpus) on the H100 or on the emulator with inputs
derived from one seed, store inputs + outputs + metadata in one .npz, and compare two such files.

    PYTHONPATH=. python3 tests/fidelity/run_corpus.py run --backend cuda --out corpus_cuda.npz --seed 12345   # H100
    PYTHONPATH=. python3 tests/fidelity/run_corpus.py run --backend emu  --out corpus_emu.npz  --seed 12345   # CPU
    PYTHONPATH=. python3 tests/fidelity/run_corpus.py run --backend emu  --out corpus_emu.npz \
        --inputs-from corpus_cuda.npz --ptx-from corpus_cuda.npz   # the H100's inputs and PTX, bit for bit
    PYTHONPATH=. python3 tests/fidelity/run_corpus.py compare corpus_cuda.npz corpus_emu.npz
    PYTHONPATH=. python3 tests/fidelity/run_corpus.py list

`run` executes every entry whose arch the device supports (cvt_fp4 is sm_100a: skipped on an H100); per-entry
errors are recorded, not fatal.  On cuda each entry runs in its own subprocess by default (--isolate; a faulting
kernel poisons the CUDA context, a hang is cut by --timeout).  `compare` prints, per kernel and output, the mode,
the number of differing elements, whether the outputs are bit-exact and the first differences (index, A, B in
hex); it exits 0 only if the inputs are identical and every difference is allowed by the output's comparison mode
("serialization"/"contraction" outputs: each side must pass the entry's validator).  Needs only numpy (+ ml_dtypes,
cuda-bindings for --backend cuda) and the repository on PYTHONPATH; nothing from rich.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
for p in (REPO, TESTS):
    if p not in sys.path:
        sys.path.insert(0, p)

import numpy as np  # noqa: E402

import corpus  # noqa: E402

SEP = "::"


def _entries(only: Optional[list]) -> list:
    ents = corpus.all_entries()
    if only:
        unknown = set(only) - {e.name for e in ents}
        if unknown:
            raise SystemExit(f"unknown corpus entries: {sorted(unknown)}")
        ents = [e for e in ents if e.name in only]
    return ents


def _src_hash(e: Any) -> str:
    return hashlib.sha256(corpus.source_text(e).encode()).hexdigest()[:16]


def run_entries(backend: str, seed: int, only: Optional[list], inputs_from: Optional[str] = None,
                ptx_from: Optional[str] = None) -> tuple[dict, dict]:
    """In-process run: (arrays, meta).  inputs_from: take each entry's inputs from that .npz instead of the seed;
    ptx_from: run the PTX stored in that .npz (e.g. the H100's NVRTC output) instead of compiling the source here."""
    import ptxlab

    given = load(inputs_from)[0] if inputs_from else None
    given_ptx = load(ptx_from)[0] if ptx_from else None

    dev = ptxlab.open_device(backend)
    arrays: dict = {}
    meta: dict = {"backend": backend, "device": dev.describe(), "seed": seed, "kernels": {}, "errors": {},
                  "skipped": {}}
    for e in _entries(only):
        info = {"source": e.source, "arch": e.arch, "source_sha256": _src_hash(e), "modes": {}, "outputs": [],
                "inputs": []}
        meta["kernels"][e.name] = info
        if not dev.arch_supported(e.arch):
            meta["skipped"][e.name] = f"{dev.describe()} cannot run {e.arch}"
            continue
        missing = [f"--{what} {src}" for what, src, arr, key in
                   (("inputs-from", inputs_from, given, f"{e.name}{SEP}in{SEP}"),
                    ("ptx-from", ptx_from, given_ptx, f"{e.name}{SEP}ptx"))
                   if arr is not None and not any(k.startswith(key) for k in arr)]
        if missing:                        # e.g. sm_100a entries skipped on the H100 run the inputs come from
            meta["skipped"][e.name] = f"nothing stored for this entry in {', '.join(missing)}"
            continue
        t0 = time.time()
        try:
            if given is not None:
                ins = _side(given, e.name, "in")
                if not ins:
                    raise RuntimeError(f"--inputs-from {inputs_from}: no inputs stored for {e.name}")
            else:
                ins = e.make_inputs(corpus.entry_rng(seed, e.name))
            for k, v in ins.items():
                arrays[f"{e.name}{SEP}in{SEP}{k}"] = np.asarray(v)
            info["inputs"] = sorted(ins)
            if given_ptx is not None:
                key = f"{e.name}{SEP}ptx"
                if key not in given_ptx:
                    raise RuntimeError(f"--ptx-from {ptx_from}: no PTX stored for {e.name}")
                mod = ptxlab.compile(str(given_ptx[key]), arch=e.arch, name=f"{e.name}.ptx")
                info["ptx_from"] = ptx_from
            else:
                mod = corpus.compile_entry(e)
            arrays[f"{e.name}{SEP}ptx"] = np.array(str(getattr(mod, "ptx", "")))
            info["ptx_sha256"] = hashlib.sha256(str(getattr(mod, "ptx", "")).encode()).hexdigest()[:16]
            with np.errstate(all="ignore"):            # the emulator's numpy float models warn on NaN/Inf
                outs = e.run(dev, mod, ins)
            dev.synchronize()
            for k, v in outs.items():
                arrays[f"{e.name}{SEP}out{SEP}{k}"] = np.ascontiguousarray(v)
                info["modes"][k] = e.mode(k)
            info["outputs"] = sorted(outs)
        except Exception as exc:  # noqa: BLE001 - recorded per kernel
            meta["errors"][e.name] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-4000:]}"
        info["seconds"] = round(time.time() - t0, 3)
    return arrays, meta


def _nvrtc_version() -> str:
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception as exc:  # noqa: BLE001
        return f"unknown ({type(exc).__name__})"


def save(path: str, arrays: dict, meta: dict) -> None:
    meta = dict(meta)
    meta.setdefault("nvrtc", _nvrtc_version())
    meta.update({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "host": socket.gethostname(), "python": platform.python_version(), "numpy": np.__version__})
    np.savez_compressed(path, __meta__=np.array(json.dumps(meta, sort_keys=True)), **arrays)


def load(path: str) -> tuple[dict, dict]:
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))
        arrays = {k: z[k] for k in z.files if k != "__meta__"}
    return arrays, meta


def cmd_run(a: argparse.Namespace) -> int:
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    if a.inputs_from:
        seed = int(load(a.inputs_from)[1]["seed"])
    print(f"corpus run: backend={a.backend} seed={seed}", flush=True)
    isolate = a.isolate if a.isolate is not None else (a.backend == "cuda")
    if not isolate:
        arrays, meta = run_entries(a.backend, seed, a.only, a.inputs_from, a.ptx_from)
    else:
        arrays, meta = {}, {"backend": a.backend, "seed": seed, "kernels": {}, "errors": {}, "skipped": {},
                            "isolated": True}
        try:                               # fail fast (one message, not one per entry) when there is no device
            import ptxlab

            meta["device"] = ptxlab.open_device(a.backend).describe()
        except Exception as exc:  # noqa: BLE001
            print(f"cannot open backend {a.backend!r}: {type(exc).__name__}: {exc}")
            return 2
        t_start = time.time()
        with tempfile.TemporaryDirectory() as td:
            for e in _entries(a.only):
                part = os.path.join(td, f"{e.name}.npz")
                left = a.budget - (time.time() - t_start)
                if left < 5:                   # keep the whole command inside the device's per-command limit
                    meta["kernels"][e.name] = {"source": e.source, "arch": e.arch, "modes": {}, "outputs": [],
                                               "inputs": []}
                    meta["errors"][e.name] = f"not run: --budget {a.budget:.0f} s used up"
                    print(f"  {e.name:22s} NOT RUN (budget)", flush=True)
                    continue
                cmd = [sys.executable, os.path.abspath(__file__), "run", "--backend", a.backend, "--seed", str(seed),
                       "--out", part, "--no-isolate", "--only", e.name]
                if a.inputs_from:
                    cmd += ["--inputs-from", os.path.abspath(a.inputs_from)]
                if a.ptx_from:
                    cmd += ["--ptx-from", os.path.abspath(a.ptx_from)]
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=min(a.timeout, left))
                    if not os.path.exists(part):
                        raise RuntimeError(f"subprocess rc={r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
                    arr, m = load(part)
                    arrays.update(arr)
                    meta["device"] = m.get("device", meta.get("device"))
                    for key in ("kernels", "errors", "skipped"):
                        meta[key].update(m[key])
                except Exception as exc:  # noqa: BLE001 - timeout or crash of one entry
                    meta["kernels"].setdefault(e.name, {"source": e.source, "arch": e.arch, "modes": {},
                                                        "outputs": [], "inputs": []})
                    meta["errors"][e.name] = f"{type(exc).__name__}: {str(exc)[-3000:]}"
                st = "ERROR" if e.name in meta["errors"] else "skipped" if e.name in meta["skipped"] else "ok"
                print(f"  {e.name:22s} {st}", flush=True)
    save(a.out, arrays, meta)
    for name in meta["kernels"]:
        st = "ERROR" if name in meta["errors"] else "skipped" if name in meta["skipped"] else "ok"
        if not isolate:
            print(f"  {name:22s} {st}")
        if st == "ERROR":
            print("    " + meta["errors"][name].strip().splitlines()[0][:300])
    print(f"wrote {a.out}: {len(meta['kernels'])} kernels, {len(meta['errors'])} errors, "
          f"{len(meta['skipped'])} skipped on {meta.get('device')}")
    return 1 if meta["errors"] else 0


def _side(arrays: dict, name: str, kind: str) -> dict:
    pre = f"{name}{SEP}{kind}{SEP}"
    return {k[len(pre):]: v for k, v in arrays.items() if k.startswith(pre)}


def compare(pa: str, pb: str, out=print) -> int:
    A, ma = load(pa)
    B, mb = load(pb)
    ents = {e.name: e for e in corpus.all_entries()}
    out(f"A: {pa}  [{ma.get('device')}, {ma.get('date')}, seed {ma.get('seed')}, NVRTC {ma.get('nvrtc')}]")
    out(f"B: {pb}  [{mb.get('device')}, {mb.get('date')}, seed {mb.get('seed')}, NVRTC {mb.get('nvrtc')}]")
    failures, summary = [], []
    order = list(ents)
    for name in sorted(set(ma["kernels"]) | set(mb["kernels"]), key=lambda n: order.index(n) if n in order else 999):
        ka, kb = ma["kernels"].get(name), mb["kernels"].get(name)
        e = ents.get(name)
        hdr = f"== {name}" + (f" ({e.source}, {e.arch})" if e else "")
        state = []
        for tag, m, k in (("A", ma, ka), ("B", mb, kb)):
            if k is None:
                state.append(f"{tag}: absent")
            elif name in m["errors"]:
                state.append(f"{tag}: ERROR")
            elif name in m["skipped"]:
                state.append(f"{tag}: skipped ({m['skipped'][name]})")
            else:
                state.append(f"{tag}: ok")
        out(f"{hdr}   " + "   ".join(state))
        if e is not None and e.refused:
            probs = [p for m in (ma, mb) if (p := corpus.refusal_problem(e, m.get("backend", ""),
                                                                       m["errors"].get(name)))]
            for tag, m in (("A", ma), ("B", mb)):
                if name in m["errors"]:
                    out(f"   {tag} refused: " + m["errors"][name].strip().splitlines()[0][:400])
            ran = [tag for tag, m in (("A", ma), ("B", mb)) if name not in m["errors"]]
            if ran and not probs:
                out(f"   {' and '.join(ran)} ran it, the other side refuses it as the entry expects "
                    "(outputs recorded, not compared)")
            if probs:
                out("   " + "; ".join(probs))
                failures.append(f"{name}: {probs[0]}")
            summary.append((name, "REFUSAL UNEXPECTED" if probs else "REFUSED as expected"))
            continue
        if any(s.endswith("ERROR") for s in state):
            for tag, m in (("A", ma), ("B", mb)):
                if name in m["errors"]:
                    out(f"   {tag} error: " + m["errors"][name].strip().splitlines()[0][:400])
            failures.append(f"{name}: error on a side")
            summary.append((name, "ERROR"))
            continue
        if any("skipped" in s or "absent" in s for s in state):
            summary.append((name, "skipped"))
            continue
        ia, ib = _side(A, name, "in"), _side(B, name, "in")
        same_in = set(ia) == set(ib) and all(ia[k].dtype == ib[k].dtype and np.array_equal(ia[k], ib[k]) for k in ia)
        if not same_in:
            out("   INPUTS DIFFER between A and B (different seed or corpus version): outputs not compared")
            failures.append(f"{name}: inputs differ")
            summary.append((name, "INPUTS DIFFER"))
            continue
        if ka.get("source_sha256") != kb.get("source_sha256"):
            out("   note: kernel source hashes differ between A and B")
        if ka.get("ptx_sha256") != kb.get("ptx_sha256"):
            out(f"   note: the PTX differs between A and B (NVRTC {ma.get('nvrtc')} vs {mb.get('nvrtc')})")
        oa, ob = _side(A, name, "out"), _side(B, name, "out")
        ok_kernel = True
        validated = {}
        out(f"   {'output':14s} {'mode':14s} {'elements':>9s} {'differ':>7s} {'bit-exact':>9s}  first differences "
            "(index: A | B)")
        for k in sorted(set(oa) | set(ob)):
            mode = (e.mode(k) if e else ka["modes"].get(k, "exact"))
            if k not in oa or k not in ob:
                out(f"   {k:14s} {mode:14s} missing on {'A' if k not in oa else 'B'}")
                ok_kernel = False
                continue
            r = corpus.diff(oa[k], ob[k], mode)
            exact = r["shape_ok"] and r["ndiff"] == 0
            verdict = ""
            if mode in corpus.VALIDATED and r["shape_ok"]:
                if name not in validated:
                    if e is None or e.validate is None:
                        validated[name] = ["no validator available"]
                    else:
                        va = e.validate(ia, oa)
                        vb = e.validate(ib, ob)
                        validated[name] = [f"A: {p}" for p in va] + [f"B: {p}" for p in vb]
                bad = bool(validated[name])
                verdict = "  (both sides valid)" if not bad else "  VALIDATION FAILED"
            else:
                bad = (not r["shape_ok"]) or r["nbad"] > 0
                if r["ndiff"] and not bad:
                    verdict = "  (all within mode)"
            ok_kernel &= not bad
            first = ", ".join(f"{t[0]}: {t[1]} | {t[2]}" if isinstance(t, tuple) else str(t) for t in r["first"])
            out(f"   {k:14s} {mode:14s} {r['n']:9d} {r['ndiff']:7d} {'yes' if exact else 'NO':>9s}  {first}{verdict}")
            if mode not in corpus.VALIDATED and r["nbad"] > 0:
                out(f"   {'':14s} {r['nbad']} element(s) NOT explained by mode {mode}")
        for p in validated.get(name, [])[:8]:
            out(f"   validate {p}")
        if not ok_kernel:
            failures.append(name)
        summary.append((name, "OK" if ok_kernel else "MISMATCH"))
    out("")
    out("summary: " + ", ".join(f"{n}={s}" for n, s in summary))
    n_ok = sum(1 for _, s in summary if s == "OK")
    out(f"{n_ok} kernels agree (bit-exact or within mode), {len(failures)} unexplained, "
        f"{sum(1 for _, s in summary if s == 'skipped')} skipped")
    return 1 if failures else 0


def cmd_compare(a: argparse.Namespace) -> int:
    return compare(a.a, a.b)


def cmd_list(a: argparse.Namespace) -> int:
    for e in corpus.all_entries():
        modes = ", ".join(f"{k}={v}" for k, v in e.modes.items()) or "exact"
        print(f"{e.name:22s} {e.source:24s} {e.arch:8s} {modes}\n{'':22s} {e.note}")
    return 0


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the corpus on one backend and save an .npz")
    r.add_argument("--backend", choices=("cuda", "emu"), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--only", nargs="*", default=None, help="entry names (default: all)")
    r.add_argument("--inputs-from", default=None,
                   help="reuse the inputs stored in this .npz (e.g. the H100 run) instead of regenerating them")
    r.add_argument("--ptx-from", default=None,
                   help="run the PTX stored in this .npz (e.g. the H100 run's NVRTC output) instead of compiling here")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--isolate", dest="isolate", action="store_true", default=None,
                   help="one subprocess per entry (default on cuda)")
    g.add_argument("--no-isolate", dest="isolate", action="store_false")
    r.add_argument("--timeout", type=float, default=60.0, help="seconds per isolated entry")
    r.add_argument("--budget", type=float, default=480.0,
                   help="seconds for all isolated entries together; later entries are recorded as not run")
    r.set_defaults(fn=cmd_run)
    c = sub.add_parser("compare", help="compare two .npz files; exit 0 only if every difference is explained")
    c.add_argument("a")
    c.add_argument("b")
    c.set_defaults(fn=cmd_compare)
    sub.add_parser("list", help="list the corpus").set_defaults(fn=cmd_list)
    a = ap.parse_args(argv)
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
