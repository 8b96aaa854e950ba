"""The sandbox's parsing of what comes back (no sandbox is started): cell lines are claims, capped and
checked; the worker's ready line says what it could not import."""

from __future__ import annotations

import json

from grader import limits
from grader.sandbox import RawResult, parse_results, preload_errors
from grader.wire import CellResult


def test_results_lines_are_checked_and_the_first_claim_wins(tmp_path):
    lines = [
        {"i": 0, "status": "ok", "outputs": []},
        {"i": 0, "status": "error", "outputs": []},          # a second claim for cell 0: ignored
        {"i": 1, "status": "passed", "outputs": []},         # not a status a cell can have
        {"i": 2, "status": "ok", "outputs": "x"},            # outputs not a list
        {"i": "3", "status": "ok", "outputs": []},           # index not an int
        {"i": 9, "status": "ok", "outputs": []},             # past the last cell
        {"i": 4, "status": "output_limit", "outputs": []},
        ["not", "a", "dict"],
    ]
    data = "\n".join(json.dumps(x) for x in lines) + "\n{broken json\n" + "[" * 100_000 + "\n"
    (tmp_path / "results.jsonl").write_text(data)
    cells = parse_results(tmp_path / "results.jsonl", 5)
    assert {i: c.status for i, c in cells.items()} == {0: "ok", 4: "output_limit"}


def test_a_record_of_the_workers_that_is_not_a_cell_result_is_flagged_unless_it_is_over_a_bound(tmp_path):
    """Lines as the worker's channel._record writes them (the worker's own opening, then what the child sent): a record
    that does not read as a cell's result can only come from a forged line with the cell's nonce."""
    from grader.limits import LINE_OBJECTS

    flag = ["the cell's results could not be read: a line with its nonce, not written by the grader, on the "
            "results channel"]
    records = [
        b'{"w": 0, "outputs": [}',                                                     # not JSON
        b'{"w": 1, "outputs": ["' + b"{" * (LINE_OBJECTS + 1) + b'", }',               # not JSON, braces in a string
        b'{"w": 2, "i": 0, "status": "passed", "outputs": [], "emits": [], "i": 2}',  # no cell's status
        b'{"w": 3, "outputs": [' + b"{}, " * (LINE_OBJECTS + 1) + b'{}], "status": "ok", "i": 3}',  # too many objects
        b'{"w": 9, "outputs": [}',                                                     # past the last cell
        b'{"i": 4, "outputs": [}',                                                     # not the worker's opening
    ]
    (tmp_path / "results.jsonl").write_bytes(b"\n".join(records) + b"\n")
    cells = parse_results(tmp_path / "results.jsonl", 5)
    assert sorted(cells) == [0, 1, 2]
    assert all((c.status, c.emits, c.tampered) == ("unfinished", None, flag) for c in cells.values())


def test_results_beyond_the_cap_are_not_read(tmp_path, monkeypatch):
    first = json.dumps({"i": 0, "status": "ok", "outputs": []}) + "\n"
    (tmp_path / "results.jsonl").write_text(first + json.dumps({"i": 1, "status": "ok", "outputs": []}) + "\n")
    monkeypatch.setattr(limits, "RESULTS_BYTES", len(first) + 5)  # the one cap, read when a job is read
    assert list(parse_results(tmp_path / "results.jsonl", 2)) == [0]
    assert parse_results(tmp_path / "absent.jsonl", 2) == {}


def test_the_ready_line_names_each_module_that_failed_to_preload():
    ready = {"ready": True, "preload_errors": {"torchcourse.zz": "RuntimeError: half-written", "ipywidgets":
                                               "ModuleNotFoundError: No module named 'ipywidgets'"}}
    assert preload_errors(ready) == ["ipywidgets: ModuleNotFoundError: No module named 'ipywidgets'",
                                     "torchcourse.zz: RuntimeError: half-written"]
    assert preload_errors({"ready": True}) == [] and preload_errors({"preload_errors": ["x"]}) == []


def test_a_raw_result_travels_through_dask_intact():
    raw = RawResult("timeout", {0: CellResult.parse({"i": 0, "status": "ok", "outputs": []})}, 1.5, None, 9, "boom",
                    ["torchcourse: ImportError: x"])
    again = RawResult.from_dict(json.loads(json.dumps(raw.to_dict())))
    assert again == raw
    old = raw.to_dict()
    del old["preload_errors"]  # from a worker that predates the field
    assert RawResult.from_dict(old).preload_errors == []


def test_a_checks_cell_is_split_into_its_visible_part_and_its_hidden_block():
    from grader.sandbox import split_cells

    cell = "expect(f(1))\n### BEGIN HIDDEN TESTS\nsecret(f)\n### END HIDDEN TESTS\n"
    assert split_cells(["x = 1", cell], [1]) == [{"source": "x = 1", "hidden": None},
                                               {"source": "expect(f(1))", "hidden": "secret(f)"}]
