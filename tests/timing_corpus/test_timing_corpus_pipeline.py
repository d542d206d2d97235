"""The corpus pipeline end to end on a small kernel written here (CI has no copy of the public sources): a pinned
source in a temporary cache, extraction of its device code, NVRTC build, an explicit template instantiation, the
timing-model prediction with its sample-aware check, and a full emulation that must write every element."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import harness, manifest, predict, sources  # noqa: E402

PROGRAM = r'''#include <cstdio>
template <int BS>
__global__ void block_sum(const float *x, float *out) {
    __shared__ float s[BS];
    s[threadIdx.x] = x[blockIdx.x * BS + threadIdx.x];
    __syncthreads();
    for (int k = BS / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
int main() { block_sum<256><<<1, 256>>>(nullptr, nullptr); printf("host code\n"); return 0; }
'''


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    data = PROGRAM.encode()
    src = sources.Source("test", "example/tiny", "0" * 40, "test", {"sum.cu": sources.digest(data)})
    p = sources.cached_path(tmp_path, src, "sum.cu")
    p.parent.mkdir(parents=True)
    p.write_bytes(data)
    monkeypatch.setitem(sources.SOURCES, "test", src)
    n = 1 << 16
    k = manifest.Kernel("test/block_sum", "test", "test", ("sum.cu",), "block_sum",
                        ("block_sums", (("n", n), ("per_block", 256))), (n // 256, 1, 1), (256, 1, 1),
                        ("ptr:x", "ptr:out"), "val", targs="256")
    monkeypatch.setitem(manifest.BY_NAME, k.name, k)
    return k, tmp_path


def test_source_is_device_code_plus_instantiation(tiny) -> None:
    k, root = tiny
    unit = harness.source(k, root)
    assert "int main" not in unit and "#include" not in unit
    assert unit.rstrip().endswith("template __global__ void block_sum<256>(const float *x, float *out);")


def test_predict_one_end_to_end(tiny) -> None:
    k, root = tiny
    row = predict.predict_one(k.name, ("h100",), root)
    assert "error" not in row and "errors" not in row, row
    p = row["predicted"]["h100"]
    assert p["us"] > 0 and p["ctas"] == 256 and p["check_ok"]
    assert row["check"]["ok"] and 1 <= row["check"]["written"] < 256       # a timing-only sample: some CTAs ran


def test_full_emulation_writes_everything(tiny) -> None:
    import ptxlab
    k, root = tiny
    b = harness.build(k, root)
    s = harness.Setup.create(b, ptxlab.open_device("emu"), seed=5)
    s.launch()
    r = s.check(full=True)
    assert r["ok"] and r["written"] == 256, r
    # the check can fail: a wrong output is reported
    dev = s.dev
    got = s.outputs()["out"]
    got[3] += 1.0
    dev.write(s.bufs["out"], got)
    assert not s.check(full=True)["ok"]


def test_missing_or_changed_source_is_named(tiny, tmp_path) -> None:
    k, root = tiny
    with pytest.raises(sources.SourceMissing, match="fetch.py"):
        harness.source(k, tmp_path / "empty")
    p = sources.cached_path(root, sources.SOURCES["test"], "sum.cu")
    p.write_text(PROGRAM.replace("256", "128"))
    with pytest.raises(sources.SourceMissing, match="does not match"):
        harness.source(k, root)


def test_prebuilt_bundle_round_trip(tiny, tmp_path) -> None:
    import ptxlab
    from timing_corpus import bundle
    k, root = tiny
    p = bundle.prebuild([k], tmp_path / "pack", root)
    data = bundle.load_all(p.parent)
    b = bundle.built(k, data, root)
    ref = harness.build(k, root)
    assert b is not None and b.name == ref.name and b.module.cubin == ref.module.cubin
    s = harness.Setup.create(b, ptxlab.open_device("emu"), seed=9)      # the bundled PTX runs
    s.launch()
    assert s.check(full=True)["ok"]
    data["kernels"][k.name]["source_sha"] = "0" * 16                     # stale: compiled again instead
    assert bundle.built(k, data, root) is None


def test_rotation_sets() -> None:
    from timing_corpus import measure
    l2 = measure.L2_BYTES
    assert measure.rotation_sets(12 << 20) == -(-4 * l2 // (12 << 20))    # SGEMM 1024^3: 17 sets of 12 MiB
    assert measure.rotation_sets(400 << 20) == 2                          # big streams: 2 sets, each > 4 x L2
    assert measure.rotation_sets(1024) == 64                              # tiny: capped
    assert measure.rotation_sets(4 << 30) == 2


def test_measure_checks_untimed_kernel_on_any_device(tiny, tmp_path) -> None:
    """measure.py's build + full check path (the GPU adds only the timed launches), here on a full emulation."""
    import ptxlab
    from timing_corpus import bundle, measure
    k, root = tiny
    bundle.prebuild([k], tmp_path / "pack", root)
    row = measure.measure_one(k, ptxlab.open_device("emu"), None, None, False, 10, 0, root,
                              bundle.load_all(tmp_path / "pack"))
    assert row["check"]["ok"] and row["check"]["written"] == 256 and row["build"].startswith("prebuilt")
    assert "median_us" not in row


class _FakeEvent:
    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        import time
        self.t = time.perf_counter()

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


class _FakeCuda:
    Event = _FakeEvent

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def _sleep(cycles):
        pass

    @staticmethod
    def current_stream():
        class S:
            cuda_stream = 0
        return S()


class _FakeTorch:
    cuda = _FakeCuda


def test_measure_timed_path_packs_every_rotation_set(tiny, tmp_path, monkeypatch) -> None:
    """measure.py's timed path without a GPU: the driver calls are recorded (parameter bytes read back through the
    pointer array), the events are host clocks; every input set must be launched with its own buffers."""
    import ctypes

    import ptxlab
    from cuda.bindings import driver as drv
    from timing_corpus import measure
    import bench_gemv_h100 as B
    k, root = tiny
    launches = []

    def fake_launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        x, out = (ctypes.c_uint64.from_address(ptrs[i]).value for i in range(2))
        launches.append(((gx, gy, gz), (bx, by, bz), x, out))
        return (drv.CUresult.CUDA_SUCCESS,)
    monkeypatch.setattr(drv, "cuLaunchKernel", fake_launch)
    monkeypatch.setattr(drv, "cuModuleGetFunction", lambda mod, name: (drv.CUresult.CUDA_SUCCESS, name))
    monkeypatch.setattr(measure, "_module", lambda built: "module")
    monkeypatch.setattr(measure, "L2_BYTES", 1 << 20)          # 4 x "L2" / 257 KiB per set -> 16 sets
    dev = ptxlab.open_device("emu")
    row = measure.measure_one(k, dev, _FakeTorch, B, True, 40, 0, root)
    assert row["check"]["ok"] and row["check_after"] and row["n"] == 40
    assert row["input_sets"] == measure.rotation_sets(row["bytes_per_set"]) == 16
    assert all(g == k.grid and b == k.block for g, b, _, _ in launches)
    pairs = {(x, o) for _, _, x, o in launches}
    assert len(pairs) == 16 and len({x for x, _ in pairs}) == 16 and len({o for _, o in pairs}) == 16
    assert row["median_us"] > 0 and row["p10_us"] <= row["median_us"] <= row["p90_us"]


def test_counters_report_shared_wavefronts(tiny) -> None:
    """counters.py's shared-memory wavefronts (set beside ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared): block_sum
    does 45 conflict-free warp accesses of shared memory per CTA (8 STS; then 2 LDS + 1 STS per active warp at each
    of the 8 tree levels: 4, 2, 1, 1, 1, 1, 1, 1 warps; one LDS of s[0]), one 128-B wavefront each.  The model
    extrapolates the busiest SM (2 of the 256 CTAs) to the 132 busy SMs, so the GPU-wide count is 45 x 2 x 132."""
    from timing_corpus import counters
    k, root = tiny
    row = counters.counters(k, "h100", root)
    assert row["smem_wavefronts"] == 45 * 2 * 132, row["smem_wavefronts"]
    assert row["tensor_flops"] == 0
