"""The exercise contract's rules that a program can check (docs/exercise-contract.md), as problem lists.

``notebook_problems`` checks one solution notebook; ``course_problems`` a whole solutions/ folder
(slugs unique across the course, errata ids named in misconception boxes). An empty list means the
rules hold; every problem is one sentence naming the notebook and the cell.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import re
import symtable
from pathlib import Path

import yaml

from torchcourse.contract import (
    ATOL,
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    END_HIDDEN,
    END_SOLUTION,
    RTOL,
    cell_source,
    grade_id,
    is_answer_cell,
    is_checks_cell,
    nbgrader_meta,
    split_regions,
)

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
BOX = re.compile(r"Common misconception(?: \((E\d+)\))?")
CHECK_TAGS = {"raises-exception", "remove-output"}


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _where(path: Path, index: int) -> str:
    return f"{path.parent.name}/{path.name} cell {index}"


def _stale_copies(path: Path, cells: list) -> list[str]:
    """A heading twice, or a long markdown cell repeated almost word for word: the stale copy an edit left."""
    problems, headings = [], {}
    texts = [(i, cell_source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "markdown"]
    for i, text in texts:
        for line in text.splitlines():
            if line.startswith("#"):
                key = re.sub(r"^#+\s*(\d+\.\s*)?", "", line).strip()
                if key in headings:
                    problems.append(f"{_where(path, i)}: the heading {line!r} again (first in cell {headings[key]})")
                headings.setdefault(key, i)
    long = [(i, t) for i, t in texts if len(t) > 200]
    for n, (i, a) in enumerate(long):
        for j, b in long[n + 1 :]:
            if difflib.SequenceMatcher(None, a, b).ratio() > 0.8:
                problems.append(f"{_where(path, j)}: nearly the same text as cell {i}")
    return problems


def notebook_problems(path: Path) -> list[str]:
    """Anatomy of every exercise, tags, committed outputs, the header, the seeded first code cell."""
    nb = _load(path)
    cells = nb["cells"]
    problems: list[str] = []
    by_id = {grade_id(c): i for i, c in enumerate(cells) if grade_id(c)}
    first = cells[0] if cells else {}
    header = cell_source(first)
    if first.get("cell_type") != "markdown" or not header.startswith("# "):
        problems.append(f"{path.name}: the first cell is not a markdown title")
    elif not re.search(r"\bminutes?\b", header) or not re.search(r"\b[A-Z]\d+\b", header):
        problems.append(f"{path.name}: the title cell names no duration in minutes or no syllabus item")
    code = [c for c in cells if c.get("cell_type") == "code"]
    if code and "manual_seed" not in cell_source(code[0]):
        problems.append(f"{path.name}: the first code cell does not seed PyTorch (torch.manual_seed)")
    problems += _stale_copies(path, cells)
    for i, cell in enumerate(cells):
        if cell.get("outputs") or cell.get("execution_count") is not None:
            problems.append(f"{_where(path, i)}: committed outputs or execution count")
        if not is_checks_cell(cell):
            continue
        slug = grade_id(cell) or ""
        meta = nbgrader_meta(cell)
        src = cell_source(cell)
        if not SLUG.match(slug):
            problems.append(f"{_where(path, i)}: grade id {slug!r} is not short kebab case")
        points = meta.get("points")
        if type(points) not in (int, float) or not 1 <= points <= 5:
            problems.append(f"{_where(path, i)}: {slug} is worth {points!r} points; the contract allows 1-5")
        if not meta.get("locked"):
            problems.append(f"{_where(path, i)}: the checks cell {slug} is not locked")
        missing_tags = CHECK_TAGS - set(cell.get("metadata", {}).get("tags", []))
        if missing_tags:
            problems.append(f"{_where(path, i)}: the checks cell {slug} lacks the tags {sorted(missing_tags)}")
        if src.count(BEGIN_HIDDEN) != 1 or src.count(END_HIDDEN) != 1:
            problems.append(f"{_where(path, i)}: {slug} needs exactly one hidden block")
        else:
            hidden = "\n".join(line for kind, line in split_regions(src) if kind == "hidden")
            if not re.search(rf"emit\(\s*['\"]{re.escape(slug)}['\"]", hidden):
                problems.append(f"{_where(path, i)}: the hidden block of {slug} emits no value for {slug!r}")
            problems += [f"{_where(path, i)}: {slug}: {p}" for p in comparison_problems(hidden)]
        names = _answer_names(cells[: i])
        problems += [f"{_where(path, i)}: {slug}: {p}" for p in free_name_problems(src, names)]
        task, answer = by_id.get(f"{slug}-task"), by_id.get(f"{slug}-answer")
        if task is None or cells[task].get("cell_type") != "markdown" or not nbgrader_meta(cells[task]).get("locked"):
            problems.append(f"{_where(path, i)}: {slug} has no locked markdown task cell {slug}-task")
        if answer is None or not is_answer_cell(cells[answer]):
            problems.append(f"{_where(path, i)}: {slug} has no answer cell {slug}-answer")
        else:
            a_src = cell_source(cells[answer])
            if a_src.count(BEGIN_SOLUTION) < 1 or a_src.count(BEGIN_SOLUTION) != a_src.count(END_SOLUTION):
                problems.append(f"{_where(path, answer)}: {slug}-answer needs balanced solution regions")
        if task is not None and answer is not None and not task < answer < i:
            problems.append(f"{_where(path, i)}: {slug}'s cells are not in the order task, answer, checks")
        reflection = by_id.get(f"{slug}-reflection")
        if reflection is not None:
            r_meta = nbgrader_meta(cells[reflection])
            if not (r_meta.get("solution") and r_meta.get("grade")) or not 0 <= r_meta.get("points", -1) <= 2:
                problems.append(f"{_where(path, reflection)}: {slug}-reflection must be manually graded, 0-2 points")
    return problems


def _answer_names(cells: list) -> set[str]:
    """What the answer cells before a checks cell define at their top level: the learner's answers."""
    names: set[str] = set()
    for cell in cells:
        if not is_answer_cell(cell):
            continue
        try:
            table = symtable.symtable(cell_source(cell), "answer", "exec")
        except SyntaxError:
            continue
        names |= {sym.get_name() for sym in table.get_symbols() if sym.is_assigned() or sym.is_imported()}
    return names


def free_name_problems(source: str, answers: set[str]) -> list[str]:
    """A checks cell (visible part and hidden block) runs in the grader's checker, where a name the cell does
    not define, import or take from the libraries comes from the learner's process: only the learner's
    answers may (a lesson's helper, redefined by the learner, would decide the check)."""
    from grader.inside.policy import CANONICAL
    from torchcourse import grading

    try:
        top = symtable.symtable(source, "checks", "exec")
    except SyntaxError as exc:
        return [f"the checks cell does not parse: {exc}"]
    own = {sym.get_name() for sym in top.get_symbols() if sym.is_assigned() or sym.is_imported()}
    read: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        tables += table.get_children()
        for sym in table.get_symbols():
            if sym.is_referenced() and (sym.is_global() or table is top) and not sym.is_assigned() \
                    and not sym.is_imported():
                read.add(sym.get_name())
    allowed = own | answers | set(CANONICAL) | set(grading.__all__) | set(dir(builtins))
    return [f"reads {name!r}, which is neither its own, a library's nor a learner's answer"
            for name in sorted(read - allowed)]


def _keyword(call: ast.Call, name: str, default):
    for kw in call.keywords:
        if kw.arg == name:
            try:
                return ast.literal_eval(kw.value)
            except ValueError:
                return ast.unparse(kw.value)
    return default


def comparison_problems(hidden: str) -> list[str]:
    """A hidden block's checks and its emits must judge alike (the judge compares the emitted values as the
    emit says): each tolerance an ``expect_close`` uses is carried by an ``emit`` of the block, and strides
    are compared (``layout=True``) by the checks exactly where an emit asks the judge to compare them."""
    try:
        tree = ast.parse(hidden)
    except SyntaxError as exc:
        return [f"the hidden block is not plain Python ({exc.msg})"]
    emits, closes, layouts = set(), set(), {"emit": False, "check": False}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        if node.func.id == "emit":
            emits.add((_keyword(node, "rtol", RTOL), _keyword(node, "atol", ATOL)))
            layouts["emit"] |= _keyword(node, "layout", False) is True
        elif node.func.id == "expect_close":
            closes.add((_keyword(node, "rtol", RTOL), _keyword(node, "atol", ATOL)))
        elif node.func.id in ("expect_equal", "expect_tensor"):
            layouts["check"] |= _keyword(node, "layout", False) is True or _keyword(node, "stride", None) is not None
    problems = [f"expect_close uses rtol={r!r}, atol={a!r}, which no emit of the block carries"
                for r, a in sorted(closes - emits, key=repr)]
    if layouts["emit"] != layouts["check"]:
        problems.append("the checks compare strides but no emit says layout=True" if layouts["check"]
                        else "an emit says layout=True but no check compares strides")
    return problems


def slugs(solutions: Path) -> dict[str, list[str]]:
    """slug -> the notebooks (chapter/name) whose checks cells carry it."""
    found: dict[str, list[str]] = {}
    for path in sorted(solutions.glob("*/*.ipynb")):
        for cell in _load(path)["cells"]:
            if is_checks_cell(cell):
                found.setdefault(grade_id(cell) or "", []).append(f"{path.parent.name}/{path.name}")
    return found


def errata(book: Path) -> dict[str, int]:
    """errata id -> chapter number, from book/errata.yml (the one source of the errata)."""
    rows = yaml.safe_load((book / "errata.yml").read_text(encoding="utf-8"))["errata"]
    return {row["id"]: int(row["chapter"]) for row in rows}


def boxes(path: Path) -> list[tuple[int, str | None]]:
    """(cell index, errata id or None) for every "Common misconception" box of a notebook."""
    found = []
    for i, cell in enumerate(_load(path)["cells"]):
        if cell.get("cell_type") == "markdown":
            found += [(i, m.group(1)) for m in BOX.finditer(cell_source(cell))]
    return found


def course_problems(solutions: Path, book: Path) -> list[str]:
    """Slugs unique across the course; every misconception box names an erratum of its own chapter; every
    erratum of a chapter that has notebooks is named by a box in that chapter."""
    problems = [f"slug {s!r} is used by {len(where)} checks cells: {where}"
                for s, where in slugs(solutions).items() if len(where) > 1]
    table = errata(book)
    named: dict[int, set[str]] = {}
    for path in sorted(solutions.glob("*/*.ipynb")):
        number = int(path.parent.name[:2])
        for i, eid in boxes(path):
            if eid is None:
                problems.append(f"{_where(path, i)}: a misconception box names no erratum, e.g. (E3)")
            elif eid not in table:
                problems.append(f"{_where(path, i)}: {eid} is not a row of book/errata.yml")
            elif table[eid] != number:
                problems.append(f"{_where(path, i)}: {eid} belongs to chapter {table[eid]}, not {number}")
            else:
                named.setdefault(number, set()).add(eid)
    chapters = {int(p.name[:2]) for p in solutions.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))}
    for eid, number in sorted(table.items(), key=lambda kv: int(kv[0][1:])):
        if number in chapters and eid not in named.get(number, set()):
            problems.append(f"{eid} (chapter {number}) is named by no misconception box in its chapter")
    return problems
