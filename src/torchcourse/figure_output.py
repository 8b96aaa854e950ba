"""A figure as the course shows it: drawn on a plain matplotlib ``Figure`` (never pyplot, so nothing leaks
between cells), output as a PNG in the learner's language with its alt text, and in the site build with its
translations beside the English.

Renderers start from `figure_and_axes` and may declare with `fits_canvas` that nothing needs cropping;
`figure_png` is the one way a figure becomes PNG (the notebook's outputs, a widget's frames, the grader's report).
Importing this module teaches IPython to show plain Figures that way (`torchcourse.widgets` imports it).
"""

from __future__ import annotations

import base64
import io
import os

from IPython import get_ipython
from matplotlib.figure import Figure

from torchcourse.figure_words import can_draw, in_language
from torchcourse.i18n import LIST_SEPARATOR, N_, TRANSLATIONS, language, translations

#: Set (to "1") by the site build in the process that executes the notebooks (book/_ext/course_site.py): a widget
#: displayed there outputs its frame player instead of the live widget, and a figure its translations beside it.
SITE_FRAMES_ENV = "TORCHCOURSE_SITE_FRAMES"


def figure_png(fig: Figure, lang: str | None = None) -> bytes:
    """A figure as PNG bytes (what the notebook, the widget and the site show), its words in ``lang`` (default:
    the learner's language, `torchcourse.i18n.language`; English where no font can draw that language).

    Cropped to what was drawn ("tight"), unless the renderer declared with `fits_canvas`
    that everything lies inside the canvas: the crop costs a second layout pass, a large
    part of a widget's redraw.
    """
    lang = lang or language()
    if lang != "en" and can_draw(lang):
        with in_language(fig, lang):
            return _png(fig, lang)
    return _png(fig, "en")


def _png(fig: Figure, lang: str) -> bytes:
    buf = io.BytesIO()
    tight = None if getattr(fig, FITS_CANVAS, False) else "tight"
    fig.savefig(buf, format="png", dpi=90, bbox_inches=tight,
                metadata={"Description": figure_description(fig, lang)})
    return buf.getvalue()


def translated_pngs(fig: Figure, english: bytes) -> dict[str, bytes]:
    """The figure in each language the course is translated into whose words it can draw, where that picture
    differs from ``english`` (the figure's English PNG): what the site build carries beside the English."""
    copies = {}
    for lang in TRANSLATIONS:
        if can_draw(lang):
            png = figure_png(fig, lang)
            if png != english:
                copies[lang] = png
    return copies


#: The key, in an image/png output's metadata, of the figure's translated PNGs (base64, by language) that the site
#: build carries beside the English output; the Chinese site shows its own (book/_ext/course_site.py).
TRANSLATED_FIGURES = "torchcourse_translations"


def _figure_output(fig: Figure) -> bytes | tuple[bytes, dict]:
    """What IPython shows for a figure: its PNG; in the site build, the English PNG with its translations in the
    output's metadata (one execution serves every language's site)."""
    if not os.environ.get(SITE_FRAMES_ENV):
        return figure_png(fig)
    english = figure_png(fig, "en")
    copies = translated_pngs(fig, english)
    if not copies:
        return english
    return english, {TRANSLATED_FIGURES: {lang: base64.b64encode(png).decode("ascii") for lang, png in copies.items()}}


def figure_description(fig: Figure, lang: str = "en") -> str:
    """What a figure shows, from its own titles and axis labels: the alt text the site gives its picture (its
    connecting words in ``lang``; the titles as the figure shows them)."""
    gettext = translations(lang).gettext
    said = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) is not None else []
    for ax in fig.axes:
        labels = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        title, x, y = (" ".join(t.split()) for t in labels)
        if x and y:
            said.append(gettext(N_("{title} ({x} against {y})")).format(title=title, x=x, y=y).strip())
        elif x or y:
            said.append(f"{title} ({x or y})".strip())
        elif title:
            said.append(title)
    said = [" ".join(s.split()) for s in said if s.strip()]
    return gettext(LIST_SEPARATOR).join(dict.fromkeys(said)) or gettext(N_("A figure drawn by the notebook's code"))


FITS_CANVAS = "_torchcourse_fits_canvas"


def fits_canvas(fig: Figure, **margins: float) -> Figure:
    """Declare that ``fig``'s artists lie inside its canvas (after ``subplots_adjust(**margins)``).

    A declaration tests hold renderers to (tests/unit/test_widget_canvas.py): no artist of any
    enumerated state may reach past the canvas, or `figure_png` would clip it.
    """
    if margins:
        fig.subplots_adjust(**margins)
    setattr(fig, FITS_CANVAS, True)
    return fig


def figure_and_axes(ax=None, figsize: tuple[float, float] = (6.4, 4.8)):
    """The renderers' common start: draw on ``ax`` when given (a panel of a stand-in), else on a new Figure."""
    if ax is None:
        fig = Figure(figsize=figsize)
        return fig, fig.add_subplot()
    return ax.figure, ax


def _register_figure_display() -> None:
    # The course draws on plain ``Figure`` objects, not pyplot, so nothing leaks between
    # cells; IPython only knows how to show pyplot figures, so teach it these too.
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, _figure_output)


_register_figure_display()
