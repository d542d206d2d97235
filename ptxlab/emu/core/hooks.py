"""Extension points of the execution engine: lists the engine calls, filled by the layers above and beside it.

The hardware models, checks and instruction families register here at import (``hooks.WAVE_END_HOOKS.append(fn)``);
the engine (``engine/machine.py``) only reads the lists, so nothing beneath the engine has to import it.
"""
from __future__ import annotations

WAVE_END_HOOKS: list = []        # fn(st) called when a wave finishes (TMEM leak checks ...)
ASYNC_COMPLETE_HOOKS: list = []  # fn(st, op) called before the async engine completes op (checks/exitcheck.py)
PROGRESS_HOOKS: list = []        # fn(st) -> bool: try to make progress when no thread is runnable
EXPIRY_HOOKS: list = []          # fn(st) -> bool: last resort when PROGRESS_HOOKS found nothing: a bounded wait's
                                 # time limit expires (mbarrier.try_wait returning False, ops/mbarrier.py)
DEADLOCK_EXPLAINERS: list = []   # fn(st) -> str|None, adds family-specific lines (mbarrier state, TMEM ...)
