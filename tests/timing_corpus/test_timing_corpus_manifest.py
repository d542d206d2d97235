"""The corpus manifest is consistent and its calibration / validation split is frozen (issue 21): >= 40 kernels from
>= 5 public projects not written here, both parts in every series, ~40 % calibration, no reserved source, every
kernel's files pinned and its arguments naming its problem's arrays and scalars."""
from __future__ import annotations

import hashlib
import sys
from collections import Counter

import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import manifest, problems, sources  # noqa: E402

# sha256 of the sorted "name=split" lines, first 16 hex digits: changing any kernel's part (or adding, removing or
# renaming a kernel) fails here.  The split was fixed before any measurement; see manifest.py's docstring.
SPLIT_SHA = "3ad9e32555088cf0"
RESERVED = ("siboehm/SGEMM_CUDA", "pranjalssh/fast.cu")


def test_split_is_frozen() -> None:
    text = "\n".join(sorted(f"{k.name}={k.split}" for k in manifest.ROUND1))
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == SPLIT_SHA
    assert set(manifest.SPLIT) == {k.name for k in manifest.ROUND1}
    assert manifest.KERNELS == manifest.ROUND1 + manifest.ROUND2 + manifest.ROUND3


def test_size_projects_and_parts() -> None:
    ks = manifest.ROUND1
    assert len(ks) >= 40
    assert len({k.name for k in ks}) == len(ks)
    assert len({sources.SOURCES[k.source].repo for k in ks}) >= 5
    parts = Counter(k.split for k in ks)
    assert set(parts) == {"cal", "val"}
    assert 0.3 <= parts["cal"] / len(ks) <= 0.5
    for s in {k.series for k in ks}:
        assert {k.split for k in ks if k.series == s} == {"cal", "val"}, s
    assert len(manifest.select("calibration")) == parts["cal"] and len(manifest.select("val")) == parts["val"]
    assert len(manifest.select("all")) == len(ks) + len(manifest.ROUND2) + len(manifest.ROUND3)
    with pytest.raises(ValueError):
        manifest.select("train")


def test_no_reserved_source() -> None:
    for s in sources.SOURCES.values():
        assert s.repo not in RESERVED
        if s.repo == "NVIDIA/cuda-samples":       # its reduction sample is reserved for independent review
            assert not any("reduction" in p.lower() for p in s.files)
        assert len(s.commit) == 40 and all(len(d) == 16 for d in s.files.values())


@pytest.mark.parametrize("k", manifest.KERNELS, ids=lambda k: k.name)
def test_kernel_entry_is_consistent(k) -> None:
    src = sources.SOURCES[k.source]
    assert k.name.startswith(k.series + "/")
    assert all(f in src.files for f in k.files)
    prob = problems.make(k.problem[0], **k.params)        # dataclass only: no arrays allocated
    for spec in k.args:
        kind, name = spec.split(":")
        assert kind in ("ptr", "i32", "u32", "u64", "f32")   # harness._SCALAR
        assert name in (prob.array_names if kind == "ptr" else prob.scalars), spec
    assert set(prob.outputs) <= {a.split(":")[1] for a in k.args if a.startswith("ptr:")}
    assert len(k.grid) == 3 and len(k.block) == 3 and k.block[0] * k.block[1] * k.block[2] <= 1024
