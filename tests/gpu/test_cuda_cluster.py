"""CUDA backend cluster launches on a real GPU (compute capability >= 9.0): cuLaunchKernelEx with the cluster
dimension attribute, the non-portable opt-in, compile-time cluster shapes, and the launch rules shared with the
emulator (ptxlab/device/cluster.py) refusing the same launches with the same messages."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import LaunchError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import corpus  # noqa: E402
from corpus import kernels_cluster  # noqa: E402

FIXED = r"""
extern "C" __global__ void __cluster_dims__(2, 1, 1) fixed(unsigned* out) {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  out[blockIdx.x] = r;
}
"""


def _entry(name):
    return next(e for e in kernels_cluster.ENTRIES if e.name == name)


@pytest.mark.parametrize("name", ["dsmem_ring", "shared_address_encoding", "cluster_nonportable16"])
def test_cluster_entry_on_gpu(cuda_dev, rng, name):
    e = _entry(name)
    ins = e.make_inputs(rng)
    outs = e.run(cuda_dev, corpus.compile_entry(e), ins)
    probs = corpus.check_against_expected(e, ins, outs, e.expected(ins))
    assert not probs, "\n".join(probs)


def test_cluster_launch_rules_on_gpu(cuda_dev):
    mod = corpus.compile_entry(_entry("cluster_sregs"))
    out = cuda_dev.empty(64 * 16 * 4 * 16)
    with pytest.raises(LaunchError, match=r"not divisible by the cluster shape \(2, 1, 1\)"):
        cuda_dev.launch(mod, "cl_sregs", grid=3, block=32, args=[out], cluster=2)
    with pytest.raises(LaunchError, match="portable maximum of 8; pass non_portable_cluster=True"):
        cuda_dev.launch(mod, "cl_sregs", grid=12, block=32, args=[out], cluster=12)


def test_compile_time_cluster_shape_on_gpu(cuda_dev):
    mod = ptxlab.compile(FIXED, arch="sm_90a", name="fixed.cu")
    out = cuda_dev.empty(8 * 4)
    cuda_dev.memset(out, 0xFF)
    cuda_dev.launch(mod, "fixed", grid=8, block=32, args=[out])
    np.testing.assert_array_equal(cuda_dev.to_host(out, np.uint32), np.arange(8) % 2)
    with pytest.raises(LaunchError, match="differs from the kernel's .reqnctapercluster"):
        cuda_dev.launch(mod, "fixed", grid=8, block=32, args=[out], cluster=4)
