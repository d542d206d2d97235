// TMA fidelity probes (compiled with NVRTC for sm_90a by run_tma_fidelity.py; runs on the cuda and emu backends).
//
// tma_load : poison the 1024-aligned shared window, mbarrier.init(1), arrive.expect_tx(expect), one
//            cp.async.bulk.tensor.<rank>d load to window+dst_off, bounded test_wait.parity(0) loop, then copy the whole
//            window [base, base+region) to out.
//            tx_mode 1 (tx probe, conclusive): mbarrier.expect_tx(expect) WITHOUT arriving, issue the load, sleep ~100 us
//            so it lands, THEN arrive. While the arrival is pending the phase cannot complete, so intermediate tx==0
//            crossings cannot complete it; at the arrival tx-count = expect - (bytes the hardware counted), and the
//            phase completes iff they are equal. (tx_mode 0: arrive.expect_tx first, as real kernels do.)
//            info[0] = 1 if the phase completed, info[1] = polls, info[2]/info[3] = raw mbarrier word before/after
//            the wait (only when read_raw != 0), info[4] = window base (shared address), info[5] = dst address.
// tma_store: fill the window from `in`, fence.proxy.async, one cp.async.bulk.tensor.<rank>d store from window+src_off,
//            commit_group, wait_group 0.
// PTX ISA: 9.7.9.25.5.2 (cp.async.bulk.tensor), 9.7.13.15 (mbarrier), 9.7.13.4 (fence.proxy.async, fence.mbarrier_init).

struct __align__(64) TmapT { unsigned long long v[16]; };

extern __shared__ __align__(1024) unsigned char dyn_smem[];

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 64-bit index via mul.wide (avoids cvt, so the kernel needs only the instructions under test)
__device__ __forceinline__ unsigned long long W(unsigned x) {
    unsigned long long r;
    asm("mul.wide.u32 %0, %1, 1;" : "=l"(r) : "r"(x));
    return r;
}

__device__ __forceinline__ unsigned window_base() { return (smem_u32(dyn_smem) + 1023u) & ~1023u; }

__device__ __forceinline__ unsigned char* window_ptr() { return dyn_smem + (window_base() - smem_u32(dyn_smem)); }

__device__ __forceinline__ unsigned long long raw_bar(unsigned bar) {
    unsigned long long v;
    asm volatile("ld.shared.b64 %0, [%1];" : "=l"(v) : "r"(bar) : "memory");
    return v;
}

__device__ __forceinline__ void issue_load(int rank, unsigned dst, unsigned long long tm, unsigned bar,
                                           int c0, int c1, int c2, int c3, int c4) {
    switch (rank) {
    case 1:
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3}], [%2];" :: "r"(dst), "l"(tm), "r"(bar), "r"(c0) : "memory");
        break;
    case 2:
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4}], [%2];" :: "r"(dst), "l"(tm), "r"(bar), "r"(c0), "r"(c1) : "memory");
        break;
    case 3:
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4, %5}], [%2];"
                     :: "r"(dst), "l"(tm), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
        break;
    case 4:
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4, %5, %6}], [%2];"
                     :: "r"(dst), "l"(tm), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
        break;
    default:
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
                     :: "r"(dst), "l"(tm), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory");
        break;
    }
}

__device__ __forceinline__ void issue_store(int rank, unsigned src, unsigned long long tm,
                                            int c0, int c1, int c2, int c3, int c4) {
    switch (rank) {
    case 1:
        asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];"
                     :: "l"(tm), "r"(src), "r"(c0) : "memory");
        break;
    case 2:
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
                     :: "l"(tm), "r"(src), "r"(c0), "r"(c1) : "memory");
        break;
    case 3:
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                     :: "l"(tm), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
        break;
    case 4:
        asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                     :: "l"(tm), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
        break;
    default:
        asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
                     :: "l"(tm), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory");
        break;
    }
}

extern "C" __global__ void tma_load(const __grid_constant__ TmapT tmap, unsigned char* out, unsigned long long* info,
                                    int rank, int c0, int c1, int c2, int c3, int c4, unsigned dst_off,
                                    unsigned region, unsigned expect, unsigned read_raw, unsigned max_polls,
                                    unsigned tx_mode) {
    __shared__ __align__(8) unsigned long long bar_storage, bar2_storage;
    __shared__ __align__(16) unsigned char scratch[16];
    const unsigned bar = smem_u32(&bar_storage), bar2 = smem_u32(&bar2_storage);
    unsigned char* win = window_ptr();
    for (unsigned i = threadIdx.x; i < region; i += blockDim.x) win[i] = 0xA5;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        const unsigned dst = window_base() + dst_off;
        info[4] = window_base();
        info[5] = dst;
        if (tx_mode) {
            asm volatile("mbarrier.expect_tx.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(expect) : "memory");
        } else {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(expect) : "memory");
        }
        issue_load(rank, dst, reinterpret_cast<unsigned long long>(&tmap), bar, c0, c1, c2, c3, c4);
        if (tx_mode) {
            // Let the load land before the only arrival. Hardware: ~100 us of sleep. Emulator (async ops complete in
            // issue order once no thread can run): a 16-B bulk copy issued after the load, on a second barrier, waited.
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar2) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(bar2) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                         :: "r"(smem_u32(scratch)), "l"(out), "r"(bar2) : "memory");
            unsigned d2 = 0;
            for (unsigned k = 0; k < max_polls && !d2; ++k)
                asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                             "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(d2) : "r"(bar2) : "memory");
            for (int k = 0; k < 100; ++k) __nanosleep(1000);
            info[6] = d2;
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
        }
        if (read_raw) info[2] = raw_bar(bar);
        unsigned done = 0, polls = 0;
        while (polls < max_polls) {
            asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                         "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(bar) : "memory");
            ++polls;
            if (done) break;
            __nanosleep(100);
        }
        info[0] = done;
        info[1] = polls;
        if (read_raw) info[3] = raw_bar(bar);
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < region; i += blockDim.x) out[W(i)] = win[i];
}

extern "C" __global__ void tma_store(const __grid_constant__ TmapT tmap, const unsigned char* in,
                                     int rank, int c0, int c1, int c2, int c3, int c4, unsigned src_off,
                                     unsigned region) {
    unsigned char* win = window_ptr();
    for (unsigned i = threadIdx.x; i < region; i += blockDim.x) win[i] = in[W(i)];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        issue_store(rank, window_base() + src_off, reinterpret_cast<unsigned long long>(&tmap), c0, c1, c2, c3, c4);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    __syncthreads();
}
