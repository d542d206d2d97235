"""An emulator warning raised from code run by `python -c` (whose __main__ has no source file) is printed, not an
ImportError from the warnings machinery (ptxlab/emu/checks/sitewarn.py)."""
import subprocess
import sys


def test_emu_warn_under_python_c():
    code = ("import warnings; warnings.simplefilter('always'); from ptxlab.emu.checks.sitewarn import emu_warn; "
            "emu_warn('probe warning from -c'); print('after')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "after" in p.stdout and "probe warning from -c" in p.stderr
