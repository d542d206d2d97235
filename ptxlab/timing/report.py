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
    head.add_row("issue", t.issue + (f" ({t.join})" if t.join else ""))
    if t.footprint:
        head.add_row("DRAM vs L2", t.footprint)
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
    if t.hot:
        ht = Table(title="instructions waited on longest (warp-µs summed over the simulated SM's warps)")
        ht.add_column("warp-µs", justify="right")
        ht.add_column("waiting for")
        ht.add_column("source")
        ht.add_column("instruction")
        for clk, why, where, text in t.hot[:8]:
            ht.add_row(f"{clk / cyc:.2f}", why, where, text)
        out.append(ht)
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


def _summary(ts: list) -> dict:
    """The comparison facts of one target's launches (their total time; the longest launch's details)."""
    t = max(ts, key=lambda x: x.us)
    util = sorted(((NAMES.get(k, k), v) for k, v in t.utilization.items() if k != "launch/tail"),
                  key=lambda kv: -kv[1])[:3]
    waits: dict = {}
    for s in t.warps.values():
        for k, v in s["waits"].items():
            waits[k] = waits.get(k, 0.0) + v * s.get("warps", 1)
    top = sorted(waits.items(), key=lambda kv: -kv[1])[:3]
    tot_w = sum(waits.values()) or 1.0
    dram = t.amounts.get("dram_bytes", 0.0)
    return {"us": sum(x.us for x in ts), "launches": len(ts), "kernel": t.kernel, "bound": t.bound,
            "busy": ", ".join(f"{k} {100 * v:.0f} %" for k, v in util),
            "dram": f"{dram / 1e6:.1f} MB" if dram else "-",
            "issued": f"{t.amounts.get('instructions', 0.0):,.0f}",
            "waits": "; ".join(f"{k} {100 * v / tot_w:.0f} %" for k, v in top),
            "hot": "; ".join(f"{where} ({why})" for _, why, where, _ in (t.hot or [])[:2]),
            "grid": f"{t.ctas} CTAs x {t.block[0] * t.block[1] * t.block[2]} thr, {t.ctas_per_sm}/SM, "
                    f"{t.waves:.2f} waves", "issue": t.issue}


def compare_table(a: tuple, b: tuple) -> tuple:
    """(rich Table, verdict line) for two (name, [Timing]) targets."""
    sa, sb = _summary(a[1]), _summary(b[1])
    gpu = a[1][0].gpu.upper()
    tab = Table(title=f"{a[0]} vs {b[0]} — PREDICTED on {gpu} (ptxlab timing model, not a measurement)")
    tab.add_column("")
    tab.add_column(a[0])
    tab.add_column(b[0])
    rows = [("predicted time", f"{sa['us']:.2f} µs", f"{sb['us']:.2f} µs"),
            ("launches", str(sa["launches"]), str(sb["launches"])),
            ("kernel (longest launch)", sa["kernel"], sb["kernel"]),
            ("bound", sa["bound"], sb["bound"]), ("busiest resources", sa["busy"], sb["busy"]),
            ("grid", sa["grid"], sb["grid"]), ("DRAM bytes", sa["dram"], sb["dram"]),
            ("SASS / PTX instructions issued", sa["issued"], sb["issued"]),
            ("warps waited on (share of all waiting)", sa["waits"], sb["waits"]),
            ("where (top waits)", sa["hot"], sb["hot"]), ("issue model", sa["issue"], sb["issue"])]
    for r in rows:
        tab.add_row(*r)
    fn, fs, sn, ss = (a[0], sa, b[0], sb) if sa["us"] <= sb["us"] else (b[0], sb, a[0], sa)
    verdict = (f"{fn} is predicted {ss['us'] / max(fs['us'], 1e-9):.2f}x faster than {sn} "
               f"({fs['us']:.2f} vs {ss['us']:.2f} µs): {fn} is {fs['bound']}-bound ({fs['busy']}), "
               f"{sn} is {ss['bound']}-bound ({ss['busy']}; its warps wait on {ss['waits'] or 'nothing'})")
    return tab, verdict


def print_compare(a: tuple, b: tuple, console: Optional[Console] = None) -> None:
    console = console or Console()
    tab, verdict = compare_table(a, b)
    console.print(tab)
    console.print(verdict)
