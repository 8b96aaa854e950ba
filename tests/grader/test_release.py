"""release's leak finders: the second, independent line of defence after nbgrader's own stripping."""

from __future__ import annotations

import nbformat

from grader.release import find_leaks, find_site_leaks
from tests.helpers.tiny import SECRET_X, SECRET_Y, by_id, released_nb, solution_nb, write

SOLUTION_LINE = "return x * 2"  # short: under the secret-line length, never reported


def _course(tmp_path, released=None):
    write(solution_nb(), tmp_path / "solutions" / "ch" / "nb.ipynb")
    write(released if released is not None else released_nb(), tmp_path / "chapters" / "ch" / "nb.ipynb")
    return tmp_path


def test_a_clean_release_has_no_leaks(tmp_path):
    root = _course(tmp_path)
    assert find_leaks(root / "solutions" / "ch", root / "chapters" / "ch") == []
    assert find_site_leaks(root) == []


def test_a_hidden_line_in_the_release_is_found(tmp_path):
    nb = released_nb()
    by_id(nb, "ex").source += "\n" + SECRET_X
    root = _course(tmp_path, nb)
    problems = find_leaks(root / "solutions" / "ch", root / "chapters" / "ch")
    assert problems == [f"{root}/chapters/ch/nb.ipynb: contains solution or hidden-test line {SECRET_X!r}"]


def test_a_marker_in_the_release_is_found(tmp_path):
    nb = released_nb()
    by_id(nb, "ey").source += "\n### BEGIN HIDDEN TESTS\n"
    root = _course(tmp_path, nb)
    problems = find_leaks(root / "solutions" / "ch", root / "chapters" / "ch")
    assert problems == [f"{root}/chapters/ch/nb.ipynb: contains the marker '### BEGIN HIDDEN TESTS'"]


def test_a_long_solution_line_in_the_release_is_found(tmp_path):
    sol = solution_nb()
    by_id(sol, "ex-answer").source = ("def double(x):\n    ### BEGIN SOLUTION\n    doubled = x + x  # the answer\n"
                                      "    return doubled\n    ### END SOLUTION\n")
    released = released_nb()
    by_id(released, "ex-answer").source = "def double(x):\n    doubled = x + x  # the answer\n"
    write(sol, tmp_path / "solutions" / "ch" / "nb.ipynb")
    write(released, tmp_path / "chapters" / "ch" / "nb.ipynb")
    problems = find_leaks(tmp_path / "solutions" / "ch", tmp_path / "chapters" / "ch")
    assert problems == [f"{tmp_path}/chapters/ch/nb.ipynb: contains solution or hidden-test line "
                        "'doubled = x + x  # the answer'"]


def test_short_lines_comments_and_lines_shown_anyway_are_no_secret(tmp_path):
    sol = solution_nb()
    by_id(sol, "ex").source = ("expect_equal(double(1), 2)\n### BEGIN HIDDEN TESTS\n# a comment that is long\n"
                               "expect_equal(double(1), 2)\nx = 1\n### END HIDDEN TESTS\n")
    released = released_nb()
    by_id(released, "ex").source = "expect_equal(double(1), 2)\n# a comment that is long\nx = 1\n" + SOLUTION_LINE
    write(sol, tmp_path / "solutions" / "ch" / "nb.ipynb")
    write(released, tmp_path / "chapters" / "ch" / "nb.ipynb")
    assert find_leaks(tmp_path / "solutions" / "ch", tmp_path / "chapters" / "ch") == []


def test_a_notebook_that_was_not_released_is_a_problem(tmp_path):
    root = _course(tmp_path)
    write(solution_nb(), root / "solutions" / "ch" / "other.ipynb")
    assert find_leaks(root / "solutions" / "ch", root / "chapters" / "ch") == [
        f"{root}/chapters/ch/other.ipynb: not released"]


def test_the_table_of_contents_may_not_publish_solutions(tmp_path):
    root = _course(tmp_path)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: chapters/ch/nb\n"
                                   "- file: ./solutions/ch/nb\n  sections:\n  - glob: 'solutions/*'\n")
    assert find_site_leaks(root) == ["_toc.yml:5: the site would publish './solutions/ch/nb'",
                                     "_toc.yml:7: the site would publish 'solutions/*'"]


def test_book_pages_and_a_built_site_are_searched(tmp_path):
    root = _course(tmp_path)
    (root / "book").mkdir()
    (root / "book" / "page.md").write_text(f"Some words.\n\n    {SECRET_Y}\n")
    (root / "book" / "_ext").mkdir()
    (root / "book" / "_ext" / "strip.py").write_text("MARK = '### BEGIN HIDDEN TESTS'\n")  # build code: allowed
    html = root / "_build" / "html" / "ch"
    html.mkdir(parents=True)
    escaped = SECRET_X.replace("'", "&#39;").replace("(", "<span class='p'>(</span>")
    (html / "nb.html").write_text(f"<html><body><pre>{escaped}\n</pre><p>### END HIDDEN TESTS</p></body></html>")
    problems = find_site_leaks(root)
    assert sorted(problems) == sorted([
        f"book/page.md: contains solution or hidden-test line {SECRET_Y!r}",
        "_build/html/ch/nb.html: contains the marker '### END HIDDEN TESTS'",
        f"_build/html/ch/nb.html: contains solution or hidden-test line {SECRET_X!r}",
    ])


def test_a_translated_release_must_be_the_same_assignment(tmp_path):
    """Markdown may differ (that is the translation); a code line or nbgrader metadata may not."""
    from grader.release import find_drift

    root = _course(tmp_path)
    translated = nbformat.read(str(root / "chapters" / "ch" / "nb.ipynb"), as_version=4)  # the same cell ids
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            cell.source = "中文：" + cell.source
    write(translated, root / "zh_CN" / "chapters" / "ch" / "nb.ipynb")
    assert find_drift(root / "chapters" / "ch", root / "zh_CN" / "chapters" / "ch") == []
    by_id(translated, "ex").source += "\nx = 1"
    by_id(translated, "ey").metadata["nbgrader"]["points"] = 30
    write(translated, root / "zh_CN" / "chapters" / "ch" / "nb.ipynb")
    problems = find_drift(root / "chapters" / "ch", root / "zh_CN" / "chapters" / "ch")
    assert len(problems) == 2 and all("is not the English release's" in p for p in problems), problems


def test_a_hidden_line_in_a_translated_text_is_found(tmp_path):
    """A translator's text is checked like code: a hidden-test line quoted in it would reach learners."""
    from grader.release import find_text_leaks

    root = _course(tmp_path)
    translated = nbformat.read(str(root / "chapters" / "ch" / "nb.ipynb"), as_version=4)
    translated.cells.append(nbformat.v4.new_markdown_cell(f"检查会调用：\n\n```python\n{SECRET_X}\n```"))
    write(translated, root / "zh_CN" / "chapters" / "ch" / "nb.ipynb")
    problems = find_text_leaks(root / "solutions" / "ch", root / "chapters" / "ch", root / "zh_CN" / "chapters" / "ch")
    assert problems == [f"{root}/zh_CN/chapters/ch/nb.ipynb: its text contains solution or hidden-test line "
                        f"{SECRET_X!r}"]
