"""The sandbox-to-judge wire format (grader/wire.py): typed, and its JSON the same as before."""

from __future__ import annotations

import json

from grader.pools import Job
from grader.sandbox import parse_results
from grader.wire import CellResult, CellStatus, JobKey, RawResult, RunStatus


def test_statuses_are_str_enums_whose_json_is_unchanged():
    raw = RawResult("timeout", {0: CellResult.parse({"i": 0, "status": "ok", "outputs": [], "emits": []})})
    assert raw.status is RunStatus.TIMEOUT and raw.status == "timeout" and f"{raw.status}" == "timeout"
    assert raw.cells[0].status is CellStatus.OK
    data = json.loads(json.dumps(raw.to_dict()))
    assert data["status"] == "timeout" and data["cells"]["0"]["status"] == "ok"
    again = RawResult.from_dict(data)
    assert again == raw and isinstance(again.cells[0], CellResult)
    # a reply naming a status the grader does not know is the grader's trouble, never a learner's result
    assert RawResult("rebooted", {}).status is RunStatus.WORKER_ERROR
    assert {s for s in RunStatus if s.grader_side} == {RunStatus.WORKER_ERROR, RunStatus.WORKER_DIED}
    # a cell that does not parse travels as an error result of its index, never as a dict
    assert RawResult.from_dict({**data, "cells": {"0": {"i": 0, "status": "passed"}}}).cells[0] == \
        CellResult(0, CellStatus.ERROR)


def test_a_cell_result_is_parsed_strictly_and_read_by_attribute(tmp_path):
    good = {"i": 1, "status": "error", "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}],
            "emits": [{"name": "a", "value": 1}], "shown": 1, "tampered": ["t"], "execution_count": 2}
    lines = [{"i": 0, "status": "passed", "outputs": []},      # not a cell status
             {"i": 5, "status": "ok", "outputs": []},          # beyond the notebook
             {"i": "1", "status": "ok", "outputs": []},        # not an index
             {"i": 1, "status": "ok", "outputs": "no"},        # outputs not a list
             good, {**good, "status": "ok"}]                   # the first valid line per cell wins
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    cells = parse_results(path, 3)
    assert list(cells) == [1]
    cell = cells[1]
    assert cell.status is CellStatus.ERROR and cell.shown == 1 and cell.tampered == ["t"]
    assert cell.outputs == good["outputs"] and cell.emits == good["emits"]
    assert not hasattr(cell, "get") and not hasattr(cell, "__getitem__")  # read by attribute, never as a dict
    # a line without emitted values stays distinguishable from one that emitted nothing
    assert CellResult.parse({"i": 0, "status": "ok", "outputs": []}).emits is None


def test_a_job_key_names_student_and_notebook():
    job = Job(JobKey("ada", "a-basics"), ["1"], 0, [])
    assert (job.key.student, job.key.notebook) == ("ada", "a-basics") and job.key == ("ada", "a-basics")
    assert JobKey(None, "a-basics").student is None  # the solution's job
