"""A figure's words in Chinese: finished English text translated through the code catalog
(torchcourse.i18n.translate_text), and a figure drawn in Chinese with a CJK font (torchcourse.figure_words)."""

from __future__ import annotations

import io
import re
import warnings

import pytest
from PIL import Image

from torchcourse import figure_words
from torchcourse.i18n import translate_text, translations
from torchcourse.widgets import figure_png

ZH = translations("zh_CN").gettext
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_an_exact_message_is_its_translation_and_unknown_text_stays():
    assert translate_text("Roofline explorer") == ZH("Roofline explorer") != "Roofline explorer"
    for text in ("3.14", "(N, F) = (4,)", "hello 3", ""):
        assert translate_text(text) == text
    assert translate_text("Roofline explorer", "en") == "Roofline explorer"


def test_a_formatted_message_is_translated_with_the_values_it_was_formatted_with():
    message = "{buckets} bucket(s): DDP step {ddp:.2f}, DataParallel step {dp:.2f}"
    english = message.format(buckets=3, ddp=1.25, dp=1.8)
    assert english == "3 bucket(s): DDP step 1.25, DataParallel step 1.80"
    # the values as the English shows them (1.80, not 1.8): the translation's specs are not applied again
    assert translate_text(english) == ZH(message).replace("{buckets}", "3").replace("{ddp:.2f}", "1.25").replace(
        "{dp:.2f}", "1.80")
    assert CJK.search(translate_text(english))


def test_a_message_matches_only_the_template_it_came_from():
    """" Without it: loss {loss}." would match the longer message's English too (its placeholder taking the rest
    of the sentence): the more specific message wins."""
    short = " Without it: loss {loss}."
    long = " Without it: loss {loss}; each step used the sum of every gradient so far."
    assert ZH(short) != short and ZH(long) != long
    assert translate_text(short.format(loss="0.031")) == ZH(short).format(loss="0.031")
    assert translate_text(long.format(loss="0.031")) == ZH(long).format(loss="0.031")


def test_a_placeholder_named_twice_must_capture_the_same_text():
    message = ("Stream cycle {cycle} of a {size}x{size} tile, M = K = N = {size}: weight-, output- and "
               "input-stationary;\ncolour: the sum each PE passes down or holds; grey: idle")
    assert translate_text(message.format(cycle=5, size=4)) == ZH(message).format(cycle=5, size=4)
    wrong = message.replace("{size}x{size}", "4x8").format(cycle=5, size=4)
    assert translate_text(wrong) == wrong


def test_a_captured_word_the_catalog_knows_is_translated_too():
    assert translate_text("rank 1: vector") == ZH("rank {rank}: {name}").format(rank=1, name=ZH("vector"))


def _dataflow_strip():
    from torchcourse.hardware.systolic import static_dataflow_strip

    return static_dataflow_strip()


def _description(png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as img:
        return img.text.get("Description", "")


@pytest.mark.skipif(figure_words.cjk_family() is None, reason="no CJK font installed (tests/setup-system.sh)")
def test_a_figure_in_chinese_is_drawn_with_its_words_in_chinese_and_then_english_again():
    fig = _dataflow_strip()
    english = figure_png(fig, "en")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chinese = figure_png(fig, "zh_CN")
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert not missing, f"glyphs drawn as boxes: {missing[:3]}"
    assert chinese != english
    assert CJK.search(_description(chinese)) and not CJK.search(_description(english))
    assert "M = K = N = 4" in _description(chinese)  # the numbers as the English drew them
    assert figure_png(fig, "en") == english, "the figure's English texts were not put back"
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontfamily"))]
    assert not any(CJK.search(t) for t in texts)


def test_without_a_cjk_font_a_chinese_figure_stays_english_with_one_warning(monkeypatch):
    monkeypatch.setattr(figure_words, "cjk_family", lambda: None)
    monkeypatch.setattr(figure_words, "_warned", set())
    fig = _dataflow_strip()
    english = figure_png(fig, "en")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pictures = [figure_png(fig, "zh_CN") for _ in range(3)]
    assert all(p == english for p in pictures)
    assert [str(w.message) for w in caught] == [figure_words.NO_FONT]
