"""Timeline export of a prediction: Chrome-trace / Perfetto JSON and a matplotlib PNG of one SM's pipeline.

JSON: the Trace Event Format ("X" complete events, microseconds), one process per CTA of the simulated SM, one
thread (track) per warp plus "TMA unit" and "tensor pipe"; each event carries its PTX line (``line``, ``ptx``) and,
for a module compiled from CUDA, its CUDA source line (``src``; without -lineinfo too, via emu/lineinfo.py) in
``args``.  Open it at https://ui.perfetto.dev (or chrome://tracing).
"""
from __future__ import annotations

import json
from pathlib import Path


def chrome_trace(t) -> dict:
    cyc = t.clock_ghz * 1e3
    tids: dict = {}
    out = []
    for e in t.events:
        pid = int(e["cta"])
        key = (pid, e["track"])
        if key not in tids:
            tids[key] = len(tids) + 1
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tids[key],
                        "args": {"name": e["track"]}})
        args = {k: e[k] for k in ("line", "src", "ptx", "bytes") if k in e}
        out.append({"ph": "X", "name": e["name"], "cat": e["cat"], "pid": pid, "tid": tids[key],
                    "ts": e["t0"] / cyc, "dur": max(e["t1"] - e["t0"], 0.0) / cyc, "args": args})
    for pid in sorted({k[0] for k in tids}):
        out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"CTA {pid} (SM 0)"}})
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"kernel": t.kernel, "gpu": t.gpu, "predicted_us": t.us, "bound": t.bound,
                          "note": "PREDICTED by the ptxlab timing model; times exclude the launch overhead"}}


def write_chrome_trace(t, path) -> Path:
    from ptxlab.fileio import atomic_write      # temp file + rename: never a truncated trace

    return atomic_write(path, json.dumps(chrome_trace(t)))


_COLORS = {"wait": "#d9534f", "tma": "#5bc0de", "tensor": "#5cb85c", "tmem": "#f0ad4e"}


def write_png(t, path, cta=None) -> Path:
    """One CTA's pipeline: a row per warp (waits), the TMA unit and the tensor pipe, plus CTA spans."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cyc = t.clock_ghz * 1e3
    evs = t.events
    if cta is None and evs:   # the CTA with the most tensor-pipe events (a pair's even CTA), else the first one
        from collections import Counter
        n = Counter(e["cta"] for e in evs if e["cat"] == "tensor")
        cta = n.most_common(1)[0][0] if n else evs[0]["cta"]
    evs = [e for e in evs if e["cta"] == cta]
    tracks = sorted({e["track"] for e in evs}, key=lambda s: (not s.startswith("warp"), s))
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * max(1, len(tracks) + 1)))
    for i, tr in enumerate(tracks):
        segs = {}
        for e in evs:
            if e["track"] == tr:
                segs.setdefault(e["cat"], []).append((e["t0"] / cyc, max(e["t1"] - e["t0"], 0.5) / cyc))
        for cat, s in segs.items():
            ax.broken_barh(s, (i - 0.4, 0.8), facecolors=_COLORS.get(cat, "#777777"), label=cat)
    y = len(tracks)
    spans = [(s / cyc, (e - s) / cyc) for c, s, e in t.cta_spans]
    ax.broken_barh(spans, (y - 0.4, 0.8), facecolors="#cccccc", edgecolor="#444444", label="CTA on SM 0")
    ax.set_yticks(list(range(len(tracks))) + [y])
    ax.set_yticklabels(tracks + ["CTAs (SM 0)"])
    ax.set_xlabel("µs after launch overhead (predicted)")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    names = {"wait": "waiting (barrier / mbarrier)", "tma": "TMA copy in flight", "tensor": "tensor pipe busy",
             "tmem": "tcgen05.ld"}
    ax.legend(list(uniq.values()), [names.get(k, k) for k in uniq], loc="upper right", fontsize=8)
    ax.set_title(f"{t.kernel} on {t.gpu.upper()} (PREDICTED {t.us:.2f} µs, bound: {t.bound}) — CTA {cta}")
    fig.tight_layout()
    p = Path(path)
    from ptxlab.fileio import atomic_open       # temp file + rename: never a truncated PNG
    try:
        with atomic_open(p, "wb") as f:
            fig.savefig(f, dpi=110, format="png")   # exactly this path (no ".png" appended to a name without one)
    finally:
        plt.close(fig)
    return p
