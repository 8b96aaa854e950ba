"""JupyterLab settings used by `make lab` (and the browser tests): headless, on chapters/.

`make lab LANG=zh_CN` sets TORCHCOURSE_LAB_LANGUAGE=zh_CN: JupyterLab then opens the Chinese release
(zh_CN/chapters/, written by `make release`) with its own menus and dialogs in Chinese (the language pack
jupyterlab-language-pack-zh-CN, from the lock). The interface language is a default in
lab-settings/zh_CN/overrides.json, which this configuration points JupyterLab at instead of the
environment's settings folder: a learner's own settings are never written, and one they chose wins.
"""

import os

c = get_config()  # noqa: F821

HERE = os.path.dirname(os.path.abspath(__file__))
LANGUAGES = {"en": "chapters", "zh_CN": os.path.join("zh_CN", "chapters")}  # language -> the release it opens
LANGUAGE = os.environ.get("TORCHCOURSE_LAB_LANGUAGE") or "en"
if LANGUAGE not in LANGUAGES:
    raise SystemExit(f"TORCHCOURSE_LAB_LANGUAGE={LANGUAGE!r}: the course has {', '.join(LANGUAGES)}")
ROOT_DIR = os.path.join(HERE, LANGUAGES[LANGUAGE])
if not os.path.isdir(ROOT_DIR):
    raise SystemExit(f"{ROOT_DIR} does not exist yet: run `make release` first")

c.ServerApp.root_dir = ROOT_DIR
c.ServerApp.open_browser = False  # headless: print the URL instead
c.ServerApp.ip = os.environ.get("LAB_IP", "127.0.0.1")
c.ServerApp.port = int(os.environ.get("LAB_PORT", "8888"))
c.ServerApp.allow_root = os.geteuid() == 0  # containers and CI run as root
c.LabApp.news_url = None  # no calls home
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
if LANGUAGE != "en":
    # Defaults for JupyterLab's settings (overrides.json): the course's, and the interface language.
    c.LabApp.app_settings_dir = os.path.join(HERE, "lab-settings", LANGUAGE)
