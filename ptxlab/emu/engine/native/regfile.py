"""The register file of a wave run by the native engine: one fixed numpy array per register, shared with C.

The interpreter's contract (API.md) is that ``st.r[i]`` is an immutable array that writers *rebind*.  Native code
writes the arrays in place, so here the contract is kept the other way round: reading ``st.r[i]`` returns a copy
(whatever a handler keeps -- an asynchronous operation's operands, a saved frame -- cannot change under it), and
assigning ``st.r[i] = v`` copies ``v`` into the fixed array.
"""
from __future__ import annotations

import numpy as np


class RegFile:
    def __init__(self, regs: list):
        """Take over the wave's register arrays (a fresh wave's own zeroed rows: machine._zero_registers); an
        array that is shared, read-only or not contiguous is copied first."""
        seen = set()
        a = []
        for r in regs:
            if id(r) in seen or not (r.flags.c_contiguous and r.flags.writeable):
                r = np.array(r, copy=True, order="C")
            seen.add(id(r))
            a.append(r)
        self._a = a
        self.ptrs = np.array([r.__array_interface__["data"][0] for r in a] or [0], dtype=np.uintp)

    def __len__(self) -> int:
        return len(self._a)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [a.copy() for a in self._a[i]]
        return self._a[i].copy()

    def __setitem__(self, i, v) -> None:
        a = self._a[i]
        v = np.asarray(v)
        if v.dtype != a.dtype:
            raise TypeError(f"register {i}: a value of dtype {v.dtype} written to a {a.dtype} register "
                            f"(writers convert to the register's storage type: core/types.py to_storage)")
        a[...] = v

    def __iter__(self):
        return (a.copy() for a in self._a)

    def arrays(self) -> list:
        """The live arrays (no copies): for readers that use them at once and keep nothing (watchdog.py)."""
        return self._a

    def view(self, i) -> np.ndarray:
        """The live array (no copy): for the engine's own reads that use it at once."""
        return self._a[i]
