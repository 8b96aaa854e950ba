"""Widgets and helpers for the hardware chapter."""
