"""The data seed of a stage run: ``PTXLAB_SEED`` (``lab.py --seed N`` sets it) replays a run's data, else fresh data.

Every stage draws its random inputs from :func:`stage_seed` and prints the seed in its rows (``seed=N``); running the
stage again with ``python lab.py --stage ID --seed N`` (or ``PTXLAB_SEED=N``) makes exactly the same data, so a
failure can be reproduced and debugged.
"""
from __future__ import annotations

import numpy as np

__all__ = ["stage_seed"]


def stage_seed() -> int:
    """PTXLAB_SEED when set (checked by ptxlab.settings: 0 .. 2**63-1), else a fresh seed from the OS entropy."""
    from ptxlab import settings

    fixed = settings.get("PTXLAB_SEED")
    return int(fixed) if fixed is not None else int(np.random.SeedSequence().entropy % (2**63))
