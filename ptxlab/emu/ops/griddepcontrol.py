"""griddepcontrol.wait / griddepcontrol.launch_dependents (PTX ISA 9.7.13, programmatic dependent launch, PTX 7.8,
sm_90+) on the emulator.

PTX ISA: ``.launch_dependents`` signals that the dependents designated by the runtime *may* be scheduled once every
CTA of this grid has issued it or completed -- it permits an early launch and guarantees none ("there is no guarantee
that the dependent will launch before the completion of the current grid"). ``.wait`` makes the executing thread wait
until all prerequisite grids in flight have completed and their memory operations are performed and visible.

Emulator ordering: launches run one after another to completion (dev.launch returns when the grid is done), so when
a grid runs, every prerequisite grid has already completed and its global-memory writes are in the one memory
image. Hence ``wait``'s condition already holds when it executes and it returns at once, and ``launch_dependents``
has nothing to do. This is one of the schedules the PTX text allows (the dependent launching after the primary's
completion), not an approximation; a program that is only correct when the dependent overlaps the primary (e.g. it
spins on a flag the primary sets after launch_dependents) is incorrect under the PTX ISA and deadlocks on
hardware too when the runtime chooses this schedule. ptx_docs/cluster_launch_control.md "Programmatic dependent
launch" has the cuda backend's attribute (dev.launch(..., pdl=True)).
"""
from __future__ import annotations

from ..core import ir
from ..core.isa import Ctx, Unsupported, register


def build_griddepcontrol(ins: ir.Instr, ctx: Ctx):
    if ins.mods not in (("wait",), ("launch_dependents",)) or ins.args:
        raise Unsupported(f"griddepcontrol.{'.'.join(ins.mods)}: the PTX ISA forms are griddepcontrol.wait and "
                          f"griddepcontrol.launch_dependents, without operands ({ins.where()})")

    def run(st, m):
        return None     # see the module docstring: sequential launches satisfy both at once
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
FORMS = register({"action": ("launch_dependents", "wait")}, [
    ("griddepcontrol.action",       "9.7.13.13", build_griddepcontrol),
])
