"""Proof of ptxlab.desc against CUTLASS/CuTe: tests/cutlass_oracle/desc_oracle.cpp encodes descriptors with
CUTLASS's own unions/helpers (make_umma_desc, make_instr_desc, make_runtime_instr_desc_block_scaled) and prints
CuTe's swizzled byte address of every (row, k) byte of each MMA operand K-slice. The Python encoders must give
identical bits and `smem_operand_addresses` the same address for every byte.

Build: g++ -std=c++17, host only, against nvidia-cutlass's headers plus CUDA headers (cuda_runtime_api.h, crt/,
cccl's cuda/std) from $PTXLAB_CUDA_INCLUDE, the pip wheels (nvidia-cuda-runtime, nvidia-cuda-crt,
nvidia-cuda-cccl -> site-packages/nvidia/cu13/include) or /usr/local/cuda. The binary is cached in
.ptxlab_cache/desc_oracle/<hash of source, flags, include dirs, compiler>. Skips only if no C++ compiler exists.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

from ptxlab.desc import (
    DescError,
    InstrDesc,
    SmemDesc,
    decode_idesc,
    smem_operand_addresses,
    tile_desc_fields,
)

REPO = Path(__file__).resolve().parents[2]
SRC = Path(__file__).resolve().parents[1] / "cutlass_oracle" / "desc_oracle.cpp"
CXX_FLAGS = ["-std=c++17", "-O0", "-w"]


def _cutlass_include() -> Path:
    import cutlass_library  # nvidia-cutlass wheel

    inc = Path(cutlass_library.__file__).resolve().parent / "source" / "include"
    if not (inc / "cute" / "arch" / "mma_sm100_desc.hpp").exists():
        pytest.fail(f"CUTLASS headers not found under {inc}; reinstall nvidia-cutlass (pyproject dependency)")
    return inc


def _cuda_includes() -> Optional[list[Path]]:
    """[cuda include, cccl include] holding cuda_runtime_api.h, crt/host_defines.h and cuda/std/utility."""
    roots: list[Path] = []
    if os.environ.get("PTXLAB_CUDA_INCLUDE"):
        roots.append(Path(os.environ["PTXLAB_CUDA_INCLUDE"]))
    for sp in sys.path:
        roots += [Path(sp) / "nvidia" / "cu13" / "include", Path(sp) / "nvidia" / "cuda_runtime" / "include"]
    roots.append(Path("/usr/local/cuda/include"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(Path(nvcc).resolve().parents[1] / "include")
    for r in roots:
        if not ((r / "cuda_runtime_api.h").exists() and (r / "crt" / "host_defines.h").exists()):
            continue
        for cccl in (r / "cccl", r.parents[1] / "cuda_cccl" / "include", r):
            if (cccl / "cuda" / "std" / "utility").exists():
                return [r, cccl] if cccl != r else [r]
    return None


PARTS = (1, 2, 3)  # ORACLE_PART values: K-major SMEM, MN-major SMEM, instruction descriptors


def _build_oracle() -> list[Path]:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        pytest.fail("no C++ compiler (g++/c++) on this machine: cannot build the CUTLASS oracle; install g++ "
                    "(e.g. apt-get install g++) or set CXX")
    cuda = _cuda_includes()
    if cuda is None:
        pytest.fail(
            "CUDA headers for the host build of CuTe not found (need cuda_runtime_api.h, crt/host_defines.h, "
            "cuda/std/utility). CuTe's headers include <cuda_runtime_api.h> and <cuda/std/...> even on the host. "
            "Fix: pip install nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl (they land in "
            "site-packages/nvidia/cu13/include), or set PTXLAB_CUDA_INCLUDE=<dir with cuda_runtime_api.h>"
        )
    incs = [_cutlass_include(), *cuda]
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(
        SRC.read_bytes() + repr((cxx, version, CXX_FLAGS, [str(i) for i in incs])).encode()
    ).hexdigest()[:16]
    out_dir = REPO / ".ptxlab_cache" / "desc_oracle" / key
    exes = [out_dir / f"desc_oracle_{p}" for p in PARTS]
    if all(e.exists() for e in exes):
        return exes
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for p, exe in zip(PARTS, exes):  # compile the parts in parallel
        tmp = out_dir / f"{exe.name}.{os.getpid()}.tmp"
        cmd = [cxx, *CXX_FLAGS, f"-DORACLE_PART={p}", *[f"-I{i}" for i in incs], str(SRC), "-o", str(tmp)]
        jobs.append((cmd, tmp, exe, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for cmd, tmp, exe, proc in jobs:
        _, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            pytest.fail(f"CUTLASS oracle failed to compile on the host:\n{' '.join(cmd)}\n{err[-6000:]}")
        os.replace(tmp, exe)
    return exes


@pytest.fixture(scope="module")
def oracle() -> dict[str, list[list[str]]]:
    recs: dict[str, list[list[str]]] = {"SMEM": [], "IDESC": []}
    for exe in _build_oracle():
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        for line in r.stdout.splitlines():
            tok = line.split()
            assert tok and tok[0] in recs, f"unexpected oracle output line: {line[:200]}"
            recs[tok[0]].append(tok[1:])
    return recs


def _smem_record(t: list[str]) -> tuple[dict, int, np.ndarray]:
    tname, major, sw, bits, mn, k, order, kb, base, desc, d0, d1 = t[:12]
    cfg = dict(tname=tname, major=major, swizzle=sw, elem_bits=int(bits), mn=int(mn), k=int(k), order=order,
               kblock=int(kb), base=int(base))
    addrs = np.fromiter((int(x, 16) for x in t[12:]), dtype=np.int64).reshape(int(d0), int(d1))
    return cfg, int(desc, 16), addrs


def _fields(cfg: dict) -> dict:
    return tile_desc_fields(cfg["base"], cfg["major"], cfg["swizzle"], cfg["elem_bits"], cfg["mn"], cfg["k"],
                            cfg["kblock"], cfg["order"])


def test_smem_descriptors_and_addresses_match_cutlass(oracle: dict) -> None:
    seen: Counter = Counter()
    for t in oracle["SMEM"]:
        cfg, cut_desc, cut_addr = _smem_record(t)
        tag = f"{cfg} cutlass={cut_desc:#018x}"
        assert SmemDesc.validate(cut_desc, major=cfg["major"]) == [], tag
        mine = SmemDesc.encode(**_fields(cfg))
        assert mine == cut_desc, f"{tag} python={mine:#018x}\n{SmemDesc.pretty(mine)}\n{SmemDesc.pretty(cut_desc)}"
        got = smem_operand_addresses(cut_desc, cut_addr.shape[0], cut_addr.shape[1], cfg["major"])
        bad = np.argwhere(got != cut_addr)
        assert bad.size == 0, f"{tag}: {len(bad)} bytes differ, first (i,j)={tuple(bad[0])}: " \
                              f"python {got[tuple(bad[0])]:#x} vs CuTe {cut_addr[tuple(bad[0])]:#x}"
        seen[(cfg["tname"], cfg["major"], cfg["swizzle"])] += 1
    # the sweep covers every type x major x swizzle it claims
    for tn in ("e2m1", "e4m3", "f16", "tf32"):
        for sw in ("NONE", "32B", "64B", "128B"):
            assert seen[(tn, "K", sw)] >= 2, (tn, sw)
            if tn != "e2m1":
                assert seen[(tn, "MN", sw)] >= 2, (tn, sw)
        if tn != "e2m1":
            assert seen[(tn, "MN", "128B_BASE32B")] >= 2, tn
    assert sum(seen.values()) >= 150


def test_idesc_match_cutlass(oracle: dict) -> None:
    kinds: Counter = Counter()
    for t in oracle["IDESC"]:
        kind, a, b, d, scale, m, n, amaj, bmaj, nega, negb, sfa, sfb, word = t
        m, n, word_i = int(m), int(n), int(word, 16)
        cta = 2 if m == 256 else 1
        kw: dict = dict(a_fmt=a, b_fmt=b, a_major=amaj, b_major=bmaj, negate_a=int(nega), negate_b=int(negb),
                        cta_group=cta)
        if scale == "-":
            kw["d_fmt"] = d
        else:
            kw.update(scale_fmt=scale, sfa_id=int(sfa), sfb_id=int(sfb))
        mine = InstrDesc.encode(kind, m, n, **kw)
        assert mine == word_i, f"{t}: python {mine:#010x} vs CUTLASS {word_i:#010x}\n{InstrDesc.pretty(kind, mine)}"
        info = decode_idesc(kind, word_i, cta_group=cta)
        assert (info.m, info.n, info.a_fmt, info.b_fmt, info.a_major, info.b_major) == (m, n, a, b, amaj, bmaj), t
        assert (info.negate_a, info.negate_b, info.sfa_id, info.sfb_id) == (int(nega), int(negb), int(sfa), int(sfb))
        kinds[kind] += 1
    assert set(kinds) == {"f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4"}, kinds


def test_comparison_detects_mismatches(oracle: dict) -> None:
    """A deliberately wrong field or address model is caught by the same comparisons."""
    swizzled = [r for r in map(_smem_record, oracle["SMEM"]) if r[0]["swizzle"] == "128B" and r[0]["major"] == "K"
                and r[0]["mn"] == 128]
    cfg, cut_desc, cut_addr = swizzled[1]
    f = _fields(cfg)
    assert SmemDesc.encode(**f) == cut_desc
    wrong_sbo = SmemDesc.encode(**{**f, "sbo": f["sbo"] + 16})
    assert wrong_sbo != cut_desc
    assert (smem_operand_addresses(wrong_sbo, *cut_addr.shape) != cut_addr).any()
    wrong_sw = SmemDesc.encode(**{**f, "swizzle": "64B"})
    assert wrong_sw != cut_desc
    with pytest.raises(DescError):  # a 64B atom row holds only 64 bytes of K
        smem_operand_addresses(wrong_sw, cut_addr.shape[0], 128)
    assert (smem_operand_addresses(wrong_sw, *cut_addr.shape) != cut_addr).any()
    no_swizzle = SmemDesc.encode(**{**f, "swizzle": "NONE", "lbo": 16})
    assert (smem_operand_addresses(no_swizzle, *cut_addr.shape) != cut_addr).any()
    # idesc: N off by one step, and E2M1 with the f8f6f4 code under mxf4nvf4
    t = next(r for r in oracle["IDESC"] if r[0] == "mxf4nvf4")
    word = int(t[-1], 16)
    assert InstrDesc.encode("mxf4nvf4", int(t[5]), int(t[6]) + 8) != word
    assert InstrDesc.encode("mxf4nvf4", int(t[5]), int(t[6]), check=False, a_fmt=5) != word
