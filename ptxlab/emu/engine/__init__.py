"""Execution engines: ``machine`` is the SIMT interpreter (waves of CTAs, the scheduler, memory access with its
checks, the asynchronous-operation queue). Imports ``core``, ``checks`` and ``hw``; the instruction families
(``ops``) plug into it through ``core.isa`` and ``core.hooks``."""
