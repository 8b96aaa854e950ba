"""The translation catalogs: made from solutions/, in step with it, complete for every released chapter,
and applied without touching code.

The splitting and rebuilding run over every markdown cell of the course, not over examples."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from torchcourse.translation import catalogs, quality
from torchcourse.translation.__main__ import main as translation_main
from torchcourse.translation.__main__ import released_chapters
from torchcourse.translation.markdown_units import rebuild, units

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = "zh_CN"
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RELEASED = released_chapters(ROOT, LANGUAGE)


def _markdown_cells():
    for nb in SOLUTIONS:
        for cell in nbformat.read(nb, as_version=4).cells:
            if cell.cell_type == "markdown":
                yield cell.source


def _html(source: str) -> str:
    html = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).render(source)
    return re.sub(r"\s+", " ", html).strip()


def test_rebuilding_with_the_english_renders_every_cell_as_before():
    cells = list(_markdown_cells())
    assert len(cells) > 300
    for source in cells:
        assert _html(rebuild(source, lambda message: message)) == _html(source), source


def _mark(message: str) -> str:
    # a table row keeps its leading pipe, as a translator keeps it
    return "| 译" + message[1:] if message.startswith("|") else "译" + message


def test_every_unit_is_replaced_and_nothing_else_moves():
    for source in _markdown_cells():
        before = units(source)
        marked = rebuild(source, _mark)
        assert [u.message for u in units(marked)] == [_mark(u.message) for u in before], source
        # fences and math blocks, which are never translated, are unchanged
        fixed = [
            t.content
            for t in MarkdownIt("commonmark").use(dollarmath_plugin).parse(source)
            if t.type in ("fence", "math_block")
        ]
        fixed_after = [
            t.content
            for t in MarkdownIt("commonmark").use(dollarmath_plugin).parse(marked)
            if t.type in ("fence", "math_block")
        ]
        assert fixed == fixed_after


def test_units_are_headings_paragraphs_list_items_and_table_rows():
    source = (
        "## A heading\n\nOne paragraph\nwrapped.\n\n- item one\n- item\n  two\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```\n\n$$\ny\n$$\n"
    )
    assert [u.message for u in units(source)] == [
        "A heading",
        "One paragraph wrapped.",
        "item one",
        "item two",
        "| a | b |",
        "| 1 | 2 |",
    ]
    rebuilt = rebuild(source, {"item two": "第二项", "A heading": "标题"}.get)
    assert rebuilt.startswith("## 标题\n") and "- 第二项\n" in rebuilt and "```python\nx = 1\n```" in rebuilt


def test_catalogs_are_in_step_with_solutions(tmp_path):
    """`update` on the committed catalogs changes nothing: no English sentence lacks its message."""
    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")
    chapters = sorted({nb.parent.name for nb in SOLUTIONS})  # named: the code catalog is test_i18n.py's
    translation_main(["update", *chapters, "--root", str(tmp_path)])
    for path in sorted((ROOT / "locale").rglob("*.po")):
        assert (tmp_path / path.relative_to(ROOT)).read_bytes() == path.read_bytes(), (
            f"{path.relative_to(ROOT)} is behind solutions/: run `python -m torchcourse.translation update`"
        )
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "locale").rglob("*.po")) == sorted(
        p.relative_to(ROOT) for p in (ROOT / "locale").rglob("*.po")
    )


def test_a_changed_sentence_keeps_its_translation_marked_fuzzy(tmp_path):
    source = SOLUTIONS[0]
    nb = nbformat.read(source, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "markdown" and len(units(c.source)) > 2)
    kept, changed, dropped = (u.message for u in units(first.source)[:3])
    copy = tmp_path / "solutions" / source.parent.name / source.name
    copy.parent.mkdir(parents=True)
    nbformat.write(nb, copy)
    path = catalogs.update(tmp_path, LANGUAGE, copy)
    catalog = catalogs.read(path, LANGUAGE)
    for message in (kept, changed, dropped):
        catalog[message].string = "译文：" + message[:10]
    catalogs.write(path, catalog)

    # the English's lines are wrapped, its messages folded: edit the cell by the units' lines
    lines = first.source.splitlines()
    _, changed_unit, dropped_unit = units(first.source)[:3]
    del lines[dropped_unit.first_line : dropped_unit.end_line]  # the later unit first: the earlier's lines stay put
    lines[changed_unit.first_line : changed_unit.end_line] = [changed_unit.prefix + changed + " One more clause."]
    first.source = "\n".join(lines)
    nbformat.write(nb, copy)
    catalogs.update(tmp_path, LANGUAGE, copy)
    # a second update (another notebook's change, say) keeps what the translator must see
    catalog = catalogs.read(catalogs.update(tmp_path, LANGUAGE, copy), LANGUAGE)
    assert catalog[kept].string == "译文：" + kept[:10] and not catalog[kept].fuzzy
    moved = catalog[changed + " One more clause."]
    assert moved.fuzzy and moved.string == "译文：" + changed[:10] and moved.previous_id == [changed]
    assert catalog.get(dropped) is None
    # a fuzzy translation is never shown: the reader gets the English until a translator confirms it
    assert catalogs.translation_of(catalog)(changed + " One more clause.") is None
    # confirmed, it is shown, and the old English goes: a later update changes nothing
    moved = catalog[changed + " One more clause."]
    moved.flags.discard("fuzzy")
    moved.previous_id = []
    catalogs.write(path, catalog)
    confirmed = path.read_bytes()
    assert b"#|" not in confirmed and b"| msgid" not in confirmed
    catalogs.update(tmp_path, LANGUAGE, copy)
    assert path.read_bytes() == confirmed
    shown = catalogs.translation_of(catalogs.read(path, LANGUAGE))
    assert shown(changed + " One more clause.") == "译文：" + changed[:10]


def test_a_translated_notebook_changes_only_markdown_text():
    release = sorted((ROOT / "chapters").glob("*/*.ipynb"))[0]
    catalog = catalogs.read(catalogs.catalog_path(ROOT, LANGUAGE, release), LANGUAGE)
    for message in catalog:
        if message.id:
            message.string, message.flags = _mark(message.id), set()
    english = nbformat.read(release, as_version=4)
    chinese = catalogs.translate_notebook(release, catalog, LANGUAGE)
    assert chinese.metadata["torchcourse"]["language"] == LANGUAGE
    assert len(chinese.cells) == len(english.cells)
    changed = 0
    for en, zh in zip(english.cells, chinese.cells):
        same_except_source = {k: v for k, v in en.items() if k != "source"} == {
            k: v for k, v in zh.items() if k != "source"
        }
        assert same_except_source
        if en.cell_type == "code":
            assert en.source == zh.source
        changed += en.source != zh.source
    assert changed == sum(1 for c in english.cells if c.cell_type == "markdown" and units(c.source))


@pytest.mark.parametrize("chapter", RELEASED or ["(none released yet)"])
def test_released_chapter_is_fully_translated(chapter):
    if not RELEASED:
        pytest.skip("no chapter's Chinese edition is released yet (locale/zh_CN/released-chapters.txt)")
    notebooks = sorted((ROOT / "solutions" / chapter).glob("*.ipynb"))
    assert notebooks, f"released-chapters.txt names {chapter}, which solutions/ does not have"
    gaps = []
    for nb in notebooks:
        catalog = catalogs.read(catalogs.catalog_path(ROOT, LANGUAGE, nb), LANGUAGE)
        for message in catalog:
            if not message.id:
                continue
            if message.fuzzy or not message.string:
                gaps.append(f"{nb.name}: {'fuzzy' if message.fuzzy else 'untranslated'}: {message.id[:70]}")
                continue
            gaps += [
                f"{nb.name}: {problem}: {message.id[:70]}"
                for problem in quality.problems(message.id, message.string, ROOT)
            ]
    assert not gaps, "\n".join(gaps[:40]) + f"\n({len(gaps)} in all)"


def test_chinese_release_is_built_from_the_catalogs(tmp_path):
    """zh_CN/chapters/ is generated, never edited: rebuilding it gives the committed files, and only the
    released chapters are there."""
    for folder in ("chapters", "solutions", "locale"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    assert translation_main(["build", "--root", str(tmp_path)]) == 0
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.glob(f"{LANGUAGE}/chapters/*/*.ipynb"))
    committed = sorted(p.relative_to(ROOT) for p in ROOT.glob(f"{LANGUAGE}/chapters/*/*.ipynb"))
    assert built == committed
    assert {p.parts[2] for p in built} == set(RELEASED)
    for path in built:
        assert (tmp_path / path).read_bytes() == (ROOT / path).read_bytes(), (
            f"{path}: run `python -m torchcourse.translation build`"
        )


def test_quality_checks_catch_what_a_reviewer_would():
    english = "Call `t.stride()` on a **tensor** (张量) of 3 rows: $i \\cdot s$."
    good = "对一个 3 行的**张量**（tensor）调用 `t.stride()`：$i \\cdot s$。"
    assert quality.problems(english, good, ROOT) == []
    assert any("code span" in p for p in quality.problems(english, good.replace("t.stride()", "t.strides()"), ROOT))
    assert any("math" in p for p in quality.problems(english, good.replace("\\cdot", "*"), ROOT))
    assert any("number 3" in p for p in quality.problems(english, good.replace("3 行", "三行"), ROOT))
    assert any("张量" in p for p in quality.problems(english, good.replace("张量", "向量"), ROOT))
    assert any("not translated" in p for p in quality.problems("Plain words.", "Plain words.", ROOT))
    assert any("glossary term" in p for p in quality.problems("A **stride** is", "一个**步幅**是", ROOT))
    assert quality.problems("`x.grad`", "`x.grad`", ROOT) == []
    assert quality.problems("| | DataParallel | DDP |", "| | DataParallel | DDP |", ROOT) == []
    assert any("not translated" in p for p in quality.problems("Summary", "Summary", ROOT))
    assert quality.problems("{call} returned {got}", "{call} 返回了 {got}", ROOT) == []
    assert any("placeholders" in p for p in quality.problems("{call} returned {got}", "{call} 返回了", ROOT))
    assert any("emphasis" in p for p in quality.problems("*Predict, then run:* next", "*先预测，再运行：*下一个", ROOT))
    assert quality.problems("*Predict, then run:* next", "*先预测，再运行*：下一个", ROOT) == []


def test_every_glossary_term_is_used_in_its_chapters_chinese():
    """The glossary is the dictionary: the Chinese of each term a released chapter teaches is in that
    chapter's Chinese text (bold first uses are checked message by message in quality.problems)."""
    import yaml

    terms = yaml.safe_load((ROOT / "book" / "glossary.yml").read_text(encoding="utf-8"))["terms"]
    folders = {int(chapter[:2]): chapter for chapter in RELEASED}
    missing = []
    for term in terms:
        chapter = folders.get(term["chapter"])
        if chapter is None:
            continue
        text = "\n".join(
            m.string
            for nb in sorted((ROOT / "solutions" / chapter).glob("*.ipynb"))
            for m in catalogs.read(catalogs.catalog_path(ROOT, LANGUAGE, nb), LANGUAGE)
            if m.id
        )
        if not any(form.strip() in text for form in str(term["zh"]).split(",")):
            missing.append(f"{term['en']} ({term['zh']}), chapter {term['chapter']}")
    assert not missing, missing


def test_status_has_a_row_for_the_code_catalog(tmp_path, capsys):
    """`status` counts the code's catalog (torchcourse.po) like a chapter's: messages, translated, fuzzy,
    untranslated; a chapter named, the chapters alone."""
    from torchcourse.translation import code_strings

    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")
    path = code_strings.catalog_path(tmp_path, LANGUAGE)
    path.parent.mkdir(parents=True)
    catalog = catalogs.read(code_strings.catalog_path(ROOT, LANGUAGE), LANGUAGE)
    messages = [m for m in catalog if m.id]
    messages[0].flags.add("fuzzy")
    messages[1].string = ""
    catalogs.write(path, catalog)

    translation_main(["status", "--root", str(tmp_path)])
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:]}
    share = f"{100 * (len(messages) - 2) / len(messages):.0f}%"
    assert rows["torchcourse.po"] == [str(len(messages)), str(len(messages) - 2), share, "1", "1"]
    chapters = sorted({nb.parent.name for nb in SOLUTIONS})
    assert list(rows) == [*chapters, "torchcourse.po"]

    translation_main(["status", chapters[0], "--root", str(tmp_path)])
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [chapters[0]]
