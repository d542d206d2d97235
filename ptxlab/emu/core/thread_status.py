"""Per-thread scheduler states of a wave (``Wave.status``), at the bottom of the emulator's layers so hardware models
(e.g. ``cluster.py``) can test them without importing the machine."""
RUN, EXITED, BAR, PARK, SYNC = 0, 1, 2, 3, 4
