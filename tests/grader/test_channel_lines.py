"""The worker's end of the results channel, fed lines as a child running a batch of plain cells writes them:
several cells' lines can arrive in one read, and each is read as its own cell's, by its nonce."""

from __future__ import annotations

import json
import os

import pytest

from grader.inside.channel import _Channel, _record
from grader.limits import parse_bounded
from grader.sandbox import parse_results


def line(nonce, **obj) -> bytes:  # a line as the child writes it
    return (json.dumps({"n": nonce, **obj}) + "\n").encode()


@pytest.fixture
def pipe():
    """(the channel on a pipe's read end, the write end)."""
    r, wr = os.pipe()
    yield _Channel(r), wr
    os.close(r)
    os.close(wr)


def got(chan: _Channel) -> list:  # the result as the worker keeps it: the bytes the child wrote, read here as JSON
    return [None if chan.result is None else json.loads(chan.result), [json.loads(e) for e in chan.emits],
            chan.tampered]


def test_lines_that_arrive_together_go_to_their_own_cells(pipe):
    chan, wr = pipe
    # cell 0's result, cell 1's emitted value and result, and the start of cell 2's result: one write, one read
    os.write(wr, line("a", result={"i": 0, "outputs": []}) + line("b", emit=["s", "v", 1])
             + line("b", result={"i": 1, "outputs": []})
             + line("c", result={"i": 2, "outputs": [{"t": "x" * 50}]})[:30])
    chan.start("a", ["flag from before cell 0"])
    chan.feed()
    assert got(chan) == [{"i": 0, "outputs": []}, [], ["flag from before cell 0"]]
    chan.start("b", [])
    assert got(chan) == [{"i": 1, "outputs": []}, [["s", "v", 1]], []]
    chan.start("c", [])
    assert got(chan) == [None, [], []]  # only part of its line is there yet
    os.write(wr, line("c", result={"i": 2, "outputs": [{"t": "x" * 50}]})[30:] + line("a", emit=["late"]))
    chan.feed()
    assert got(chan) == [{"i": 2, "outputs": [{"t": "x" * 50}]}, [], []]
    chan.start("d", [])
    # what came after cell 2's result is the next cell's: a line with an earlier cell's nonce is not the grader's
    assert got(chan) == [None, [], ["data not written by the grader on the results channel"]]


def test_the_results_file_holds_the_workers_keys_whatever_the_result_claimed(pipe, tmp_path):
    """The child's result goes to the results file as it came, with the worker's keys appended: the cell's
    index, emitted values and flags are the worker's even where the result claimed its own, and a line with
    the nonce that is not a result as the child writes one is a flag, not a result."""
    chan, wr = pipe
    claims = {"i": 0, "status": "ok", "outputs": [], "emits": [["forged"]], "tampered": [], "seconds": 0.1}
    os.write(wr, line("a", emit=["real", {"k": 1.5}]) + json.dumps({"emit": ["reordered"], "n": "a"}).encode()
             + b"\n" + line("a", result=claims) + line("b", result={"status": "ok", "outputs": []}))
    chan.start("a", ["a flag"])
    chan.feed()
    first = _record(3, chan.result, chan.emits, chan.tampered)
    chan.start("b", [])
    result, flags, unfinished = chan.result, chan.tampered, _record(4, chan.result, chan.emits, chan.tampered)
    # forged lines with the nonce that open as the child's own but do not parse: the record they make cannot either
    os.write(wr, b'{"n": "c", "emit": [1, }\n{"n": "c", "result": {"i": 5, "outputs": [}\n')
    chan.start("c", ["a flag the unreadable line takes with it"])
    chan.feed()
    forged = _record(5, chan.result, chan.emits, chan.tampered)
    results = tmp_path / "results.jsonl"
    results.write_bytes(first + unfinished + forged)
    cells = parse_results(results, 10)  # as the grader reads the worker's file
    first, unfinished = cells[3], cells[4]
    # an emitted value goes through as written; a line with the nonce that is not one as the guard writes it
    # (its keys in another order) is a flag, not a value
    assert (first.i, first.status, first.emits, first.tampered, first.seconds) == \
        (3, "ok", [["real", {"k": 1.5}]], ["a flag", "a malformed emitted value on the results channel"], 0.1)
    assert result is None and flags == ["a malformed result on the results channel"]
    assert (unfinished.i, unfinished.status, unfinished.outputs, unfinished.tampered) == \
        (4, "unfinished", [], ["a malformed result on the results channel"])
    # a record that does not parse is still the worker's: its cell is flagged, not dropped with its flags
    assert parse_bounded(forged)[0] is None
    assert (cells[5].status, cells[5].emits, cells[5].tampered) == \
        ("unfinished", None, ["the cell's results could not be read: a line with its nonce, not written by the "
                              "grader, on the results channel"])
    assert sorted(cells) == [3, 4, 5]
