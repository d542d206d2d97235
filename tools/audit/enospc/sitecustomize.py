"""Loaded by the audit (tools/audit/cases.py) where no small tmpfs can be mounted: with AUDIT_ENOSPC=1 every
os.fsync fails with ENOSPC, as on a full disk, so ptxlab's writers (ptxlab/fileio.py) meet the error they would."""
import errno
import os

if os.environ.get("AUDIT_ENOSPC") == "1":
    def _full(fd):
        raise OSError(errno.ENOSPC, "No space left on device (simulated by tools/audit)")

    os.fsync = _full
