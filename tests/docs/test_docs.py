"""The authors' documentation in docs/ stays true: one source for the errata, every syllabus id defined once,
every path the pages name exists, and nothing in the repository points to a folder outside it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from torchcourse.contract import chapter_number, chapters

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = ("README.md", "exercise-contract.md", "syllabus.md", "design.md")



def _errata_table():
    """book/errata_table.py, loaded from its file (book/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("errata_table", ROOT / "book" / "errata_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo_files() -> list[Path]:
    """Files git tracks, plus new ones it does not ignore (so a file is checked before its first commit)."""
    try:
        done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                              capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: cannot list the repository's files")
    names = sorted({n for n in done.stdout.decode().split("\0") if n})
    return [ROOT / n for n in names if (ROOT / n).is_file() and not (ROOT / n).is_symlink()]


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# --------------------------------------------------------------------------- errata: one source


def test_errata_table_in_the_syllabus_is_generated_from_errata_yml():
    errata_table = _errata_table()
    committed = (DOCS / "syllabus.md").read_text(encoding="utf-8")
    fresh = errata_table.render(committed, errata_table.load())
    assert committed == fresh, (
        "docs/syllabus.md's errata table differs from book/errata.yml; "
        "run `.venv/bin/python book/errata_table.py` and commit docs/syllabus.md")


def test_errata_table_has_one_row_per_erratum():
    errata_table = _errata_table()
    text = (DOCS / "syllabus.md").read_text(encoding="utf-8")
    start, end = text.index(errata_table.BEGIN), text.index(errata_table.END)
    ids = re.findall(r"^\| (E\d+) \|", text[start:end], re.MULTILINE)
    assert ids == [row["id"] for row in errata_table.load()]
    outside = re.findall(r"^\| E\d+ \|", text[:start] + text[end:], re.MULTILINE)
    assert not outside, "an errata row written by hand outside the generated table"


def test_errata_rows_have_an_id_and_a_chapter():
    rows = _errata_table().load()
    assert rows, "book/errata.yml has no rows"
    for row in rows:
        assert re.fullmatch(r"E[1-9]\d*", str(row.get("id"))), f"errata id {row.get('id')!r} is not E<n>"
        assert type(row.get("chapter")) is int and 1 <= row["chapter"] <= 4, (
            f"{row['id']}: chapter {row.get('chapter')!r} is not 1-4")
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), f"errata ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}"
    assert _errata_table().problems(rows) == []


def test_every_erratum_but_two_quotes_the_notes_words_in_chinese():
    """Each row shows the note's wording from the published text it follows; E33 and E34 are claims that text
    does not make (the quotes themselves are checked against it by `book/errata_table.py --quotes`)."""
    errata_table = _errata_table()
    rows = errata_table.load()
    assert [r["id"] for r in rows if not r.get("quote")] == ["E33", "E34"]
    for row in rows:
        if row.get("quote"):
            assert re.search("[\u4e00-\u9fff]", "".join(row["quote"])) or row["id"] in ("E1", "E8", "E11"), row
    assert errata_table.source()["commit"] in errata_table.source()["url"]


def test_the_quote_check_finds_words_the_published_text_does_not_have(tmp_path):
    errata_table = _errata_table()
    (tmp_path / "2.1 张量.md").write_text("它的核心是一个**数据容器**，\n多数情况下，它包含数字。\n", encoding="utf-8")
    rows = [{"id": "E1", "section": "2.1 张量", "quote": ["它的核心是一个数据容器， 多数情况下", "它包含字符串"]},
            {"id": "E2", "section": "2.2 自动求导", "quote": ["梯度"]}, {"id": "E3", "quote": []}]
    assert errata_table.missing_quotes(rows, tmp_path) == ["E1: not in 2.1 张量.md: 它包含字符串",
                                                           "E2: not in 2.2 自动求导.md: 梯度"]


def test_the_generator_refuses_bad_rows_and_a_page_without_markers():
    errata_table = _errata_table()
    good = {"id": "E1", "chapter": 1, "note": "says", "truth": "is", "section": "2.1 张量", "quote": ["原话"]}
    unquoted = {k: v for k, v in good.items() if k not in ("quote", "section")}
    assert errata_table.problems([good, {**good, "id": "E2", "quote": [], "section": None},
                                  {**unquoted, "id": "E3"}]) == []
    bad = [good, dict(good), {**good, "id": "E01"}, {**good, "id": "X2"}, {**good, "id": "E3", "chapter": 5},
           {**good, "id": "E4", "chapter": "1"}, {**good, "id": "E5", "truth": " "},
           {**good, "id": "E6", "quote": "原话"}, {**good, "id": "E7", "quote": [" "]},
           {**good, "id": "E8", "section": "3.1"}]
    found = errata_table.problems(bad)
    assert len(found) == 9 and "used twice" in found[0], found
    assert "'quote'" in found[6] and "'quote'" in found[7] and "'section'" in found[8], found[6:]
    table = errata_table.table([{**good, "note": "a | b\nc"}])
    assert table.splitlines()[-1] == "| E1 | 1 | a \\| b c | is |"
    with pytest.raises(ValueError):
        errata_table.render("no markers here", [good])
    page = f"intro\n{errata_table.BEGIN}\nstale\n{errata_table.END}\nafter\n"
    fresh = errata_table.table([good])
    assert errata_table.render(page, [good]) == f"intro\n{errata_table.BEGIN}\n{fresh}\n{errata_table.END}\nafter\n"


def test_the_site_errata_page_renders_the_same_file():
    page = (ROOT / "book" / "errata.md").read_text(encoding="utf-8")
    assert "```{course-errata}" in page, "book/errata.md must render book/errata.yml with the course-errata directive"
    assert not re.search(r"^\|\s*E\d+\s*\|", page, re.MULTILINE), "book/errata.md carries a hand-written errata row"
    extension = (ROOT / "book" / "_ext" / "course_site.py").read_text(encoding="utf-8")
    assert '"errata.yml"' in extension


# --------------------------------------------------------------------------- syllabus ids


def test_every_syllabus_id_is_defined_once_under_its_chapter():
    """Each chapter of the course (a folder of solutions/) has a syllabus section whose items share one letter
    of their own and are numbered 1, 2, 3, ... with none missing or defined twice."""
    text = (DOCS / "syllabus.md").read_text(encoding="utf-8")
    chapter = None
    defined: dict[int, list[str]] = {}
    for line in text.splitlines():
        heading = re.match(r"^## Chapter (\d+):", line)
        if heading:
            chapter = int(heading.group(1))
            defined.setdefault(chapter, [])
        elif line.startswith("## "):
            chapter = None
        item = re.match(r"^- \*\*([A-Z])(\d+) ", line)
        if item:
            assert chapter is not None, f"{item.group(0)} is defined outside a chapter's section"
            defined[chapter].append(item.group(1) + item.group(2))
    course = [n for n in map(chapter_number, chapters(ROOT / "solutions")) if n is not None]
    assert sorted(defined) == course, f"syllabus sections for chapters {sorted(defined)}; the course has {course}"
    letters = {}
    for number, items in defined.items():
        assert items, f"chapter {number}'s section defines no item"
        letter = items[0][0]
        assert letters.setdefault(letter, number) == number, f"chapters {letters[letter]} and {number} share {letter}"
        expected = [f"{letter}{n}" for n in range(1, len(items) + 1)]
        assert items == expected, f"chapter {number}'s items are {items}; expected {expected} (one letter, 1, 2, ...)"


# --------------------------------------------------------------------------- pages name what exists


def _inline_code(text: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # fenced blocks are examples
    return re.findall(r"`([^`\n]+)`", text)


def test_paths_the_pages_name_exist():
    top = {p.relative_to(ROOT).parts[0] for p in _repo_files()}
    missing = []
    for page in PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        for token in _inline_code(text):
            if "/" not in token or re.search(r"[<>…\s=(),]", token) or token.split("/")[0] not in top:
                continue  # not a path in the repository (a MIME type, a placeholder, a command)
            path = token.rstrip("/")
            if not (any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
                missing.append(f"docs/{page}: `{token}`")
        for link in re.findall(r"\]\(([^)#\s]+)", text):
            if "://" not in link and not (DOCS / link).exists():
                missing.append(f"docs/{page}: link {link}")
    assert not missing, "\n".join(missing)


def test_design_names_every_library_module_and_grader_stage():
    design = (DOCS / "design.md").read_text(encoding="utf-8")
    block = design.split("## The library", 1)[1].split("```")[1]
    listed = {line.split()[0] for line in block.splitlines() if line and not line.startswith(" ")}
    src = ROOT / "src" / "torchcourse"
    files = [p for p in _repo_files() if src in p.parents]
    present = {p.relative_to(src).parts[0] + ("/" if len(p.relative_to(src).parts) > 1 else "") for p in files}
    present = {name for name in present if name.endswith("/") or name.endswith(".py")} - {"__init__.py"}
    assert listed == present, (
        f"docs/design.md's library layout: not listed {sorted(present - listed)}; gone {sorted(listed - present)}")
    stages = sorted(p.name for p in (ROOT / "grader").glob("*.py") if p.name != "__init__.py")
    unnamed = [name for name in stages if f"`grader/{name}`" not in design]
    assert not unnamed, f"docs/design.md does not name {unnamed}"


def test_docs_are_not_built_into_either_site():
    for config in ("_config.yml", "_config_instructor.yml"):
        patterns = yaml.safe_load((ROOT / config).read_text(encoding="utf-8"))["exclude_patterns"]
        assert "docs" in patterns, f"{config}: exclude_patterns must keep docs/ (for authors) out of the site"


# --------------------------------------------------------------------------- nothing points outside


#: A path into the team's folder outside the repository: a path component "shar" "ed/" (relative, after "../",
#: or absolute), or "../" followed by that folder's name. Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile(r"(?<![\w-])" + "shar" + r"ed/|\.\./" + "shar" + r"ed\b")


def test_nothing_in_the_repository_points_outside_it():
    found = []
    for path in _repo_files():
        text = _text(path)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "these lines point to a folder outside the repository:\n" + "\n".join(found)
