"""The tensor-core arithmetic model: bit-exact ``tcgen05.mma`` per kind (``ptx_docs/mma_arithmetic.md``).

The public entry point; callers import from here::

    from ptxlab.mma import mma, mma_exact, exact_regime, ModelSilent, KIND_K

Modules: ``model`` (API, validation, K loop; ``model.FAST`` switches the fast exact path), ``codec`` (decoders,
F32/F16 encoders), ``steps`` (one instruction per path), ``fast`` (fast exact path), ``exact`` (``mma_exact``,
``exact_regime``).
"""
from __future__ import annotations

from ptxlab.mma.model import KIND_K, ModelSilent, Plan, exact_regime, mma, mma_exact

__all__ = ["mma", "mma_exact", "exact_regime", "ModelSilent", "KIND_K", "Plan"]
