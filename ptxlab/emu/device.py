"""``open_device("emu")``: the CPU backend, same API as the cuda backend (ptxlab.device.base.Device)."""
from __future__ import annotations

import hashlib
import os
import time
from typing import Any

from ..device.base import Device
import numpy as np

from ..errors import EmuError, LaunchError, OptionError, UsageError
from ..tensormap import TensorMapSpec, encode_emu
from .ops import load_families
from .engine.machine import run_kernel
from .core.memory import GLOBAL_BASE, GlobalHeap
from .engine.decode_cache import no_gc, parse_cached
from .engine import native
from .checks import fidelity
from .checks.fidelity import rules_of, strict_rules as _strict_rules, summarize as _fid_summarize
from .core.program import Program
from .checks.initcheck import initcheck_modes
from .checks.racecheck import racecheck_mode
from .. import settings


class EmuDevice(Device):
    """Runs PTX on the CPU.  Any arch is accepted: the emulator executes the PTX, not the cubin."""

    name = "emu"

    def __init__(self, budget: int | None = None, initcheck: bool | str | None = None,
                 stall_seconds: float | None = None, strict=None, timing: Any = None, timing_sample: str | None = None,
                 clc: str | None = None, wave_ctas: int | None = None, racecheck: bool | str | None = None,
                 memory: int | None = None, engine: str | None = None):
        super().__init__()
        from .. import settings
        settings.check(("emu", "timing"))     # every PTXLAB_EMU_* / PTXLAB_TIMING* value, before anything runs
        budget = _count("budget", budget, 1)
        stall_seconds = _number("stall_seconds", stall_seconds, 0)
        wave_ctas = _count("wave_ctas", wave_ctas, 1)
        memory = _count("memory", memory, 1 << 20)
        # execution engine (ptx_docs/emulator_engines.md): 'native' (default when a C compiler works) compiles each
        # kernel to C and runs it under the interpreter's scheduler; 'interp' is the reference interpreter
        self.engine = native.engine_mode(engine)
        # watchdog (watchdog.py): budget = thread-instructions per launch (PTXLAB_EMU_BUDGET), stall_seconds = wall
        # clock without forward progress per launch (PTXLAB_EMU_STALL_S, default 45 s, 0 = off)
        self.stall_seconds = stall_seconds
        # PTX rules that shipped code breaks and hardware tolerates: warn by default, error when listed here
        # ('all' or True, 'tcgen05_wait_ld,proxy_fence,barrier_exit', ...; None = PTXLAB_EMU_STRICT at each launch):
        # fidelity.py (one switch for every such rule; sitewarn.py's warnings consult it too)
        self.strict = rules_of(strict)
        self.fidelity_log: list = []
        self.emu_warnings: list = []
        self._annotate_text = None     # set during a launch: adds CUDA lines to warnings (lineinfo.py)
        # timing model (ptxlab/timing): timing="b200"|"h100"|"h200" predicts each launch into self.last_timing
        self.timing = timing if timing is not None else (os.environ.get("PTXLAB_TIMING") or None)
        self.timing_sample = timing_sample or os.environ.get("PTXLAB_TIMING_SAMPLE") or None
        if self.timing:     # refuse an unknown GPU / sample mode here, not at the first launch
            from ..timing.params import check_timing_args
            try:
                check_timing_args(self.timing, self.timing_sample, from_env=timing is None,
                                  sample_from_env=not timing_sample)
            except ValueError as exc:
                raise OptionError(str(exc)) from None
        self.last_timing = None
        # clusterlaunchcontrol.try_cancel policy ('every-other' default, 'all', 'never', 'first:N'; None =
        # PTXLAB_EMU_CLC) and a cap on CTAs per wave (None = PTXLAB_EMU_WAVE_CTAS / thread-count waves): hw/clc.py
        from .hw.clc import parse_policy
        parse_policy(clc)
        self.clc = clc
        self.wave_ctas = wave_ctas
        # reads of never-written memory (compute-sanitizer initcheck analogue, checks/initcheck.py): global memory by
        # default, shared memory too with initcheck=True / 'all' (PTXLAB_EMU_INITCHECK); self.initcheck = shared
        self.initcheck_global, self.initcheck = initcheck_modes(initcheck)
        # shared-memory data races (compute-sanitizer racecheck analogue, checks/racecheck.py; PTXLAB_EMU_RACECHECK)
        self.racecheck = racecheck_mode(racecheck)
        load_families()
        self.heap = GlobalHeap(limit=int(memory if memory is not None else settings.get("PTXLAB_EMU_MEMORY")))
        if self.initcheck_global:
            self.heap.track_writes()
        self.budget = budget
        self._modules: dict = {}     # ptx hash → (ir.Module, global syms, const bank, const syms)
        self._ptx_keys: dict = {}    # id(ptx text) -> (the text, its hash): _load hashes each text object once
        self._programs: dict = {}
        self.last_stats: dict = {}

    def describe(self) -> str:
        return "ptxlab PTX emulator (CPU)"

    def strict_rules(self, rules="all"):
        """Context manager: make ``rules`` strict (errors) for the launches inside it (fidelity.py)."""
        return _strict_rules(self, rules)

    def arch_supported(self, arch: str) -> bool:
        return True

    # --- memory ------------------------------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> int:
        return self.heap.alloc(nbytes)

    def _free(self, ptr: int) -> None:
        self.heap.free(ptr)

    def _write(self, ptr: int, data: bytes) -> None:
        import numpy as np
        self.heap.write_bytes(ptr, np.frombuffer(data, dtype=np.uint8))

    def _read(self, ptr: int, nbytes: int) -> bytes:
        return self.heap.read_bytes(ptr, nbytes).tobytes()

    def _memset(self, ptr: int, value: int, nbytes: int) -> None:
        self.heap.fill(ptr, value, nbytes)

    def _encode_tensor_map(self, spec: TensorMapSpec) -> bytes:
        return encode_emu(spec)

    # --- modules and launch ------------------------------------------------------------------------------------
    def _load(self, module: Any):
        ptx = module.ptx if hasattr(module, "ptx") else str(module)
        hit = self._ptx_keys.get(id(ptx))
        if hit is not None and hit[0] is ptx:          # the same text object: no 12 ms re-hash of a 4 MB module
            key = hit[1]
        else:
            key = hashlib.sha256(ptx.encode()).hexdigest()
            if len(self._ptx_keys) > 64:
                self._ptx_keys.clear()
            self._ptx_keys[id(ptx)] = (ptx, key)
        ent = self._modules.get(key)
        if ent is None:
            mod = parse_cached(ptx, getattr(module, "name", "<ptx>"))
            mod.text_sha256 = key       # the native engine keys its translations by it (engine/native/runner.py)
            gsyms, csyms = {}, {}
            const_bank = bytearray()
            gvars = [v for v in mod.globals if v.space == "global"]
            with no_gc():      # thousands of Allocation records next to a parsed module of millions of objects
                ptrs = self.heap.alloc_many([(max(v.size, 1), f"__global__ variable {v.name}",
                                              v.init or bytes(v.size)) for v in gvars])
            gsyms = dict(zip((v.name for v in gvars), ptrs))
            for v in mod.globals:
                if v.space == "const":
                    off = (len(const_bank) + max(v.align, 1) - 1) // max(v.align, 1) * max(v.align, 1)
                    const_bank.extend(bytes(off - len(const_bank)))
                    csyms[v.name] = off
                    const_bank.extend(v.init or bytes(v.size))
            ent = (mod, gsyms, const_bank, csyms, key)
            self._modules[key] = ent
        return ent

    def program(self, module: Any, kernel: str) -> Program:
        mod, gsyms, cbank, csyms, key = self._load(module)
        pk = (key, kernel)
        prog = self._programs.get(pk)
        if prog is None:
            with no_gc():      # decode_cache.py: a large parsed module makes every full collection slow
                prog = Program(mod, kernel, self.heap, gsyms, cbank, csyms)
            self._programs[pk] = prog
        return prog

    def _launch(self, module, kernel, grid, block, params, offsets, layout, shared_bytes, cluster=None,
                pdl: bool = False) -> None:
        # pdl: nothing to do, launches run in order (ops/griddepcontrol.py)
        from .checks import hwknown, lineinfo
        # reports name CUDA source lines even when the module was compiled without -lineinfo (lineinfo.py)
        self._annotate_text = lambda text: lineinfo.annotate_text(text, lineinfo.line_map(module))
        try:
            self._launch_inner(module, kernel, grid, block, params, shared_bytes, cluster)
        except EmuError as e:
            lineinfo.annotate_error(e, module)
            hwknown.annotate(e)          # rules hardware is known/reported to tolerate (hwknown.py)
            raise
        finally:
            self._annotate_text = None

    def _launch_inner(self, module, kernel, grid, block, params, shared_bytes, cluster=None) -> None:
        prog = self.program(module, kernel)
        for name, align, addr in prog.smem_overaligned:      # core/program.py: HW_SMEM_BASE
            fidelity.layout_violation(
                self, kernel, "smem_align",
                f".shared variable {name} declares .align {align}, but the GPU puts it at shared address {addr:#x} "
                f"(not a multiple of {align}: PTX ISA 5.4.5 promises one); code that relies on the alignment, e.g. "
                f"a double buffer switched by XOR-ing its address with a multiple of 1024 or more, computes other "
                f"results on the GPU; align to at most 1024 (or take the base from cvta.to.shared and add offsets)")
        if prog.static_smem + shared_bytes > self.max_shared_bytes:
            raise LaunchError(f"launch of {kernel}: {prog.static_smem} bytes static + {shared_bytes} bytes dynamic "
                              f"shared memory exceed the {self.max_shared_bytes}-byte limit")
        if not prog.has_dynamic_smem and shared_bytes:
            pass  # dynamic shared memory requested but the kernel declares no extern .shared: allowed, unused
        t0 = time.perf_counter()
        self.fidelity_log = []
        kw = {} if self.budget is None else {"budget": self.budget}
        if cluster is not None:
            kw["cluster"] = cluster
        if self.stall_seconds is not None:
            kw["stall_s"] = self.stall_seconds
        if self.timing:
            from ..timing.predict import timed_launch
            self.last_timing = timed_launch(self, module, prog, grid, block, bytes(params), int(shared_bytes),
                                            self.timing, self.timing_sample, budget=kw.get("budget"), cluster=cluster)
            self.last_stats = {"thread_instrs": None, "seconds": time.perf_counter() - t0, "kernel": kernel}
            return
        stats = run_kernel(prog, self.heap, tuple(grid), tuple(block), bytes(params), int(shared_bytes),
                           device=self, scheduler=native.scheduler_for(prog, self.engine), **kw)
        stats["seconds"] = time.perf_counter() - t0
        stats["fidelity_warnings"] = [text for _, text in self.fidelity_log]
        _fid_summarize(self.fidelity_log, self)
        stats["kernel"] = kernel
        self.last_stats = stats
        if settings.get("PTXLAB_EMU_STATS", fallback=True):
            print(f"[ptxlab emu] {kernel}: {stats['thread_instrs']:,} thread-instrs in {stats['seconds']:.3f}s")


def _count(what: str, v, lo: int):
    """An integer option >= lo (None = the environment's / the default); UsageError otherwise."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
        raise UsageError(f"open_device('emu', {what}={v!r}): must be an integer >= {lo}")
    return int(v)


def _number(what: str, v, lo: float):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (float(v) >= lo) \
            or float(v) == float("inf"):
        raise UsageError(f"open_device('emu', {what}={v!r}): must be a finite number >= {lo:g}")
    return float(v)
