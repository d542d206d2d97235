"""`lab.py desc --help` and the README show a valid example for every decoder and encoder; encoder flags have help
text and list their choices."""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys

import pytest

from ptxlab.desc import cli

from repo_root import REPO

COMMANDS = ("smem", "idesc", "tmem", "encode smem", "encode idesc")


def _help(*args: str) -> str:
    p = subprocess.run([sys.executable, str(REPO / "lab.py"), "desc", *args, "--help"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_every_command_has_an_example_in_help_and_readme() -> None:
    readme = (REPO / "README.md").read_text()
    top = _help()
    for cmd in COMMANDS:
        mine = [a for c, a, _ in cli.EXAMPLES if c == cmd]
        assert mine, f"no example for desc {cmd}"
        sub = _help(*cmd.split())
        for a in mine:
            line = f"python lab.py desc {a}"
            assert line in top and line in sub and line in readme, line


@pytest.mark.parametrize("cmd,args,what", cli.EXAMPLES, ids=[a for _, a, _ in cli.EXAMPLES])
def test_example_is_valid(cmd: str, args: str, what: str, capsys) -> None:
    assert cli.main(shlex.split(args)) == 0
    out = capsys.readouterr().out
    assert "INVALID" not in out
    m = re.match(r"-> (0x[0-9a-f]+)$", what)
    if m:                                   # encoders: the value the example promises
        assert re.search(rf"(descriptor|idesc) = {m.group(1)}\b", out), out[:300]
    else:                                   # decoders: the table is titled with the decoded word
        word = int(next(t for t in shlex.split(args) if t.startswith("0x")), 16)
        assert f"{word:#018x}" in out or f"{word:#010x}" in out, out[:300]


def _encoder_actions() -> list[tuple[str, argparse.Action]]:
    p = cli._parser()
    enc = next(a for a in p._subparsers._group_actions[0].choices["encode"]._actions
               if isinstance(a, argparse._SubParsersAction))
    return [(f"encode {name}", act) for name, sp in enc.choices.items() for act in sp._actions
            if act.option_strings and act.dest != "help"]


ENUMS = {"--swizzle", "--lbo-mode", "--base-offset", "--a", "--b", "--d", "--scale", "--a-major", "--b-major",
         "--neg-a", "--neg-b", "--sfa-id", "--sfb-id", "--sparse", "--kind", "--cta-group", "--block", "--major",
         "--elem"}


def test_encoder_flags_have_help_and_choices() -> None:
    acts = _encoder_actions()
    assert len(acts) >= 25
    for cmd, act in acts:
        flag = act.option_strings[0]
        assert act.help and len(act.help) > 8, f"{cmd} {flag}: no help text"
        if flag in ENUMS:
            assert act.choices, f"{cmd} {flag}: choices not listed"
    text = _help("encode", "idesc")
    assert "{UE4M3,UE8M0}" in text and "{K,MN}" in text and "{f16,tf32,f8f6f4,i8,mxf8f6f4,mxf4,mxf4nvf4}" in text
    text = _help("encode", "smem")
    assert "{NONE,128B_BASE32B,128B,64B,32B}" in text


def test_case_and_aliases_still_accepted(capsys) -> None:
    assert cli.main(["encode", "smem", "--start", "0x400", "--sbo", "1024", "--lbo", "16", "--swizzle", "sw128"]) == 0
    assert "smem descriptor = 0x4000404000010040" in capsys.readouterr().out
    assert cli.main(["encode", "idesc", "--kind", "MXF4NVF4", "--m", "128", "--n", "16", "--a", "e2m1", "--b", "e2m1",
                     "--scale", "ue4m3"]) == 0
    assert "idesc = 0x08040480" in capsys.readouterr().out
    assert cli.main(["encode", "idesc", "--kind", "f16", "--m", "128", "--n", "16", "--a", "Q9"]) == 2
