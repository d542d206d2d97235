"""The checkout's root directory (the folder holding pyproject.toml), for tests that read or run repository files.

Importable from every test module because pytest puts ``tests/`` on ``sys.path`` (tests/conftest.py, no
``__init__.py``), as for ``skip_policy`` and ``probes``."""
from __future__ import annotations

from pathlib import Path

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
