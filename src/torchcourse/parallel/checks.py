"""A helper for chapter 3's check cells (``chapters/03-parallel/*.ipynb``, every Exercises section).

``grading.call`` turns any exception into ``{"error": ...}`` so that a wrong answer fails with the check's
own ``CheckFailed``. An exercise nobody has answered yet should instead stop where the learner expects,
with the ``NotImplementedError`` of the released answer cell: ``answered`` restores exactly that case.
"""

from __future__ import annotations

from typing import Any


def answered(got: Any) -> Any:
    """``got`` unchanged, unless it records an unanswered exercise: then raise ``NotImplementedError``."""
    if type(got) is dict and set(got) == {"error"} and str(got["error"]).startswith("NotImplementedError"):
        raise NotImplementedError("this exercise is not answered yet: replace `raise NotImplementedError()` "
                                  "in the answer cell above with your code")
    return got
