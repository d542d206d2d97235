"""A CTA that exits while an asynchronous copy into its own shared memory is in flight (ptxlab/emu/checks/exitcheck.py)."""
import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// TMA-engine bulk copy global -> shared, completion on an mbarrier; `wait` = 0 exits without waiting for it
extern "C" __global__ void bulk_exit(const unsigned char* src, unsigned* out, unsigned n, unsigned wait) {
    __shared__ __align__(128) unsigned char buf[4096];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(n) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(sa(buf)), "l"(src), "r"(n), "r"(b) : "memory");
    }
    __syncthreads();
    if (wait) {
        asm volatile("{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t@!p bra WAIT_%=;\n\t}"
                     :: "r"(b) : "memory");
        unsigned s = 0;
        for (unsigned i = threadIdx.x; i < n; i += blockDim.x) s += buf[i];
        atomicAdd(out, s);
    }
}

// per-thread cp.async (LDGSTS) into shared memory, exiting without cp.async.wait_all when `wait` = 0
extern "C" __global__ void cpasync_exit(const unsigned* src, unsigned* out, unsigned wait) {
    __shared__ __align__(16) unsigned buf[128];
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(sa(&buf[threadIdx.x])), "l"(src + threadIdx.x)
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (wait) {
        asm volatile("cp.async.wait_all;" ::: "memory");
        out[threadIdx.x] = buf[threadIdx.x] + 1u;
    }
}
'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="exitcheck.cu")


def test_bulk_copy_in_flight_at_exit_is_reported(mod, rng):
    dev = ptxlab.open_device("emu")
    n = 16 * int(rng.integers(1, 200))
    data = rng.integers(0, 256, n, dtype=np.uint8)
    x, out = dev.to_device(data), dev.empty(4)
    dev.memset(out, 0)
    dev.launch(mod, "bulk_exit", grid=(2, 1, 1), block=(64, 1, 1), args=[x, out, np.uint32(n), np.uint32(1)])
    assert int(dev.to_host(out, np.uint32)[0]) == 2 * int(data.astype(np.uint64).sum())
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "bulk_exit", grid=(2, 1, 1), block=(64, 1, 1), args=[x, out, np.uint32(n), np.uint32(0)])
    msg = str(ei.value)
    assert "block (0, 0, 0) exited while an asynchronous copy into its shared memory was still in flight" in msg
    assert f"cp.async.bulk global->shared {n} bytes" in msg and "5.1.7" in msg and "thread : (0, 0, 0)" in msg
    assert "exitcheck.cu:" in msg


def test_cp_async_in_flight_at_exit_is_reported(mod, rng):
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 2**31, 128, dtype=np.uint32)
    x, out = dev.to_device(xs), dev.empty(4 * 128)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cpasync_exit", grid=(1, 1, 1), block=(128, 1, 1), args=[x, out, np.uint32(1)])
    assert (dev.to_host(out, np.uint32) == xs + np.uint32(1)).all()
    with pytest.raises(EmuError, match="exited while an asynchronous copy into its shared memory"):
        dev.launch(mod, "cpasync_exit", grid=(1, 1, 1), block=(128, 1, 1), args=[x, out, np.uint32(0)])


def test_switch_off(mod, rng, monkeypatch):
    from ptxlab.emu.checks import exitcheck
    monkeypatch.setattr(exitcheck, "ENABLED", False)
    dev = ptxlab.open_device("emu")
    x, out = dev.to_device(rng.integers(0, 256, 64, dtype=np.uint8)), dev.empty(4)
    dev.launch(mod, "bulk_exit", grid=(1, 1, 1), block=(32, 1, 1), args=[x, out, np.uint32(64), np.uint32(0)])
