"""CPU side of tools/audit/sanitizer_parity.py: compute-sanitizer summaries are parsed per tool, and the table marks
an entry MISSED exactly when a tool reported it and the emulator did not."""
from __future__ import annotations

import sys

from repo_root import REPO

sys.path.insert(0, str(REPO / "tools" / "audit"))
import sanitizer_parity as SP  # noqa: E402

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at oob_global_read+0x90 in kernels_sm90.cu:151
=========     by thread (64,0,0) in block (0,0,0)
========= ERROR SUMMARY: 64 errors
"""
RACECHECK = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at race_raw_no_barrier+0x80 in kernels_sm90.cu:22
=========     and Read access at race_raw_no_barrier+0xa0 in kernels_sm90.cu:23 [1024 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
CLEAN = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"


def test_parse_summaries():
    assert SP.parse(MEMCHECK) == {"errors": 64, "warnings": 0, "reports": ["Invalid __global__ read of size 4 bytes"]}
    r = SP.parse(RACECHECK)
    assert r["errors"] == 1 and r["warnings"] == 0 and r["reports"][0].startswith("Error: Race reported")
    assert SP.parse(CLEAN)["errors"] == 0 and SP.parse("")["errors"] is None


def test_table_marks_parity():
    def per(**hits):
        return {t: {"errors": hits.get(t, 0), "warnings": 0, "timed_out": False} for t in SP.TOOLS}
    measured = {"results": {"race_raw_no_barrier": per(racecheck=1), "ok_barrier": per(),
                            "race_global_waw": per(racecheck=3)}}      # a tool reports what the emulator does not
    rows = {r.split("|")[1].strip(" `"): r for r in SP.table(measured).splitlines()[2:]}
    assert rows["race_raw_no_barrier"].rstrip(" |").endswith("yes")
    assert rows["ok_barrier"].rstrip(" |").endswith("yes (both silent)")
    assert rows["race_global_waw"].rstrip(" |").endswith("**MISSED**")
    assert "not measured yet (expected: racecheck)" in rows["race_war_loop"]
    assert "sm_100a: emulator only" in rows["tmem_leak"]
