"""Widgets and helpers for the tensors chapter."""
