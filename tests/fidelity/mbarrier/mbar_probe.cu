// mbarrier fidelity probe (compiled with NVRTC for sm_90a by run_mbar_fidelity.py; runs on the cuda and emu backends).
//
// mbar_probe: thread 0 interprets a small program of mbarrier steps on ONE barrier (prog[2*i] = op, prog[2*i+1] =
// argument, nsteps of them), then lanes 0 and 1 observe the barrier ONCE with a non-blocking
// mbarrier.test_wait.parity (lane 0: parity 0, lane 1: parity 1) and write the results. One launch observes one
// prefix of a sequence; the host launches every prefix, so the state after each step is seen without any wait.
//
// Why one observation per launch: the emulator parks a thread whose test_wait returns false until the barrier
// changes (it assumes a spin loop). Here the lane that saw `true` invalidates the barrier after storing, which wakes
// the other lane in the emulator; on hardware both lanes tested in the same instruction, so the inval comes after
// both observations and changes nothing that is recorded.
//
// Ops (PTX ISA 9.7.13.15; all .shared::cta, thread 0 only):
//   1 INIT n           mbarrier.init [bar], n ; fence.mbarrier_init.release.cluster
//   2 EXPECT n         mbarrier.expect_tx [bar], n                (tx-count += n, no arrival)
//   3 COMPLETE n       mbarrier.complete_tx [bar], n              (tx-count -= n, no arrival)
//   4 ARRIVE n         mbarrier.arrive state, [bar], n            (count n; records pending_count(state))
//   5 ARRIVE_EXPECT n  mbarrier.arrive.expect_tx state, [bar], n  (tx += n, then one arrival; records pending_count)
//   6 BULK n           cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], n, [bar]
//                      (complete_tx(n) from the async proxy, no expect_tx), then waits until it has landed: a 16-B
//                      bulk copy on a helper barrier issued after it, bounded test_wait loop on the helper, ~100 us of
//                      nanosleep (hardware). The emulator completes async copies in issue order once no thread can
//                      run, so the helper's wait lets both land. land bit i of out[2] = the helper wait succeeded.
//   7 ARRIVE_DROP n    mbarrier.arrive_drop state, [bar], n       (records pending_count)
// out (u32): [0] parity-0 test (1 = the phase with parity 0 has completed), [1] parity-1 test, [2] land bits,
//            [3] steps executed, [4 + i] pending_count of the arrive at step i (0xFFFFFFFF for other ops).
// raw (u64, cuda only, read_raw != 0): [0] the barrier's 64-bit shared word before the observation, [1 + i] after
//            step i (the hardware encoding of phase / pending / tx-count, for decoding; meaningless on the emulator).

extern "C" __global__ void mbar_probe(const unsigned* prog, int nsteps, unsigned* out, unsigned long long* raw,
                                      const unsigned char* src, unsigned read_raw, unsigned max_polls) {
    __shared__ __align__(8) unsigned long long bar_storage, helper_storage;
    __shared__ __align__(128) unsigned char dst[512];
    __shared__ __align__(16) unsigned char scratch[16];
    __shared__ unsigned once;
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&bar_storage));
    const unsigned helper = static_cast<unsigned>(__cvta_generic_to_shared(&helper_storage));
    const unsigned tid = threadIdx.x;
    if (tid == 0) {
        once = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(helper) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        unsigned land = 0, hphase = 0;
        int i = 0;
        for (; i < nsteps; ++i) {
            const unsigned op = prog[2 * i], n = prog[2 * i + 1];
            unsigned pc = 0xFFFFFFFFu;
            unsigned long long st = 0;
            if (op == 1) {
                asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory");
                asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
            } else if (op == 2) {
                asm volatile("mbarrier.expect_tx.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory");
            } else if (op == 3) {
                asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory");
            } else if (op == 4) {
                asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(bar), "r"(n) : "memory");
                asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pc) : "l"(st));
            } else if (op == 5) {
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(bar), "r"(n)
                             : "memory");
                asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pc) : "l"(st));
            } else if (op == 6) {
                const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             :: "r"(d), "l"(src), "r"(n), "r"(bar) : "memory");
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(helper) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                             :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(scratch))), "l"(src + 496),
                                "r"(helper) : "memory");
                unsigned ok = 0;
                for (unsigned k = 0; k < max_polls && !ok; ++k)
                    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(ok) : "r"(helper), "r"(hphase) : "memory");
                hphase ^= 1;
                for (int k = 0; k < 100; ++k) __nanosleep(1000);
                land |= ok << i;
            } else if (op == 7) {
                asm volatile("mbarrier.arrive_drop.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(bar), "r"(n)
                             : "memory");
                asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pc) : "l"(st));
            }
            out[4 + i] = pc;
            if (read_raw) {
                unsigned long long v;
                asm volatile("ld.shared.b64 %0, [%1];" : "=l"(v) : "r"(bar) : "memory");
                raw[1 + i] = v;
            }
        }
        out[2] = land;
        out[3] = i;
        if (read_raw) {
            unsigned long long v;
            asm volatile("ld.shared.b64 %0, [%1];" : "=l"(v) : "r"(bar) : "memory");
            raw[0] = v;
        }
    }
    __syncwarp();
    if (tid < 2) {
        unsigned r;
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(r) : "r"(bar), "r"(tid) : "memory");
        out[tid] = r;
        if (r && atomicAdd(&once, 1u) == 0)
            asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
    }
}
