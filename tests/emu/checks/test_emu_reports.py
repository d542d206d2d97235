"""One clean report per fault: an emulator fault raised through dev.launch shows the user's frames and the report once
(no chained exception, no emulator frames; PTXLAB_DEBUG_TRACEBACK=1 keeps them); fidelity warnings are EmuWarnings
recorded in dev.emu_warnings with the CUDA line, attributed to the user's launching line, never "EmuError:"; a fault
inside a multi-line asm statement names the statement line holding the instruction; the default-on checks switch off."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.sitewarn import EmuWarning
from ptxlab.errors import EmuError
from repo_root import REPO

sys.path.insert(0, str(Path(__file__).resolve().parent / "sanitizer"))
from sanitizer_corpus import BY_NAME, compile_entry, launch  # noqa: E402

SCRIPT = '''
import numpy as np, ptxlab
src = r"""
extern "C" __global__ void k(unsigned* out, const unsigned* in) {
  unsigned v;
  asm volatile(
      "{\\n\\t"
      ".reg .u32 t;\\n\\t"
      "ld.global.u32 t, [%1];\\n\\t"
      "add.u32 %0, t, 1;\\n\\t"
      "}"
      : "=r"(v)
      : "l"(in + OFF));
  out[threadIdx.x] = v;
}""".replace("OFF", str(OFF))
mod = ptxlab.compile(src, arch="sm_90a", name="asmfault.cu")
dev = ptxlab.open_device("emu")
dev.launch(mod, "k", grid=1, block=32, args=[dev.empty(512), dev.to_device(np.zeros(64, np.uint32))])
'''


def _run(off: int, debug: bool):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PTXLAB_DEBUG_TRACEBACK", None)
    if debug:
        env["PTXLAB_DEBUG_TRACEBACK"] = "1"
    return subprocess.run([sys.executable, "-c", f"OFF = {off}\n" + SCRIPT], capture_output=True, text=True, env=env,
                          timeout=300)


def test_fault_is_one_report_after_the_users_frames(rng):
    off = int(rng.integers(1000, 5000))
    p = _run(off, debug=False)
    err = p.stderr
    assert p.returncode == 1 and err.count("Traceback") == 1 and "During handling" not in err, err
    assert err.count("out-of-bounds global load") == 1 and "EmuError: EmuError" not in err, err
    frames = [ln for ln in err.splitlines() if ln.strip().startswith("File ")]
    assert frames[0].strip().startswith('File "<string>"') and not any("ptxlab/emu" in f for f in frames), err
    assert "ptxlab.errors.EmuError: out-of-bounds global load of 4 bytes" in err
    assert "source : " in err and "asmfault.cu:7" in err, err         # the asm line holding ld.global (not 4)
    dbg = _run(off, debug=True).stderr
    assert any("ptxlab/emu/engine/machine.py" in ln for ln in dbg.splitlines()), dbg


def test_fidelity_warning_is_an_emu_warning_with_the_cuda_line(rng):
    e = BY_NAME["tmem_ld_without_wait"]
    dev = ptxlab.open_device("emu")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        launch(dev, compile_entry(e), e, rng)
    ours = [w for w in rec if issubclass(w.category, EmuWarning)]
    assert ours and dev.emu_warnings, [str(w.message)[:200] for w in rec]
    msg = str(ours[0].message)
    assert msg.startswith("[tcgen05_wait_ld]") and "EmuError" not in msg, msg
    assert "source : " in msg and "tmem.cuh:" in msg and "ptx    : line" in msg, msg
    assert Path(ours[0].filename).resolve() == Path(__file__).resolve().parent / "sanitizer" / "sanitizer_corpus.py", \
        ours[0].filename                               # the user's launching line, not the emulator's source
    assert dev.emu_warnings[0] == msg


@pytest.mark.parametrize("name,off", [("race_raw_no_barrier", {"racecheck": False}),
                                      ("uninit_global", {"initcheck": False}),
                                      ("uninit_global", {"initcheck": "shared"})])
def test_default_checks_switch_off(name, off, rng):
    e = BY_NAME[name]
    with pytest.raises(EmuError):
        launch(ptxlab.open_device("emu"), compile_entry(e), e, rng)
    launch(ptxlab.open_device("emu", **off), compile_entry(e), e, rng)     # no report with the check off


def test_env_switches_the_checks_off(monkeypatch, rng):
    e = BY_NAME["race_raw_no_barrier"]
    monkeypatch.setenv("PTXLAB_EMU_RACECHECK", "0")
    launch(ptxlab.open_device("emu"), compile_entry(e), e, rng)
    e = BY_NAME["uninit_global"]
    monkeypatch.setenv("PTXLAB_EMU_INITCHECK", "off")
    launch(ptxlab.open_device("emu"), compile_entry(e), e, rng)
