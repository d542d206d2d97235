"""Out-of-sample timing corpus (issue 21): public CUDA kernels nobody here wrote, measured on the H100 and predicted by
ptxlab's timing model.  Their code is never committed: ``fetch.py`` copies the pinned files into a cache outside the
repo, ``extract.py`` keeps their device code at run time.  ptx_docs/timing_validation.md describes the corpus."""
