"""Corpus entries that wrap the ALU engineers' kernels (tests/kernels/*.cu, unmodified)."""
from __future__ import annotations

import numpy as np

from corpus import Entry

ENTRIES: list = []
