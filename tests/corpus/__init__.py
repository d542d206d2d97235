"""Fidelity corpus: kernels that must produce bit-identical outputs on an H100 and on the ptxlab emulator.

Each :class:`Entry` names a CUDA source under ``tests/kernels`` and knows how to build inputs from an rng, run the
kernel on any ptxlab device (outputs poisoned with 0xFF first), compute an independent numpy/Python reference, and
how each output must be compared (``modes``; default "exact").

Comparison modes (per output):
  exact            bit for bit (the default)
  nanclass         bit for bit, except that two NaNs are equal whatever their payload (f32 words or f64 words)
  approx:<ulp>     f32 words: equal, both NaN, |ordered-int distance| <= ulp, or one side ±0 and the other subnormal
                   (MUFU sequences may flush subnormal results); for .approx ops (ptx_docs/emulator_approximations.md)
  approx16:<ulp>   f16 words: equal, both NaN, or |ordered-int distance| <= ulp (cuda_fp16.h math built on .approx
                   f32 instructions)
  abs:<eps>        f32 words: equal, both NaN, or |a - b| <= eps
  rel:<eps>        f32 words: equal, both NaN, |a - b| <= eps * max(|a|, |b|), or subnormal-vs-±0
  bounded:<b>      f32 words: equal, both NaN, or both finite with |v| <= b (sin/cos.approx far outside [-pi, pi])
  serialization    order-dependent atomics: the two sides need not agree; each side separately must pass the entry's
                   ``validate(inputs, outputs)`` (some valid serialization / set and sum properties)
  contraction      a plain mul.f32 + add.f32 pair that ptxas may fuse into an FFMA on hardware (PTX ISA 9.7.3.3):
                   each side must pass ``validate`` (two roundings or one fused rounding)

Only numpy (+ ml_dtypes) is needed to import this package; references that reuse the ALU tests' Python models import
those test modules lazily (see :func:`load_test_module`).
"""
from __future__ import annotations

import importlib.util
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

TESTS = Path(__file__).resolve().parent.parent
KDIR = TESTS / "kernels"
REPO = TESTS.parent


@dataclass
class Entry:
    name: str
    source: str                                   # file name under tests/kernels
    make_inputs: Callable[[np.random.Generator], dict]
    run: Callable[[Any, Any, dict], dict]
    expected: Optional[Callable[[dict], dict]] = None
    arch: str = "sm_90a"
    modes: dict = field(default_factory=dict)     # output name -> mode (default "exact")
    validate: Optional[Callable[[dict, dict], list]] = None   # for "serialization" outputs: list of problems
    note: str = ""
    # backend ("emu" / "cuda") -> a substring of the error that backend must raise running this entry: a form the
    # emulator refuses (not implemented) or one the hardware refuses (e.g. CUDA_ERROR_ILLEGAL_INSTRUCTION).  Such an
    # entry holds only the kernels concerned, so a refusal hides no other kernel.
    refused: dict = field(default_factory=dict)

    def mode(self, out: str) -> str:
        return self.modes.get(out, "exact")


def refusal_problem(entry: Entry, backend: str, error: Optional[str]) -> Optional[str]:
    """None when ``backend``'s outcome for ``entry`` is what the entry expects (an error containing
    ``entry.refused[backend]``, or no error when it expects none); otherwise what is wrong."""
    want = entry.refused.get(backend)
    if want is None:
        return None if error is None else f"{backend} raised: {error.strip().splitlines()[0][:300]}"
    if error is None:
        return f"{backend} ran it, but the entry expects the refusal '{want}' (update the entry)"
    return None if want in error else f"{backend} raised something else than '{want}': {error.strip()[:300]}"


def entry_rng(seed: int, name: str) -> np.random.Generator:
    """Per-entry generator: the same (seed, name) gives the same inputs on every machine, independent of order."""
    return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, zlib.crc32(name.encode())])


def source_text(entry: Entry) -> str:
    return (KDIR / entry.source).read_text()


_MODS: dict = {}


def compile_entry(entry: Entry) -> Any:
    import ptxlab

    key = (entry.source, entry.arch)
    if key not in _MODS:
        from ptxlab.kernels import KERNELS_DIR

        # include path: probes of the production blocks include "blocks/<name>.cuh"
        _MODS[key] = ptxlab.compile(source_text(entry), arch=entry.arch, name=entry.source,
                                    include_dirs=[KERNELS_DIR])
    return _MODS[key]


def load_test_module(stem: str) -> Any:
    """Import tests/emu/<layer>/<stem>.py (an emulator ALU test with its Python references) under a private name,
    once."""
    key = f"_corpus_ref_{stem}"
    if key in sys.modules:
        return sys.modules[key]
    (path,) = (TESTS / "emu").glob(f"*/{stem}.py")
    spec = importlib.util.spec_from_file_location(key, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------------------ device helpers
def out_buf(dev: Any, nbytes: int) -> Any:
    """A poisoned (0xFF) output buffer."""
    b = dev.empty(nbytes)
    dev.memset(b, 0xFF)
    return b


def u32(rng: np.random.Generator, n: int, lo: int = 1, hi: int = 2**32) -> np.ndarray:
    return rng.integers(lo, hi, n, dtype=np.uint64).astype(np.uint32)


def u64(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(1, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)


# ------------------------------------------------------------------------------------------------ comparison
def _f32(words: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(words).astype(np.uint32).view(np.float32).astype(np.float64)


def _ordered(words: np.ndarray) -> np.ndarray:
    w = np.ascontiguousarray(words).astype(np.uint32).astype(np.int64)
    return np.where(w & 0x80000000, -(w & 0x7FFFFFFF), w)


def _ordered16(words: np.ndarray) -> np.ndarray:
    w = np.ascontiguousarray(words).astype(np.uint16).astype(np.int64)
    return np.where(w & 0x8000, -(w & 0x7FFF), w)


def _isnan_words(words: np.ndarray) -> np.ndarray:
    if words.dtype.itemsize == 8:
        return np.isnan(np.ascontiguousarray(words).view(np.float64))
    if words.dtype.itemsize == 2:
        return np.isnan(np.ascontiguousarray(words).view(np.float16))
    return np.isnan(np.ascontiguousarray(words).astype(np.uint32).view(np.float32))


VALIDATED = ("serialization", "contraction")   # modes whose outputs are judged by Entry.validate on each side


def mode_ok(a: np.ndarray, b: np.ndarray, mode: str) -> np.ndarray:
    """Element-wise: is the difference between a and b allowed by mode? (a, b: same shape and dtype)."""
    eq = a == b
    kind, _, arg = mode.partition(":")
    if kind in ("exact",) + VALIDATED:
        return eq
    nan2 = _isnan_words(a) & _isnan_words(b)
    if kind == "nanclass":
        return eq | nan2
    if kind == "approx16":
        return eq | nan2 | (np.abs(_ordered16(a) - _ordered16(b)) <= int(arg))
    fa, fb = _f32(a), _f32(b)
    with np.errstate(all="ignore"):
        d = np.abs(fa - fb)
        sub0 = ((np.abs(fa) < 2.0**-126) & (fb == 0)) | ((np.abs(fb) < 2.0**-126) & (fa == 0))
        if kind == "approx":
            return eq | nan2 | (np.abs(_ordered(a) - _ordered(b)) <= int(arg)) | sub0
        if kind == "abs":
            return eq | nan2 | (d <= float(arg))
        if kind == "rel":
            return eq | nan2 | (d <= float(arg) * np.maximum(np.abs(fa), np.abs(fb))) | sub0
        if kind == "bounded":
            lim = float(arg)
            return eq | nan2 | (np.isfinite(fa) & np.isfinite(fb) & (np.abs(fa) <= lim) & (np.abs(fb) <= lim))
    raise ValueError(f"unknown comparison mode {mode!r}")


def hexv(v: Any, itemsize: int) -> str:
    return f"0x{int(v):0{2 * itemsize}x}"


def diff(a: np.ndarray, b: np.ndarray, mode: str = "exact", nfirst: int = 4) -> dict:
    """Compare two outputs: {'shape_ok', 'ndiff' (bitwise), 'nbad' (not allowed by mode), 'first' [(idx, a, b)]}."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return {"shape_ok": False, "ndiff": -1, "nbad": -1, "n": int(a.size),
                "first": [f"shape/dtype {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"]}
    ne = a != b
    ok = mode_ok(a, b, mode)
    idx = np.argwhere(ne)
    bad_first = np.argwhere(~ok)
    show = bad_first if bad_first.size else idx
    first = [(tuple(int(t) for t in i), hexv(a[tuple(i)], a.dtype.itemsize), hexv(b[tuple(i)], a.dtype.itemsize))
             for i in show[:nfirst]]
    return {"shape_ok": True, "ndiff": int(ne.sum()), "nbad": int((~ok).sum()), "n": int(a.size), "first": first}


def check_against_expected(entry: Entry, inputs: dict, outputs: dict, expected: Optional[dict]) -> list:
    """Problems (strings) of one emulator run against the entry's reference and validator."""
    probs = []
    if expected is not None:
        for k, want in expected.items():
            if k not in outputs:
                probs.append(f"{k}: missing output")
                continue
            got = outputs[k]
            want = np.asarray(want).astype(got.dtype) if np.asarray(want).shape == got.shape else np.asarray(want)
            r = diff(got, want, entry.mode(k))
            if not r["shape_ok"] or r["nbad"]:
                probs.append(f"{k} [{entry.mode(k)}]: {r['nbad']}/{r['n']} bad; first (idx, got, want): {r['first']}")
    if entry.validate is not None:
        probs += [f"validate: {p}" for p in entry.validate(inputs, outputs)]
    return probs


def serial_chain(init: int, olds: list, vals: list, final: Optional[int], f: Callable[[int, int], int],
                 budget: int = 20000) -> bool:
    """Is there an order of the ops (old_i, v_i) on one address, starting at init, such that each op returned the
    memory value it saw and memory ends at final (None: unknown)?  f(cur, v) -> new value.  Depth-first search;
    ops that leave memory unchanged are consumed as soon as they fit (always safe)."""
    pending = list(range(len(olds)))
    steps = [0]

    def rec(cur: int, left: list) -> bool:
        steps[0] += 1
        if steps[0] > budget:
            return False
        keep = []
        for i in left:                                  # consume no-op candidates greedily
            if olds[i] == cur and f(cur, vals[i]) == cur:
                continue
            keep.append(i)
        if not keep:
            return final is None or final == cur
        tried = set()
        for j, i in enumerate(keep):
            if olds[i] != cur:
                continue
            nxt = f(cur, vals[i])
            if nxt in tried:
                continue
            tried.add(nxt)
            if rec(nxt, keep[:j] + keep[j + 1:]):
                return True
        return False

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(olds) + 1000))
    return rec(init, pending)


def all_entries() -> list:
    """Every corpus entry (wrapped ALU kernels first, then the corpus_*.cu kernels, then the cluster kernels)."""
    here = str(Path(__file__).resolve().parent.parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from corpus import (kernels_async_store, kernels_bulk_reduce, kernels_cluster, kernels_mma,  # noqa: E402
                        kernels_new, kernels_wgmma, kernels_wmma, kernels_wrapped)

    ents = kernels_wrapped.ENTRIES + kernels_new.ENTRIES + kernels_cluster.ENTRIES + kernels_mma.ENTRIES + \
        kernels_wgmma.ENTRIES + kernels_bulk_reduce.ENTRIES + kernels_async_store.ENTRIES + kernels_wmma.ENTRIES
    names = [e.name for e in ents]
    assert len(names) == len(set(names)), names
    return ents
