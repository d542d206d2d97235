"""ptxlab: staged raw-PTX bring-up lab for Blackwell NVFP4 kernels, with a CPU PTX emulator."""
