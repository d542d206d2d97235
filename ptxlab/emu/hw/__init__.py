"""Hardware models beneath the instructions: TMA (``tma``, ``swizzle``), mbarrier (``mbarrier``), Tensor Memory and
tcgen05 (``tmem``, ``tcgen05_maps``, ``tcgen05_mma``, ``tcgen05_mma_pair``, ``tcgen05_pairing``), thread-block
clusters and CTA pairs (``cluster``, ``cta_pair``), cluster launch control (``clc``) and proxy ordering (``proxy``).
Imports only ``core`` and ``checks``."""
