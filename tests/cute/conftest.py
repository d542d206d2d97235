"""tests/cute: scripts run under ``lab.py exec`` in fresh processes (helpers.py)."""
from cute_helpers import cute_dsl  # noqa: F401  (fixture)
