"""Execution engines: ``machine`` is the SIMT interpreter (waves of CTAs, the scheduler, memory access with its
checks, the asynchronous-operation queue), the reference; ``native/`` runs the SIMT instructions of a translated
kernel in C under the interpreter's scheduler (ptx_docs/emulator_engines.md); ``workers`` runs the waves of a launch
in parallel processes; ``decode_cache`` keeps parsed modules on disk. Imports ``core``, ``checks`` and ``hw``; the
instruction families (``ops``) plug into it through ``core.isa`` and ``core.hooks``."""
