"""The static site's frame player: the data a widget's frames travel in, and the HTML that carries it.

A widget (``torchcourse.widgets.Explorer``) computes every state of its frame space at build time;
this module encodes them as ``FrameData``, the JSON that book/js/frame-player.js reads, and wraps it
in the player's HTML. ``FrameData``'s keys are the format: tests/unit/test_frames.py compares them
with the keys the script reads.
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass
from typing import Any, TypedDict

from torchcourse.i18n import N_


@dataclass(frozen=True)
class FrameAxis:
    """One control as the site's frame player offers it: the values it steps through."""

    name: str
    description: str
    kind: str  # "slider", "select" or "checkbox"
    values: list
    labels: list[str]
    #: The value the live widget starts at (its index in ``values``).
    start: int
    #: Shown beside a free-text control turned into a list of curated inputs.
    note: str = ""


class AxisData(TypedDict):
    """One control as the player builds it."""

    name: str
    description: str
    kind: str           # "slider", "select" or "checkbox"
    labels: list[str]   # one per value, in order
    start: int          # the index of the value the live widget starts at (the player's alt text)
    note: str           # shown beside a free-text control offered as a list of inputs


class _SiteBuildOnly(TypedDict, total=False):
    #: Only in the site build's output, never read by the script: each translation's pictures, by language, in the
    #: order of ``images``. The site of that language swaps them in; every site drops the key (course_site.py).
    translated_images: dict[str, list[str]]
    #: The sentences under the player that say which states have a picture (``player_html``'s ``states``), by
    #: language: the site of that language shows them instead of the English; every site drops the key.
    translated_states: dict[str, list[str]]
    #: Each axis's labels (``AxisData.labels``), by language, as the live widget shows them in that language
    #: (``Explorer.option_label``): the site of that language shows them instead of the English; every site drops
    #: the key.
    translated_labels: dict[str, list[list[str]]]


class FrameData(_SiteBuildOnly):
    """Every frame of one widget, as the player reads it."""

    title: str
    axes: list[AxisData]
    images: list[str]         # base64 PNG, each picture once
    messages: list[str]       # HTML, each message once
    frames: list[list[int]]   # per state: its value index per axis, then its image index and message index
    start: int                # the index in ``frames`` of the starting state


def frame_data(title: str, axes: list[FrameAxis], pngs: list[bytes], messages: list[str],
               frames: list[list[int]], start: int, translated: dict[str, list[bytes]] | None = None,
               translated_labels: dict[str, list[list[str]]] | None = None) -> FrameData:
    """The player's data for a widget's computed frames (``pngs`` and ``messages`` as ``frames`` index them;
    ``translated``: the same pictures in other languages, by language, in the order of ``pngs``;
    ``translated_labels``: each axis's labels in other languages, by language)."""
    data = FrameData(
        title=title,
        axes=[AxisData(name=a.name, description=a.description, kind=a.kind, labels=a.labels, start=a.start,
                       note=a.note) for a in axes],
        images=[_encoded(png) for png in pngs],
        messages=messages,
        frames=frames,
        start=start,
    )
    if translated:
        data["translated_images"] = {lang: [_encoded(png) for png in copies] for lang, copies in translated.items()}
    if translated_labels:
        data["translated_labels"] = translated_labels
    return data


def _encoded(png: bytes) -> str:
    return base64.b64encode(png_small(png)).decode("ascii")


#: Said under every player: what it is, and that its controls need JavaScript (in English; the site of a
#: translation shows them from the code catalog).
PLAYER_ABOUT = N_("No kernel runs on this website: these controls replay pictures that this notebook's own code "
                  "drew when the site was built. Run the notebook to try any other input.")
PLAYER_NO_SCRIPT = N_("The controls of this player need JavaScript, which is off: the picture above is the one "
                      "the notebook starts with.")
#: Said before the list of the states that have a picture.
PLAYER_DRAWN = N_("The pictures drawn, each control not named at the notebook's starting value (a control greys out "
                  "the values that have no picture beside the other controls as they stand):")


def player_html(data: FrameData, widget: str, name: str, states: list[str] | None = None,
                translated_states: dict[str, list[str]] | None = None) -> str:
    """The site's frame player: the starting frame and message (shown without JavaScript too) and every
    frame as JSON, which book/js/frame-player.js turns into working controls. ``widget`` is the wrapper's
    dotted path (``data-widget``), ``name`` what the picture's alt text calls it when it has no title;
    ``states`` says which combinations of values have a frame, one sentence each, and ``translated_states`` the
    same in other languages, by language (carried in the data for the site of that language)."""
    if translated_states:
        data = FrameData(data, translated_states=translated_states)
    image, message = data["frames"][data["start"]][-2:]
    alt = html.escape(f"{data['title'] or name}: " + ", ".join(
        f"{a['description']} {a['labels'][a['start']]}" for a in data["axes"]), quote=True)
    title = f"<div class=\"tc-player-title\"><b>{html.escape(data['title'])}</b></div>" if data["title"] else ""
    return (f'<div class="tc-player" data-widget="{widget}">{title}'
            '<div class="tc-player-controls"></div>'
            f'<div class="tc-player-message">{data["messages"][message]}</div>'
            f'<img class="tc-player-frame" alt="{alt}" src="data:image/png;base64,{data["images"][image]}">'
            f'<script type="application/json" class="tc-player-data">{_script_json(data)}</script>'
            f'<noscript><p class="tc-player-noscript">{PLAYER_NO_SCRIPT}</p></noscript>'
            f'{_about(states or [])}</div>')


def _about(states: list[str]) -> str:
    listed = "".join(f"<li>{html.escape(s)}</li>" for s in states)
    drawn = f" {PLAYER_DRAWN}<ul>{listed}</ul>"
    return f'<div class="tc-player-about">{PLAYER_ABOUT}{drawn if states else ""}</div>'



def png_small(png: bytes) -> bytes:
    """The renderer's PNG with a 256-colour palette: the same picture at about a third of the bytes."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        # Fast octree: a few ms a frame, and smaller files than median cut on these flat-colour plots.
        quantized = img.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    quantized.save(buf, format="PNG")
    return buf.getvalue() if buf.tell() < len(png) else png


def _script_json(data: Any) -> str:
    # Inside <script type="application/json">: no "<", ">" or "&" may close or confuse the element.
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace(
        "&", "\\u0026")
