"""A figure's words in Chinese: finished English text translated through the code catalog
(torchcourse.i18n.translate_text), and a figure drawn in Chinese with a CJK font (torchcourse.figure_words)."""

from __future__ import annotations

import io
import re
import warnings

import pytest
from matplotlib.figure import Figure
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


def test_a_message_with_little_literal_text_translates_values_and_leaves_other_text_alone():
    """"result {shape}", "dim {dim}" and "{expression}: VIEW" say too little to tell their English from a text that
    only starts or ends the same way: they translate a text whose captured part is a value (a shape, a number, code,
    a word of the catalog), never one whose captured part is words of its own."""
    for message, english, value in (("result {shape}", "result (3, 4)", {"shape": "(3, 4)"}),
                                     ("dim {dim}", "dim -1", {"dim": "-1"}),
                                     ("{expression}: VIEW", "x.transpose(-2, -1): VIEW",
                                      {"expression": "x.transpose(-2, -1)"}),
                                     ("shape {shape}", "shape (2, 3, 4)", {"shape": "(2, 3, 4)"}),
                                     ("{name} as read", "a as read", {"name": "a"})):
        assert ZH(message) != message and translate_text(english) == ZH(message).format(**value)
    for text in ("result in memory", "dim sum", "shape matters", "cycle detected", "everything as read",
                 "the answer: VIEW", "in place"):
        assert translate_text(text) == text, text
    # a message with enough literal text of its own still takes any words as its values
    long = "{strategy}: memory per device"
    assert translate_text(long.format(strategy="pipeline")) == ZH(long).format(strategy=ZH("pipeline"))
    assert translate_text(long.format(strategy="my own plan")) == ZH(long).format(strategy="my own plan")


def test_a_figures_text_that_only_looks_like_a_short_message_stays_english():
    fig = Figure()
    ax = fig.add_subplot()
    kept = ax.text(0, 0, "result in memory")
    shape = ax.text(0, 1, "result (3, 4)")
    with figure_words.in_language(fig, "zh_CN"):
        assert kept.get_text() == "result in memory"
        assert shape.get_text() == ZH("result {shape}").format(shape="(3, 4)")


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


# ------------------------------------------------------------------ every drawn word the catalog has

def _measured_cpu(threads: int):
    from torchcourse.hardware.machines import Bandwidth, CpuMeasurement, Measurement

    return CpuMeasurement(Measurement((1.0e11, 1.1e11)), Bandwidth(Measurement((1.0e10, 1.1e10)), 2**27, 2**25),
                          threads).machine


def _stand_ins():
    from torchcourse.autograd import descent, jacobian
    from torchcourse.hardware import fixedpoint, roofline
    from torchcourse.parallel import planner
    from torchcourse.tensors import broadcast, memory, ranks

    pipeline = planner.PlanFigure(planner.agg_figure((9.0, 3.2)).subplots(1, 2))
    pipeline.draw(planner.plan(7.0, 16, 4, "pipeline"))
    return {"ranks": ranks.static_rank_gallery(), "broadcast": broadcast.static_broadcast_gallery(),
            "memory": memory.static_memory_explorer(), "descent": descent.static_descent_playground(),
            "jacobian": jacobian.static_jacobian_explorer(), "fixed point": fixedpoint.static_fixed_point(),
            "roofline": roofline.static_roofline(_measured_cpu(2)), "planner": planner.static_planner(),
            "pipeline plan": pipeline.figure}


#: Drawn texts that are names, the same in both editions (an operation's PyTorch name, a product, a size).
NAMES = {"matmul", "add", "conv2d", "NVIDIA H100 SXM", " 80 GB GPU"}
WORDS = re.compile(r"[A-Za-z]{3,}")


def test_a_figure_in_chinese_keeps_no_english_the_catalog_can_translate():
    """Each stand-in's drawn texts, as a figure saved in Chinese shows them: every text with words changes (names
    aside), and no line of a text stays English where the catalog has that line (a message with placeholders must
    not swallow the lines after its own)."""
    left = []
    for name, fig in _stand_ins().items():
        texts = [t.get_text() for t in figure_words._texts(fig)]
        texts += [str(s) for f in figure_words._fixed_tick_labels(fig) for s in f.seq]
        for english in dict.fromkeys(texts):
            chinese = figure_words._translated(english, "zh_CN")
            if chinese == english and WORDS.search(english) and english not in NAMES:
                left.append(f"{name}: {english!r}")
            for line in english.split("\n") if "\n" in english else []:
                if translate_text(line) != line and line in chinese.split("\n"):
                    left.append(f"{name}: the line {line!r} of {english!r} -> {chinese!r}")
    assert not left, "\n".join(left)


def test_the_words_formatted_into_a_figure_are_translated_with_their_numbers():
    from torchcourse.hardware.roofline import OPERATIONS, draw_roofline, roofline_point
    from torchcourse.parallel.planner import STRATEGIES

    for threads in (1, 16):
        machine = _measured_cpu(threads)
        assert translate_text(machine.name) == ZH("this CPU ({threads} thread(s), measured)").format(threads=threads)
        fig = draw_roofline(roofline_point(OPERATIONS[2], 56, "float32", machine))
        with figure_words.in_language(fig, "zh_CN"):
            drawn = [t.get_text() for t in figure_words._texts(fig)]
        assert ZH("this CPU ({threads} thread(s), measured)").format(threads=threads) in drawn
        assert ZH("{operation}, n={n}, in {dtype}").format(operation=ZH(OPERATIONS[2]), n=56, dtype="float32") in drawn
    for strategy in ("single device", "pipeline", "tensor"):
        assert strategy in STRATEGIES and CJK.search(translate_text(strategy))
        assert translate_text(f"{strategy}: memory per device") == ZH("{strategy}: memory per device").format(
            strategy=ZH(strategy))
    assert translate_text("x.t(): VIEW") == "x.t()：视图" and translate_text("result (2, 3)") == "结果 (2, 3)"
    assert translate_text("source storage: 12 cells (green: read by the result)") == ZH(
        "source storage: {cells} cells (green: read by the result)").format(cells=12)
