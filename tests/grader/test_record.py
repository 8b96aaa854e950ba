"""The grade record (grader/record.py): one exercise type and one status vocabulary, judge's and the record's;
what is written is what `load` reads back."""

from __future__ import annotations

import json

from grader.record import Exercise, ExerciseStatus, GradeRecord, RunInfo, load


def _record(**changes) -> GradeRecord:
    rec = GradeRecord(student="ann", chapter="ch", seed=1, submission="h", submitted_at=None, score=2.0,
                      max_score=5.0, exercises=[Exercise("ex", "nb", 2.0, 2.0, ExerciseStatus.PASSED),
                                                Exercise("ey", "nb", 3.0, 0.0, ExerciseStatus.UNVERIFIED)],
                      flags=[], runs={"nb": RunInfo("exited", 1.5, 0, None)}, graded_at="2026-12-05T12:00:00")
    for key, value in changes.items():
        setattr(rec, key, value)
    return rec


def test_a_record_reads_back_as_written_with_its_statuses_typed(tmp_path):
    path = tmp_path / "record.json"
    path.write_text(json.dumps(_record().to_dict()))
    back = load(path)
    assert back == _record() == _record().bounded()
    assert [type(e.status) for e in back.exercises] == [ExerciseStatus, ExerciseStatus]
    assert json.loads(path.read_text())["exercises"][1]["status"] == "unverified"  # the JSON is the word


def test_a_status_outside_the_vocabulary_makes_the_record_unusable(tmp_path):
    data = _record().to_dict()
    data["exercises"][0]["status"] = "great"
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    assert load(path) is None


def test_bounded_is_what_load_reads_back():
    long = _record(flags=["x" * 100_000])
    assert long.bounded().flags[0].endswith("[... cut by the grader]") and long.bounded() == long.bounded().bounded()
