"""nbgrader configuration for the course, loaded by the repository root's nbgrader_config.py.

nbgrader's own commands (generate_assignment, autograde, formgrader, ...) work from the
repository root with solutions/ as the source and chapters/ as the release.
"""

import os

from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    IncludeHeaderFooter,
    InstantiateTests,
    LockCells,
    NbGraderPreprocessor,
    SaveCells,
)

c = get_config()  # noqa: F821

COURSE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.course_id = "torchcourse"
c.CourseDirectory.root = COURSE_ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "chapters"
# One assignment per chapter; a notebook of a chapter is any *.ipynb in its folder.
c.CourseDirectory.notebook_id = "*"
# The exchange a class shares (JupyterHub: make it mode 1777, see README); tests override it.
c.Exchange.root = os.environ.get("TORCHCOURSE_EXCHANGE", "/srv/nbgrader/exchange")

c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE_ROOT, "gradebook.db")


class StripWidgetState(NbGraderPreprocessor):
    """Drop saved widget state, so re-running solutions/ never changes the release."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return nb, resources


# A deterministic release: execution timestamps and widget ids never reach chapters/.
c.ClearOutput.remove_metadata_fields = {"collapsed", "scrolled", "execution", "ExecuteTime"}
c.GenerateAssignment.preprocessors = [
    IncludeHeaderFooter, InstantiateTests, LockCells, ClearSolutions, ClearOutput,
    CheckCellMetadata, ComputeChecksums, SaveCells, ClearHiddenTests, ClearMarkScheme,
    ComputeChecksums, CheckCellMetadata, StripWidgetState,
]
# Seconds per cell before nbgrader interrupts a learner's cell.
c.Execute.timeout = 60
