"""Production kernels' host side: launch wrappers (``gemv``), the gpu-mode ``custom_kernel`` adapter
(``submission_gemv``) and the single-file submission exporter (``export``). Nothing heavy is imported here."""
