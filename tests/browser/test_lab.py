"""JupyterLab as `make lab` starts it (jupyter_lab_config.py), on loopback with a token.

The server check needs no browser; the rest drives Debian's Chromium: open, in every chapter, the
first notebook that shows a slider widget, run all cells, move the slider and see the widget's output change,
and see nbgrader's Validate button. Autosave is off and the notebooks are checked unchanged,
so the tests never write into chapters/.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import secrets
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers import site as sitebuild
from tests.helpers.browser import Traffic, offline_context

pytestmark = pytest.mark.browser

ROOT = sitebuild.ROOT
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("[0-9][0-9]-*") if any(p.glob("*.ipynb")))


def _slider_widgets(chapter: str) -> list[str]:
    """Class names of the chapter's declared widgets (its package's BUDGETS) that have a slider control."""
    import contextlib
    import importlib
    import io

    import ipywidgets

    from torchcourse.budgets import package_for

    names = []
    budgets = getattr(importlib.import_module(package_for(chapter)), "BUDGETS", None)
    for spec in budgets.widgets if budgets else []:
        with contextlib.redirect_stdout(io.StringIO()):
            widget = getattr(importlib.import_module(spec.module), spec.cls)()
        if any(isinstance(c, (ipywidgets.IntSlider, ipywidgets.FloatSlider, ipywidgets.SelectionSlider))
               for c in widget.controls.values()):
            names.append(spec.cls)
    return names


def _first_notebook_with_a_slider(chapter: Path) -> Path | None:
    """The chapter's first notebook that shows one of its slider widgets (None: the chapter has none)."""
    names = _slider_widgets(chapter.name)
    for path in sorted(chapter.glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        if any(f"{name}(" in text for name in names):
            return path
    return None


WIDGET_NOTEBOOKS = [nb for nb in map(_first_notebook_with_a_slider, CHAPTERS) if nb is not None]


class Lab:
    def __init__(self, base: str, token: str, proc: subprocess.Popen, log: Path) -> None:
        self.base, self.token, self.proc, self.log = base, token, proc, log

    def get(self, path: str) -> tuple[int, str]:
        sep = "&" if "?" in path else "?"
        with urllib.request.urlopen(f"{self.base}{path}{sep}token={self.token}", timeout=20) as r:
            return r.status, r.read().decode("utf-8")


def _serve(tmp_path_factory, language: str = "en"):
    """`make lab` (with LANG=zh_CN: TORCHCOURSE_LAB_LANGUAGE=zh_CN) in throw-away Jupyter folders."""
    home = tmp_path_factory.mktemp("lab")
    env = dict(os.environ, TORCHCOURSE_LAB_LANGUAGE=language)
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
        (home / sub).mkdir()
        env[var] = str(home / sub)
    # No autosave: running cells must never write outputs into chapters/.
    settings = home / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    # Render every cell (JupyterLab 4 otherwise renders only the cells in view), so that every
    # prompt and widget can be inspected without scrolling.
    tracker = home / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = sitebuild.free_port(), secrets.token_hex(16)
    env["LAB_PORT"] = str(port)
    log = home / "lab.log"
    # make lab's own command and configuration; only the token and "no other port" are added.
    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "jupyter"), "lab", "--config=jupyter_lab_config.py",
                             f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0",
                             # opening a notebook writes a checkpoint: keep it out of chapters/
                             f"--FileCheckpoints.checkpoint_dir={home / 'checkpoints'}"],
                            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    server = Lab(f"http://127.0.0.1:{port}", token, proc, log)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if server.get("/api/status")[0] == 200:
                break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"jupyter lab did not answer in 90 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
    yield server
    try:  # a clean shutdown also stops the kernels it started
        req = urllib.request.Request(f"{server.base}/api/shutdown?token={token}", method="POST")
        urllib.request.urlopen(req, timeout=20).read()
        proc.wait(timeout=30)
    except Exception:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Lab:
    yield from _serve(tmp_path_factory)


def test_lab_answers_with_nbgrader_and_widgets_enabled(lab):
    status, page = lab.get("/lab")
    assert status == 200
    config = json.loads(html.unescape(re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S).group(1)))
    names = {e["name"] for e in config["federated_extensions"]}
    disabled = set(config.get("disabledExtensions", []))
    for ext in ("@jupyter/nbgrader", "@jupyter-widgets/jupyterlab-manager"):
        assert ext in names, f"{ext} is not installed in this JupyterLab"
        assert not any(d == ext or d.startswith(ext + ":") for d in disabled), f"{ext} is disabled"
    # make lab's configuration serves chapters/.
    assert Path(config["serverRoot"]).resolve() == (ROOT / "chapters").resolve()
    # nbgrader's server extension (assignment list, validate) answers its version check.
    import nbgrader

    status, body = lab.get(f"/nbgrader_version?version={nbgrader.__version__}")
    assert status == 200 and json.loads(body)["success"] is True


def test_lab_asks_no_news_question(lab):
    """JupyterLab's "Would you like to receive official Jupyter news?" toast is off (make lab's overrides)."""
    status, body = lab.get("/lab/api/settings/@jupyterlab/apputils-extension:notification")
    assert status == 200
    # jupyterlab_server applies overrides.json to the schema's defaults.
    defaults = {k: v.get("default") for k, v in json.loads(body)["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_every_chapter_has_a_slider_widget_to_try():
    assert [nb.parent for nb in WIDGET_NOTEBOOKS] == CHAPTERS


@pytest.mark.parametrize("notebook", WIDGET_NOTEBOOKS, ids=[p.parent.name for p in WIDGET_NOTEBOOKS])
def test_notebook_runs_and_a_widget_responds(browser, lab, notebook):
    before = _md5(notebook)
    traffic = Traffic()
    ctx = offline_context(browser, traffic)
    page = ctx.new_page()
    rel = notebook.relative_to(ROOT / "chapters").as_posix()
    # A workspace of its own, reset: otherwise JupyterLab restores the notebooks earlier tests opened,
    # and Run All can act on one of those.
    page.goto(f"{lab.base}/lab/workspaces/{notebook.parent.name}/tree/{rel}?reset&token={lab.token}",
              wait_until="load")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#jp-main-statusbar')?.innerText.includes('| Idle')",
                           timeout=60_000)
    # nbgrader's lab extensions loaded: the Validate button on the notebook toolbar, the Nbgrader menu.
    assert page.locator(".jp-NotebookPanel-toolbar .validate-button").count() == 1
    assert page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text="Nbgrader").count() == 1

    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()
    code_cells = page.locator(".jp-Notebook .jp-CodeCell").count()
    # Done when every code cell has an execution count and the kernel is idle again.
    try:
        page.wait_for_function(
            """n => {
                const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')];
                return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.innerText))
                    && document.querySelector('#jp-main-statusbar').innerText.includes('| Idle');
            }""", arg=code_cells, timeout=360_000)  # a whole chapter notebook, widgets drawn, a loaded machine
    except PlaywrightTimeout:
        prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
        status = page.locator("#jp-main-statusbar").inner_text()
        pytest.fail(f"Run All did not finish: {code_cells} code cells, prompts {prompts}, status bar {status!r}")

    handle = page.locator(".jp-OutputArea-output .widget-slider .noUi-handle").first
    handle.wait_for(timeout=30_000)
    widget = handle.locator("xpath=ancestor::div[contains(@class,'jp-OutputArea-output')][1]")
    snapshot = "el => [...el.querySelectorAll('img')].map(i => i.src).join() + el.innerText"
    old_value, old_view = handle.get_attribute("aria-valuenow"), widget.evaluate(snapshot)
    at_max = float(old_value) >= float(handle.get_attribute("aria-valuemax"))
    handle.focus()
    page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
    page.wait_for_function("([el, s, v]) => (new Function('el', 'return (' + s + ')(el)'))(el) !== v",
                           arg=[widget.element_handle(), snapshot, old_view], timeout=30_000)
    assert handle.get_attribute("aria-valuenow") != old_value
    assert widget.evaluate(snapshot) != old_view

    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
    assert not [e for e in errors if "Traceback" in e and "NotImplementedError" not in e]
    ctx.close()
    assert traffic.blocked == [], f"JupyterLab made external requests: {traffic.blocked[:5]}"
    assert _md5(notebook) == before, f"{notebook} was modified"


ZH_NOTEBOOK = ROOT / "zh_CN" / "chapters" / "02-autograd" / "01-graph-and-backward.ipynb"
SCREENSHOTS = Path(os.environ.get("TORCHCOURSE_SCREENSHOTS", "")) if os.environ.get("TORCHCOURSE_SCREENSHOTS") else None


@pytest.fixture(scope="module")
def zh_lab(tmp_path_factory) -> Lab:
    yield from _serve(tmp_path_factory, "zh_CN")


def test_the_chinese_lab_opens_the_chinese_release_in_chinese(browser, zh_lab, tmp_path):
    """make lab LANG=zh_CN: the Chinese release, JupyterLab's own menus in Chinese (its language pack), and a
    chapter-2 notebook's markdown in Chinese. The page is saved as a screenshot (in $TORCHCOURSE_SCREENSHOTS
    when set); Chromium draws it with the CJK font tests/setup-system.sh installs."""
    status, body = zh_lab.get("/lab")
    config = json.loads(html.unescape(re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', body, re.S).group(1)))
    assert Path(config["serverRoot"]).resolve() == (ROOT / "zh_CN" / "chapters").resolve()
    status, packs = zh_lab.get("/lab/api/translations")
    assert "zh_CN" in json.loads(packs)["data"], "JupyterLab's Chinese language pack is not installed"

    before = _md5(ZH_NOTEBOOK)
    nb = json.loads(ZH_NOTEBOOK.read_text(encoding="utf-8"))
    heading = "".join(nb["cells"][0]["source"]).splitlines()[0].lstrip("# ").strip()
    assert re.search(r"[\u4e00-\u9fff]", heading), heading
    traffic = Traffic()
    ctx = offline_context(browser, traffic)
    page = ctx.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    rel = ZH_NOTEBOOK.relative_to(ROOT / "zh_CN" / "chapters").as_posix()
    page.goto(f"{zh_lab.base}/lab/workspaces/zh/tree/{rel}?reset&token={zh_lab.token}", wait_until="load")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-MarkdownCell h1", timeout=60_000)
    menus = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel").all_inner_texts()
    # JupyterLab's own words, from its Chinese language pack (File, Edit, Run, Kernel)
    assert {"文件", "编辑", "运行", "内核"} <= set(menus) and "File" not in menus, menus
    shown = page.locator(".jp-MarkdownCell h1").first.inner_text()
    assert heading.split("（")[0][:8] in shown, (heading, shown)
    text = page.locator(".jp-Notebook").inner_text()
    assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 200, text[:500]
    page.wait_for_timeout(500)  # fonts and the toolbar settle
    shot = (SCREENSHOTS or tmp_path) / "lab-zh_CN-02-autograd.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    ctx.close()
    assert traffic.blocked == [], f"JupyterLab made external requests: {traffic.blocked[:5]}"
    assert _md5(ZH_NOTEBOOK) == before, f"{ZH_NOTEBOOK} was modified"
