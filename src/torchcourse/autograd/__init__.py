"""Widgets and helpers for the autograd chapter."""
