"""Bit-exact comparison shared by the project's CuTe DSL kernel scripts (imported from their directory)."""
import numpy as np


def report(got: np.ndarray, want: np.ndarray, passed: str) -> int:
    """Print ``passed`` and return 0 when got and want are bitwise equal; else print the first difference, return 1."""
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f"MISMATCH: got {got.shape} {got.dtype}, want {want.shape} {want.dtype}")
        return 1
    bits = np.dtype(f"u{got.dtype.itemsize}")
    diff = np.argwhere(got.view(bits) != want.view(bits))
    if not len(diff):
        print(passed)
        return 0
    first = tuple(int(i) for i in diff[0])
    print(f"MISMATCH: {len(diff)} of {got.size} values differ, first at {first}: {got[first]} != {want[first]}")
    return 1
