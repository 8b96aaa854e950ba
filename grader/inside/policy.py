"""The sandbox's policy as data, read by both sides of the wall: the worker inside imports it from its own
folder, the grader outside as `grader.inside.policy`. It imports nothing, so either side can load it alone."""

from __future__ import annotations

STREAM_CAP = 100_000          # characters kept per stream per cell
DISPLAY_CAP = 4_000_000       # bytes of one display bundle, serialised
CELL_CAP = 16_000_000         # bytes of one cell's outputs, serialised
SETUP_TIMEOUT = 60.0          # seconds a child may take to set itself up before its first cell
