"""The worker's end of the results channel, fed lines as a child running a batch of plain cells writes them:
several cells' lines can arrive in one read, and each is read as its own cell's, by its nonce."""

from __future__ import annotations

import json

from tests.helpers.warm_worker import run_with_worker

SCRIPT = r"""
import json, os

def line(nonce, **obj):
    return (json.dumps({"n": nonce, **obj}) + "\n").encode()

r, wr = os.pipe()
chan = w._Channel(r)
seen = []
# cell 0's result, cell 1's emitted value and result, and the start of cell 2's result: one write, one read
os.write(wr, line("a", result={"i": 0, "outputs": []}) + line("b", emit=["s", "v", 1])
         + line("b", result={"i": 1, "outputs": []}) + line("c", result={"i": 2, "outputs": [{"t": "x" * 50}]})[:30])
chan.start("a", ["flag from before cell 0"])
chan.feed()
seen.append([chan.result, chan.emits, chan.tampered])
chan.start("b", [])
seen.append([chan.result, chan.emits, chan.tampered])
chan.start("c", [])
seen.append([chan.result, chan.emits, chan.tampered])
os.write(wr, line("c", result={"i": 2, "outputs": [{"t": "x" * 50}]})[30:] + line("a", emit=["late"]))
chan.feed()
seen.append([chan.result, chan.emits, chan.tampered])
chan.start("d", [])
seen.append([chan.result, chan.emits, chan.tampered])
print(json.dumps(seen))
"""


def test_lines_that_arrive_together_go_to_their_own_cells(tmp_path):
    done = run_with_worker(SCRIPT, tmp_path, preload="")
    assert done.returncode == 0, done.stderr
    first, second, third, fourth, fifth = json.loads(done.stdout.splitlines()[-1])
    assert first == [{"i": 0, "outputs": []}, [], ["flag from before cell 0"]]
    assert second == [{"i": 1, "outputs": []}, [["s", "v", 1]], []]
    assert third == [None, [], []]  # only part of its line is there yet
    assert fourth == [{"i": 2, "outputs": [{"t": "x" * 50}]}, [], []]
    # what came after cell 2's result is the next cell's: a line with an earlier cell's nonce is not the grader's
    assert fifth == [None, [], ["data not written by the grader on the results channel"]]
