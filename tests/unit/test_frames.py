"""The frame player's data (torchcourse/frames.py): its keys are the ones book/js/frame-player.js reads."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

from PIL import Image

from torchcourse.frames import (
    PLAYER_ABOUT,
    PLAYER_DRAWN,
    PLAYER_NO_SCRIPT,
    AxisData,
    FrameAxis,
    FrameData,
    frame_data,
    player_html,
)

PLAYER_JS = Path(__file__).resolve().parents[2] / "book" / "js" / "frame-player.js"


def _read_by_the_player() -> tuple[set[str], set[str]]:
    """The keys frame-player.js reads: of the data (``data.X``) and of an axis (``a.X``, ``axes[k].X``)."""
    js = PLAYER_JS.read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", js, flags=re.S)  # its comments spell the format, not read it
    top = set(re.findall(r"\bdata\.(\w+)", code))
    axis = set(re.findall(r"\ba\.(\w+)", code)) | set(re.findall(r"\baxes\[\w+\]\.(\w+)", code))
    return top, axis


def test_the_player_reads_every_key_of_the_frame_data_and_no_other():
    top, axis = _read_by_the_player()
    assert top == set(FrameData.__required_keys__)
    assert axis <= set(AxisData.__required_keys__)
    # an axis's start is the picture's alt text before any script runs (player_html); the script starts at
    # the data's own start
    assert set(AxisData.__required_keys__) - axis == {"start"}


def _png(colour: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
    return buf.getvalue()


def test_frame_data_is_what_the_player_html_carries():
    axes = [FrameAxis("n", "size", "slider", [1, 2], ["1", "2"], 1)]
    data = frame_data("Sizes <1>", axes, [_png("red"), _png("blue")], ["", "<b>two</b>"], [[0, 0, 0], [1, 1, 1]], 1)
    assert set(data) == set(FrameData.__required_keys__)
    assert all(set(a) == set(AxisData.__required_keys__) for a in data["axes"])
    page = player_html(data, "m.W", "W")
    carried = re.search(r'<script type="application/json" class="tc-player-data">(.*?)</script>', page).group(1)
    assert json.loads(carried) == data and "<" not in carried  # nothing in the JSON can close its element
    assert f'src="data:image/png;base64,{data["images"][1]}"' in page and 'alt="Sizes &lt;1&gt;: size 2"' in page


def _course_site():
    """The site's Sphinx extension (book/_ext is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_site", PLAYER_JS.parents[1] / "_ext" / "course_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_notes_under_a_player_are_in_the_language_of_the_site():
    """A widget's player on each site: the states it has pictures for, as the widget itself says them in that
    language (carried beside the English for the site build, then dropped), and the notes around them."""

    from torchcourse.i18n import translations
    from torchcourse.parallel.planner import ParallelismPlanner

    zh = translations("zh_CN").gettext
    cjk = re.compile(r"[\u4e00-\u9fff]")
    widget = ParallelismPlanner()
    english = widget.frame_space_description()
    chinese = widget.frame_space_description("zh_CN")
    assert english[0] == "every combination of devices (1, 4, 16) and strategy (all 8)"
    assert len(chinese) == len(english) and all(cjk.search(s) for s in chinese)
    assert zh("tensor") in chinese[-1] and "tensor" not in chinese[-1] and zh("strategy") in chinese[-1]
    data = frame_data("Plan", [FrameAxis("n", "size", "slider", [1, 2], ["1", "2"], 1)], [_png("red")], [""],
                      [[0, 0, 0], [1, 0, 0]], 1)
    page = player_html(data, "m.W", "W", english, {"zh_CN": chinese})
    shown = _on_each_site(page)
    assert all("translated_states" not in body for body in shown.values())
    listed = re.compile(r"<li>(.*?)</li>")
    assert listed.findall(shown["en"]) == [html.escape(s) for s in english]
    assert listed.findall(shown["zh"]) == [html.escape(s) for s in chinese]
    for note in (PLAYER_ABOUT, PLAYER_DRAWN, PLAYER_NO_SCRIPT):
        assert note in shown["en"] and note not in shown["zh"] and zh(note) in shown["zh"] and cjk.search(zh(note))


def _on_each_site(page: str) -> dict[str, str]:
    """A page's body as the site extension leaves it for each language's site."""
    from types import SimpleNamespace

    site = _course_site()
    shown = {}
    for language in ("en", "zh"):
        context = {"body": page}
        site._players_in_language(SimpleNamespace(config=SimpleNamespace(course_language=language)), "p", "t",
                                  context, None)
        shown[language] = context["body"]
    return shown


def test_each_site_shows_the_labels_the_widget_gave_for_its_language():
    """The Chinese site shows the labels the widget carried for it (a word translated, the same word as code kept),
    not each English label put through the catalog alone; the English site the English; both drop the copies."""

    axes = [FrameAxis("layout", "source x", "select", ["contiguous", "transposed"], ["contiguous", "transposed"], 0),
            FrameAxis("op", "operation", "select", ["contiguous", "slice"], ["contiguous", "slice"], 0)]
    carried = {"zh_CN": [["连续", "转置"], ["contiguous", "切片"]]}
    data = frame_data("Memory explorer", axes, [_png("red")], [""], [[0, 0, 0, 0], [1, 1, 0, 0]], 0,
                      translated_labels=carried)
    assert data["translated_labels"] == carried
    page = player_html(data, "m.W", "W")
    shown = {}
    for language, body in _on_each_site(page).items():
        assert "translated_labels" not in body
        shown[language] = json.loads(re.search(r'class="tc-player-data">(.*?)</script>', body).group(1))
    assert [a["labels"] for a in shown["en"]["axes"]] == [["contiguous", "transposed"], ["contiguous", "slice"]]
    assert [a["labels"] for a in shown["zh"]["axes"]] == carried["zh_CN"]


def test_a_widgets_frames_carry_its_labels_in_each_translation(monkeypatch):
    """Explorer.frames() in the site build: the English labels in the data, each translation's beside them, the
    words translated and a label the widget keeps as code kept."""
    import warnings
    from types import SimpleNamespace

    import ipywidgets as widgets
    from matplotlib.figure import Figure

    from torchcourse.widgets import SITE_FRAMES_ENV, Explorer

    class Layouts(Explorer):
        CODE_OPTIONS = {"op": frozenset({"contiguous"})}

    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    monkeypatch.setenv(SITE_FRAMES_ENV, "1")
    controls = {"layout": widgets.Dropdown(options=["contiguous", "transposed"], value="contiguous"),
                "op": widgets.Dropdown(options=["contiguous", "slice", "view"], value="slice")}
    explorer = Layouts(controls, lambda layout, op: SimpleNamespace(message=f"{layout} {op}"),
                       lambda state: Figure(figsize=(1, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # without a CJK font: the pictures stay English, the labels do not
        data = explorer.frames()
    assert [a["labels"] for a in data["axes"]] == [["contiguous", "transposed"], ["contiguous", "slice", "view"]]
    assert data["translated_labels"] == {"zh_CN": [["连续", "转置"], ["contiguous", "切片", "view"]]}
