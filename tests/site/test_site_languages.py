"""The learner site in both languages (book/build_site.py): the switch between them, <html lang>, the theme's
own words in Chinese, the Chinese toc, the site's own pages from their catalogs, and one execution for both.

The Chinese site is the tests' (tests/helpers/site.py): it carries ZH_TEST_CHAPTER even before that chapter is
released, with English where a message has no translation yet. The Chinese search is checked in Chromium
(tests/browser/test_site_browser.py)."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import site as sitebuild

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import book_catalogs  # noqa: E402
import build_site  # noqa: E402

SWITCH = re.compile(r'<a class="btn btn-sm tc-language-switch" href="([^"]+)" hreflang="([^"]+)"')
HTML_LANG = re.compile(r"<html[^>]* lang=\"([^\"]+)\"")


def _pages(site_html: Path) -> list[Path]:
    return sorted(p for p in site_html.rglob("*.html") if "_static" not in p.parts)


def _switch(page: Path) -> tuple[Path, str]:
    """Where the page's language switch leads (a file), and the language it says it leads to."""
    m = SWITCH.search(page.read_text(encoding="utf-8"))
    assert m, f"{page}: no language switch"
    return (page.parent / html.unescape(m.group(1))).resolve(), m.group(2)


def test_every_page_has_html_lang_and_a_switch_to_the_same_page_in_the_other_language(learner_site, chinese_site):
    root = learner_site.html.parent
    for site, lang, other in ((learner_site, "en", chinese_site), (chinese_site, "zh-CN", learner_site)):
        for page in _pages(site.html):
            text = page.read_text(encoding="utf-8")
            if 'http-equiv="Refresh"' in text or "http-equiv=\"refresh\"" in text:
                continue  # index.html: a redirect to the landing page
            assert HTML_LANG.search(text).group(1) == lang, f"{page}: <html lang> is not {lang}"
            target, says = _switch(page)
            assert target.is_file(), f"{page.relative_to(root)}: the switch leads to missing {target}"
            assert target.is_relative_to(other.html.resolve()) and says != lang
            same = other.html / page.relative_to(site.html)
            if same.exists():
                assert target == same.resolve(), f"{page.relative_to(root)} switches to {target}, not {same}"
                back, _ = _switch(target)
                assert back == page.resolve(), f"{target} switches back to {back}, not {page}"


def test_an_unreleased_chapter_leads_to_a_chinese_page_that_links_back_to_english(learner_site, chinese_site):
    unreleased = sorted({p.parent.name for p in (learner_site.html / "chapters").glob("*/*.html")}
                        - {sitebuild.ZH_TEST_CHAPTER})
    assert unreleased
    for chapter in unreleased:
        english = sorted((learner_site.html / "chapters" / chapter).glob("*.html"))
        target, _ = _switch(english[-1])
        assert target == (chinese_site.html / "chapters" / chapter / "index.html").resolve()
        text = target.read_text(encoding="utf-8")
        assert "本章的中文版尚未发布" in text
        links = {(target.parent / h).resolve() for h in re.findall(r'<li><a href="(\.\./\.\./\.\./en/[^"]+)"', text)}
        assert links == {p.resolve() for p in english}, f"{chapter}: the Chinese page does not link every English page"
        back, _ = _switch(target)
        assert back == english[0].resolve()


def test_the_theme_speaks_chinese_and_the_toc_captions_are_chinese(chinese_site):
    page = (chinese_site.html / "book" / "intro.html").read_text(encoding="utf-8")
    # pydata-sphinx-theme's and sphinx-book-theme's own words, from their zh catalogs (language = zh_CN).
    for words in ('aria-label="搜索', "下载此页面", "目录"):
        assert words in page, f"the theme's {words!r} is missing from the Chinese page"
    captions = re.findall(r'caption-text">([^<]+)', page)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert captions == [build_site.chinese_caption(p["caption"]) for p in toc["parts"]]
    assert "第 4 章：硬件加速" in captions and "从这里开始" in captions
    assert "Search" not in re.findall(r'aria-label="([^"]+)"', page)


def test_the_sites_own_pages_are_in_chinese(chinese_site):
    for page in book_catalogs.PAGES:
        text = (chinese_site.html / "book" / f"{page}.html").read_text(encoding="utf-8")
        title = book_catalogs.lookup(page)(book_catalogs.units((ROOT / "book" / f"{page}.md").read_text())[0])
        assert title and f"<h1>{html.escape(title)}" in text, f"{page}: not its Chinese title"
    glossary = (chinese_site.html / "book" / "glossary.html").read_text(encoding="utf-8")
    assert "含义" in glossary and "一块有类型的 n 维数字" in glossary
    errata = (chinese_site.html / "book" / "errata.html").read_text(encoding="utf-8")
    assert "在哪里" in errata and "原文（2.4 AI硬件加速设备）：「截至目前，谷歌已经发行了四代TPU芯片。」" in errata


def test_the_chinese_build_executes_nothing_and_shows_the_same_outputs(learner_site, chinese_site):
    if not chinese_site.log:
        pytest.skip("TORCHCOURSE_PREBUILT_SITE: no build in this session")
    notebooks = sorted((ROOT / "chapters" / sitebuild.ZH_TEST_CHAPTER).glob("*.ipynb"))
    log = re.sub(r"\x1b\[[0-9;]*m", "", chinese_site.log)
    assert "Executing notebook" not in log, "the Chinese build executed a notebook the English build had executed"
    for nb in notebooks:
        assert re.search(rf"{re.escape(nb.name)}: Using cached notebook", log), f"{nb.name}: not from the cache"
        doc = f"chapters/{nb.parent.name}/{nb.stem}.html"
        english = (learner_site.html / doc).read_text(encoding="utf-8")
        chinese = (chinese_site.html / doc).read_text(encoding="utf-8")
        for what in ('<div class="tc-player"', "<img ", 'class="cell_output', "<details"):
            assert chinese.count(what) == english.count(what), f"{doc}: {what} {chinese.count(what)} vs " \
                                                                 f"{english.count(what)}"


def test_the_language_chooser_offers_both_sites(learner_site, chinese_site):
    chooser = learner_site.html.parent / "index.html"
    text = chooser.read_text(encoding="utf-8")
    for code in ("en", "zh"):
        assert f'href="{code}/index.html"' in text and (chooser.parent / code / "index.html").is_file()


def test_every_message_of_the_sites_own_pages_is_translated_well():
    """The site's own pages, as a released chapter: every message translated, none fuzzy, none with a problem
    a reviewer would flag (torchcourse.translation.quality)."""
    from torchcourse.translation import catalogs, quality

    found = []
    for page in book_catalogs.PAGES:
        cat = catalogs.read(book_catalogs.catalog_path(page), book_catalogs.LANGUAGE)
        template = {m.id for m in book_catalogs.template(page) if m.id}
        assert template <= {m.id for m in cat if m.id}, f"{page}.po: run `python book/book_catalogs.py update`"
        for m in cat:
            if m.id in template:
                if not m.string or m.fuzzy:
                    found.append(f"{page}: {'fuzzy' if m.fuzzy else 'untranslated'}: {m.id[:60]!r}")
                found += [f"{page}: {p}: {m.id[:60]!r}" for p in quality.problems(m.id, m.string, ROOT) if m.string]
    assert not found, "\n".join(found)


PLAYER_DATA = re.compile(r'<script type="application/json" class="tc-player-data">(.*?)</script>', re.S)


def test_players_on_chinese_pages_speak_the_widgets_catalog(learner_site, chinese_site):
    """The players are the English execution's outputs; the Chinese site puts their words through the catalog the
    widgets use (torchcourse.i18n): the same states, each title and control name as the catalog translates it, and
    each message, those with numbers in them included, as translate_text translates it."""
    import json

    from torchcourse.i18n import translate_text, translations

    gettext = translations("zh_CN").gettext
    translated = numbered = 0
    for page in sorted((chinese_site.html / "chapters" / sitebuild.ZH_TEST_CHAPTER).glob("*.html")):
        english = [json.loads(m) for m in PLAYER_DATA.findall(
            (learner_site.html / page.relative_to(chinese_site.html)).read_text(encoding="utf-8"))]
        text = page.read_text(encoding="utf-8")
        chinese = [json.loads(m) for m in PLAYER_DATA.findall(text)]
        assert len(chinese) == len(english)
        for en, zh in zip(english, chinese):
            assert zh["frames"] == en["frames"] and len(zh["images"]) == len(en["images"])
            assert zh["title"] == gettext(en["title"])
            assert zh["messages"] == [translate_text(m) for m in en["messages"]]
            numbered += sum(bool(re.search(r"\d", en_m) and CJK.search(zh_m) and not CJK.search(en_m))
                            for en_m, zh_m in zip(en["messages"], zh["messages"]))
            assert [a["description"] for a in zh["axes"]] == [gettext(a["description"]) for a in en["axes"]]
            assert f'<b>{html.escape(zh["title"])}</b>' in text
            translated += zh["title"] != en["title"]
    assert translated, "no player title on the Chinese pages is in Chinese (does the widgets' catalog lack them?)"
    assert numbered, "no player message with numbers in it is in Chinese on the Chinese pages"


CJK = re.compile(r"[\u4e00-\u9fff]")
PLAYER_FRAME = re.compile(r'<img class="tc-player-frame" alt="[^"]*" src="data:image/png;base64,([^"]*)"')
OUTPUT_IMAGE = re.compile(r'<img[^>]* src="([^"]*_images/[^"]+\.png)"')


def _description(path: Path) -> str:
    from PIL import Image

    with Image.open(path) as png:
        return png.text.get("Description", "")


def test_the_chinese_pages_show_the_figures_drawn_in_chinese_and_the_english_pages_no_copy(learner_site,
                                                                                          chinese_site):
    """One execution draws each figure and each player frame in both languages (torchcourse.widgets): the Chinese
    page shows the Chinese drawing (its alt text the Chinese PNG's description), the English page the English one
    and no copy of the other."""
    import json

    from torchcourse.figure_words import cjk_family

    if cjk_family() is None:
        pytest.skip("no CJK font: the figures are English in both sites")
    figures = frames = 0
    for page in sorted((chinese_site.html / "chapters" / sitebuild.ZH_TEST_CHAPTER).glob("*.html")):
        zh_text = page.read_text(encoding="utf-8")
        en_page = learner_site.html / page.relative_to(chinese_site.html)
        en_text = en_page.read_text(encoding="utf-8")
        assert "translated_images" not in en_text and "translated_images" not in zh_text
        en_players = [json.loads(m) for m in PLAYER_DATA.findall(en_text)]
        zh_players = [json.loads(m) for m in PLAYER_DATA.findall(zh_text)]
        for en, zh in zip(en_players, zh_players):
            frames += sum(a != b for a, b in zip(en["images"], zh["images"]))
            assert not set(zh["images"]) & set(en["images"]) - {i for i, j in zip(en["images"], zh["images"]) if i == j}
        # the picture shown before the script runs is the starting frame of the page's own language
        assert PLAYER_FRAME.findall(zh_text) == [p["images"][p["frames"][p["start"]][-2]] for p in zh_players]
        assert PLAYER_FRAME.findall(en_text) == [p["images"][p["frames"][p["start"]][-2]] for p in en_players]
        en_images = [(en_page.parent / src).resolve() for src in OUTPUT_IMAGE.findall(en_text)]
        zh_images = [(page.parent / src).resolve() for src in OUTPUT_IMAGE.findall(zh_text)]
        assert len(en_images) == len(zh_images)
        for en_png, zh_png in zip(en_images, zh_images):
            if en_png.read_bytes() != zh_png.read_bytes():
                figures += 1
                assert CJK.search(_description(zh_png)) and not CJK.search(_description(en_png))
                alt = re.search(rf'<img alt="([^"]*)"[^>]* src="[^"]*{re.escape(zh_png.name)}"', zh_text)
                assert alt and CJK.search(html.unescape(alt.group(1))), f"{page.name}: {zh_png.name} has no Chinese alt"
    assert figures, "no figure on the Chinese pages is drawn in Chinese"
    assert frames, "no player frame on the Chinese pages is drawn in Chinese"
