"""CUTLASS's own Blackwell examples, built from the installed nvidia-cutlass wheel and run on a ptxlab device.

    import ptxlab, ptxlab.cutlass as pc
    dev = ptxlab.open_device("emu")
    res = pc.run("tutorial_02", dev, m=128, n=256, k=64)      # or: python lab.py cutlass tutorial_02 --m 128 ...
    assert res.exact                                           # D == the example's host reference, bit for bit
    res.d, res.reference, res.stats, res.launch

How (ptx_docs/cutlass_examples.md): the example file is #included unchanged by a small wrapper
(ptxlab/cutlass/wrappers/); NVRTC builds it with host-only headers stubbed and the header sections NVRTC cannot
take generated at build time (build.py); the example's *own host function* then runs on the emulator, building
every kernel parameter with CUTLASS/CuTe (TMA encode inputs included) and its launch is captured (capture.py);
the kernel runs on ``dev`` with the captured geometry and parameters, its tensor maps made by ``dev.tensor_map``
from CuTe's encode inputs; the result is compared with a numpy transcription of the example's host reference.

Examples: see :data:`EXAMPLES` (``examples()``). Multi-CTA-cluster examples need the emulator's cluster support.
"""
from __future__ import annotations

from .runners import EXAMPLES, ExampleResult, examples, run

__all__ = ["EXAMPLES", "ExampleResult", "examples", "run"]
