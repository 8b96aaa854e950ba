"""Widgets and helpers for the distributed chapter."""
