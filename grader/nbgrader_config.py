"""nbgrader configuration for the course, loaded by the repository root's nbgrader_config.py.

nbgrader's own commands (generate_assignment, autograde, formgrader, ...) work from the
repository root with solutions/ as the source and chapters/ as the release.
"""

import os
import sys
from pathlib import Path

from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    DeduplicateIds,
    IncludeHeaderFooter,
    InstantiateTests,
    LockCells,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveCells,
)

c = get_config()  # noqa: F821

COURSE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The `nbgrader` script does not put the working directory on sys.path; the course's package must import.
if COURSE_ROOT not in sys.path:
    sys.path.insert(0, COURSE_ROOT)
from grader.course import Course  # noqa: E402
from torchcourse.contract import CELL_TIMEOUT_S  # noqa: E402

# Course id, solutions/ -> chapters/, one assignment per chapter (notebook_id "*"), the gradebook and
# the exchange (TORCHCOURSE_EXCHANGE; on JupyterHub make it mode 1777, see README): one place, Course.config.
c.merge(Course(Path(COURSE_ROOT)).config())


class StripWidgetState(NbGraderPreprocessor):
    """Drop saved widget state, so re-running solutions/ never changes the release."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return nb, resources


class KeepTranslation(NbGraderPreprocessor):
    """After OverwriteCells, which restores locked cells from the gradebook's English: a notebook of a translated
    release (zh_CN/chapters/) gets its locked markdown back from that release, as the course grader's sanitise
    does, so that plain `nbgrader autograde` and `generate_feedback` also keep the language submitted."""

    def preprocess(self, nb, resources):
        from grader.sanitise import put_back_translation, submitted_language, translated_release

        where = resources["nbgrader"]
        release = translated_release(Path(COURSE_ROOT), submitted_language(nb), where["assignment"],
                                     where["notebook"])
        put_back_translation(nb, release.locked)
        return nb, resources


c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells,
                                      KeepTranslation, CheckCellMetadata]

# A deterministic release: execution timestamps and widget ids never reach chapters/.
c.ClearOutput.remove_metadata_fields = {"collapsed", "scrolled", "execution", "ExecuteTime"}
c.GenerateAssignment.preprocessors = [
    IncludeHeaderFooter, InstantiateTests, LockCells, ClearSolutions, ClearOutput,
    CheckCellMetadata, ComputeChecksums, SaveCells, ClearHiddenTests, ClearMarkScheme,
    ComputeChecksums, CheckCellMetadata, StripWidgetState,
]
# Seconds per cell before nbgrader interrupts a learner's cell: the course's one cell limit, as in the grader.
c.Execute.timeout = CELL_TIMEOUT_S
