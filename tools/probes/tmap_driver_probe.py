#!/usr/bin/env python3
"""Pin the undocumented cuTensorMapEncodeTiled limit behind tests/gpu/test_cuda_tensormap_rules.py::
test_driver_accepts_random_valid_specs (the H100 driver 580.159.04 rejected some maps with large boxes that
ptxlab.tensormap.validate() accepted). Found with this probe (H100 run of 2026-11-22, tools/probes/h100_probes.sh):
prod_i floor(box[i] / element_strides[i]) * element bytes <= 228 KiB, 0 of 23,591 recorded encodes misclassified;
now rule 16 of validate() (tensormap.MAX_BOX_BYTES, ptx_docs/tensor_maps.md). ``usable`` switches that rule off so
that later runs still probe both sides of it; the random stage draws from the fuzz generator, which now stays within
the limit (rejections there would mean another rule).

    python3 tools/probes/tmap_driver_probe.py run --out tmap_rule.json              # GPU machine: the real driver
    python3 tools/probes/tmap_driver_probe.py run --encoder mock:bytes19 --out x.json   # dry run, CPU (mocked encode)
    python3 tools/probes/tmap_driver_probe.py analyze tmap_rule.json                # CPU: tables + rule candidates

Stages of ``run`` (every encode goes straight to the driver, bypassing ptxlab's own refusals; only specs that pass
``validate()`` and are not Blackwell-only on the GPU at hand are tried):
  random : the fuzz test's generator (tests/test_tensormap.py::_random_spec) with the seed of the failing run and
           fresh fixed seeds; every spec is recorded with accepted / CUresult.
  shrink : each of the first --shrink rejected specs (one per rank x dtype first) is shrunk one field at a time as
           long as the driver still rejects it: drop the outermost dim; swizzle / oob / l2 off; dtype to UINT8
           (same bytes or same elements); element stride to 1; then each box dim / dim / stride / element stride
           bisected down to the smallest value still rejected. A "rescue" list then says which single change of the
           minimal spec (value - 1 step, halved, minimum, + 1 step, structural) makes the driver accept it.
  scan   : full sweeps of the outermost box dim (1..256) over structured families: rank 3 UINT8 box0 x box1 grid;
           2/4/8-byte dtypes; element strides; rank 1/2/4/5; dims smaller than the box; huge / overlapping strides;
           swizzles; oob NaN / L2 promotion; plus power-of-two sweeps of dims and strides (up to 2^32 / 2^39) for
           three box sizes. The accepted set of each sweep is stored as ranges.
The JSON keeps every encode; ``analyze`` (also printed at the end of ``run``) lists, for many spec features, whether a
threshold separates accepted from rejected (overall and within rank >= 3), the shrink results and the sweep table.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import os
import sys
import time
from typing import Any, Callable, Iterable, Optional

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from ptxlab import tensormap  # noqa: E402
from ptxlab.errors import TensorMapError  # noqa: E402
from ptxlab.tensormap import (DTYPE_CODES, INTERLEAVE_CODES, L2_PROMOTION_CODES, OOB_FILL_CODES,  # noqa: E402
                              PACKED_DTYPES, SWIZZLE_CODES, TensorMapSpec)

FAILING_SEED = 14627605371010210097        # NOTES.md: the 2026-11-22 fuzz run with 40 unexplained rejections
EXTRA_SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
ESIZE = {"UINT8": 1, "UINT16": 2, "FLOAT16": 2, "BFLOAT16": 2, "UINT32": 4, "INT32": 4, "FLOAT32": 4,
         "FLOAT32_FTZ": 4, "TFLOAT32": 4, "TFLOAT32_FTZ": 4, "UINT64": 8, "INT64": 8, "FLOAT64": 8}


# --------------------------------------------------------------------------------------------------- encoders
def encode_args(drv: Any, spec: TensorMapSpec, address: int) -> tuple:
    """The cuTensorMapEncodeTiled arguments exactly as ptxlab/device/cuda.py builds them (minus the map pointer)."""
    strides = list(spec.global_strides) or [-(-spec.global_shape[0] * spec.elem_bits // 128) * 16]
    return (drv.CUtensorMapDataType(DTYPE_CODES[spec.dtype]), spec.rank, address,
            [drv.cuuint64_t(v) for v in spec.global_shape], [drv.cuuint64_t(v) for v in strides],
            [drv.cuuint32_t(v) for v in spec.box], [drv.cuuint32_t(v) for v in spec.element_strides],
            drv.CUtensorMapInterleave(INTERLEAVE_CODES[spec.interleave]),
            drv.CUtensorMapSwizzle(SWIZZLE_CODES[spec.swizzle]),
            drv.CUtensorMapL2promotion(L2_PROMOTION_CODES[spec.l2_promotion]),
            drv.CUtensorMapFloatOOBfill(OOB_FILL_CODES[spec.oob_fill]))


class Encoder:
    """spec -> (accepted, CUresult name). Counts calls."""

    def __init__(self, drv: Any, base: int, describe: str, cc: tuple[int, int]) -> None:
        self.drv, self.base, self.describe, self.cc = drv, base, describe, cc
        self.calls = 0
        self.cache: dict[tuple, tuple[bool, str]] = {}

    def __call__(self, spec: TensorMapSpec) -> tuple[bool, str]:
        key = key_of(spec)
        if key in self.cache:
            return self.cache[key]
        self.calls += 1
        addr = self.base + spec.global_address % 256
        res = self.drv.cuTensorMapEncodeTiled(*encode_args(self.drv, spec, addr))
        err = res[0]
        ok = err == self.drv.CUresult.CUDA_SUCCESS
        name = "CUDA_SUCCESS" if ok else getattr(err, "name", str(err))
        self.cache[key] = (ok, name)
        return ok, name


def key_of(s: TensorMapSpec) -> tuple:
    return (s.dtype, s.global_address % 256, s.global_shape, s.global_strides, s.box, s.element_strides,
            s.interleave, s.swizzle, s.l2_promotion, s.oob_fill)


MOCK_RULES: dict[str, Callable[[TensorMapSpec], bool]] = {
    # rejects: rank >= 3 and traversed box bytes >= 2^19 (the best separator seen so far)
    "bytes19": lambda s: not (s.rank >= 3 and math.prod(s.box) * ESIZE.get(s.dtype, 1) >= 2**19),
    # rejects: loaded box bytes > 2^17 (some other plausible rule, to check that analyze tells them apart)
    "loaded17": lambda s: s.box_bytes <= 2**17,
    "none": lambda s: True,
    # the rule found on the H100 (2026-11-22): floor-divided box bytes <= 228 KiB
    "box228": lambda s: math.prod(b // e for b, e in zip(s.box, s.element_strides)) * ESIZE.get(s.dtype, 1)
    <= 228 * 1024,
}


class _FakeDriver:
    """cuda.bindings.driver with cuTensorMapEncodeTiled replaced by a Python rule (types are the real ones, so the
    argument building is exercised; used for dry runs on machines without a GPU)."""

    def __init__(self, rule: Callable[[TensorMapSpec], bool]) -> None:
        from cuda.bindings import driver
        self._d, self._rule = driver, rule

    def __getattr__(self, name: str) -> Any:
        return getattr(self._d, name)

    def cuTensorMapEncodeTiled(self, dtype, rank, addr, dims, strides, box, es, il, sw, l2, oob):  # noqa: N802
        d = self._d
        assert isinstance(dtype, d.CUtensorMapDataType) and isinstance(rank, int) and isinstance(addr, int)
        assert all(isinstance(v, d.cuuint64_t) for v in dims + strides), "dims/strides must be cuuint64_t"
        assert all(isinstance(v, d.cuuint32_t) for v in box + es), "box/element strides must be cuuint32_t"
        assert len(dims) == len(box) == len(es) == rank and len(strides) == max(rank - 1, 1)
        inv = {v: k for k, v in DTYPE_CODES.items()}
        sinv = {v: k for k, v in SWIZZLE_CODES.items()}
        spec = TensorMapSpec.make(inv[int(dtype)], addr, [int(v) for v in dims],
                                  [int(v) for v in strides][:rank - 1], [int(v) for v in box], [int(v) for v in es],
                                  swizzle=sinv[int(sw)])
        ok = self._rule(spec)
        return (d.CUresult.CUDA_SUCCESS if ok else d.CUresult.CUDA_ERROR_INVALID_VALUE, None)


def make_encoder(kind: str) -> Encoder:
    if kind.startswith("mock:"):
        return Encoder(_FakeDriver(MOCK_RULES[kind[5:]]), 0x7F0000000000, f"mock encoder ({kind})", (9, 0))
    import ptxlab
    dev = ptxlab.open_device("cuda")
    arena = dev.empty(1 << 20)
    drv = dev._drv
    ver = drv.cuDriverGetVersion()
    enc = Encoder(drv, arena.ptr, f"{dev.describe()}, cuDriverGetVersion {ver[1] if len(ver) > 1 else '?'}", dev.cc)
    enc._keep = (dev, arena)   # noqa: SLF001 - keep the context and allocation alive
    return enc


# --------------------------------------------------------------------------------------------------- helpers
def _cases_module() -> Any:
    spec = importlib.util.spec_from_file_location("_tm_cases", os.path.join(ROOT, "tests", "test_tensormap.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def usable(s: TensorMapSpec, cc: tuple[int, int]) -> bool:
    """Valid for ptxlab and not a Blackwell-only encoding on a pre-Blackwell GPU (those are known rejections).
    The box-size rule that this probe found (tensormap.MAX_BOX_BYTES, rule 16) is switched off here, so that runs
    keep probing both sides of it."""
    if s.interleave != "none":
        return False
    if cc < (10, 0) and (s.dtype in PACKED_DTYPES or s.swizzle.startswith("128B_ATOM")):
        return False
    saved = tensormap.MAX_BOX_BYTES
    tensormap.MAX_BOX_BYTES = 1 << 62
    try:
        s.validate()
    except TensorMapError:
        return False
    finally:
        tensormap.MAX_BOX_BYTES = saved
    return True


def spec_dict(s: TensorMapSpec) -> dict[str, Any]:
    d = dataclasses.asdict(s)
    for k in ("global_shape", "global_strides", "box", "element_strides"):
        d[k] = list(d[k])
    return d


def spec_from(d: dict[str, Any]) -> TensorMapSpec:
    return TensorMapSpec.make(d["dtype"], d["global_address"], d["global_shape"], d["global_strides"], d["box"],
                              d["element_strides"], d.get("interleave", "none"), d.get("swizzle", "none"),
                              d.get("l2_promotion", "none"), d.get("oob_fill", "none"))


def short(s: TensorMapSpec) -> str:
    extra = "".join(f" {k}={v}" for k, v in (("swz", s.swizzle), ("oob", s.oob_fill), ("l2", s.l2_promotion))
                    if v != "none")
    es = "" if all(e == 1 for e in s.element_strides) else f" es={list(s.element_strides)}"
    return (f"{s.dtype} r{s.rank} dims={list(s.global_shape)} strides={list(s.global_strides)} box={list(s.box)}"
            f"{es}{extra}")


def _esize(s: TensorMapSpec) -> float:
    return s.smem_elem_bits / 8


def features(s: TensorMapSpec) -> dict[str, float]:
    """Numbers a driver limit could be a threshold on."""
    es = _esize(s)
    outer = s.box[1:]
    loaded_outer = [-(-b // e) for b, e in zip(s.box[1:], s.element_strides[1:])]
    clipped = [min(b, d) for b, d in zip(s.box, s.global_shape)]
    span = s.box_inner_bytes + sum((b - 1) * st for b, st in zip(s.box[1:], s.global_strides))
    tspan = s.box_inner_bytes + sum((b - 1) * e * st for b, e, st in
                                    zip(s.box[1:], s.element_strides[1:], s.global_strides))
    return {
        "rank": s.rank,
        "esize": es,
        "inner_bytes": s.box_inner_bytes,
        "box_elems": math.prod(s.box),
        "box_bytes_traversed": math.prod(s.box) * es,
        "box_bytes_loaded": s.box_bytes,
        "box_bytes_driver": s.driver_box_bytes,     # rule 16: prod floor(box/es) x element bytes (H100 2026-11-22)
        "outer_box": math.prod(outer) if outer else 1,
        "outer_box_loaded": math.prod(loaded_outer) if loaded_outer else 1,
        "box_bytes_clipped": math.prod(clipped) * es,
        "max_outer_box": max(outer) if outer else 0,
        "box_over_dim_max": max(b - d for b, d in zip(s.box, s.global_shape)),
        "box_x_estride_max": max([b * e for b, e in zip(s.box[1:], s.element_strides[1:])] or [0]),
        "box_gmem_span": span,
        "box_gmem_span_estrided": tspan,
        "max_box_x_stride": max([b * st for b, st in zip(s.box[1:], s.global_strides)] or [0]),
        "gmem_extent": s.gmem_extent(),
        "max_stride": max(s.global_strides or [0]),
        "max_dim": max(s.global_shape),
        "max_outer_dim": max(s.global_shape[1:] or (0,)),
        "max_dim_x_stride": max([d * st for d, st in zip(s.global_shape[1:], s.global_strides)] or [0]),
        "total_elems": float(math.prod(s.global_shape)),
        "max_estride": max(s.element_strides),
    }


def separation(recs: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """For each feature: the fewest misclassified records of any rule 'rejected iff f >= t' or 'iff f <= t'."""
    if not recs:
        return []
    feats = [features(spec_from(r["spec"])) for r in recs]
    ok = np.array([bool(r["ok"]) for r in recs])
    out = []
    for name in feats[0]:
        v = np.array([f[name] for f in feats], dtype=float)
        u, inv = np.unique(v, return_inverse=True)
        n_ok = np.bincount(inv, weights=ok, minlength=u.size)
        n_rej = np.bincount(inv, weights=~ok, minlength=u.size)
        # rule ">= u[j]": wrong = accepted with v >= u[j] + rejected with v < u[j]
        ok_ge = n_ok[::-1].cumsum()[::-1]
        rej_lt = np.concatenate([[0], n_rej.cumsum()[:-1]])
        ge = ok_ge + rej_lt
        # rule "<= u[j]": wrong = accepted with v <= u[j] + rejected with v > u[j]
        ok_le = n_ok.cumsum()
        rej_gt = n_rej.sum() - n_rej.cumsum()
        le = ok_le + rej_gt
        j1, j2 = int(ge.argmin()), int(le.argmin())
        best = (int(ge[j1]), f"rejected iff {name} >= {u[j1]:g}") if ge[j1] <= le[j2] else \
            (int(le[j2]), f"rejected iff {name} <= {u[j2]:g}")
        acc, rej = v[ok], v[~ok]
        rng = (f"accepted {acc.min():g}..{acc.max():g}" if acc.size else "accepted -") + \
              (f", rejected {rej.min():g}..{rej.max():g}" if rej.size else ", rejected -")
        out.append((best[0], best[1], rng))
    return sorted(out)


def ranges(vals: list[int], oks: list[bool]) -> str:
    """'1-31' style list of the accepted values."""
    out, start, prev = [], None, None
    for v, ok in zip(vals, oks):
        if ok and start is None:
            start = v
        if not ok and start is not None:
            out.append(f"{start}-{prev}" if prev != start else f"{start}")
            start = None
        prev = v
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ",".join(out) or "none"


# --------------------------------------------------------------------------------------------------- stages
def stage_random(enc: Encoder, n: int, seeds: Iterable[int], deadline: float) -> list[dict[str, Any]]:
    cases = _cases_module()
    recs = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for i in range(n):
            s = cases._random_spec(rng)
            if not usable(s, enc.cc):
                continue
            ok, err = enc(s)
            recs.append({"seed": seed, "i": i, "spec": spec_dict(s), "ok": ok, "err": err})
        if time.time() > deadline:
            break
    return recs


def _min_box0(s: TensorMapSpec) -> int:
    return max(1, int(16 * 8 // s.smem_elem_bits))


def _align16(x: int) -> int:
    return max(16, (int(x) + 15) // 16 * 16)


def _tup(t: tuple, i: int, v: int) -> tuple:
    return t[:i] + (int(v),) + t[i + 1:]


def structural(s: TensorMapSpec) -> list[tuple[str, TensorMapSpec]]:
    """Non-numeric single-field simplifications."""
    R = dataclasses.replace
    out: list[tuple[str, TensorMapSpec]] = []
    r = s.rank
    if r > 1:
        out.append((f"drop dim {r - 1}", R(s, rank=r - 1, global_shape=s.global_shape[:-1],
                                           global_strides=s.global_strides[:-1], box=s.box[:-1],
                                           element_strides=s.element_strides[:-1])))
    for what in ("swizzle", "oob_fill", "l2_promotion", "interleave"):
        if getattr(s, what) != "none":
            out.append((f"{what} none", R(s, **{what: "none"})))
    if s.global_address % 256:
        out.append(("address aligned", R(s, global_address=s.global_address - s.global_address % 256)))
    if s.dtype != "UINT8" and s.dtype not in PACKED_DTYPES:
        es = int(_esize(s))
        if s.box[0] * es <= 256:
            out.append(("dtype UINT8 (same bytes)", R(s, dtype="UINT8", oob_fill="none",
                                                      box=(s.box[0] * es,) + s.box[1:],
                                                      global_shape=(s.global_shape[0] * es,) + s.global_shape[1:])))
        out.append(("dtype UINT8 (same elements)", R(s, dtype="UINT8", oob_fill="none",
                                                     box=(max(16, s.box[0]),) + s.box[1:])))
    for i in range(r):
        if s.element_strides[i] > 1:
            out.append((f"estride[{i}] -> 1", R(s, element_strides=_tup(s.element_strides, i, 1))))
    return out


def numeric_fields(s: TensorMapSpec) -> list[tuple[str, int, int, int, Callable[[int], TensorMapSpec]]]:
    """(name, current value, minimum, granularity, setter) for every box dim, dim, stride and element stride."""
    R = dataclasses.replace
    out = []
    for i in range(s.rank):
        g = _min_box0(s) if i == 0 else 1
        out.append((f"box[{i}]", s.box[i], g, g, lambda v, i=i: R(s, box=_tup(s.box, i, v))))
    for i in range(s.rank):
        out.append((f"dim[{i}]", s.global_shape[i], 1, 1, lambda v, i=i: R(s, global_shape=_tup(s.global_shape, i, v))))
    for i in range(s.rank - 1):
        out.append((f"stride[{i}]", s.global_strides[i], 16, 16,
                    lambda v, i=i: R(s, global_strides=_tup(s.global_strides, i, v))))
    for i in range(s.rank):
        out.append((f"estride[{i}]", s.element_strides[i], 1, 1,
                    lambda v, i=i: R(s, element_strides=_tup(s.element_strides, i, v))))
    return out


def _rejected(enc: "Encoder", s: TensorMapSpec) -> bool:
    return usable(s, enc.cc) and not enc(s)[0]


def shrink(enc: Encoder, s: TensorMapSpec, max_rounds: int = 60) -> dict[str, Any]:
    """Greedy one-field-at-a-time minimization that keeps the driver rejecting; numeric fields by bisection
    (smallest value still rejected, assuming monotonicity in that field, then re-checked)."""
    path = []
    cur = s
    for _ in range(max_rounds):
        changed = False
        for tag, c in structural(cur):
            if _rejected(enc, c):
                path.append(tag)
                cur, changed = c, True
                break
        if changed:
            continue
        for name, v0, lo, g, setter in numeric_fields(cur):
            if v0 <= lo:
                continue
            if _rejected(enc, setter(lo)):
                best = lo
            else:
                ok_v, rej_v = lo, v0                 # invariant: ok_v accepted/invalid, rej_v rejected
                while rej_v - ok_v > g:
                    mid = (ok_v + rej_v) // 2 // g * g
                    if mid <= ok_v:
                        mid = ok_v + g
                    if _rejected(enc, setter(mid)):
                        rej_v = mid
                    else:
                        ok_v = mid
                best = rej_v
            if best < v0:
                path.append(f"{name} {v0} -> {best}")
                cur, changed = setter(best), True
                break
        if not changed:
            break
    rescue = []
    for tag, c in structural(cur):
        if usable(c, enc.cc) and enc(c)[0]:
            rescue.append(tag)
    for name, v0, lo, g, setter in numeric_fields(cur):
        for v in sorted({v0 - g, v0 // 2 // g * g, lo}):
            if lo <= v < v0:
                c = setter(v)
                if usable(c, enc.cc) and enc(c)[0]:
                    rescue.append(f"{name} {v0} -> {v}")
        c = setter(v0 + g)
        if usable(c, enc.cc) and enc(c)[0]:
            rescue.append(f"{name} {v0} -> {v0 + g} (increase)")
    return {"start": spec_dict(s), "minimal": spec_dict(cur), "err": enc(cur)[1], "path": path, "rescue": rescue,
            "features": features(cur)}


def _mk(dtype: str, dims: list[int], box: list[int], es: Optional[list[int]] = None, strides: Optional[list[int]] = None,
        **kw: Any) -> TensorMapSpec:
    esz = ESIZE[dtype]
    if strides is None:
        strides, acc = [], _align16(dims[0] * esz)
        for d in dims[1:]:
            strides.append(acc)
            acc = _align16(acc * min(d, 256))
    return TensorMapSpec.make(dtype, 0, dims, strides, box, es, **kw)


BOX_SWEEP = list(range(1, 257))


def scan_families() -> list[tuple[str, list[int], Callable[[int], TensorMapSpec]]]:
    """(label, values, f(value) -> spec). Most sweep the outermost box dim over 1..256 ('*' in the label); the 'pow2'
    families sweep one dim or stride over powers of two ('2^k' in the label: the values are k)."""
    F: list[tuple[str, list[int], Callable[[int], TensorMapSpec]]] = []

    def box(label: str, f: Callable[[int], TensorMapSpec]) -> None:
        F.append((label, BOX_SWEEP, f))

    big3 = [4096, 256, 256]
    for b0 in (16, 64, 128, 256):
        for b1 in (1, 16, 32, 64, 128, 256):
            box(f"r3 UINT8 box=[{b0},{b1},*]", lambda v, b0=b0, b1=b1: _mk("UINT8", big3, [b0, b1, v]))
    for dt, b0s in (("FLOAT16", (8, 64, 128, 256)), ("FLOAT32", (4, 32, 64, 128, 256)),
                    ("FLOAT64", (2, 16, 64, 128, 256))):
        for b0 in b0s:
            for b1 in (64, 256):
                box(f"r3 {dt} box=[{b0},{b1},*]", lambda v, dt=dt, b0=b0, b1=b1: _mk(dt, big3, [b0, b1, v]))
    for e1, e2 in ((1, 2), (1, 4), (1, 8), (2, 1), (8, 1), (8, 8)):
        box(f"r3 UINT8 box=[256,256,*] es=[1,{e1},{e2}]",
            lambda v, e1=e1, e2=e2: _mk("UINT8", big3, [256, 256, v], [1, e1, e2]))
    box("r3 UINT8 box=[256,64,*] es=[1,1,8]", lambda v: _mk("UINT8", big3, [256, 64, v], [1, 1, 8]))
    for dt in ("UINT8", "FLOAT32", "FLOAT64"):
        box(f"r2 {dt} box=[256,*]", lambda v, dt=dt: _mk(dt, [4096, 256], [256, v]))
    box("r1 FLOAT64 box=[*]", lambda v: _mk("FLOAT64", [4096], [max(2, v - v % 2)]))
    big5 = [4096, 256, 256, 256, 256]
    for pre in ([256, 256, 1], [256, 16, 16], [16, 16, 16], [64, 8, 8], [256, 2, 2]):
        box(f"r4 UINT8 box={pre + ['*']}", lambda v, pre=pre: _mk("UINT8", big5[:4], pre + [v]))
    for pre in ([256, 256, 1, 1], [256, 16, 16, 1], [256, 4, 4, 4], [16, 16, 16, 16], [256, 256, 2, 1]):
        box(f"r5 UINT8 box={pre + ['*']}", lambda v, pre=pre: _mk("UINT8", big5, pre + [v]))
    for dims in ([256, 8, 8], [256, 256, 2], [256, 1, 300], [4096, 4096, 4096]):
        box(f"r3 UINT8 box=[256,256,*] dims={dims}", lambda v, dims=dims: _mk("UINT8", dims, [256, 256, v]))
    box("r3 UINT8 box=[256,256,*] strides=[2^30,2^39]",
        lambda v: _mk("UINT8", big3, [256, 256, v], strides=[2**30, 2**39]))
    box("r3 UINT8 box=[256,256,*] strides=[256,256] (overlap)",
        lambda v: _mk("UINT8", big3, [256, 256, v], strides=[256, 256]))
    for sw, b0 in (("32B", 32), ("64B", 64), ("128B", 128)):
        box(f"r3 UINT8 box=[{b0},256,*] swz={sw}", lambda v, sw=sw, b0=b0: _mk("UINT8", big3, [b0, 256, v], swizzle=sw))
    box("r3 FLOAT32 box=[32,256,*] oob=nan", lambda v: _mk("FLOAT32", big3, [32, 256, v], oob_fill="nan"))
    box("r3 UINT8 box=[128,256,*] l2=256B", lambda v: _mk("UINT8", big3, [128, 256, v], l2_promotion="256B"))
    # huge dims / strides (the random generator draws outer dims up to 2^32 and strides up to 2^40)
    K_DIM, K_STR = list(range(0, 33)), list(range(4, 40))
    for bx in ([16, 1, 1], [64, 64, 64], [256, 16, 16]):
        F.append((f"r3 UINT8 box={bx} dims=[4096,256,2^k]", K_DIM,
                  lambda k, bx=bx: _mk("UINT8", [4096, 256, 2**k], bx, strides=[4096, 2**20])))
        F.append((f"r3 UINT8 box={bx} dims=[4096,2^k,256]", K_DIM,
                  lambda k, bx=bx: _mk("UINT8", [4096, 2**k, 256], bx, strides=[4096, 2**20])))
        F.append((f"r3 UINT8 box={bx} strides=[4096,2^k]", K_STR,
                  lambda k, bx=bx: _mk("UINT8", big3, bx, strides=[4096, 2**k])))
        F.append((f"r3 UINT8 box={bx} strides=[2^k,2^20]", K_STR,
                  lambda k, bx=bx: _mk("UINT8", big3, bx, strides=[2**k, 2**20])))
        F.append((f"r3 UINT8 box={bx} dims=[4096,256,2^32] strides=[4096,2^k]", K_STR,
                  lambda k, bx=bx: _mk("UINT8", [4096, 256, 2**32], bx, strides=[4096, 2**k])))
    F.append(("r2 UINT8 box=[256,256] dims=[4096,2^k] strides=[2^39]", K_DIM,
              lambda k: _mk("UINT8", [4096, 2**k], [256, 256], strides=[2**39])))
    F.append(("r5 UINT8 box=[16,1,1,1,1] dims=[4096,2^k x4] strides=2^39", K_DIM,
              lambda k: _mk("UINT8", [4096] + [2**k] * 4, [16, 1, 1, 1, 1], strides=[2**39] * 4)))
    F.append(("r3 UINT8 box=[16,1,1] dims=[2^k,256,256] strides=[2^36,2^37]", K_DIM,
              lambda k: _mk("UINT8", [2**k if k >= 4 else 16, 256, 256], [16, 1, 1], strides=[2**36, 2**37])))
    return F


def stage_scan(enc: Encoder, deadline: float, max_families: int = 0) -> list[dict[str, Any]]:
    out = []
    fams = scan_families()
    if max_families:
        fams = fams[::max(1, len(fams) // max_families)][:max_families]
    for label, values, f in fams:
        vals, oks, errs = [], [], set()
        for v in values:
            s = f(v)
            if not usable(s, enc.cc):
                continue
            ok, err = enc(s)
            vals.append(v)
            oks.append(ok)
            if not ok:
                errs.add(err)
        specs = {str(v): spec_dict(f(v)) for v, ok in zip(vals, oks)} if values is not BOX_SWEEP else {}
        s1 = f(values[0])
        out.append({"label": label, "kind": "box" if values is BOX_SWEEP else "pow2", "spec1": spec_dict(s1),
                    "specs": specs, "values": vals, "ok": oks, "errs": sorted(errs), "accepted": ranges(vals, oks),
                    "bytes_per_unit": features(s1)["box_bytes_traversed"]})
        if time.time() > deadline:
            out.append({"label": "(scan stopped: time budget)", "kind": "none", "values": [], "ok": [], "errs": [],
                        "accepted": "", "bytes_per_unit": 0})
            break
    return out


def scan_records(sc: dict[str, Any]) -> list[dict[str, Any]]:
    """The individual encodes of one scan as {"spec", "ok"} records."""
    if sc.get("kind") == "pow2":
        return [{"spec": sc["specs"][str(v)], "ok": ok} for v, ok in zip(sc["values"], sc["ok"])
                if str(v) in sc["specs"]]
    if "spec1" not in sc:
        return []
    return [{"spec": {**sc["spec1"], "box": sc["spec1"]["box"][:-1] + [v]}, "ok": ok}
            for v, ok in zip(sc["values"], sc["ok"])]


# --------------------------------------------------------------------------------------------------- report
def report(data: dict[str, Any]) -> str:
    L = [f"device: {data.get('device')}", f"encodes: {data.get('calls')}"]
    recs = data.get("random", [])
    nrej = sum(not r["ok"] for r in recs)
    L.append(f"\n[random] {len(recs)} specs, {nrej} rejected; errors: "
             f"{sorted({r['err'] for r in recs if not r['ok']})}")
    for r in [r for r in recs if not r["ok"]][:12]:
        s = spec_from(r["spec"])
        f = features(s)
        L.append(f"  REJ {short(s)}  trav={f['box_bytes_traversed']:g} loaded={f['box_bytes_loaded']:g}")
    allrecs = recs + [{"spec": sh["minimal"], "ok": False} for sh in data.get("shrinks", [])] + \
        [r for sc in data.get("scans", []) for r in scan_records(sc)]
    for title, subset in (("all encodes", allrecs), ("rank >= 3", [r for r in allrecs if len(r["spec"]["box"]) >= 3]),
                          ("random only", recs)):
        sep = separation(subset)
        if not sep:
            continue
        L.append(f"\n[separation: {title}, {len(subset)} specs, {sum(not r['ok'] for r in subset)} rejected] "
                 "fewest misclassified first")
        for err, rule, rng in sep[:10]:
            L.append(f"  {err:5d} wrong: {rule:50s} ({rng})")
    if data.get("shrinks"):
        L.append("\n[shrink] minimal rejected specs, and the single changes that make the driver accept them")
        for sh in data["shrinks"]:
            s = spec_from(sh["minimal"])
            f = sh["features"]
            L.append(f"  {short(s)}  ({sh['err']}; trav={f['box_bytes_traversed']:g} loaded={f['box_bytes_loaded']:g}"
                     f" outer={f['outer_box']:g}; {len(sh['path'])} steps)")
            L.append(f"      accepted after: {'; '.join(sh['rescue']) or 'nothing tried was accepted'}")
    if data.get("scans"):
        L.append("\n[scan] '*': box dim v = 1..256, first rejected v x traversed bytes at v=1; '2^k': k values")
        for sc in data["scans"]:
            vals, oks = sc["values"], sc["ok"]
            first_rej = next((v for v, ok in zip(vals, oks) if not ok), None)
            if first_rej is None:
                at = "all accepted"
            elif sc.get("kind") == "pow2":
                at = f"first rej k={first_rej}"
            else:
                at = f"first rej v={first_rej}: {first_rej * sc['bytes_per_unit']:g} B"
            L.append(f"  {sc['label']:46s} {sc['accepted']:14s} {at} {','.join(sc['errs'])}")
    return "\n".join(L)


def cmd_run(args: argparse.Namespace) -> int:
    t0 = time.time()
    deadline = t0 + args.budget_s
    enc = make_encoder(args.encoder)
    data: dict[str, Any] = {"device": enc.describe, "encoder": args.encoder}

    def save() -> None:
        data["calls"] = enc.calls
        data["seconds"] = round(time.time() - t0, 2)
        with open(args.out, "w") as f:
            json.dump(data, f)

    data["random"] = stage_random(enc, args.n, (FAILING_SEED,) + EXTRA_SEEDS[:args.seeds], deadline)
    save()
    rejected = [spec_from(r["spec"]) for r in data["random"] if not r["ok"]]
    # shrink a spread of rejected specs (different ranks / dtypes first)
    picked, seen = [], set()
    for s in sorted(rejected, key=lambda s: (s.rank, s.dtype)):
        if (s.rank, s.dtype) not in seen:
            seen.add((s.rank, s.dtype))
            picked.append(s)
    picked += [s for s in rejected if s not in picked]
    data["shrinks"] = []
    for s in picked[:args.shrink]:
        data["shrinks"].append(shrink(enc, s))
        if time.time() > deadline:
            break
    save()
    data["scans"] = stage_scan(enc, deadline + 30, args.families)
    save()
    print(report(data))
    print(f"\n{enc.calls} encodes in {time.time() - t0:.1f} s -> {args.out}")
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    with open(args.json) as f:
        print(report(json.load(f)))
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--encoder", default="driver", help="driver (GPU) or mock:<rule> with rule in "
                   f"{sorted(MOCK_RULES)}")
    r.add_argument("--n", type=int, default=300, help="random specs per seed (the fuzz test draws 300)")
    r.add_argument("--seeds", type=int, default=len(EXTRA_SEEDS), help="extra fixed seeds besides the failing one")
    r.add_argument("--shrink", type=int, default=10, help="rejected specs to shrink")
    r.add_argument("--budget-s", type=float, default=60.0, help="soft time limit for random + shrink (scans: +30 s)")
    r.add_argument("--families", type=int, default=0, help="scan only this many families, spread out (0 = all)")
    a = sub.add_parser("analyze")
    a.add_argument("json")
    args = p.parse_args(argv)
    return {"run": cmd_run, "analyze": cmd_analyze}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
