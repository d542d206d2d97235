"""Does ``mapa`` with a target rank outside the cluster trap on hardware? (fidelity rule ``mapa_rank``,
ptxlab/emu/checks/fidelity.py)

Every lane of a 2-CTA cluster executes ``mapa.shared::cluster.u32 d, a, lane`` (ranks 0..31, 30 of them outside the
cluster) and only lanes 0..1 store their result, as the CuTe DSL 4.8.1 build of NVIDIA's fp16_gemm_3_1 does. On a
GPU (``PYTHONPATH=. python3 tools/probes/mapa_rank_probe.py cuda``) the launch must complete and lanes 0/1 hold
``rank << 24 | offset``; on the emulator (``... emu``) the same, with one mapa_rank warning.
"""
import sys

import numpy as np

import ptxlab

SRC = r"""
extern "C" __global__ void __cluster_dims__(2, 1, 1) mapa_lanes(unsigned* out) {
    __shared__ unsigned buf[32];
    unsigned a = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]), d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(threadIdx.x % 32));
    if (threadIdx.x < 2) out[blockIdx.x * 2 + threadIdx.x] = d;
}
"""


def main(kind: str) -> int:
    dev = ptxlab.open_device(kind)
    mod = ptxlab.compile(SRC, arch="sm_90a")
    out = dev.empty(4 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "mapa_lanes", grid=2, block=32, args=[out])
    got = dev.to_host(out, np.uint32).reshape(2, 2)
    ranks = got >> 24
    print(f"{dev.describe()}: completed; lanes 0/1 of each CTA: {[[hex(int(x)) for x in r] for r in got]}")
    return 0 if (ranks == np.array([[0, 1], [0, 1]])).all() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "emu"))
