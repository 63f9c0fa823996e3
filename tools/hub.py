"""A real JupyterHub for one class on this machine: set it up, start it, stop it, remove it.

    python tools/hub.py setup      # environment, users, course repository, nbgrader exchange
    python tools/hub.py start      # setup, then JupyterHub on http://127.0.0.1:18000 (background)
    python tools/hub.py stop       # JupyterHub, its proxy and every learner's server
    python tools/hub.py clean      # stop, then delete the hub's system users, state and exchange
    python tools/hub.py status

Run as root (``make hub`` / ``make hub-stop`` / ``make hub-clean``). Where things live:

- ``build/hub/`` (HUB_STATE): what only the hub (root) reads: its database, cookie secret, log,
  pid files, every user's password (``passwords``, 0600) and the admin API token (``admin-token``).
- ``/srv/gpu-ml-course-hub/`` (HUB_SHARE): what the learners' servers, which run as the learners,
  must read. A clone may live in a folder others cannot enter (``/root``), so this is outside it:
  ``venv/`` (the course installed with its ``classroom`` and ``hub`` extras, world-readable),
  ``course.git`` (a bare clone of this repository's HEAD: the nbgitpuller link pulls from it) and
  ``exchange/`` (nbgrader's exchange, 1777).
- ``/home/<user>``: each user's files, 0700. The instructor's nbgrader course is
  ``/home/gpuc-instructor/course`` (``build_nbgrader`` of the solutions).

Users: ``gpuc-instructor`` (the hub's only admin, in the course's nbgrader ``inbound`` group) and
the learners ``gpuc-learner1``, ``gpuc-learner2``, real system users. Every system user whose name
starts with ``gpuc-`` is the hub's: ``clean`` deletes them (the load test adds ``gpuc-load...``).

Logging in: the hub checks the machine's own passwords through PAM (``deploy/hub/jupyterhub_config.py``).
``setup`` gives each user a random password of their own (``chpasswd``) and writes them all to
``build/hub/passwords`` (root, 0600) and to ``~gpuc-instructor/class-passwords.txt`` (the
instructor's, 0600), from which the instructor hands each learner theirs. ``HUB_BROKEN`` breaks one
thing on purpose, for the hub test only: ``shared-password`` gives every user the same password,
``wide-scope`` lets every user reach every server (see ``jupyterhub_config.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATE = Path(os.environ.get("HUB_STATE", ROOT / "build" / "hub")).resolve()
SHARE = Path(os.environ.get("HUB_SHARE", "/srv/gpu-ml-course-hub"))
VENV = SHARE / "venv"
EXCHANGE = SHARE / "exchange"
COURSE_GIT = SHARE / "course.git"
CHP = ROOT / "build" / "vendor" / "node_modules" / ".bin" / "configurable-http-proxy"
CONFIG = ROOT / "deploy" / "hub" / "jupyterhub_config.py"
PORT = int(os.environ.get("HUB_PORT", "18000"))
PREFIX = "gpuc-"
INSTRUCTOR = "gpuc-instructor"
LEARNERS = ["gpuc-learner1", "gpuc-learner2"]
COURSE_ID = "gpu-ml-course"            # course_lib.exercises.COURSE_ID
COURSE_BRANCH = "main"                 # the branch of course.git the nbgitpuller link names
LOCK = ROOT / "requirements" / "lock.txt"
# The environment's base Python must be one every user may run: a pyenv or conda Python under
# /root is not (the venv links to it), so the default is Debian's (apt-get install python3-venv).
BASE_PYTHON = os.environ.get("HUB_PYTHON", "/usr/bin/python3")
START_TIMEOUT_S = 60
#: Pins of the lock that do not install on Debian bookworm's Python 3.11.2 (their Requires-Python).
UNFIT_ON_BASE_PYTHON = {"soupsieve"}
PINNED_TIMEOUT_S = 600                # pip's resolver may backtrack for long on a pin that cannot fit
PASSWORDS = STATE / "passwords"
INSTRUCTOR_PASSWORDS = "class-passwords.txt"     # in the instructor's home
BROKEN = ("shared-password", "wide-scope")       # HUB_BROKEN: deliberately unsafe, for the hub test

__all__ = ["Hub", "setup", "start", "stop", "clean", "nbgitpuller_link", "read_passwords", "set_passwords"]


def log(msg: str) -> None:
    print(f"hub: {msg}", flush=True)


def run(*cmd, check=True, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=check, **kw)


def _require_root() -> None:
    if os.geteuid() != 0:
        sys.exit("hub: run as root (it creates system users and spawns servers as them)")


# ------------------------------------------------------------------------------------------ setup

def _venv() -> None:
    """The single-user environment: the course (not editable: the clone may be unreadable to
    learners) with nbgrader, JupyterHub and nbgitpuller, readable by every user."""
    py = VENV / "bin" / "python"
    stamp = VENV / ".course-installed"
    cfg = VENV / "pyvenv.cfg"
    if cfg.exists() and f"home = {Path(BASE_PYTHON).resolve().parent}\n" not in cfg.read_text():
        log(f"recreating {VENV}: it was made from another Python than {BASE_PYTHON}")
        shutil.rmtree(VENV)          # perhaps one the learners cannot run
    sources = [ROOT / "pyproject.toml", LOCK, *sorted((ROOT / "course_lib").rglob("*.py")),
               *sorted((ROOT / "course_lib" / "data").glob("*"))]
    newest = max(p.stat().st_mtime for p in sources if p.exists())
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return
    if not py.exists():
        log(f"creating {VENV} from {BASE_PYTHON}")
        run(BASE_PYTHON, "-m", "venv", VENV)
        run(py, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    log(f"installing the course with its classroom and hub extras into {VENV} (a few minutes the first time)")
    # A copy of the source, so the build writes nothing into the clone.
    src = STATE / "course-src"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv*", "build", "*.egg-info",
                                                             "__pycache__", ".pytest_cache", ".hypothesis"))
    # The lock is made on the developers' Python; a pin that needs a newer Python than Debian's
    # (soupsieve 4.1 wants 3.11.5, bookworm has 3.11.2) is left to pip, or its resolver backtracks
    # for many minutes. Measured: the rest of the lock resolves on bookworm's Python in about 1 min.
    constraints = STATE / "lock-for-hub.txt"
    constraints.write_text("".join(line for line in LOCK.read_text().splitlines(keepends=True)
                                   if line.split("==")[0].strip().lower() not in UNFIT_ON_BASE_PYTHON))
    try:
        pinned = run(py, "-m", "pip", "install", "--quiet", "-c", constraints, f"{src}[classroom,hub]", check=False,
                     stderr=subprocess.DEVNULL, timeout=PINNED_TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        # Seen on bookworm's Python with an existing venv: pip backtracked for over 20 minutes
        # before giving up on a pin that cannot fit; the fallback below takes a few minutes.
        log(f"pip was still resolving the pinned versions after {PINNED_TIMEOUT_S} s: giving them up")
        pinned = 1
    if pinned != 0:
        # The lock is made on the developers' Python; Debian's may be older than a pin allows
        # (soupsieve 4.1 wants 3.11.5, bookworm has 3.11.2): then the newest releases that fit.
        log(f"the pinned versions do not all install on {BASE_PYTHON}: installing without {LOCK.name}")
        run(py, "-m", "pip", "install", "--quiet", f"{src}[classroom,hub]")
    run(py, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(src))
    shutil.rmtree(src, ignore_errors=True)
    run(py, "-m", "course_lib.setup_lab", "--classroom", stdout=subprocess.DEVNULL)
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    shutil.copy(ROOT / "deploy" / "hub" / "course_hub_exchange.py", site / "course_hub_exchange.py")
    run("chmod", "-R", "a+rX", VENV)
    stamp.touch()


def _nbgrader_global_config() -> None:
    """What every user's nbgrader reads: the course id, the exchange and the private submit."""
    path = VENV / "etc" / "jupyter" / "nbgrader_config.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Written by tools/hub.py: the class's nbgrader settings, for every user of this environment.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(EXCHANGE)!r}\n"
        "c.ExchangeFactory.submit = 'course_hub_exchange.PrivateSubmit'\n")
    path.chmod(0o644)


def _user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        run("useradd", "--create-home", "--shell", "/bin/bash", name)
        return pwd.getpwnam(name)


def _users() -> set[str]:
    """The hub's users as system users; the names created now."""
    created = set()
    for name in [INSTRUCTOR, *LEARNERS]:
        try:
            pwd.getpwnam(name)
        except KeyError:
            created.add(name)
        entry = _user(name)
        os.chmod(entry.pw_dir, 0o700)    # Debian's useradd leaves homes 0755
    return created


def read_passwords(path: Path = PASSWORDS) -> dict[str, str]:
    """``user password`` per line, as ``setup`` writes them."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, password = line.partition(" ")
                out[name] = password.strip()
    return out


def set_passwords(passwords: dict[str, str]) -> None:
    """Set the users' system passwords (what PAM, and so the hub, checks at login)."""
    if not passwords:
        return
    lines = "".join(f"{name}:{password}\n" for name, password in passwords.items())
    run("chpasswd", input=lines, text=True)


def _passwords(created: set[str]) -> dict[str, str]:
    """A random password per user, kept across runs and written for root and for the instructor.
    It is set on a user created now or new to the list; a learner who changed theirs with
    ``passwd`` keeps it (the list then shows the first one)."""
    users = [INSTRUCTOR, *LEARNERS]
    known = {u: p for u, p in read_passwords().items() if u in users}
    passwords = dict(known)
    for name in users:
        passwords.setdefault(name, secrets.token_urlsafe(12))
    header = "# user password: each user's own login for the class hub (tools/hub.py setup writes it)\n"
    text = header + "".join(f"{name} {passwords[name]}\n" for name in users)
    for path, owner in ((PASSWORDS, None), (Path(pwd.getpwnam(INSTRUCTOR).pw_dir) / INSTRUCTOR_PASSWORDS, INSTRUCTOR)):
        path.touch(mode=0o600)
        path.chmod(0o600)              # before the passwords go in
        path.write_text(text)
        if owner:
            entry = pwd.getpwnam(owner)
            os.chown(path, entry.pw_uid, entry.pw_gid)
    shared_marker = STATE / "passwords-shared"
    if os.environ.get("HUB_BROKEN", "") == "shared-password":
        # Deliberately unsafe (the hub test shows its checks catch it); undone by the next setup.
        log("HUB_BROKEN=shared-password: every user gets the same password")
        set_passwords({name: passwords[LEARNERS[0]] for name in users})
        shared_marker.touch()
    elif shared_marker.exists():
        set_passwords(passwords)       # undo the shared password of a broken run
        shared_marker.unlink()
    else:
        set_passwords({name: passwords[name] for name in users if name in created or name not in known})
    return passwords


def _as_user(name: str, *cmd, **kw) -> subprocess.CompletedProcess:
    env = {"PATH": f"{VENV / 'bin'}:/usr/bin:/bin", "HOME": pwd.getpwnam(name).pw_dir, "LANG": "C.UTF-8"}
    return run("runuser", "-u", name, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()], *cmd, **kw)


def _course_repo() -> None:
    """A bare clone of this repository's HEAD: the nbgitpuller link's ``repo``."""
    tmp = SHARE / "course.git.new"
    shutil.rmtree(tmp, ignore_errors=True)
    # HEAD as branch `main`, also from a detached checkout (as CI has).
    run("git", "init", "--quiet", "--bare", "--initial-branch", COURSE_BRANCH, tmp)
    run("git", "-C", ROOT, "push", "--quiet", tmp, f"HEAD:refs/heads/{COURSE_BRANCH}")
    shutil.rmtree(COURSE_GIT, ignore_errors=True)
    tmp.rename(COURSE_GIT)
    run("chmod", "-R", "a+rX", COURSE_GIT)
    gitconfig = SHARE / "gitconfig"       # the users' GIT_CONFIG_GLOBAL (see jupyterhub_config.py)
    gitconfig.write_text(f"[safe]\n\tdirectory = {COURSE_GIT}\n[include]\n\tpath = ~/.gitconfig\n")
    gitconfig.chmod(0o644)


def _exchange() -> None:
    """nbgrader's exchange: world-writable with the sticky bit; the course's ``inbound`` belongs to
    the instructor and is set-group-ID to their group, so submissions take that group."""
    EXCHANGE.mkdir(parents=True, exist_ok=True)
    EXCHANGE.chmod(0o1777)
    ins = pwd.getpwnam(INSTRUCTOR)
    course = EXCHANGE / COURSE_ID
    for path, mode in ((course, 0o755), (course / "outbound", 0o755), (course / "inbound", 0o2733)):
        path.mkdir(exist_ok=True)
        os.chown(path, ins.pw_uid, ins.pw_gid)
        path.chmod(mode)


def _instructor_course() -> Path:
    """The instructor's nbgrader course (every lesson's source), owned by the instructor."""
    home = Path(pwd.getpwnam(INSTRUCTOR).pw_dir)
    course = home / "course"
    if not (course / "nbgrader_config.py").exists():
        _as_user(INSTRUCTOR, VENV / "bin" / "python", "-m", "course_lib.exercises", "--root", _course_checkout(),
                 "nbgrader", course, stdout=subprocess.DEVNULL)
    jupyter = home / ".jupyter"
    _as_user(INSTRUCTOR, "mkdir", "-p", jupyter)
    cfg = jupyter / "nbgrader_config.py"
    cfg.write_text("c = get_config()  # noqa: F821\n"
                   f"c.CourseDirectory.root = {str(course)!r}\n")
    os.chown(cfg, pwd.getpwnam(INSTRUCTOR).pw_uid, pwd.getpwnam(INSTRUCTOR).pw_gid)
    return course


def _course_checkout() -> Path:
    """A world-readable checkout of the course (for commands run as a hub user)."""
    checkout = SHARE / "course"
    if checkout.exists():
        run("git", "-C", checkout, "-c", f"safe.directory={checkout}", "fetch", "--quiet", COURSE_GIT, "HEAD",
            check=False)
        run("git", "-C", checkout, "-c", f"safe.directory={checkout}", "reset", "--quiet", "--hard", "FETCH_HEAD")
    else:
        run("git", "clone", "--quiet", COURSE_GIT, checkout)
    run("chmod", "-R", "a+rX", checkout)
    return checkout


def setup() -> None:
    _require_root()
    STATE.mkdir(parents=True, exist_ok=True)
    STATE.chmod(0o700)
    SHARE.mkdir(parents=True, exist_ok=True)
    SHARE.chmod(0o755)
    if not CHP.exists():
        sys.exit(f"hub: {CHP} missing: run `make hub` (it installs configurable-http-proxy from npm)")
    broken = os.environ.get("HUB_BROKEN", "")
    if broken and broken not in BROKEN:
        sys.exit(f"hub: HUB_BROKEN={broken!r} is none of {', '.join(BROKEN)}")
    (STATE / "password").unlink(missing_ok=True)         # the shared password of earlier versions
    token = STATE / "admin-token"
    if not token.exists():
        token.touch(mode=0o600)
        token.write_text(secrets.token_hex(32) + "\n")
    _venv()
    _nbgrader_global_config()
    _passwords(_users())
    _course_repo()
    _course_checkout()
    _exchange()
    _instructor_course()
    log("set up: " + ", ".join([INSTRUCTOR, *LEARNERS]))


# ------------------------------------------------------------------------------------------ running

class Hub:
    """A client for the running hub: its URL, each user's password and the admin REST API."""

    def __init__(self, state: Path = STATE, port: int = PORT):
        self.url = f"http://127.0.0.1:{port}"
        self.state = state
        self.passwords = read_passwords(state / "passwords")
        self.token = (state / "admin-token").read_text().strip()

    @staticmethod
    def _json_request(url: str, token: str, method: str, body, timeout_s: float):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": f"token {token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def api(self, method: str, path: str, body=None, token: str | None = None, timeout_s: float = 30):
        """The hub's REST API (as the admin unless ``token`` is given)."""
        return self._json_request(f"{self.url}/hub/api{path}", token or self.token, method, body, timeout_s)

    def user_api(self, user: str, token: str, method: str, path: str, body=None, timeout_s: float = 60):
        """A learner's own server's REST API, through the proxy."""
        return self._json_request(f"{self.url}/user/{user}/api{path}", token, method, body, timeout_s)

    def up(self) -> bool:
        try:
            self.api("GET", "/", timeout_s=3)
            return True
        except (OSError, urllib.error.URLError, ValueError):
            return False


def nbgitpuller_link(hub_url: str = f"http://127.0.0.1:{PORT}", target: str = "gpu-ml-course",
                     open_path: str = "notebooks/01_throughput_latency.py", branch: str = "main") -> str:
    """The link a learner follows: clone (then merge updates into) the course in ~/<target>."""
    query = urllib.parse.urlencode({
        "repo": f"file://{COURSE_GIT}", "branch": branch, "targetpath": target,
        "urlpath": f"lab/tree/{target}/{open_path}"})
    return f"{hub_url}/hub/user-redirect/git-pull?{query}"


def _course_branch() -> str:
    return COURSE_BRANCH


def _pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def start(broken: str | None = None) -> Hub:
    """Set up and start the hub. ``broken`` (or ``HUB_BROKEN``) starts it deliberately unsafe."""
    if broken is not None:
        os.environ["HUB_BROKEN"] = broken
    setup()
    pid = _pid(STATE / "jupyterhub.pid")
    if pid:
        log(f"already running (pid {pid})")
        return Hub()
    env = dict(os.environ, HUB_STATE=str(STATE), HUB_SHARE=str(SHARE), HUB_PORT=str(PORT), HUB_CHP=str(CHP),
               HUB_INSTRUCTOR=INSTRUCTOR, HUB_LEARNERS=",".join(LEARNERS),
               PATH=f"{VENV / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    if env.get("HUB_BROKEN"):
        log(f"HUB_BROKEN={env['HUB_BROKEN']}: this hub is deliberately unsafe (for the hub test only)")
    env.pop("JUPYTERHUB_API_TOKEN", None)
    logf = open(STATE / "jupyterhub.log", "a")
    proc = subprocess.Popen([str(VENV / "bin" / "jupyterhub"), "-f", str(CONFIG)], cwd=STATE, env=env,
                            stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    (STATE / "jupyterhub.pid").write_text(f"{proc.pid}\n")
    hub = Hub()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not hub.up():
        if proc.poll() is not None or time.monotonic() > deadline:
            tail = (STATE / "jupyterhub.log").read_text(errors="replace")[-3000:]
            stop()
            sys.exit(f"hub: JupyterHub did not start:\n{tail}")
        time.sleep(0.5)
    log(f"JupyterHub on {hub.url} (log {STATE / 'jupyterhub.log'})")
    log(f"users: {INSTRUCTOR} (instructor, the only admin), {', '.join(LEARNERS)}; each user's password in "
        f"{PASSWORDS} and ~{INSTRUCTOR}/{INSTRUCTOR_PASSWORDS} (0600)")
    log(f"course for learners: {nbgitpuller_link(hub.url, branch=_course_branch())}")
    return hub


def _hub_uids() -> set[int]:
    return {e.pw_uid for e in pwd.getpwall() if e.pw_name.startswith(PREFIX)}


def _kill_user_processes(uids: set[int]) -> None:
    """Stop what still runs as a hub user (servers, kernels) after the hub has gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid in uids:
                        os.kill(int(entry.name), sig)
                        left.append(int(entry.name))
                except OSError:
                    pass
        if not left:
            return
        time.sleep(2)


def stop() -> None:
    _require_root()
    for name in ("jupyterhub.pid", "proxy.pid"):
        pid = _pid(STATE / name)
        if pid is None:
            continue
        for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 5)):
            try:
                os.killpg(pid, sig) if name == "jupyterhub.pid" else os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and _pid(STATE / name) == pid:
                time.sleep(0.3)
            if _pid(STATE / name) != pid:
                break
        log(f"stopped {name.split('.')[0]} (pid {pid})")
    for name in ("jupyterhub.pid", "proxy.pid"):
        (STATE / name).unlink(missing_ok=True)
    _kill_user_processes(_hub_uids())


def clean(keep_venv: bool = True) -> None:
    stop()
    for entry in pwd.getpwall():
        if entry.pw_name.startswith(PREFIX):
            run("userdel", "--remove", entry.pw_name, check=False, stderr=subprocess.DEVNULL)
            log(f"deleted user {entry.pw_name}")
    for name in ("jupyterhub.sqlite", "jupyterhub_cookie_secret", "jupyterhub.log", "passwords", "password",
                 "passwords-shared"):
        (STATE / name).unlink(missing_ok=True)
    for path in (EXCHANGE, COURSE_GIT, SHARE / "course"):
        shutil.rmtree(path, ignore_errors=True)
    if not keep_venv:
        shutil.rmtree(SHARE, ignore_errors=True)
        shutil.rmtree(STATE, ignore_errors=True)


def status() -> int:
    pid = _pid(STATE / "jupyterhub.pid")
    if not pid:
        print("hub: not running")
        return 1
    hub = Hub()
    users = hub.api("GET", "/users")
    print(f"hub: running (pid {pid}) on {hub.url}")
    for u in users:
        print(f"  {u['name']:20s} admin={u['admin']} server={'running' if u.get('server') else '-'}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["setup", "start", "stop", "clean", "purge", "status", "link"])
    args = parser.parse_args(argv)
    if args.command == "setup":
        setup()
    elif args.command == "start":
        start()
    elif args.command == "stop":
        stop()
    elif args.command == "clean":
        clean()
    elif args.command == "purge":
        clean(keep_venv=False)
    elif args.command == "status":
        return status()
    elif args.command == "link":
        print(nbgitpuller_link(branch=_course_branch()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
