"""extract.py keeps a CUDA file's device code and drops its host code (a synthetic file written here)."""
from __future__ import annotations

import sys

from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import extract  # noqa: E402

TEXT = r'''/* licence { not code } */
#include <cstdio>
#include "helper.h"
#pragma once
#define TILE 32
#define TWICE(x) \
    ((x) + (x))
namespace cg = cooperative_groups;
int host_counter = 3;
const char *name = "kernel { ; }";
const int kRows = 8;
__constant__ float taps[TILE];
template <typename T, int N>
__device__ T twice(T v) { return TWICE(v) + N; }   // braces } in a comment
struct Pair { int a, b; };
struct DevOp { __device__ float operator()(float x) const { return x; } };
template <typename T, int BS>
__global__ void __launch_bounds__(256) scale(T *out, const T *in, int n) {
    __shared__ T buf[BS];
    if (threadIdx.x < n) { buf[threadIdx.x] = in[threadIdx.x]; out[threadIdx.x] = twice<T, 1>(buf[threadIdx.x]); }
}
extern "C" __global__ void plain(float *p) { p[0] = '}'; }
void launch(float *p) { plain<<<1, 1>>>(p); }
template void launch_t<float>(float *p);
int main(int argc, char **argv) { printf("{"); return 0; }
PYBIND11_MODULE(ext, m) { m.def("f", &launch); }
'''


def test_split_round_trips() -> None:
    items = extract.split_top_level(TEXT)
    assert "".join(items) == TEXT
    assert len(items) >= 18


def test_device_code_keeps_device_items_only() -> None:
    dev = extract.device_code(TEXT)
    for kept in ("#define TILE 32", "TWICE(x) \\\n    ((x) + (x))", "namespace cg = cooperative_groups;",
                 "const int kRows = 8;", "__constant__ float taps[TILE];", "__device__ T twice",
                 "struct DevOp", "__global__ void __launch_bounds__(256) scale", 'extern "C" __global__ void plain'):
        assert kept in dev, kept
    for dropped in ("#include", "#pragma once", "host_counter", 'const char *name', "struct Pair", "void launch(",
                    "template void launch_t", "int main", "PYBIND11_MODULE"):
        assert dropped not in dev, dropped


def test_kernel_names_and_instantiation() -> None:
    dev = extract.device_code(TEXT)
    assert extract.kernel_names(dev) == ["scale", "plain"]
    inst = extract.instantiation(dev, "scale", "float, 64", {"T": "float"})
    assert inst == "template __global__ void scale<float, 64>(float *out, const float *in, int n);"
