"""Sphinx extension for the torchcourse site (learner and instructor builds).

- Exercises: a "Your turn" note goes into every task cell (nbgrader ``grade_id`` ending in
  ``-task``). The instructor build (``course_instructor = True``) also splits each test cell
  in two, shows the visible checks and removes the hidden block from the page while still
  running it, and lets a failing check fail the build.
- Pages that follow the toc: ``course-pages`` (a chapter's pages, or "being written"),
  ``course-glossary`` and ``course-errata`` (tables from book/glossary.yml and book/errata.yml,
  each row linked to the first page that teaches it; rows of chapters not written yet say
  "taught in chapter N" and link nowhere, so no link is ever dead).
- Widgets without a kernel: the notebooks execute with ``TORCHCOURSE_SITE_FRAMES`` set, so each
  widget outputs a frame player (its frames computed by its own core and renderer; see
  ``torchcourse.widgets.Explorer.frames``); pages that have one load book/js/frame-player.js.
  The frames are cell outputs, so the execution cache keeps them.
- Notebooks execute side by side: before Sphinx reads the pages, every notebook the execution cache
  lacks runs in a pool of one process per core and goes into the cache, exactly as myst-nb would put
  it there (same prepared notebook, folder, timeout); myst-nb then reads each from the cache. A notebook
  that fails there is left to myst-nb, which runs it again and reports the failure as it always does.
- Offline fix: Sphinx 7.4 emits inline scripts added after builder init twice, which makes
  every page throw "Identifier 'THEBE_JS_URL' has already been declared"; duplicates are dropped.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.search import languages as search_languages
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from torchcourse.contract import cell_source, grade_id, hidden_split, is_checks_cell
from torchcourse.widgets import SITE_FRAMES_ENV

BOOK = Path(__file__).resolve().parent.parent
logger = logging.getLogger(__name__)
# Pages under chapters/ (learner) or solutions/ (instructor): <top>/<NN>-<name>/<page>
_CHAPTER_DOC = re.compile(r"^(?:chapters|solutions)/(\d\d)-[^/]+/\d")

LEARNER_NOTE = """
```{admonition} Your turn · 轮到你了
:class: tip your-turn

This is a graded exercise. On this page the answer cell is a stub
(`raise NotImplementedError()`), so the checks below it show no output.
To write and check your answer, run the notebook yourself: use the download
button at the top of this page, or see {doc}`/book/run-it-yourself`.
```
"""

LEARNER_NOTE_ZH = """
```{admonition} 轮到你了 · Your turn
:class: tip your-turn

这是一道计分练习。本页上的答案单元格只是一个占位（`raise NotImplementedError()`），
所以它下面的检查没有输出。要写下并检查你的答案，请自己运行这个 notebook：
用本页顶部的下载按钮，或参阅 {doc}`/book/run-it-yourself`。
```
"""

INSTRUCTOR_NOTE = """
```{admonition} Exercise · instructor view
:class: note your-turn

Learners see this task with the answer cell stubbed. Below are the reference
solution and the visible checks. The hidden tests ran against the solution
when this page was built (a failure stops the build), and are not shown.
```
"""


# --------------------------------------------------------------------- notebooks

def _grade_id(cell: dict) -> str:
    return grade_id(cell) or ""


def _with_note(markdown: str, note: str) -> str:
    """Put the note under the task's heading (or on top when the cell has none)."""
    lines = markdown.split("\n")
    if lines and lines[0].lstrip().startswith("#"):
        return "\n".join([lines[0], note] + lines[1:])
    return note + "\n" + markdown


def _split_hidden(cell: dict) -> list[dict]:
    """A test cell → [visible checks, hidden block tagged remove-cell]; both still execute."""
    src = cell_source(cell)
    lines, hidden = hidden_split(src)
    if not hidden:
        return [cell]
    visible = "\n".join(lines)
    hidden_cell = json.loads(json.dumps(cell))
    hidden_cell["id"] = f"{cell.get('id', 'cell')}-hidden"[:64]
    hidden_cell["source"] = "\n".join(hidden).lstrip() + ("\n" if src.endswith("\n") else "")
    hidden_cell["metadata"].pop("nbgrader", None)
    hidden_cell["metadata"]["tags"] = ["remove-cell"]
    cell["source"] = visible.rstrip() + "\n"
    return [cell, hidden_cell] if visible.strip() else [hidden_cell]


def _prepare_notebook(app: Sphinx, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname))
    if path.suffix == ".ipynb":
        source[0] = json.dumps(prepared(json.loads(source[0]), app.config.course_instructor, english_of(path)),
                               ensure_ascii=False)


def english_of(path: Path) -> dict | None:
    """The English notebook a translated one was made from (the same cells, the markdown in English), or None
    for an English notebook. A Chinese release lives at <anything>/chapters/<chapter>/<notebook>.ipynb."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    if not nb.get("metadata", {}).get("torchcourse", {}).get("language"):
        return None
    english = BOOK.parent / "chapters" / path.parent.name / path.name
    return json.loads(english.read_text(encoding="utf-8")) if english.exists() else None


#: The prompt of a cell whose output the reader should guess before seeing it.
PREDICT = "Predict, then run"


def _fold_predicted_outputs(cells: list[dict], english: list[dict] | None = None) -> None:
    """The first code cell after each "Predict, then run" prompt shows its output behind a click (myst-nb's
    ``hide-output`` tag): on the site, as in the notebook, the reader guesses before seeing the answer.

    A translated notebook's prompts are found in ``english``, its English (the same cells in the same order):
    the same code cells fold in both editions, so their tags, and with them the execution cache's key, agree."""
    waiting = False
    prose = english if english is not None and len(english) == len(cells) else cells
    for cell, text in zip(cells, prose):
        if cell.get("cell_type") == "markdown":
            waiting = waiting or PREDICT in cell_source(text)
        elif cell.get("cell_type") == "code" and waiting:
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if not {"hide-output", "remove-output", "remove-cell"} & set(tags):
                tags.append("hide-output")
            waiting = False


def prepared(nb: dict, instructor: bool, english: dict | None = None) -> dict:
    """The notebook as the site executes and shows it (tests/site reads the build's execution cache with it).
    ``english``: the English notebook a translated ``nb`` was made from."""
    cells: list[dict] = []
    _fold_predicted_outputs(nb.get("cells", []), english.get("cells") if english else None)
    note = INSTRUCTOR_NOTE if instructor else LEARNER_NOTE_ZH if english else LEARNER_NOTE
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown" and _grade_id(cell).endswith("-task"):
            cell["source"] = _with_note(cell_source(cell), note)
        if instructor and cell.get("cell_type") == "code":
            meta = cell.get("metadata", {})
            if is_checks_cell(cell):
                # Checks run against the solution here: a failure must fail the build.
                meta["tags"] = [t for t in meta.get("tags", []) if t != "raises-exception"]
            cells.extend(_split_hidden(cell))
            continue
        cells.append(cell)
    nb["cells"] = cells
    return nb


# --------------------------------------------------------------------- toc-aware pages

def _chapter_of(docname: str) -> int | None:
    m = _CHAPTER_DOC.match(docname)
    return int(m.group(1)) if m else None


def chapter_docs(env: Any, chapter: int) -> list[str]:
    """The chapter's pages in this build, in reading order (file names start NN-)."""
    return sorted(d for d in env.found_docs if _chapter_of(d) == chapter)


def _chinese(env: Any) -> bool:
    return env.config.course_language == "zh"


def _doc_text(env: Any, docname: str) -> str:
    path = Path(env.doc2path(docname))
    english = BOOK.parent / f"{docname}.ipynb"
    if _chinese(env) and english.exists():
        # A page links where its English does: the tables match English text (a chapter line's "about 35
        # minutes", an erratum's keywords in a "Common misconception" box), and the pages are the same pages.
        path = english
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n".join(cell_source(c) for c in json.loads(text).get("cells", []))
    return text


def first_doc_with(env: Any, chapter: int, needles: list[str]) -> str | None:
    """The first page of the chapter whose text contains every needle (a str or a re.Pattern)."""
    for doc in chapter_docs(env, chapter):
        text = _doc_text(env, doc)
        if all((n.search(text) if isinstance(n, re.Pattern) else n in text) for n in needles):
            return doc
    return None


def _minutes(text: str) -> int | None:
    m = re.search(r"about (\d+) minutes", text)
    return int(m.group(1)) if m else None


def _misconception_box(keywords: list[str]) -> re.Pattern:
    """Text of a "Common misconception" box (up to the next blank line) holding every keyword."""
    ahead = "".join(f"(?=(?:(?!\\n\\s*\\n).)*?{re.escape(k)})" for k in keywords)
    return re.compile(rf"[Mm]isconception{ahead}", re.DOTALL)


def _where(chapter: int, doc: str | None, chinese: bool = False) -> str:
    if doc:  # the page's own title, e.g. "1.2 Tensors: indexing, shapes and memory"
        return f"{{doc}}`/{doc}`"
    return f"第 {chapter} 章讲授" if chinese else f"taught in chapter {chapter}"


#: The generated tables' own words in Chinese (their rows' text comes from the catalogs, book/book_catalogs.py).
GLOSSARY_HEAD_ZH = "| English | 中文 | 含义 | 在哪里讲授 |"
ERRATA_HEAD_ZH = "| 编号 | 原笔记的说法 | 实际情况 | 在哪里 |"


def _book_lookup(env: Any, page: str):
    """message -> its Chinese (English where it has none) on the Chinese site; the English itself elsewhere."""
    if not _chinese(env):
        return lambda message: message
    import sys

    sys.path.insert(0, str(BOOK))
    import book_catalogs

    env.note_dependency(str(book_catalogs.catalog_path(page)))
    translate = book_catalogs.lookup(page)
    return lambda message: translate(message) or message


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


class _GeneratedMarkdown(SphinxDirective):
    has_content = False
    required_arguments = 0
    optional_arguments = 1

    def markdown(self) -> str:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.container(classes=["course-generated"])
        text = self.markdown()
        self.state.nested_parse(StringList(text.split("\n"), source=self.env.docname), self.content_offset, container)
        return [container]


class CoursePages(_GeneratedMarkdown):
    """``course-pages 1``: the chapter's pages as a list, or a sentence if none are out yet."""

    required_arguments = 1
    optional_arguments = 0

    def markdown(self) -> str:
        chapter = int(self.arguments[0])
        docs = chapter_docs(self.env, chapter)
        chinese = _chinese(self.env)
        if not docs:
            waiting = [d for d in self.env.found_docs if re.match(rf"chapters/{chapter:02d}-[^/]+/index$", d)]
            if chinese and waiting:  # written in English, its Chinese not out yet
                return f"*本章的中文版尚未发布，见 {{doc}}`/{waiting[0]}`。*"
            if chinese:
                return "*编写中：本章还没有发布的页面。*"
            return "*Being written: no page of this chapter is out yet.*"
        # Each page's own estimate ("about 45 minutes" in its status line), so the map never disagrees with it.
        minutes = [_minutes(_doc_text(self.env, d)) for d in docs]
        about = "（约 {} 分钟）" if chinese else " (about {} min)"
        lines = [f"- {{doc}}`/{d}`" + (about.format(m) if m else "") for d, m in zip(docs, minutes)]
        total = sum(m for m in minutes if m)
        if total:
            lines += ["", f"*共 {len(docs)} 个 notebook，合计约 {total // 60} 小时 {total % 60:02d} 分钟。*" if chinese
                      else f"*{len(docs)} notebooks, about {total // 60} h {total % 60:02d} min in all.*"]
        return "\n".join(lines)


class CourseGlossary(_GeneratedMarkdown):
    """The glossary table from book/glossary.yml."""

    def markdown(self) -> str:
        data = yaml.safe_load((BOOK / "glossary.yml").read_text(encoding="utf-8"))
        self.env.note_dependency(str(BOOK / "glossary.yml"))
        chinese, translate = _chinese(self.env), _book_lookup(self.env, "glossary")
        head = GLOSSARY_HEAD_ZH if chinese else "| English | 中文 | what it means | where it is taught |"
        rows = [head, "|---|---|---|---|"]
        for term in sorted(data["terms"], key=lambda t: (t["chapter"], t["en"].lower())):
            doc = first_doc_with(self.env, term["chapter"], [term["zh"]])
            rows.append(f"| **{_cell(term['en'])}** | {_cell(term['zh'])} | {_cell(translate(term['definition']))} | "
                        f"{_where(term['chapter'], doc, chinese)} |")
        return "\n".join(rows)


def _quoted(row: dict, chinese: bool) -> str:
    """The note's own words for an erratum, from the published text it follows: fragments that are code (no
    Chinese in them) as code, the others as text."""
    fragments = [f"`{q}`" if not _CJK.search(q) else q for q in row.get("quote") or []]
    if not fragments:
        return "公开的原文中没有这句。" if chinese else "Not in the published source text."
    quote = "".join(f"「{f}」" for f in fragments)
    return f"原文（{row['section']}）：{quote}" if chinese else f"Source text ({row['section']}): {quote}"


class CourseErrata(_GeneratedMarkdown):
    """The errata table from book/errata.yml: what the source note gets wrong, its own words beside it."""

    def markdown(self) -> str:
        data = yaml.safe_load((BOOK / "errata.yml").read_text(encoding="utf-8"))
        self.env.note_dependency(str(BOOK / "errata.yml"))
        chinese, translate = _chinese(self.env), _book_lookup(self.env, "errata")
        src = data["source"]
        cited = (f"{'原文出处' if chinese else 'Source text'}: [{src['title']}]({src['url']}), commit "
                 f"`{src['commit'][:7]}` ({src['date']}), {src['license'].split(' (')[0]}.")
        rows = [cited, "", ERRATA_HEAD_ZH if chinese else "| id | the note says | what is true | where |",
                "|---|---|---|---|"]
        for row in data["errata"]:
            # Taught where the chapter names the row ("E3") or, failing that, where its keywords appear.
            doc = first_doc_with(self.env, row["chapter"], [re.compile(rf"\b{row['id']}\b")])
            if doc is None and row.get("keywords"):
                doc = first_doc_with(self.env, row["chapter"], [_misconception_box(row["keywords"])])
            said = f"{translate(row['note'])} {_quoted(row, chinese)}"
            rows.append(f"| {row['id']} | {_cell(said)} | {_cell(translate(row['truth']))} | "
                        f"{_where(row['chapter'], doc, chinese)} |")
        return "\n".join(rows)


def _always_reread(app: Sphinx, env: Any, added: set, changed: set, removed: set) -> list[str]:
    # The generated pages depend on which notebooks exist and what they say: re-read them
    # on every build (they are small; notebooks themselves stay cached).
    return sorted(d for d in env.found_docs if d.startswith("book/") and d not in changed)


# --------------------------------------------------------------------- offline fix

def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    seen: set = set()
    unique = []
    for script in context.get("script_files", []):
        key = (str(getattr(script, "filename", script) or ""),
               tuple(sorted((getattr(script, "attributes", {}) or {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _site_frames(app: Sphinx, config: Any) -> None:
    # Set before any notebook executes: the kernels myst-nb starts inherit this environment.
    os.environ[SITE_FRAMES_ENV] = "1"


#: What myst-nb adds to a page whose executed notebook saved widget state: the state and the scripts of the
#: ipywidgets HTML manager (about 3.6 MB), which only a live widget view would use.
_WIDGET_MANAGER = ("require.js", "ipywidgets/")


def _is_widget_manager(script: Any) -> bool:
    name = str(getattr(script, "filename", script) or "").removeprefix("_static/")
    kind = (getattr(script, "attributes", {}) or {}).get("type", "")
    return name.startswith(_WIDGET_MANAGER) and not name.endswith("frame-player.js") or kind == (
        "application/vnd.jupyter.widget-state+json")


def _frame_player_script(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    body = context.get("body", "")
    if 'class="tc-player"' in body:
        app.add_js_file("ipywidgets/frame-player.js", defer="defer")
    if 'type="application/vnd.jupyter.widget-view+json"' in body:
        # No kernel will ever answer a live widget view here. In this course it means the page's
        # outputs come from an execution cache made before frame players (or a widget that is
        # not an Explorer).
        logger.warning("a widget on this page is a live widget view that cannot move on the site, not a frame "
                       "player: make it an Explorer, or clear a stale execution cache (rm -rf _build/.jupyter_cache)",
                       location=pagename)


def _drop_widget_manager(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    # The notebook's kernel made the widgets it displayed as frame players, so its saved state is of widgets no
    # page shows: without a live widget view the page loads neither that state nor the manager that would draw
    # it. (Late, after myst-nb's own handler has added them.)
    if 'type="application/vnd.jupyter.widget-view+json"' not in context.get("body", ""):
        context["script_files"] = [s for s in context.get("script_files", []) if not _is_widget_manager(s)]


#: myst-nb's folded output (hide-output): a <summary> named "Toggle hidden content" whose visible text says
#: "Show code cell output". A name that does not contain the visible text fails WCAG 2.5.3 (label in name):
#: a speech user says what they see. Without the label, the summary is named by its text.
_FOLD_SUMMARY = '<summary aria-label="Toggle hidden content">'


def _fold_named_by_its_text(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "body" in context:
        context["body"] = context["body"].replace(_FOLD_SUMMARY, "<summary>")


def _instructor_theme(app: Sphinx, config: Any) -> None:
    # No download button: html_copy_source is off (the sources hold the hidden tests), so it
    # would point at missing files. (jupyter-book does not pass html.use_download_button on.)
    if config.course_instructor:
        config.html_theme_options["use_download_button"] = False


def _theme_mode(app: Sphinx, config: Any) -> None:
    # pydata-sphinx-theme's layout reads the template variable default_mode on a first visit (nothing stored
    # yet); left empty, its script reports the empty mode as invalid (a console error).
    config.html_context.setdefault("default_mode", "auto")


# --------------------------------------------------------------------- Chinese: search and lang

def _chinese_search(app: Sphinx, config: Any) -> None:
    """Index Chinese with Sphinx's Chinese splitter (jieba) and the glossary's Chinese terms as its own words,
    so that a term jieba's own dictionary lacks is found as a whole and in its parts."""
    words = Path(app.doctreedir).parent / "glossary-zh-words.txt"
    words.parent.mkdir(parents=True, exist_ok=True)
    terms = yaml.safe_load((BOOK / "glossary.yml").read_text(encoding="utf-8"))["terms"]
    # Each run of Chinese characters is a word: "向量-雅可比积" gives 向量 and 雅可比积 (a dictionary word with
    # a hyphen in it would never match the text jieba cuts).
    zh = sorted({w for t in terms for w in _CJK_RUN.findall(t["zh"])})
    words.write_text("".join(f"{w} 1000\n" for w in zh), encoding="utf-8")
    config.html_search_language = "zh"
    search_languages["zh"] = _glossary_chinese(set(zh))
    config.html_search_options = {**(config.html_search_options or {}), "dict": str(words)}


def _glossary_chinese(glossary: set[str]) -> type:
    """Sphinx's Chinese indexer, finding each glossary term wherever its characters stand in the text.

    jieba cuts 分布式数据并行 into words of two and three characters, so 数据并行 inside it is never a word of its
    own; and Sphinx drops one-character words (阶, 轴, 桶) as too short, to keep 的 and 是 out of the index.
    English words are stemmed by Porter's stemmer, the one the search page stems the query with (Sphinx's
    Chinese indexer uses Snowball's English one: "array" goes into the index as array, the query as arrai)."""
    import snowballstemmer
    from sphinx.search.zh import SearchChinese

    class GlossaryChinese(SearchChinese):
        def init(self, options: dict[str, str]) -> None:
            super().init(options)
            self.stemmer = snowballstemmer.stemmer("porter")

        def split(self, input: str) -> list[str]:
            return super().split(input) + [w for w in glossary if w in input]

        def word_filter(self, stemmed_word: str) -> bool:
            return super().word_filter(stemmed_word) or stemmed_word in glossary

    return GlossaryChinese


_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
#: Text inside these is code or markup, not prose: left as it is.
_NOT_PROSE = (nodes.literal_block, nodes.literal, nodes.raw, nodes.math, nodes.math_block, nodes.comment)


def _mark_chinese(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Each run of Chinese text in prose becomes ``<span lang="zh">`` (docutils writes a ``language-zh`` class
    as ``lang``), so a screen reader reads it with a Chinese voice on these English pages. (Not on the Chinese
    site: its pages are Chinese as a whole, ``<html lang="zh-CN">``.)"""
    if app.config.course_language == "zh":
        return
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or not _CJK.search(text.astext()):
            continue
        if any(isinstance(a, _NOT_PROSE) for a in _ancestors(text)) or "language-zh" in parent.get("classes", []):
            continue
        pieces: list[nodes.Node] = []
        at = 0
        source = text.astext()
        for m in _CJK.finditer(source):
            if m.start() > at:
                pieces.append(nodes.Text(source[at:m.start()]))
            pieces.append(nodes.inline(m.group(), m.group(), classes=["language-zh"]))
            at = m.end()
        if at < len(source):
            pieces.append(nodes.Text(source[at:]))
        parent.replace(text, pieces)


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _name_empty_table_headers(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A comparison table's empty top-left header names its column for screen readers (visually hidden):
    a header cell with no text leaves the row labels under it unnamed."""
    for head in doctree.findall(nodes.thead):
        for entry in head.findall(nodes.entry):
            if not entry.astext().strip():
                entry += nodes.inline("aspect", "aspect", classes=["visually-hidden"])


# --------------------------------------------------------------------- two languages (book/build_site.py)

#: The theme's article header: the language switch, then the theme's own buttons.
_HEADER_END = ["language-switch.html", "article-header-buttons.html"]


def _language_theme(app: Sphinx, config: Any) -> None:
    if config.course_language:
        config.html_theme_options["article_header_end"] = _HEADER_END


def _output_folder(app: Sphinx) -> None:
    # myst-nb writes the executed notebooks and their images beside the html folder (<outdir>/..); with one site
    # per language under html/, that would put them inside the published site, both languages in one folder.
    if app.config.course_output_folder:
        app.env.mystnb_config = app.env.mystnb_config.copy(output_folder=app.config.course_output_folder)


def switch_target(pagename: str, other_pages: list[str]) -> str:
    """The page of the other language that ``pagename`` switches to: the same page where the other site has it;
    else the other site's page of the same chapter (the Chinese page of a chapter whose Chinese is not out yet,
    which links back to English; from that page, the chapter's first English page); else the other site's home."""
    if pagename in other_pages:
        return pagename
    m = re.match(r"^chapters/([^/]+)/", pagename)
    same_chapter = [p for p in other_pages if m and p.startswith(m.group(0))]
    if f"{m.group(0)}index" in same_chapter if m else False:
        return f"{m.group(0)}index"
    return same_chapter[0] if same_chapter else "index"


def _language_switch(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    other = app.config.course_other_language
    if not app.config.course_language or not other:
        return
    target = switch_target(pagename, app.config.course_other_pages)
    up = "../" * (pagename.count("/") + 1)  # from this page to html/, where both sites' folders are
    context["course_switch"] = {
        "href": f"{up}{other['code']}/{target}.html", "lang": other["html"], "name": other["name"],
        # Said in the other language too: a reader who cannot read this page's language still finds it.
        "label": ("English version of this page" if other["code"] == "en" else "本页的中文版")
        if target == pagename else
        ("This chapter in English" if other["code"] == "en" else "中文版（本章尚未发布）"),
        "same": target == pagename,
    }
    if app.config.course_language == "zh":
        # Sphinx writes the locale (zh_CN) into <html lang>; a language tag is zh-CN (BCP 47).
        context["language"] = "zh-CN"


_PLAYER_START = '<div class="tc-player" data-widget="'
_PLAYER_DATA = re.compile(r'(<script type="application/json" class="tc-player-data">)(.*?)(</script>)', re.S)
_PLAYER_TITLE = re.compile(r'(<div class="tc-player-title"><b>)(.*?)(</b></div>)', re.S)
_PLAYER_MESSAGE = re.compile(r'(<div class="tc-player-message">)(.*?)(</div>)', re.S)
_PLAYER_ALT = re.compile(r'(<img class="tc-player-frame" alt=")([^"]*)(")')


_PLAYER_SRC = re.compile(r'(<img class="tc-player-frame" alt="[^"]*" src="data:image/png;base64,)([^"]*)(")')
_PLAYER_STATES = re.compile(r'(<div class="tc-player-about">.*?<ul>)(.*?)(</ul>)', re.S)


def _players_in_language(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Each frame player as this site's language shows it. The player is an executed output, shared by both sites
    (one execution for both), that carries its pictures in English and, beside them, in each translation
    (``translated_images``, torchcourse.widgets.Explorer.frames): every site drops those copies (a page carries
    its own language's pictures only), and the Chinese site shows its own. Its words go through the course's
    catalog (the one torchcourse.i18n gives the widgets) on the Chinese site: its title, its controls' names and
    values, its messages and the notes under it, each as the catalog has it, a message with numbers in it through
    the message with placeholders it was formatted from (torchcourse.i18n.translate_text); the labels of its
    controls' values and the list of the states it has a picture for are the ones the widget wrote in that language
    (``translated_labels``, ``translated_states``), which every site drops from the data."""
    body = context.get("body", "")
    if _PLAYER_START not in body:
        return
    import html as html_module

    from torchcourse.frames import PLAYER_ABOUT, PLAYER_DRAWN, PLAYER_NO_SCRIPT, _script_json
    from torchcourse.i18n import translate_text

    lang = "zh_CN" if app.config.course_language == "zh" else "en"

    def words(text: str) -> str:
        return translate_text(text, lang) if text else text

    def one_player(segment: str) -> str:
        m = _PLAYER_DATA.search(segment)
        if not m:
            return segment
        data = json.loads(m.group(2))
        translated = data.pop("translated_images", {}).get(lang)
        states = data.pop("translated_states", {}).get(lang)
        labels = data.pop("translated_labels", {}).get(lang)
        if translated:
            data["images"] = translated
            start = translated[data["frames"][data["start"]][-2]]
            # the picture shown before the script runs (it stands before the data: the data's place is kept)
            head = _PLAYER_SRC.sub(lambda t: t.group(1) + start + t.group(3), segment[:m.start()], 1)
            segment, m = head + segment[m.start():], _PLAYER_DATA.search(head + segment[m.start():], len(head))
        if lang == "en":
            return segment[:m.start()] + m.group(1) + _script_json(data) + m.group(3) + segment[m.end():]
        data["title"] = words(data["title"])
        for i, axis in enumerate(data["axes"]):
            # the labels as the widget shows them in this language (an output without them: each through the catalog)
            axis.update(description=words(axis["description"]),
                        labels=labels[i] if labels else [words(x) for x in axis["labels"]], note=words(axis["note"]))
        data["messages"] = [words(x) for x in data["messages"]]
        alt = html_module.escape(f"{data['title']}: " + ", ".join(
            f"{a['description']} {a['labels'][a['start']]}" for a in data["axes"]), quote=True)
        segment = segment[:m.start()] + m.group(1) + _script_json(data) + m.group(3) + segment[m.end():]
        segment = _PLAYER_TITLE.sub(lambda t: t.group(1) + html_module.escape(data["title"]) + t.group(3), segment, 1)
        segment = _PLAYER_MESSAGE.sub(lambda t: t.group(1) + words(t.group(2)) + t.group(3), segment, 1)
        if data["title"]:  # without a title the alt text names the widget by its class: left as it is
            segment = _PLAYER_ALT.sub(lambda t: t.group(1) + alt + t.group(3), segment, 1)
        if states is not None:
            listed = "".join(f"<li>{html_module.escape(s)}</li>" for s in states)
            segment = _PLAYER_STATES.sub(lambda t: t.group(1) + listed + t.group(3), segment, 1)
        segment = segment.replace(f" {PLAYER_DRAWN}", words(PLAYER_DRAWN))
        return segment.replace(PLAYER_ABOUT, words(PLAYER_ABOUT)).replace(PLAYER_NO_SCRIPT, words(PLAYER_NO_SCRIPT))

    pieces = body.split(_PLAYER_START)
    context["body"] = pieces[0] + "".join(_PLAYER_START + one_player(piece) for piece in pieces[1:])


def _figures_in_language(app: Sphinx, config: Any) -> None:
    """A figure output carries its translations in its metadata (torchcourse.widgets.TRANSLATED_FIGURES): the
    site of a translation writes that language's PNG as the page's image, the English site the output's own.

    myst-nb renders an image output from its data alone, with no hook of its own between the cached notebook and
    the image file, so its image renderer is wrapped here: each language's site is a process of its own
    (book/build_site.py), which decides the language for the whole build."""
    if config.course_language != "zh":
        return
    import dataclasses

    from myst_nb.core.render import NbElementRenderer

    from torchcourse.widgets import TRANSLATED_FIGURES

    plain = NbElementRenderer.render_image

    def render_image(self, data):
        copies = data.output_metadata.get(data.mime_type, {}).get(TRANSLATED_FIGURES, {})
        if "zh_CN" in copies:
            data = dataclasses.replace(data, content=copies["zh_CN"])
        return plain(self, data)

    NbElementRenderer.render_image = render_image


# --------------------------------------------------------------------- figures' alt text

def _figure_alt_text(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """An output image with no alt text takes the description its PNG carries (torchcourse.widgets.figure_png
    writes the figure's titles into it), instead of the file path the theme would otherwise show."""
    from PIL import Image

    for image in doctree.findall(nodes.image):
        if image.get("alt") or not str(image.get("uri", "")).endswith(".png"):
            continue
        uri = str(image.get("candidates", {}).get("*", image["uri"]))
        for path in (Path(uri), Path(app.srcdir) / uri.lstrip("/"), Path(app.srcdir) / Path(docname).parent / uri):
            if path.is_file():
                with Image.open(path) as png:
                    described = png.text.get("Description", "") if hasattr(png, "text") else ""
                if described:
                    image["alt"] = described
                break


# --------------------------------------------------------------------- notebooks executed side by side

def _execute(text: str, cwd: str, timeout: int | None, allow_errors: bool) -> tuple[str | None, float]:
    """Run one prepared notebook in ``cwd`` (in a worker process); its executed JSON, or None if it failed."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    result = single_nb_execution(nb, cwd=cwd, timeout=timeout, allow_errors=allow_errors, meta_override=True)
    return (None if result.err is not None else nbformat.writes(nb)), result.time


def _execute_side_by_side(app: Sphinx, env: Any, docnames: list[str]) -> None:
    config = env.mystnb_config  # myst-nb's own settings, its cache folder resolved (set at builder-inited)
    if config.execution_mode != "cache" or (os.cpu_count() or 1) < 2:
        return  # one core: myst-nb's own one-at-a-time execution is as fast
    import fnmatch

    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(config.execution_cache_path)
    todo = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if path.suffix != ".ipynb" or any(fnmatch.fnmatch(str(path), p) for p in config.execution_excludepatterns):
            continue
        # The notebook as source-read leaves it for myst-nb: the cache matches on its code cells.
        nb = nbformat.reads(json.dumps(prepared(json.loads(path.read_text(encoding="utf-8")),
                                                app.config.course_instructor, english_of(path)), ensure_ascii=False),
                            as_version=nbformat.NO_CONVERT)
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            todo.append((path, nbformat.writes(nb)))
    if len(todo) < 2:
        return
    workers = min(os.cpu_count() or 1, len(todo))
    logger.info(f"executing {len(todo)} notebooks, {workers} at a time")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = {pool.submit(_execute, text, str(path.parent), config.execution_timeout,
                            config.execution_allow_errors): path for path, text in todo}
        for run in concurrent.futures.as_completed(runs):
            path = runs[run]
            executed, seconds = run.result()
            if executed is None:
                logger.info(f"{path}: failed beside the others; myst-nb runs it again and reports why")
                continue
            record = cache.add_nb_to_project(str(path))
            cache.cache_notebook_bundle(CacheBundleIn(nbformat.reads(executed, as_version=nbformat.NO_CONVERT),
                                                      record.uri, data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            logger.info(f"{path}: Executing notebook side by side: {seconds:.2f} seconds")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("course_instructor", False, "env")
    # Set by book/build_site.py for each language's build; empty on the instructor site and a bare jupyter-book build.
    app.add_config_value("course_language", "", "env")          # "en" or "zh"
    app.add_config_value("course_other_language", {}, "html")   # code, html (its tag), name
    app.add_config_value("course_other_pages", [], "html")      # docnames the other language's site has
    app.add_config_value("course_output_folder", "", "env")
    app.connect("config-inited", _language_theme)
    app.connect("builder-inited", _output_folder, priority=600)  # after myst-nb's own (500)
    app.connect("html-page-context", _language_switch)
    app.connect("html-page-context", _players_in_language)
    app.connect("config-inited", _figures_in_language)
    app.connect("config-inited", _instructor_theme)
    app.connect("config-inited", _site_frames)
    app.connect("config-inited", _theme_mode)
    app.connect("config-inited", _chinese_search)
    app.connect("doctree-resolved", _mark_chinese)
    app.connect("doctree-resolved", _figure_alt_text)
    app.connect("doctree-resolved", _name_empty_table_headers)
    app.connect("html-page-context", _frame_player_script)
    app.connect("html-page-context", _fold_named_by_its_text)
    app.connect("source-read", _prepare_notebook)
    app.connect("env-before-read-docs", _execute_side_by_side)
    app.connect("env-get-outdated", _always_reread)
    app.connect("html-page-context", _drop_widget_manager, priority=899)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.add_directive("course-pages", CoursePages)
    app.add_directive("course-glossary", CourseGlossary)
    app.add_directive("course-errata", CourseErrata)
    app.add_css_file("course.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
