"""JupyterHub for one class on one machine: `make hub` (tools/hub.py start) runs it with this file.

Loopback only. The hub runs as root and spawns each learner's JupyterLab as that learner's own
system user (LocalProcessSpawner), from the course's world-readable environment (HUB_SHARE/venv,
where the course and nbgrader are installed). tools/hub.py sets the HUB_* variables read below.

Logging in: a shared password (HUB_STATE/password, random, 0600) for the users the hub knows;
this stands in for PAM or a campus login in the test. Real classes use PAMAuthenticator (the
machine's passwords) or an OAuthenticator; nothing else here changes.
"""

import hmac
import os
import socket
from pathlib import Path

from jupyterhub.auth import LocalAuthenticator
from traitlets import Unicode

c = get_config()  # noqa: F821 (provided by JupyterHub)

STATE = Path(os.environ["HUB_STATE"])
SHARE = Path(os.environ["HUB_SHARE"])
VENV = SHARE / "venv"
PORT = int(os.environ.get("HUB_PORT", "18000"))
SINGLEUSER_PORTS = range(int(os.environ.get("HUB_USER_PORT_MIN", "18010")),
                         int(os.environ.get("HUB_USER_PORT_MAX", "18099")) + 1)
INSTRUCTOR = os.environ.get("HUB_INSTRUCTOR", "gpuc-instructor")
LEARNERS = [u for u in os.environ.get("HUB_LEARNERS", "").split(",") if u]


class CoursePasswordAuthenticator(LocalAuthenticator):
    """Accept a known user with the class's shared password; the users are real system users.

    As a LocalAuthenticator it creates the system user (``adduser``) when an admin adds a user
    through the REST API, as the load test does (``create_system_users``).
    """

    password = Unicode("", config=True, help="the shared password")

    async def authenticate(self, handler, data):
        if self.password and hmac.compare_digest(data.get("password", ""), self.password):
            return data.get("username")
        return None


# ---------------------------------------------------------------------------------------- network
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 2
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 1}"
c.ConfigurableHTTPProxy.command = [os.environ["HUB_CHP"]]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# ---------------------------------------------------------------------------------------- state
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")

# ---------------------------------------------------------------------------------------- users
c.JupyterHub.authenticator_class = CoursePasswordAuthenticator
c.CoursePasswordAuthenticator.password = (STATE / "password").read_text().strip()
c.CoursePasswordAuthenticator.create_system_users = True
c.Authenticator.allowed_users = {INSTRUCTOR, *LEARNERS}
c.Authenticator.admin_users = {INSTRUCTOR}
c.Authenticator.allow_existing_users = True      # users an admin adds through the API may log in

# The admin token tools/hub.py and the load test use (a service with the scopes they need).
c.JupyterHub.services = [{"name": "course-admin",
                          "api_token": (STATE / "admin-token").read_text().strip()}]
c.JupyterHub.load_roles = [{
    "name": "course-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users", "read:users"],
    "services": ["course-admin"],
}]

# ---------------------------------------------------------------------------------------- spawner
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",   # nbgrader runs this environment's alembic
    # The course repository the nbgitpuller link clones is owned by root, so git refuses it
    # ("dubious ownership") unless a global or system config allows it; this one does and then
    # includes the user's own ~/.gitconfig. (git drops GIT_CONFIG_COUNT for a local clone.)
    "GIT_CONFIG_GLOBAL": str(SHARE / "gitconfig"),
}
# The hub stops a learner's server after this long with nothing open (jupyterhub-idle-culler
# does it on Kubernetes; here the single-user server shuts itself down).
c.Spawner.args = ["--ServerApp.shutdown_no_activity_timeout=3600",
                  "--MappingKernelManager.cull_idle_timeout=1800",
                  "--MappingKernelManager.cull_interval=300"]

_taken: set[int] = set()


def _free_port() -> int:
    """A free port in this project's range (LocalProcessSpawner would pick any port)."""
    for port in SINGLEUSER_PORTS:
        if port in _taken:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _taken.add(port)
        return port
    raise RuntimeError(f"no free port left in {SINGLEUSER_PORTS.start}-{SINGLEUSER_PORTS.stop - 1}")


def _pre_spawn(spawner):
    spawner.port = _free_port()


def _post_stop(spawner):
    _taken.discard(spawner.port)
    spawner.port = 0


c.Spawner.pre_spawn_hook = _pre_spawn
c.Spawner.post_stop_hook = _post_stop
c.JupyterHub.cleanup_servers = True
c.JupyterHub.concurrent_spawn_limit = int(os.environ.get("HUB_SPAWN_LIMIT", "100"))
