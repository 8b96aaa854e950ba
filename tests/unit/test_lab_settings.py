"""make lab LANG=zh_CN: the settings JupyterLab is pointed at hold the course's own defaults too (they replace the
environment's overrides.json, which setup_check writes), name the interface language, and its pack is installed."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest

from torchcourse.setup_check import LAB_OVERRIDES

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = sorted(p.name for p in (ROOT / "lab-settings").iterdir() if p.is_dir())


def test_there_is_a_chinese_lab():
    assert LANGUAGES == ["zh_CN"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_language_s_lab_settings(language):
    overrides = json.loads((ROOT / "lab-settings" / language / "overrides.json").read_text(encoding="utf-8"))
    for plugin, values in LAB_OVERRIDES.items():
        assert overrides.get(plugin, {}) | values == overrides.get(plugin), plugin
    assert overrides["@jupyterlab/translation-extension:plugin"]["locale"] == language
    assert (ROOT / language / "chapters").is_dir(), f"no {language} release to open"
    pack = f"jupyterlab-language-pack-{language.replace('_', '-')}"
    assert version(pack).split(".")[0] == version("jupyterlab").split(".")[0], pack
