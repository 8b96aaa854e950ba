"""The course's grading package: `python -m grader --help` lists its commands."""

import os
import sys

# nbgrader runs `alembic` from PATH when it creates a gradebook: make the environment's own tools findable.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")
