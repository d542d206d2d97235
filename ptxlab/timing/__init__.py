"""Timing model: predicted kernel time (B200, H100, H200) with a pipeline timeline, for any kernel the emulator runs.

    dev = ptxlab.open_device("emu", timing="b200")
    dev.launch(...)
    print(dev.last_timing)                      # ptxlab.timing.predict.Timing
    ptxlab.timing.report.print_table(dev.last_timing)
    ptxlab.timing.trace_export.write_chrome_trace(dev.last_timing, "out.json")   # Perfetto / chrome://tracing
    ptxlab.timing.trace_export.write_png(dev.last_timing, "out.png")

Layout: params.py (one table per GPU, every value with its source), trace.py (recording while emulating), sim.py
(discrete-event replay in simulated time), predict.py (the timed launch), report.py (rich table),
trace_export.py (Chrome trace JSON, PNG).  Model and validation: ptx_docs/timing.md.
"""
from .params import TABLES, GpuParams, get as get_params  # noqa: F401
