"""JupyterLab settings used by `make lab` (and the browser tests): headless, on chapters/."""

import os

c = get_config()  # noqa: F821

HERE = os.path.dirname(os.path.abspath(__file__))
c.ServerApp.root_dir = os.path.join(HERE, "chapters")
c.ServerApp.open_browser = False  # headless: print the URL instead
c.ServerApp.ip = os.environ.get("LAB_IP", "127.0.0.1")
c.ServerApp.port = int(os.environ.get("LAB_PORT", "8888"))
c.ServerApp.allow_root = os.geteuid() == 0  # containers and CI run as root
c.LabApp.news_url = None  # no calls home
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
