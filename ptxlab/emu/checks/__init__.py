"""What the emulator enforces and reports, beside the instructions: PTX-text vs hardware rules (``fidelity``,
``hwknown``), warnings at the site (``sitewarn``), the runaway-launch watchdog (``watchdog``), barrier divergence
(``synccheck``), async copies into an exited CTA (``exitcheck``) and CUDA source lines in reports (``lineinfo``).
Imports only ``core``."""
