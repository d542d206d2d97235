#!/usr/bin/env python3
"""Cut the hardware cases replayed by tests/test_tma_model.py out of a full kit result (see README.md here).

    python tests/fidelity/tma/data/extract.py /path/to/tma_cuda.npz tests/fidelity/tma/data/h100_20261122_narrow_align.npz
"""
import json
import sys

import numpy as np

KEEP = ("narrow/", "align/")


def main(src: str, dst: str) -> None:
    z = np.load(src)
    cases = [c for c in json.loads(str(z["cases_json"])) if c["name"].startswith(KEEP)]
    # keep the cases that ran, and the first fault of each probe (later ones in the same process were poisoned)
    keep = [c for c in cases if not str(z[f"{c['name']}:error"]) or "failed while running" in str(z[f"{c['name']}:error"])]
    out = {"cases_json": np.array(json.dumps(keep)), "backend": z["backend"], "seed": z["seed"]}
    for c in keep:
        for k in ("image", "info", "error"):
            out[f"{c['name']}:{k}"] = z[f"{c['name']}:{k}"]
    np.savez_compressed(dst, **out)
    print(f"{len(keep)} cases -> {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
