"""The evidence behind the emulator's default for tcgen05.ld without tcgen05.wait::ld (ptx_docs/tcgen05.md): in the
sm_100a SASS ptxas gives each LDTM a write scoreboard and the first reader of its destination registers waits on
that scoreboard, whether or not the PTX has tcgen05.wait::ld (tools/probes/ldtm_scoreboard.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import ptxlab
from ptxlab.toolchain import sass

_P = Path(__file__).resolve().parents[2] / "tools" / "probes" / "ldtm_scoreboard.py"
_spec = importlib.util.spec_from_file_location("ldtm_scoreboard", _P)
probe = importlib.util.module_from_spec(_spec)
sys.modules["ldtm_scoreboard"] = probe
_spec.loader.exec_module(probe)


def test_ldtm_results_are_scoreboarded_without_wait_ld() -> None:
    mod = ptxlab.compile(probe.PROBE_SRC, arch="sm_100a", name="ldtm_probe.cu")
    fns = probe.parse(sass.disassemble(mod.cubin, extra_args=["--print-instruction-encoding"]))
    assert set(fns) >= {"x4_nowait", "x4_wait", "two_nowait", "loop_nowait"}
    for name in ("x4_nowait", "two_nowait", "loop_nowait", "x4_wait"):
        rows = probe.analyse(fns[name])
        assert rows, name
        for addr, text, sb, cons, verdict in rows:
            assert sb != 7 and cons is not None and verdict is True, (name, hex(addr), text, cons, verdict)
    # sanity of the control-bit decoding: the ordinary LDC of the output pointer is also waited on before use
    body = fns["x4_nowait"]
    ldc = next(i for i in body if i[1].startswith("LDC.64"))
    user = next(i for i in body if "IMAD.WIDE" in i[1])
    assert (user[2]["wait"] >> ldc[2]["wr"]) & 1
