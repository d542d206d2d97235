"""The emulator's core: PTX text to a runnable program (``parser`` -> ``ir`` -> ``program``), the type table
(``types``), the instruction-handler registry (``isa``), memory windows and the global heap (``memory``), call frames
(``frames``, ``callstack``), thread states (``thread_status``) and the engine's extension points (``hooks``).
Imports nothing else of the emulator."""
