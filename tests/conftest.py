"""Test-suite set-up. Helpers are imported from the ``tests.helpers`` package (pytest puts the repository
root on ``sys.path``: ``pythonpath`` in pyproject.toml); conftest files hold fixtures only."""
