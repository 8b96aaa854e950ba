"""Every row of a gradebook's grade tables, with nbgrader's generated ids replaced by what they stand for:
two gradebooks written by different graders for the same class compare equal when their rows are the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_SUBMISSION = ("join submitted_notebook sn on sn.id = {t}.notebook_id join notebook n on n.id = sn.notebook_id "
               "join submitted_assignment s on s.id = sn.assignment_id")


def gradebook_rows(db_path: Path) -> dict[str, list[tuple]]:
    con = sqlite3.connect(db_path)
    try:
        def q(sql: str) -> list[tuple]:
            return sorted((tuple(r) for r in con.execute(sql)), key=repr)

        return {
            "student": q("select * from student"),
            "submitted_assignment": q("select a.name, s.student_id, s.timestamp, s.extension "
                                      "from submitted_assignment s join assignment a on a.id = s.assignment_id"),
            "submitted_notebook": q("select s.student_id, n.name, sn.late_submission_penalty, sn.flagged "
                                    "from submitted_notebook sn join notebook n on n.id = sn.notebook_id "
                                    "join submitted_assignment s on s.id = sn.assignment_id"),
            "grade": q("select s.student_id, n.name, c.name, c.type, g.auto_score, g.manual_score, g.extra_credit, "
                       "g.needs_manual_grade from grade g join base_cell c on c.id = g.cell_id "
                       + _SUBMISSION.format(t="g")),
            "comment": q("select s.student_id, n.name, c.name, c.type, m.auto_comment, m.manual_comment "
                         "from comment m join base_cell c on c.id = m.cell_id " + _SUBMISSION.format(t="m")),
        }
    finally:
        con.close()
