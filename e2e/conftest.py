"""Fixtures for the end-to-end test: a real JupyterLab server and Debian's Chromium.

The server is started the way ``make lab`` starts it (the same ``jupyter lab`` from the
environment, ``--allow-root`` when run as root, ``--port``, ``--ServerApp.root_dir`` and the start
page as the file to open), plus what a test needs: ``--no-browser``, a free loopback port (from
``COURSE_E2E_PORTS``, e.g. ``18800-18899``, when set) and a random token. JupyterLab's per-user
settings and workspaces go to a temporary folder, so neither the tester's own ``~/.jupyter`` nor
an earlier run changes what the test sees; the course's settings inside the environment (written
by ``python -m course_lib.setup_lab``, as ``make install`` does: no news toast, the file browser's
hidden files) apply as they do for a learner. The one difference: autosave runs every
``AUTOSAVE_INTERVAL_S`` seconds instead of 120, so the test can wait past it and check that
saving changed no file (``git status`` as it was before the test).

The browser is Debian's ``/usr/bin/chromium``, driven by Python Playwright; no browser is ever
downloaded. When Chromium or Playwright is missing the tests are skipped with the reason, unless
``COURSE_E2E_REQUIRED`` is set (``.ci/run`` sets it), in which case they fail.

Server and browser are stopped in ``finally`` blocks, also when a check fails. Timings are
collected per lesson, printed as a table at the end and written to ``build/e2e/timings.json``.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from _course import AUTOSAVE_INTERVAL_S, BUILD_DIR, LANDING, ROOT, git_status

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
SERVER_START_TIMEOUT_S = 120

# lesson name -> {"open_s": ..., "run_s": ..., "widget_update_s": ..., "status": ...}
TIMINGS: dict[str, dict] = {}


def _missing_tools() -> str | None:
    reasons = []
    if not CHROMIUM.exists():
        reasons.append(f"{CHROMIUM} not found (install it with: apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reasons.append("Python Playwright not installed (pip install -e .[e2e])")
    return "; ".join(reasons) or None


@pytest.fixture(scope="session")
def e2e_tools():
    """Skip (or fail, when COURSE_E2E_REQUIRED is set) if Chromium or Playwright is missing."""
    reason = _missing_tools()
    if reason:
        if os.environ.get("COURSE_E2E_REQUIRED"):
            pytest.fail(f"end-to-end test required but cannot run: {reason}", pytrace=False)
        pytest.skip(f"end-to-end test skipped: {reason}; set COURSE_E2E_REQUIRED=1 to make this an error")


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # A CI timeout sends SIGTERM; as KeyboardInterrupt it still runs the fixtures' finally blocks,
    # so the server, its kernels and the browser are stopped.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)


def _die_with_parent() -> None:
    """In the server's process: get SIGTERM if pytest itself is killed (Linux only)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _free_loopback_port() -> int:
    """A free port: the first in ``COURSE_E2E_PORTS`` ("18800-18899") when set, else any."""
    span = os.environ.get("COURSE_E2E_PORTS", "").strip()
    candidates = [0]
    if span:
        low, _, high = span.partition("-")
        candidates = list(range(int(low), int(high or low) + 1))
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    pytest.fail(f"no free port in COURSE_E2E_PORTS={span}", pytrace=False)


@dataclass
class LabServer:
    """A running ``jupyter lab``: its base URL, token, log and the page it opens for a learner."""

    base_url: str
    token: str
    process: subprocess.Popen
    log_path: Path
    command: list[str]
    landing_url: str | None = None

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def api(self, method: str, path: str, body: dict | None = None, timeout_s: float = 10):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base_url}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def log_tail(self, n_chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n_chars:]
        except OSError:
            return "(no server log)"

    def shutdown_kernels(self) -> None:
        """Shut down every session and kernel, so each lesson starts from a fresh kernel."""
        try:
            for session in self.api("GET", "/api/sessions"):
                self.api("DELETE", f"/api/sessions/{session['id']}")
            for kernel in self.api("GET", "/api/kernels"):
                self.api("DELETE", f"/api/kernels/{kernel['id']}")
        except (OSError, urllib.error.URLError, ValueError):
            pass


def _write_user_settings(settings_dir: Path) -> None:
    """Autosave on, as for a learner, every ``AUTOSAVE_INTERVAL_S`` seconds.

    The news toast is off through the course's own settings (``setup_lab``), not here: the test
    sees what a learner sees.
    """
    settings = {
        ("docmanager-extension", "plugin"): {"autosave": True, "autosaveInterval": AUTOSAVE_INTERVAL_S},
    }
    for (package, plugin), values in settings.items():
        path = settings_dir / "@jupyterlab" / package / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


SERVER_CONFIG = """\
# Written by e2e/conftest.py. Saves go through as for a learner (the test checks they change
# nothing); checkpoints are kept out of the course tree.
c.FileCheckpoints.checkpoint_dir = {checkpoints!r}  # not .ipynb_checkpoints/ next to the lessons
"""


def _write_server_config(config_dir: Path, checkpoints: Path) -> None:
    """Keep checkpoints out of the course tree."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "jupyter_server_config.py").write_text(SERVER_CONFIG.format(checkpoints=str(checkpoints)))


def _stop(process: subprocess.Popen, server: LabServer | None) -> None:
    if process.poll() is not None:
        return
    if server is not None:
        server.shutdown_kernels()
        try:
            server.api("POST", "/api/shutdown", timeout_s=5)
        except (OSError, urllib.error.URLError, ValueError):
            pass
        try:
            process.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            pass
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)  # the server runs in its own process group
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="session")
def lab(e2e_tools, tmp_path_factory, git_baseline):
    """Start JupyterLab as ``make lab`` does; stop it (and its kernels) at the end, always."""
    with lab_server(tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@contextlib.contextmanager
def lab_server(tmp: Path):
    """The lab fixture's server as a context manager (tools/bench_browser.py starts it too);
    ``tmp`` holds its settings, runtime files and log."""
    bin_dir = Path(sys.executable).parent
    jupyter = bin_dir / "jupyter"
    if not jupyter.exists():
        pytest.fail(f"{jupyter} not found: run the e2e test with the course environment's python")
    # make lab depends on make install, which writes the course's JupyterLab overrides.
    subprocess.run([sys.executable, "-m", "course_lib.setup_lab"], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)

    _write_user_settings(tmp / "user-settings")
    _write_server_config(tmp / "config", tmp / "checkpoints")
    env = dict(os.environ,
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "user-settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               PYTHONUNBUFFERED="1")
    env.pop("JUPYTER_TOKEN", None)

    port = _free_loopback_port()
    token = secrets.token_hex(24)
    command = [str(jupyter), "lab"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    command += [f"--port={port}", f"--ServerApp.root_dir={ROOT}"]
    if (ROOT / LANDING).exists():
        command.append(LANDING)
    command += ["--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}"]

    log_path = tmp / "server.log"
    log = open(log_path, "w")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True,
                               preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    server = None
    try:
        server = LabServer(f"http://127.0.0.1:{port}", token, process, log_path,
                           [c if token not in c else c.replace(token, "<token>") for c in command])
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with {process.returncode}:\n{server.log_tail()}",
                            pytrace=False)
            try:
                server.api("GET", "/api/status", timeout_s=2)
                break
            except (OSError, urllib.error.URLError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not answer within {SERVER_START_TIMEOUT_S} s:\n"
                                f"{server.log_tail()}", pytrace=False)
                time.sleep(0.3)
        # The page `make lab` opens in the learner's browser: jupyter_server writes it as a
        # redirect file (jpserver-file-to-run-<pid>-open.html) when given a file to open.
        deadline = time.monotonic() + 10
        while server.landing_url is None and time.monotonic() < deadline:
            for open_file in (tmp / "runtime").glob("jpserver-file-to-run-*-open.html"):
                match = re.search(r'url=([^"]+)"', open_file.read_text(errors="replace"))
                if match:
                    server.landing_url = html.unescape(match.group(1))
            time.sleep(0.25)
        yield server
    finally:
        _stop(process, server)
        log.close()


@pytest.fixture(scope="session")
def browser(e2e_tools):
    """Debian's Chromium, headless, through Playwright; closed at the end, always."""
    with chromium() as browser:
        yield browser


@contextlib.contextmanager
def chromium():
    """The browser fixture's Chromium as a context manager (tools/bench_browser.py uses it too)."""
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    pw = sync_playwright().start()
    browser = None
    try:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
    finally:
        if browser is not None:
            browser.close()
        pw.stop()


@pytest.fixture
def page(browser, lab):
    """A fresh browser context per lesson; console and page errors are kept on ``page.errors``."""
    context = browser.new_context(viewport={"width": 1400, "height": 950}, device_scale_factor=1)
    try:
        pg = context.new_page()
        pg.errors = []
        pg.on("pageerror", lambda exc: pg.errors.append(f"page error: {exc}"))
        pg.on("console", lambda msg: pg.errors.append(f"console {msg.type}: {msg.text}")
              if msg.type == "error" else None)
        yield pg
    finally:
        context.close()
        lab.shutdown_kernels()


@pytest.fixture(scope="session")
def timings():
    return TIMINGS



@pytest.fixture(scope="session")
def git_baseline():
    """The tree's ``git status`` before the server ran anything: saving must leave it so."""
    return git_status()


def _format_table(rows: dict[str, dict]) -> str:
    header = f"{'lesson':28s} {'open (s)':>9s} {'run all (s)':>12s} {'widget (s)':>11s}  result"
    lines = [header, "-" * len(header)]
    for name, row in rows.items():
        def fmt(key, width):
            value = row.get(key)
            return f"{value:{width}.2f}" if isinstance(value, (int, float)) else f"{'-':>{width}s}"
        lines.append(f"{name:28s} {fmt('open_s', 9)} {fmt('run_s', 12)} {fmt('widget_update_s', 11)}"
                     f"  {row.get('status', '?')}")
    return "\n".join(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not TIMINGS:
        return
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    (BUILD_DIR / "timings.json").write_text(json.dumps(TIMINGS, indent=2) + "\n")
    terminalreporter.write_sep("=", "JupyterLab in Chromium: time to open and run each lesson")
    terminalreporter.write_line(_format_table(TIMINGS))
    terminalreporter.write_line(f"screenshots and timings.json in {BUILD_DIR}")
