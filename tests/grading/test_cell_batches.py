"""A run of plain cells goes to the job's child in one message, and the child runs them without waiting for
the worker in between; each cell still has its own limit, its own result and its own flags, and a checks
cell still goes alone, after the worker has checked the channel again."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.grading

# Writes a line with a nonce of its own on every pipe the job holds: the results channel is one of them.
FORGE = ("import os\nfor fd in map(int, os.listdir('/proc/self/fd')):\n"
         "    try:\n        if os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:'):\n"
         "            os.write(fd, b'{\"n\": \"forged\", \"result\": {\"i\": 0, \"outputs\": []}}\\n')\n"
         "    except OSError:\n        pass\nprint('forged')")
CHECKS = "print('visible', x)\n### BEGIN HIDDEN TESTS\nprint('hidden', x + 1)\n### END HIDDEN TESTS"


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs)


def test_each_cell_of_a_batch_keeps_its_own_limit_result_and_flags():
    from grader.sandbox import Limits, SandboxWorker
    from grader.wire import CellStatus, RunStatus

    quick = [f"print('quick', {k})" for k in range(6)]  # results close together: several arrive in one read
    cells = ["import time\nx = 1\ntime.sleep(1.3)\nprint('slow 0')",
             "time.sleep(1.3)\nprint('slow 1')",  # 2.6 s after the batch was sent, 1.3 s after cell 0 ended
             "while True:\n    pass",             # interrupted at its own limit; the cells after it still run
             FORGE,
             *quick,
             CHECKS,
             "print('last')"]
    checks = len(cells) - 2
    with SandboxWorker(Limits(cell_timeout=2, budget=60)) as w:
        raw = w.run(cells, seed=1, watch=[checks])
    assert raw.status is RunStatus.EXITED, raw
    assert sorted(raw.cells) == list(range(len(cells)))
    got = {i: (c.status, _text(c)) for i, c in raw.cells.items()}
    assert got[0] == (CellStatus.OK, "slow 0\n") and got[1] == (CellStatus.OK, "slow 1\n")
    assert got[2][0] is CellStatus.ERROR
    assert [o.get("ename") for o in raw.cells[2].outputs if o.get("output_type") == "error"] == ["KeyboardInterrupt"]
    assert got[3] == (CellStatus.OK, "forged\n")
    assert [got[4 + k] for k in range(6)] == [(CellStatus.OK, f"quick {k}\n") for k in range(6)]
    assert got[checks] == (CellStatus.OK, "visible 1\nhidden 2\n")
    assert got[checks + 1] == (CellStatus.OK, "last\n")
    # the forged line is flagged on the cell that wrote it, and on no other
    assert {i for i, c in raw.cells.items() if c.tampered} == {3}
    assert raw.cells[3].tampered == ["data not written by the grader on the results channel"]
    assert [raw.cells[i].execution_count for i in sorted(raw.cells)] == list(range(1, len(cells) + 1))


# Ends its own cell (cell 1) early: a result line with the cell's real nonce (read from the guard's state among
# the child's objects), written on every pipe the job holds (the results channel is one of them), then it goes
# on running.
EARLY = ("import gc, json, os, time\n"
         "state = next(o for o in gc.get_objects() if type(o) is dict and 'nonce' in o and 'busy' in o)\n"
         "line = (json.dumps({'n': state['nonce'], 'result': {'i': 1, 'status': 'ok', 'outputs': []}}) + '\\n')\n"
         "for fd in map(int, os.listdir('/proc/self/fd')):\n"
         "    try:\n        if os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:'):\n"
         "            os.write(fd, line.encode())\n"
         "    except OSError:\n        pass\n"
         "time.sleep(30)")


def test_a_cell_that_says_it_ended_while_still_running_is_flagged_and_stopped_on_the_workers_clock():
    import time

    from grader.sandbox import Limits, SandboxWorker

    cells = ["x = 1", EARLY, CHECKS, "print('last')"]
    start = time.monotonic()
    with SandboxWorker(Limits(cell_timeout=2, budget=60)) as w:
        raw = w.run(cells, seed=1, watch=[2])
    assert time.monotonic() - start < 25  # the sleep of 30 s was cut on the worker's clock
    assert any("came before the cell had ended" in t for t in raw.cells[2].tampered), raw.cells[2]


def test_a_checks_cell_runs_its_own_text_when_an_earlier_job_ran_another_at_the_same_place():
    """The worker compiles each checks cell once for the checkers of later jobs: a cell at the same place with
    other text, or text that does not compile, is not run from what an earlier job compiled."""
    from grader.sandbox import Limits, SandboxWorker
    from grader.wire import CellStatus

    other = "print('other', x)\n### BEGIN HIDDEN TESTS\nprint('other hidden', x * 10)\n### END HIDDEN TESTS"
    broken = "print('broken'\n### BEGIN HIDDEN TESTS\nprint('never')\n### END HIDDEN TESTS"
    with SandboxWorker(Limits(cell_timeout=10, budget=60)) as w:
        runs = [w.run([f"x = {k}", cell], seed=1, watch=[1])
                for k, cell in enumerate([CHECKS, other, CHECKS, broken, other], start=1)]
    got = [(r.cells[1].status, _text(r.cells[1])) for r in runs]
    assert got[:3] == [(CellStatus.OK, "visible 1\nhidden 2\n"), (CellStatus.OK, "other 2\nother hidden 20\n"),
                       (CellStatus.OK, "visible 3\nhidden 4\n")]
    assert got[3][0] is CellStatus.ERROR
    assert [o.get("ename") for o in runs[3].cells[1].outputs if o.get("output_type") == "error"] == ["SyntaxError"]
    assert got[4] == (CellStatus.OK, "other 5\nother hidden 50\n")
