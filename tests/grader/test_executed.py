"""The autograded notebook (grader/executed.py): built from the sandbox's untrusted claims, only valid outputs
kept, bounded in total, the learner's markdown made inert and the chapter's own left as it is."""

from __future__ import annotations

import json

import nbformat

from grader import executed as executed_mod
from grader.executed import JSON_DEPTH, _clean_output, chapter_markdown, executed_notebook
from grader.sanitise import Sanitised
from grader.wire import RawResult
from tests.helpers.tiny import cell, solution_nb


def test_the_executed_notebook_keeps_only_valid_outputs(tmp_path):
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    sub = Sanitised(nb, code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, [])
    forged = [{"output_type": "stream", "name": "stdin", "text": "x"},        # not a stream a cell writes
              {"output_type": "stream", "name": "stdout", "text": 5},
              {"output_type": "display_data", "data": {"text/html": "<b>ok</b>", "application/x-evil": "x",
                                                       "text/plain": ["not", "a", "str"]}},
              {"output_type": "execute_result", "data": {"text/plain": "1"}, "execution_count": "9"},
              "junk",
              {"output_type": "stream", "name": "stdout", "text": "hello\n"}]
    run = RawResult("exited", {0: cell(0), 1: cell(1, forged)}, 1.0, None, 11, "")
    out = executed_notebook(sub, run)
    cells = [out.cells[i] for i in code]
    assert cells[1].outputs == [
        nbformat.v4.new_output("display_data", data={"text/html": "<b>ok</b>"}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=None),
        nbformat.v4.new_output("stream", name="stdout", text="hello\n")]
    assert cells[2].outputs[0]["ename"] == "GraderCrashed" and cells[3].outputs == []
    nbformat.validate(out)


def test_every_output_the_grader_keeps_from_any_claim_is_valid_nbformat():
    """executed_notebook checks the learner's notebook against nbformat's schema but not the outputs, which
    _clean_output builds: whatever a result line claims, what it keeps must be valid on its own."""
    import itertools

    values = [None, True, False, -1, 0, 7, 2**70, 1.5, "", "s", "\ud800", ["a", "b"], [1], {}, {"k": "v"},
              {"text/plain": "x"}, {"text/plain": ["x", "y"]}, {"text/plain": 3}, {"application/json": {"a": [1]}},
              {"application/vnd.x+json": 3}, {"application/xjson": {"a": 1}}, {"image/png": 5},
              {"image/svg+xml": "<svg/>"}, {"text/html": "<script>x</script><b>b</b>"}, {"": "x"},
              {"metadata": {"a": 1}}, {"application/javascript": "alert(1)"}]
    kept = 0
    for kind in ("stream", "display_data", "execute_result", "error", "update_display_data", "x", None, 5):
        for k, (a, b) in enumerate(itertools.product(values, repeat=2)):
            c = values[k * 7 % len(values)]
            for claim in ({"output_type": kind, "name": a, "text": b, "extra": c},
                          {"output_type": kind, "name": "stdout", "text": a},
                          {"output_type": kind, "data": a, "metadata": b, "execution_count": c},
                          {"output_type": kind, "data": {"text/plain": "x", "application/json": a, "text/html": b},
                           "execution_count": c},
                          {"output_type": kind, "ename": a, "evalue": b, "traceback": c},
                          {"output_type": kind, "ename": "E", "evalue": "v", "traceback": [a, b]}):
                out = _clean_output(claim)
                if out is None:
                    continue
                kept += 1
                nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[out])])
                nbformat.validate(nb)
    assert kept > 1000  # the claims above reach every kind the grader keeps


def test_a_json_output_is_kept_as_parsed_unless_it_nests_too_deep_to_write():
    def nested(depth):
        v: object = 1
        for k in range(depth):
            v = [v] if k % 2 else {"k": v}
        return v

    for depth in (0, 1, JSON_DEPTH):
        value = nested(depth)
        out = _clean_output({"output_type": "display_data", "data": {"application/json": value}})
        assert out is not None and out["data"]["application/json"] == value
        json.dumps(out)
    assert _clean_output({"output_type": "display_data", "data": {"application/json": nested(JSON_DEPTH + 1)}}) \
        is None


def test_an_autograded_notebook_keeps_outputs_up_to_its_bound_in_order_and_says_what_it_left_out(monkeypatch):
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    sub = Sanitised(nb, code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, [])

    def out(k):
        return {"output_type": "stream", "name": "stdout", "text": f"{k}" * 600}

    size = len(json.dumps(nbformat.from_dict(out(0))))
    run = RawResult("exited", {0: cell(0, [out(0), out(1), out(2)]), 1: cell(1, [out(3)])}, 1.0, 0)
    texts = lambda nbk, pos: [o["text"][:1] for o in nbk.cells[code[pos]].outputs]  # noqa: E731
    # Exactly room for all four: every one is kept.
    monkeypatch.setattr(executed_mod, "NOTEBOOK_OUTPUT_BYTES", 4 * size)
    kept = executed_notebook(sub, run)
    assert texts(kept, 0) == ["0", "1", "2"] and texts(kept, 1) == ["3"]
    # One byte less: the first three are kept, the fourth is left out and the cell says so.
    monkeypatch.setattr(executed_mod, "NOTEBOOK_OUTPUT_BYTES", 4 * size - 1)
    cut = executed_notebook(sub, run)
    assert texts(cut, 0) == ["0", "1", "2"] and texts(cut, 1) == ["["]
    assert cut.cells[code[1]].outputs[0]["text"].startswith("[outputs left out: the notebook's outputs are over")
    # Room for two and a half: the third output and everything after it are left out.
    monkeypatch.setattr(executed_mod, "NOTEBOOK_OUTPUT_BYTES", 2 * size + size // 2)
    cut = executed_notebook(sub, run)
    assert texts(cut, 0) == ["0", "1", "["] and texts(cut, 1) == ["["]
    monkeypatch.setattr(executed_mod, "NOTEBOOK_OUTPUT_BYTES", 100 * size)
    assert executed_notebook(sub, run).cells[code[0]].outputs == kept.cells[code[0]].outputs
    nbformat.validate(cut)


def test_a_notebook_invalid_outside_its_outputs_keeps_no_outputs():
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    md = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    nb.cells[md]["execution_count"] = 3  # no key a markdown cell may have
    sub = Sanitised(nb, code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, [])
    run = RawResult("exited", {0: cell(0, [{"output_type": "stream", "name": "stdout", "text": "hi\n"}])}, 1.0, 0)
    out = executed_notebook(sub, run)
    assert all(out.cells[i].outputs == [] for i in code)
    good = executed_notebook(Sanitised(solution_nb(), code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, []), run)
    assert good.cells[code[0]].outputs == [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]


def test_only_a_learners_markdown_is_rendered_to_be_checked_the_chapters_own_is_left_as_it_is():
    # The chapter's own markdown (every cell of its solutions) was rendered and cleaned once a batch, 0.2 s for
    # chapter 1; a cell whose text is not the chapter's is the learner's and is still made inert.
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    own, theirs = "[a](javascript:alert(1))", "[b](javascript:alert(2))"
    nb.cells[0].source = own
    sol = Sanitised(nb, code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, [])
    sub = Sanitised(nbformat.from_dict(json.loads(json.dumps(nb))), code, sol.grade_cells, sol.points, [])
    sub.nb.cells.append(nbformat.v4.new_markdown_cell(theirs))
    run = RawResult("exited", {}, 1.0, 0)
    out = executed_notebook(sub, run, chapter_markdown({"nb": sol}))
    assert out.cells[0].source == own and out.cells[-1].source != theirs and "javascript" not in out.cells[-1].source
    assert "javascript" not in executed_notebook(sub, run).cells[0].source  # not the chapter's: checked
