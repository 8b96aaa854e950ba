"""JupyterHub for a class on one server (JupyterHub 6.1, pinned in requirements/lock.txt).

deploy/setup-class.sh copies this file to PREFIX/etc/ and writes the settings it reads to PREFIX/etc/class.env
(address, ports, instructor, exchange, authenticator). Each person logs in with their own unix account and
gets a Jupyter server running as that user (LocalProcessSpawner), so the file system keeps students apart:
homes are 0700, nbgrader's exchange is sticky, and formgrader runs only in the instructor's own server.
"""

import os
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821

HERE = Path(__file__).resolve().parent
PREFIX = HERE.parent
settings = dict(line.split("=", 1) for line in (HERE / "class.env").read_text().splitlines() if "=" in line)
STATE = PREFIX / "state"

# Where the hub answers (HUB_IP, HUB_PORT), and its internal ports, which stay on loopback.
c.JupyterHub.ip = settings["HUB_IP"]
c.JupyterHub.port = int(settings["HUB_PORT"])
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(settings["HUB_API_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [str(PREFIX / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy")]
if settings.get("SSL_CERT"):
    c.JupyterHub.ssl_cert = settings["SSL_CERT"]
    c.JupyterHub.ssl_key = settings["SSL_KEY"]

# Each user's server on a host of its own (alice.HUB_HOST): a page one user's server serves (a file, an extension's
# static file, anything a student's own process answers on her server's port) is then another origin than every other
# server and the hub, so the browser keeps its script from reading their pages, cookies and _xsrf. With https, the
# hub's cookies are host-only (__Host-): a user's server cannot set one for the hub (cookie tossing). Needs
# *.HUB_HOST to resolve to this machine (browsers resolve *.localhost to loopback themselves) and, with https, a
# certificate for it (a wildcard). HUB_HOST empty: one origin for all (setup-class.sh warns).
if settings.get("HUB_HOST"):
    scheme = "https" if settings.get("SSL_CERT") else "http"
    port = int(settings["HUB_PORT"])
    default_port = {"https": 443, "http": 80}[scheme]
    c.JupyterHub.subdomain_host = f"{scheme}://{settings['HUB_HOST']}" + (f":{port}" if port != default_port else "")
    c.JupyterHub.cookie_host_prefix_enabled = scheme == "https"

# The hub's own state (its database and cookie secret) in a folder only root can read.
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

# Who may log in: members of the class group (deploy/add-student.sh adds them) and the instructor. Nobody is a
# hub admin: an admin could act as any student (and submit as them).
auth = settings.get("AUTH", "pam")
if auth == "pam":
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.allowed_groups = {settings["GROUP"]}
elif auth == "shared-password":
    # One password for the class (at least 8 characters), in PREFIX/etc/shared-password (root only); user names
    # must still be members of the class group.
    import grp

    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = (HERE / "shared-password").read_text().strip()
    c.Authenticator.allowed_users = set(grp.getgrnam(settings["GROUP"]).gr_mem) | {settings["INSTRUCTOR"]}
elif auth == "dummy":
    # Any password: only to try the hub out on a machine nobody else can reach.
    import grp

    c.JupyterHub.authenticator_class = "dummy"
    c.Authenticator.allowed_users = set(grp.getgrnam(settings["GROUP"]).gr_mem) | {settings["INSTRUCTOR"]}
else:
    raise ValueError(f"AUTH={auth!r}: use pam, shared-password or dummy (or set your own authenticator here)")
c.Authenticator.admin_users = set()

# Each user's server: the course's environment, running as that user in their home, JupyterLab first.
# -s: no user site-packages in the server (a package there, or its .pth file, would run in it); kernels keep theirs.
SERVER = [str(PREFIX / "venv" / "bin" / "python"), "-s", "-m", "jupyterhub.singleuser"]
# A student's server runs in PID and mount namespaces of its own (deploy/user-server.sh, as PREFIX/bin/user-server):
# its /proc shows her own processes only, its /tmp and /dev/shm are bounded tmpfs of hers, and every process she
# starts there ends with it. Started as root (to mount), it drops to her uid itself. The instructor's server runs
# as plain LocalProcessSpawner runs it: `sudo autograde` from its terminal needs the machine's own /tmp and /proc.
ISOLATE = ["/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "slave", "--",
           str(PREFIX / "bin" / "user-server")]


class ClassSpawner(LocalProcessSpawner):
    def isolated(self) -> bool:
        return self.user.name != settings["INSTRUCTOR"]

    def make_preexec_fn(self, name):
        if not self.isolated():
            return super().make_preexec_fn(name)
        import pwd

        home = pwd.getpwnam(name).pw_dir

        def preexec():  # stays root until user-server has mounted; it drops to the user itself
            os.chdir(home)

        return preexec

    async def _signal(self, sig):
        # self.pid is unshare's (root's), which passes no signal on: the server, in its process group, gets them too.
        if sig == 0 or not self.isolated():
            return await super()._signal(sig)
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        return True


c.JupyterHub.spawner_class = ClassSpawner
c.Spawner.cmd = SERVER
c.Spawner.default_url = "/lab"
# Kernels over ipc: their sockets in a folder of the user's own (0700), not loopback TCP ports from which any user
# of the machine can subscribe to another's code and output. Not in the home: a socket's path must stay under 108
# bytes, which a long home and jupyter's runtime folder exceed. On the command line, so no user config undoes it.
KERNELS = Path(settings.get("KERNEL_DIR") or "/run/torchcourse")


def per_user(spawner):
    import pwd

    user = pwd.getpwnam(spawner.user.name)
    KERNELS.mkdir(mode=0o711, exist_ok=True)
    if KERNELS.is_symlink() or KERNELS.stat().st_uid != 0 or KERNELS.stat().st_mode & 0o022:
        raise RuntimeError(f"{KERNELS} must be a folder of root's that only root can write")
    folder = KERNELS / spawner.user.name
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chown(folder, user.pw_uid, user.pw_gid, follow_symlinks=False)
    os.chmod(folder, 0o700, follow_symlinks=False)
    spawner.args = ["--KernelManager.transport=ipc", f"--KernelManager.ip={folder / 'kernel'}"]
    spawner.cmd = SERVER if spawner.user.name == settings["INSTRUCTOR"] else [*ISOLATE, spawner.user.name, *SERVER]
    # torch's compile cache defaults to the shared temp folder, named after the user: in the home instead.
    # Jupyter's configuration from a folder of root's, the instructor's (formgrader) or everyone else's: a server
    # extension a student enables in ~/.jupyter would serve pages, unauthenticated, to whoever opens them.
    role = "instructor" if spawner.user.name == settings["INSTRUCTOR"] else "users"
    spawner.environment = {**spawner.environment,
                           "TORCHINDUCTOR_CACHE_DIR": f"{user.pw_dir}/.cache/torchinductor",
                           "JUPYTER_CONFIG_DIR": str(HERE / f"jupyter-{role}"),
                           # JupyterLab's own settings and workspaces stay the user's (by default under the above)
                           "JUPYTERLAB_SETTINGS_DIR": f"{user.pw_dir}/.jupyter/lab/user-settings",
                           "JUPYTERLAB_WORKSPACES_DIR": f"{user.pw_dir}/.jupyter/lab/workspaces"}
    if role == "instructor":  # formgrader's page template (MathJax from this server, not a CDN)
        spawner.environment["JUPYTER_PATH"] = str(HERE / "jupyter-instructor-data")
    language = student_language(spawner.user.name)
    if language:
        # gettext's own variable: the course's messages in her kernels, and the chapters she fetches
        # (torchcourse_language.CourseFetch), in her language. JupyterLab's menus too, by the course's settings
        # defaults for it (its language pack is in the environment).
        spawner.environment["LANGUAGE"] = language
        spawner.args.append(f"--LabApp.app_settings_dir={HERE / 'lab-settings' / language}")


# The languages a student may take the course in besides English (the course's translated releases).
LANGUAGES = ("zh_CN",)


def student_language(name: str) -> str | None:
    """The language add-student.sh --language recorded for this user (PREFIX/etc/languages/NAME, root's), if any
    the class offers; None: English."""
    if "/" in name or name.startswith("."):
        return None
    try:
        chosen = (HERE / "languages" / name).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return chosen if chosen in LANGUAGES and (HERE / "lab-settings" / chosen).is_dir() else None


c.Spawner.pre_spawn_hook = per_user
c.Spawner.environment = {
    "TORCHCOURSE_EXCHANGE": settings["EXCHANGE"],
    "PATH": f"{PREFIX / 'bin'}:/usr/local/bin:/usr/bin:/bin",
}
# The inbound guard (deploy/inbound_guard.py), root's, started and restarted by the hub: what a student puts into the
# exchange's inbound beyond the class's limits is removed (the file systems here may offer no quotas).
c.JupyterHub.services = [{"name": "inbound-guard", "command": [
    sys.executable, "-I", str(PREFIX / "bin" / "inbound-guard"), str(HERE / "class.env")]}]
# Small hosts under load take longer than the defaults to start a server.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# Formgrader runs in the instructor's own server (/user/<instructor>/formgrader): setup-class.sh enables it in
# PREFIX/etc/jupyter-instructor and disables it for everyone else. For several graders, nbgrader's documented
# alternative is a hub service; as measured with JupyterHub 6.1 its `--group` flag is ignored and everyone gets
# 403, while this works (NAME a service running jupyterhub-singleuser as the instructor, on its own port):
#   c.JupyterHub.services = [{"name": NAME, "url": "http://127.0.0.1:PORT", "user": INSTRUCTOR,
#                             "command": [python, "-m", "jupyterhub.singleuser"], "cwd": COURSE}]
#   c.JupyterHub.load_groups = {"formgrade-NAME": {"users": [INSTRUCTOR, "another-grader"]}}
#   c.JupyterHub.load_roles = [{"name": "formgrade-NAME", "groups": ["formgrade-NAME"],
#                               "scopes": [f"access:services!service={NAME}"]}]
