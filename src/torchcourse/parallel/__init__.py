"""Widgets and helpers for the parallel computing chapter (03-parallel)."""
