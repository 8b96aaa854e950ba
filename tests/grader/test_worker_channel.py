"""The sandbox's results channel, read by the worker: only lines carrying the cell's nonce count; anything
else on it is learner code writing there, recorded as tampering. And how a checks cell is split."""

from __future__ import annotations

import functools
import json
import os

from grader.sandbox import split_cells


@functools.cache
def _worker():
    """grader/worker.py, loaded once (it sets torch's thread counts, which may be set only once)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("grader_worker_child", Path("grader/worker.py"))
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    return worker


def _channel(lines: list[bytes], nonce: str = "n1"):
    worker = _worker()
    r, w = os.pipe()
    chan = worker._Channel(r)
    chan.start(nonce)
    os.write(w, b"".join(lines))
    os.close(w)
    while not chan.eof:
        chan.feed()
    os.close(r)
    return chan


def test_only_lines_with_the_cells_nonce_count():
    good = [json.dumps({"n": "n1", "emit": {"slug": "s", "name": "a", "value": 1}}).encode() + b"\n",
            json.dumps({"n": "n1", "result": {"i": 0, "status": "ok", "outputs": []}}).encode() + b"\n"]
    forged = [json.dumps({"n": "guess", "result": {"i": 0, "status": "ok", "outputs": []}}).encode() + b"\n",
              b'{"i": 1, "status": "ok", "outputs": []}\n', b"not json\n"]
    chan = _channel(forged[:1] + good + forged[1:])
    assert chan.emits == [{"slug": "s", "name": "a", "value": 1}]
    assert chan.result == {"i": 0, "status": "ok", "outputs": []}
    assert chan.tampered == ["data not written by the grader on the results channel"] * 3


def test_tampering_records_are_kept_and_a_second_result_is_ignored():
    lines = [json.dumps({"n": "n1", "tampered": ["sys.settrace called from notebook code"]}).encode() + b"\n",
             json.dumps({"n": "n1", "result": {"i": 0, "status": "error", "outputs": []}}).encode() + b"\n",
             json.dumps({"n": "n1", "result": {"i": 0, "status": "ok", "outputs": []}}).encode() + b"\n"]
    chan = _channel(lines)
    assert chan.tampered == ["sys.settrace called from notebook code"] and chan.result["status"] == "error"


def test_a_checks_cell_is_split_into_its_visible_part_and_its_hidden_block():
    cell = "expect(f(1))\n### BEGIN HIDDEN TESTS\nsecret(f)\n### END HIDDEN TESTS\n"
    assert split_cells(["x = 1", cell], [1]) == [{"source": "x = 1", "hidden": None},
                                               {"source": "expect(f(1))", "hidden": "secret(f)"}]
