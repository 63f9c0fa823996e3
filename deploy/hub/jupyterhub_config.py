"""JupyterHub for one class on one machine: `make hub` (tools/hub.py start) runs it with this file.

Loopback only. The hub runs as root and spawns each learner's JupyterLab as that learner's own
system user (LocalProcessSpawner), from the course's world-readable environment (HUB_SHARE/venv,
where the course and nbgrader are installed). tools/hub.py sets the HUB_* variables read below.

Logging in: PAM, the machine's own passwords. The users are real system users (the spawner runs
each server as one), so their system password is their hub password; tools/hub.py gives each a
random one of their own and hands the list to the instructor (0600). Nobody shares a password and
the instructor is the only admin. Logging out stops the user's servers and revokes every token the
user holds, so a token copied out of a session is refused once its owner logs out.

HUB_BROKEN=wide-scope (the hub test only) gives every user access to every server: the test shows
its denial checks catch it. (HUB_BROKEN=shared-password is set up by tools/hub.py: one password.)
"""

import os
import socket
from pathlib import Path

from jupyterhub.auth import PAMAuthenticator
from jupyterhub.handlers.login import LogoutHandler
from jupyterhub.utils import new_token

c = get_config()  # noqa: F821 (provided by JupyterHub)

STATE = Path(os.environ["HUB_STATE"])
SHARE = Path(os.environ["HUB_SHARE"])
VENV = SHARE / "venv"
PORT = int(os.environ.get("HUB_PORT", "18000"))
SINGLEUSER_PORTS = range(int(os.environ.get("HUB_USER_PORT_MIN", "18010")),
                         int(os.environ.get("HUB_USER_PORT_MAX", "18099")) + 1)
INSTRUCTOR = os.environ.get("HUB_INSTRUCTOR", "gpuc-instructor")
LEARNERS = [u for u in os.environ.get("HUB_LEARNERS", "").split(",") if u]


BROKEN = os.environ.get("HUB_BROKEN", "")


class CourseLogoutHandler(LogoutHandler):
    """Log out as JupyterHub does (cookies cleared in this browser, the session's OAuth tokens
    deleted, and with ``shutdown_on_logout`` the servers stopped, which deletes their tokens), then
    end what JupyterHub leaves valid: every other token of the user (made on the token page or
    through the REST API) is revoked, and the user's cookie id is renewed, so a copy of the login
    cookie taken before logout no longer opens the hub (JupyterHub only asks the browser to drop it).
    """

    async def handle_logout(self):
        user = self.current_user
        if user is None or getattr(user, "kind", "user") != "user":
            return
        tokens = list(user.orm_user.api_tokens)
        for token in tokens:
            self.db.delete(token)
        user.orm_user.cookie_id = new_token()
        self.db.commit()
        self.log.info("logout of %s: %d token(s) revoked, login cookies renewed", user.name, len(tokens))


class CourseAuthenticator(PAMAuthenticator):
    """PAM (the users' own system passwords), with the logout above.

    As a LocalAuthenticator it creates the system user (``adduser``) when an admin adds a user
    through the REST API, as the load test does (``create_system_users``); such a user has no
    password, so PAM lets nobody log in as them until the instructor sets one.
    """

    def get_handlers(self, app):
        # JupyterHub registers the authenticator's handlers before its own: this /logout wins.
        return [*super().get_handlers(app), ("/logout", CourseLogoutHandler)]


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
c.JupyterHub.authenticator_class = CourseAuthenticator
c.CourseAuthenticator.create_system_users = True
c.Authenticator.allowed_users = {INSTRUCTOR, *LEARNERS}
c.Authenticator.admin_users = {INSTRUCTOR}       # the only admin
c.Authenticator.allow_existing_users = True      # users an admin adds through the API may log in
c.JupyterHub.shutdown_on_logout = True           # logging out stops the user's servers (and their tokens)

# The admin token tools/hub.py and the load test use (a service with the scopes they need).
c.JupyterHub.services = [{"name": "course-admin",
                          "api_token": (STATE / "admin-token").read_text().strip()}]
c.JupyterHub.load_roles = [{
    "name": "course-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users", "read:users"],
    "services": ["course-admin"],
}]
if BROKEN == "wide-scope":
    # Deliberately unsafe: JupyterHub's default role for users is {"self"}; this adds access to
    # every server (access:servers, without !user=...), a scope too wide.
    c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", "access:servers"]})

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
