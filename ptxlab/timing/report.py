"""Rich tables of a prediction (ptxlab.timing.predict.Timing)."""
from __future__ import annotations

from typing import Any, Optional

from rich.console import Console
from rich.table import Table

from .predict import NAMES


def tables(t, sensitivity: Optional[list] = None) -> list:
    head = Table(title=f"{t.kernel} — PREDICTED on {t.gpu.upper()} (ptxlab timing model, not a measurement)",
                 show_header=False)
    head.add_column("what", style="bold")
    head.add_column("value")
    head.add_row("predicted time", f"{t.us:.2f} µs  (launch overhead {t.launch_us:.2f} µs + busiest SM "
                                   f"{t.sim_us:.2f} µs)")
    head.add_row("bound", t.bound)
    o = t.occupancy
    lim = ", ".join(f"{k} {v}" for k, v in o["limits"].items())
    head.add_row("grid / block", f"{t.grid} x {t.block}: {t.ctas} CTAs, {t.ctas_per_sm} CTA(s)/SM "
                                 f"(limited by {o['limited_by']}; limits: {lim})")
    head.add_row("resources", f"{t.registers or '?'} registers/thread (ptxas), {t.smem_bytes} B shared/CTA, "
                              f"{t.tmem_cols} TMEM columns")
    head.add_row("waves", f"{t.waves:.2f} ({t.busy_sms} SMs busy)")
    head.add_row("emulation", f"{t.sampled}; emulate {t.emu_seconds:.2f} s, simulate {t.sim_seconds:.2f} s")
    res = Table(title="resources: busy fraction of the busiest SM's span (DRAM / L2: of its average share; over "
                      "100 % = it ran ahead of that share while other SMs idled)")
    res.add_column("resource")
    res.add_column("busy %", justify="right")
    for k, v in sorted(t.utilization.items(), key=lambda kv: -kv[1]):
        name = NAMES.get(k, k)
        res.add_row(name, f"{100 * v:.1f}")
    ach = Table(title="achieved vs peak")
    ach.add_column("resource")
    ach.add_column("achieved", justify="right")
    ach.add_column("peak", justify="right")
    ach.add_column("unit")
    for k, (a, pk, u) in t.achieved.items():
        ach.add_row(k, f"{a:.1f}", f"{pk:.1f}", u)
    wt = Table(title="per warp (index in CTA; averaged over the simulated SM's CTAs): issuing vs waiting, µs "
                     "(issue + wait = the warp's life)")
    wt.add_column("warp")
    wt.add_column("instructions", justify="right")
    wt.add_column("issue µs", justify="right")
    wt.add_column("wait µs", justify="right")
    wt.add_column("waiting on (biggest, µs)")
    cyc = t.clock_ghz * 1e3
    for wi, s in sorted(t.warps.items()):
        waits = sorted(s["waits"].items(), key=lambda kv: -kv[1])[:3]
        wt.add_row(f"{wi}" + (f" ({s['role']})" if s.get("role") else ""), f"{s['issued']:.0f}",
                   f"{s.get('issue_clk', 0.0) / cyc:.2f}", f"{sum(s['waits'].values()) / cyc:.2f}",
                   "; ".join(f"{k} {v / cyc:.2f}" for k, v in waits if v > 0))
    out = [head, res, ach, wt]
    if sensitivity:
        st = Table(title="sensitivity to parameters without a source (value x0.5 / x2 -> predicted µs)")
        st.add_column("parameter")
        st.add_column("x0.5", justify="right")
        st.add_column("x2", justify="right")
        for name, lo, hi in sensitivity:
            st.add_row(name, f"{lo:.2f}", f"{hi:.2f}")
        out.append(st)
    return out


def print_table(t, console: Optional[Console] = None, sensitivity: Optional[list] = None) -> None:
    console = console or Console()
    for tb in tables(t, sensitivity):
        console.print(tb)
