"""Known-answer probe kernels (CUDA C++ with inline PTX) for the tcgen05 emulator tests."""
