"""The course's grading package: `python -m grader --help` lists its commands."""

import os
import sys

# nbgrader runs `alembic` from PATH when it creates a gradebook: make the environment's own tools findable.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

# jsonschema checks the "iri" formats with rfc3987-syntax when it is installed (jupyter-events pulls it in),
# and that module builds a Lark parser when imported: seconds of every grader command's start, here before
# the first notebook is read. No schema the grader validates against (nbformat's, nbgrader's cell
# metadata) uses those formats, so jsonschema is told the module is absent.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
