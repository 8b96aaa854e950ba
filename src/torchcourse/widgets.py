"""The wrapper layer shared by every widget: controls in, core result out, figure drawn.

A widget is three layers (see CONTRIBUTING.md): a pure *core* function, a *renderer* that
draws the core's result on a matplotlib Figure, and this *wrapper*, which calls both
whenever a control changes and keeps the latest result in ``.state`` so tests can read it.

On the static site there is no kernel to call the core, so the wrapper also computes its
*frames* ahead of time: every state of its declared ``frame_space()``, drawn by the same core
and renderer (see ``Explorer.frames``). When the site build executes a notebook (it sets
``SITE_FRAMES_ENV``), a displayed widget outputs a frame player (HTML with the frames embedded)
instead of the live widget; book/js/frame-player.js swaps the frames when a control moves. The
frames' format, which that script reads, is ``torchcourse.frames.FrameData``; a figure becomes PNG (and IPython
learns to show plain Figures) in ``torchcourse.figure_output``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
from IPython.display import display
from matplotlib.figure import Figure

# The figure helpers of `figure_output`, named here too: renderers, the site build and tests import them from here.
from torchcourse.figure_output import FITS_CANVAS as FITS_CANVAS
from torchcourse.figure_output import SITE_FRAMES_ENV, figure_png, translated_pngs
from torchcourse.figure_output import TRANSLATED_FIGURES as TRANSLATED_FIGURES
from torchcourse.figure_output import figure_and_axes as figure_and_axes
from torchcourse.figure_output import figure_description as figure_description
from torchcourse.figure_output import fits_canvas as fits_canvas
from torchcourse.frames import FrameAxis, FrameData, frame_data, player_html
from torchcourse.i18n import LIST_SEPARATOR, N_, TRANSLATIONS, VALUE_SEPARATOR, language, translate_text, translations
from torchcourse.i18n import gettext as _

#: The most frames one widget may declare: with frames of 5-20 kB this keeps a widget's share of
#: its page under the 2 MB budget, and its cell well within the site build's cell time limit
#: (contract.CELL_TIMEOUT_S) even on a busy 2-core machine (benchmarks/site_frames.py measures a frame).
FRAME_CAP = 48


def _slider_values(control: widgets.ValueWidget) -> list:
    count = int(round((control.max - control.min) / control.step)) + 1
    if isinstance(control, widgets.IntSlider):
        return list(range(control.min, control.max + 1, control.step))
    return [round(control.min + i * control.step, 10) for i in range(count)]


def _options(control: widgets.ValueWidget) -> tuple[list, list[str]]:
    """A selection control's (values, labels); ``options`` may hold plain values or (label, value) pairs."""
    labels, values = [], []
    for option in control.options:
        label, value = option if isinstance(option, tuple) and len(option) == 2 else (str(option), option)
        labels.append(str(label))
        values.append(value)
    return values, labels


def default_values(control: widgets.ValueWidget) -> list:
    """Every value a control can take, or only its current one for a free-text control."""
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        return _slider_values(control)
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return [False, True]
    if isinstance(control, widgets.Combobox):
        return list(dict.fromkeys([control.value, *control.options]))
    if hasattr(control, "options"):  # Dropdown, SelectionSlider, ToggleButtons, RadioButtons, Select
        return _options(control)[0]
    return [control.value]  # Text, FloatText, ...: a widget declares its instructive inputs


def _kind(control: widgets.ValueWidget) -> str:
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return "checkbox"
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.SelectionSlider)):
        return "slider"
    return "select"


def _is_list(control: widgets.ValueWidget) -> bool:
    """Whether a control offers a fixed list of options (a drop-down, toggles, a selection slider), each with a
    label: not a free-text box with suggestions."""
    return hasattr(control, "options") and not isinstance(control, widgets.Combobox)


def _label(control: widgets.ValueWidget, value: Any, english: tuple[list, list[str]] | None = None) -> str:
    """A value as the control names it (``english``: the control's options as they were written, before the
    labels were translated)."""
    if _is_list(control):
        values, labels = english or _options(control)
        if value in values:
            return labels[values.index(value)]
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _in_control_order(control: widgets.ValueWidget, values: list) -> list:
    """The values a frame space gives a control, in the order the control itself offers them.

    A slider or list with ``options`` goes in its options' order, a numeric slider ascending, a
    checkbox False then True; free-text inputs keep the order the widget declared them in.
    """
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return sorted(values)
    if _is_list(control):
        order = _options(control)[0]
        return sorted(values, key=lambda v: order.index(v) if v in order else len(order))
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        return sorted(values)
    return list(values)


class Explorer(widgets.VBox):
    """Controls above an output area; ``.state`` and ``.figure`` hold the latest update.

    Subclasses pass their controls, a ``compute(**values)`` core call and a
    ``render(state)`` renderer. Figures are plain ``Figure`` objects (not pyplot), so
    nothing leaks into other cells and updates stay fast.
    """

    def __init__(self, controls: dict[str, widgets.ValueWidget], compute: Callable[..., Any],
                 render: Callable[[Any], Figure], *, title: str = "") -> None:
        # Labels are written in English (marked N_ where they are defined) and shown in the learner's language.
        title = _(title)
        lang = language()
        #: Each list control's options as the widget wrote them: (values, English labels).
        self._english_options: dict[str, tuple[list, list[str]]] = {}
        for name, control in controls.items():
            control.description = _(control.description)
            if getattr(control, "placeholder", ""):
                control.placeholder = _(control.placeholder)
            if _is_list(control):
                values, labels = self._english_options[name] = _options(control)
                shown = [self.option_label(name, label, lang) for label in labels]
                if shown != labels:
                    # (label, value) pairs: the learner reads the translation, the code still gets the English value
                    value = control.value
                    control.options = list(zip(shown, values))
                    control.value = value
        self.controls = controls
        self.title = title
        self._compute = compute
        self._render = render
        self.output = widgets.Output()
        self.message = widgets.HTML()
        self.state: Any = None
        self.figure: Figure | None = None
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        row = widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__(header + [row, self.message, self.output])
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    #: By control, the English labels of options that are code (a method's name, as the notebook's code writes
    #: it): shown as they are in every language, even where the catalog has the same word as a message of its own.
    CODE_OPTIONS: dict[str, frozenset[str]] = {}

    def option_label(self, control: str, label: str, lang: str) -> str:
        """The label of one of ``control``'s options in ``lang``: the code catalog's translation of the English
        label (the exact message: words the catalog lacks, such as a dtype's name or a product's, stay as they are),
        but a label the widget lists in ``CODE_OPTIONS``. The live widget and both sites' players show this."""
        if label in self.CODE_OPTIONS.get(control, ()):
            return label
        return translations(lang).gettext(label) if label else label

    # ----------------------------------------------------------------- frames for the static site

    #: The title the site's player shows (the live widget's header).
    title: str = ""
    #: Shown on the site beside each free-text control offered as a list of inputs.
    FREE_TEXT_NOTE = N_("the notebook accepts any input here")

    def frame_space(self) -> dict[str, Sequence] | list[dict[str, Sequence]]:
        """The control values the static site offers: the states it computes frames for.

        A dict ``{control: values}`` stands for the product of those values; a list of such dicts
        for the union of their products (a control a dict leaves out keeps its starting value).
        The default is the product of every value of every dropdown, toggle, checkbox and slider,
        with only the current value of a free-text control. A widget whose product exceeds
        ``FRAME_CAP``, or that has free-text controls, overrides this to declare the instructive
        states or a curated list of inputs. The widget's starting state is always added.
        """
        return {name: default_values(control) for name, control in self.controls.items()}

    def _frame_blocks(self) -> list[dict[str, list]]:
        """The frame space as a list of products, the starting state last (as a product of one)."""
        space = self.frame_space()
        blocks = [space] if isinstance(space, dict) else list(space)
        blocks = [{name: list(values) for name, values in block.items()} for block in blocks]
        return blocks + [{name: [value] for name, value in self.values().items()}]

    def frame_space_description(self, lang: str = "en") -> list[str]:
        """What the site's player offers, one sentence per product of the frame space, for its readers; in
        ``lang``, the controls' names and values as the site of that language shows them (the code catalog's)."""
        gettext = translations(lang).gettext

        def words(text: str) -> str:
            return translate_text(text, lang)

        comma = gettext(VALUE_SEPARATOR)
        axes, _states = self.frame_states()
        by_name = {a.name: a for a in axes}
        sentences = []
        for block in self._frame_blocks()[:-1]:
            moved = [(by_name[name], values) for name, values in block.items() if len(values) > 1]
            fixed = [(by_name[name], values[0]) for name, values in block.items() if len(values) == 1]
            if not moved:
                continue
            parts = []
            for axis, values in sorted(moved, key=lambda m: axes.index(m[0])):
                order = _in_control_order(self.controls[axis.name], values)
                labels = [self._shown_label(axis, v, lang) for v in order]
                control = words(axis.description)
                if len(labels) == len(axis.values) and len(labels) > 3:
                    part = gettext(N_("{control} (all {count})")).format(control=control, count=len(labels))
                elif len(labels) <= 8:
                    part = gettext(N_("{control} ({values})")).format(control=control, values=comma.join(labels))
                else:
                    part = gettext(N_("{control} ({first} to {last}, {count} values)")).format(
                        control=control, first=labels[0], last=labels[-1], count=len(labels))
                parts.append(part)
            # the parts list values with commas: a semicolon between them
            text = (gettext(N_("every combination of {controls} and {last}")).format(
                controls=gettext(LIST_SEPARATOR).join(parts[:-1]), last=parts[-1]) if len(parts) > 1 else parts[0])
            if fixed:
                text = gettext(N_("{states}, with {fixed}")).format(states=text, fixed=comma.join(
                    gettext(N_("{control} {value}")).format(control=words(a.description),
                                                             value=self._shown_label(a, v, lang))
                    for a, v in fixed))
            sentences.append(text)
        return sentences

    def _shown_label(self, axis: FrameAxis, value: Any, lang: str) -> str:
        """A frame axis's value as the player of ``lang`` names it (a list control's option as `option_label`
        gives it; a number or free text through the catalog as finished text)."""
        label = axis.labels[axis.values.index(value)]
        if axis.name in self._english_options:
            return self.option_label(axis.name, label, lang)
        return translate_text(label, lang) if label else label

    def translated_labels(self, axes: list[FrameAxis]) -> dict[str, list[list[str]]]:
        """Each axis's labels in each language the course is translated into, as the live widget shows them there:
        what the site build carries beside the English (``FrameData.translated_labels``), since the site, given
        each label alone, could not tell a word from the same word as code (``CODE_OPTIONS``)."""
        return {lang: [[self._shown_label(a, v, lang) for v in a.values] for a in axes] for lang in TRANSLATIONS}

    def frame_states(self) -> tuple[list[FrameAxis], list[tuple[int, ...]]]:
        """The declared frame space as the site's controls and the states (value indices), capped."""
        blocks = self._frame_blocks()
        start = self.values()
        values: dict[str, list] = {name: [] for name in self.controls}
        for block in blocks:
            for name in self.controls:
                for v in block.get(name, [start[name]]):
                    if v not in values[name]:
                        values[name].append(v)
        axes = []
        for name, control in self.controls.items():
            vals = _in_control_order(control, values[name])
            free_text = not hasattr(control, "options") and _kind(control) == "select"
            free_text |= isinstance(control, widgets.Combobox) and not control.ensure_option
            axes.append(FrameAxis(name, control.description or name, _kind(control), vals,
                                  [_label(control, v, self._english_options.get(name)) for v in vals],
                                  vals.index(start[name]),
                                  self.FREE_TEXT_NOTE if free_text else ""))
        states: dict[tuple[int, ...], None] = {}
        for block in blocks:
            for combo in itertools.product(*(block.get(a.name, [start[a.name]]) for a in axes)):
                states[tuple(a.values.index(v) for a, v in zip(axes, combo))] = None
        if len(states) > FRAME_CAP:
            raise ValueError(f"{type(self).__name__}: its frame space has {len(states)} states, more than "
                             f"FRAME_CAP ({FRAME_CAP}); override frame_space() to declare the instructive ones")
        return axes, list(states)

    def frame(self, values: dict[str, Any]) -> tuple[bytes, str]:
        """One state as the notebook shows it: (the renderer's PNG, the message HTML), via the same core."""
        figure, message = self._drawn(values)
        return figure_png(figure), message

    def _drawn(self, values: dict[str, Any]) -> tuple[Figure, str]:
        state = self._compute(**values)
        return self._render(state), getattr(state, "message", "")

    def frames(self) -> FrameData:
        """Every state of the frame space, computed and drawn: the player's data (`FrameData`, JSON-ready);
        equal pictures and messages are stored once. In the site build the pictures are English, each with its
        translations beside it (``translated_images``), which the site swaps in or drops."""
        site = bool(os.environ.get(SITE_FRAMES_ENV))
        axes, states = self.frame_states()
        images: dict[bytes, int] = {}
        translated: dict[str, dict[int, bytes]] = {}
        messages: dict[str, int] = {}
        frames = []
        for state in states:
            figure, message = self._drawn({a.name: a.values[i] for a, i in zip(axes, state)})
            png = figure_png(figure, "en" if site else None)
            new = png not in images
            index = images.setdefault(png, len(images))
            if site and new:
                for lang, copy in translated_pngs(figure, png).items():
                    translated.setdefault(lang, {})[index] = copy
            frames.append([*state, index, messages.setdefault(message, len(messages))])
        pngs = list(images)
        labels = self.translated_labels(axes) if site else None
        return frame_data(self.title, axes, pngs, list(messages), frames, states.index(tuple(a.start for a in axes)),
                          {lang: [by_index.get(i, png) for i, png in enumerate(pngs)]
                           for lang, by_index in translated.items()}, labels)

    def player_html(self) -> str:
        """The site's frame player (`torchcourse.frames.player_html`) for this widget's frames."""
        site = bool(os.environ.get(SITE_FRAMES_ENV))
        translated = {lang: self.frame_space_description(lang) for lang in TRANSLATIONS} if site else None
        return player_html(self.frames(), f"{type(self).__module__}.{type(self).__name__}", type(self).__name__,
                           self.frame_space_description(), translated)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle and os.environ.get(SITE_FRAMES_ENV):
            # The site build: no kernel will ever answer this widget, so show the frame player alone.
            return {"text/plain": bundle.get("text/plain", type(self).__name__), "text/html": self.player_html()}
        return bundle

    def _on_change(self, _change: dict) -> None:
        self.update()

    def update(self) -> None:
        """Recompute the core result and redraw; a core error is shown as a sentence."""
        self.state = self._compute(**self.values())
        self.figure = self._render(self.state)
        self.message.value = getattr(self.state, "message", "")
        self.output.clear_output(wait=True)
        with self.output:
            display(self.figure)
