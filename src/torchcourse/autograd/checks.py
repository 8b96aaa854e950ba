"""A helper for chapter 2's check cells (until ``torchcourse.grading`` offers one).

``grading.call`` turns any exception of the learner's code into ``{"error": ...}``, so that a wrong
answer fails as ``CheckFailed``. An *unanswered* exercise should instead stop with nbgrader's
``NotImplementedError``, as chapter 1's checks do; ``answered(got)`` restores that.
"""

from __future__ import annotations

from typing import Any


def answered(got: Any) -> Any:
    """``got`` unchanged, unless it records the ``NotImplementedError`` of an unanswered exercise."""
    if type(got) is dict and set(got) == {"error"} and str(got["error"]).startswith("NotImplementedError"):
        raise NotImplementedError("this exercise is not answered yet: write your answer in the cell above")
    return got
