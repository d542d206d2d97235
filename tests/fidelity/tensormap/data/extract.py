#!/usr/bin/env python3
"""Vendor the H100 cuTensorMapEncodeTiled observations of a tmap_rule.json (tools/probes/tmap_driver_probe.py run) as a
small gzipped JSON table that tests/test_tensormap.py replays against validate():

    python tests/fidelity/tensormap/data/extract.py DIR/tmap_rule.json tests/fidelity/tensormap/data/NAME.json.gz

Rows (src, dtype, global_shape, global_strides, box, element_strides, swizzle, l2_promotion, oob_fill,
address mod 256, accepted): every random spec; every shrink minimum (rejected) with the single-field neighbours the
shrink tried (accepted iff listed in its 'rescue'); and both sides of every accept/reject transition of every sweep
(plus the last value of an all-accepted sweep and the first of an all-rejected one).
"""
from __future__ import annotations

import gzip
import importlib.util
import json
import os
import sys
from collections import Counter

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, ROOT)


def _probe():
    spec = importlib.util.spec_from_file_location("tmap_driver_probe", os.path.join(ROOT, "tools", "probes",
                                                                                      "tmap_driver_probe.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tmap_driver_probe"] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    p = _probe()
    with open(argv[0]) as f:
        d = json.load(f)

    def row(sd, ok, src):
        s = p.spec_from(sd)
        return [src, s.dtype, list(s.global_shape), list(s.global_strides), list(s.box), list(s.element_strides),
                s.swizzle, s.l2_promotion, s.oob_fill, s.global_address % 256, int(bool(ok))]

    cc = (9, 0)
    rows = [row(r["spec"], r["ok"], "random") for r in d["random"]]
    for sh in d.get("shrinks", []):
        s = p.spec_from(sh["minimal"])
        rows.append(row(sh["minimal"], False, "shrink"))
        resc = set(sh["rescue"])
        for tag, c in p.structural(s):                       # the neighbours shrink() tried, in its order
            if p.usable(c, cc):
                rows.append(row(p.spec_dict(c), tag in resc, "rescue"))
        for name, v0, lo, g, setter in p.numeric_fields(s):
            for v in sorted({v0 - g, v0 // 2 // g * g, lo}):
                if lo <= v < v0 and p.usable(setter(v), cc):
                    rows.append(row(p.spec_dict(setter(v)), f"{name} {v0} -> {v}" in resc, "rescue"))
            if p.usable(setter(v0 + g), cc):
                rows.append(row(p.spec_dict(setter(v0 + g)), f"{name} {v0} -> {v0 + g} (increase)" in resc, "rescue"))
    for sc in d.get("scans", []):
        recs = p.scan_records(sc)
        for a, b in zip(recs, recs[1:]):
            if a["ok"] != b["ok"]:
                rows += [row(a["spec"], a["ok"], "scan"), row(b["spec"], b["ok"], "scan")]
        if recs and all(r["ok"] for r in recs):
            rows.append(row(recs[-1]["spec"], True, "scan"))
        if recs and not any(r["ok"] for r in recs):
            rows.append(row(recs[0]["spec"], False, "scan"))
    out = {"source": "tools/probes/tmap_driver_probe.py run (step 1 of tools/probes/h100_probes.sh)",
           "device": d.get("device"), "calls": d.get("calls"),
           "fields": ["src", "dtype", "global_shape", "global_strides", "box", "element_strides", "swizzle",
                      "l2_promotion", "oob_fill", "address_mod_256", "accepted"],
           "rows": rows}
    with gzip.open(argv[1], "wt") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{len(rows)} rows -> {argv[1]}: {dict(Counter((r[0], r[-1]) for r in rows))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
