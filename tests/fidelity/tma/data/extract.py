#!/usr/bin/env python3
"""Cut the hardware cases replayed by tests/emu/hw/test_tma_model.py out of a full kit result (see README.md here).

    python tests/fidelity/tma/data/extract.py /path/to/tma_cuda.npz tests/fidelity/tma/data/h100_20261122_narrow_align.npz
    python tests/fidelity/tma/data/extract.py /tmp/tma_cuda2.npz tests/fidelity/tma/data/h100_20261122_run2.npz \
        tx/ narrow/ nan/ store/

Optional trailing arguments are the case-name prefixes to keep (default: narrow/ align/).
Kept: the cases that ran, and the cases whose kernel faulted on the device ("failed while running"); cases the host
refused before launch (e.g. a TensorMapError for a Blackwell-only encoding on an H100) carry no hardware information.
"""
import json
import sys

import numpy as np

KEEP = ("narrow/", "align/")


def main(src: str, dst: str, keep_prefixes: tuple = KEEP) -> None:
    z = np.load(src)
    cases = [c for c in json.loads(str(z["cases_json"])) if c["name"].startswith(tuple(keep_prefixes))]
    keep = [c for c in cases if not str(z[f"{c['name']}:error"]) or "failed while running" in str(z[f"{c['name']}:error"])]
    out = {"cases_json": np.array(json.dumps(keep)), "backend": z["backend"], "seed": z["seed"]}
    for c in keep:
        for k in ("image", "info", "error"):
            out[f"{c['name']}:{k}"] = z[f"{c['name']}:{k}"]
    np.savez_compressed(dst, **out)
    print(f"{len(keep)} cases -> {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], tuple(sys.argv[3:]) or KEEP)
