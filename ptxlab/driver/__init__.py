"""The emulator behind the CUDA driver API (issue 23; ptx_docs/cute_dsl.md).

``install()`` loads a stand-in ``libcuda.so.1`` whose entry points forward to Python handlers (``api_*.py``) that
serve them on ``open_device("emu")``: cuda-python scripts and the CuTe DSL then run unmodified on the emulator.
``python lab.py exec script.py`` does this before running a script; ``uninstall()`` undoes it.
"""
from ptxlab.driver.dlpack import EmuTensor, empty, tensor
from ptxlab.driver.install import install, installed, state, uninstall

__all__ = ["install", "uninstall", "installed", "state", "tensor", "empty", "EmuTensor"]
