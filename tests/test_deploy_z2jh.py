"""deploy/z2jh: the values let in only the people they name, each user's pod gets a uid of its own,
and the Dockerfile's default base is the official image a deployment pulls.

The values checks run on the committed values.yaml (must pass), on the values this repository
shipped before (``allow_all: true`` and no authenticator: must fail) and on one broken variant per
rule (each must fail naming its reason). The uid rule is ``hub.extraConfig.course-uids`` itself,
executed with stand-ins for KubeSpawner's config and spawners.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import types
from pathlib import Path

import pytest
import yaml

Z2JH = Path(__file__).resolve().parents[1] / "deploy" / "z2jh"
VALUES = Z2JH / "values.yaml"

_spec = importlib.util.spec_from_file_location("check_values", Z2JH / "check_values.py")
check_values = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_values)

# The values as the repository shipped them before per-user logins (abridged to what decides
# who gets in): any name with any password, the instructor among them.
BEFORE = """
hub:
  config:
    JupyterHub:
      admin_access: false
    Authenticator:
      admin_users:
        - instructor
      allow_all: true
singleuser:
  defaultUrl: /lab
"""


def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


def test_the_committed_values_pass(capsys):
    assert check_values.main([str(VALUES)]) == 0
    assert "only the people it names get in" in capsys.readouterr().out
    assert check_values.login_problems(values()) == []


def test_the_values_shipped_before_fail(tmp_path, capsys):
    path = tmp_path / "before.yaml"
    path.write_text(BEFORE)
    assert check_values.main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "the chart's default is the dummy authenticator" in out
    assert "allow_all is true" in out
    assert "nobody is named who may log in" in out


def _broken(change) -> list[str]:
    v = copy.deepcopy(values())
    change(v["hub"]["config"])
    return check_values.login_problems(v)


@pytest.mark.parametrize(("change", "reason"), [
    (lambda c: c["JupyterHub"].pop("authenticator_class"), "default is the dummy authenticator"),
    (lambda c: c["JupyterHub"].update(authenticator_class="dummy"), "checks no password of the person's own"),
    (lambda c: c["JupyterHub"].update(authenticator_class="shared-password"), "checks no password"),
    (lambda c: c["JupyterHub"].update(authenticator_class="jupyterhub.auth.DummyAuthenticator"), "checks no password"),
    (lambda c: c.update(DummyAuthenticator={"password": "class-password"}), "one password for everyone"),
    (lambda c: c["Authenticator"].update(allow_all=True), "allow_all is true"),
    (lambda c: c["GitHubOAuthenticator"].update(allow_all=True), "allow_all is true"),
    (lambda c: c["GitHubOAuthenticator"].pop("allowed_organizations"), "nobody is named who may log in"),
    (lambda c: c["Authenticator"]["admin_users"].append("a-learner"), "2 admin user(s)"),
    (lambda c: c["Authenticator"].pop("admin_users"), "0 admin user(s)"),
    (lambda c: c["GitHubOAuthenticator"].update(admin_groups=["staff"]), "admin_groups"),
])
def test_each_way_to_let_anyone_in_fails(change, reason):
    problems = _broken(change)
    assert any(reason in p for p in problems), problems


def test_deploy_mode_lists_the_placeholders(capsys):
    assert check_values.main(["--deploy", str(VALUES)]) == 1
    out = capsys.readouterr().out
    assert "hub.config.GitHubOAuthenticator.client_secret is still a placeholder" in out
    assert "hub.config.Authenticator.admin_users[0] is still a placeholder" in out


class _Traits(types.SimpleNamespace):
    def __getattr__(self, name):           # c.KubeSpawner.uid = ...: sections appear when set
        value = _Traits()
        setattr(self, name, value)
        return value


def _spawner(user_id: int, admin: bool):
    return types.SimpleNamespace(user=types.SimpleNamespace(id=user_id, admin=admin))


def test_each_users_pod_runs_with_a_uid_of_its_own():
    c = _Traits()
    exec(values()["hub"]["extraConfig"]["course-uids"], {"c": c})   # noqa: S102 (the chart runs it so)
    ks = c.KubeSpawner
    instructor, learners = _spawner(1, True), [_spawner(i, False) for i in range(2, 202)]
    uids = [ks.uid(s) for s in [instructor, *learners]]
    assert len(set(uids)) == len(uids), "two users share a uid"
    assert not {0, 1000} & set(uids), "a user runs as root or as the image's shared uid 1000"
    graders = ks.gid(instructor)
    assert ks.fs_gid(instructor) == graders
    learner_gids = [ks.gid(s) for s in learners]
    assert graders not in learner_gids, "a learner is in the graders' group (would read every submission)"
    assert len(set(learner_gids)) == len(learners), "two learners share a group"
    assert [ks.fs_gid(s) for s in learners] == learner_gids
    # The uid is the hub's id for the user: the same user gets the same uid at every start.
    assert ks.uid(_spawner(7, False)) == ks.uid(_spawner(7, False))


def test_the_dockerfile_defaults_to_the_official_base_and_takes_another():
    text = (Z2JH / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE=python:3\.11-slim-bookworm$", text, re.M)
    assert re.findall(r"^FROM (\S+)", text, re.M) == ["${BASE}", "${BASE}"]
    # What only the build needs (CA bundle, wheels) is copied into the build stage only.
    final = text.split("\nFROM ${BASE}\n", 1)[1]
    assert "build-extra" not in final and "COPY --from=build /opt/venv /opt/venv" in final


def test_the_image_lends_a_pods_own_uid_a_passwd_entry():
    """nbgrader looks the uid up (pwd.getpwuid): the entrypoint gives a uid the image does not
    list the name jovyan, so nbgrader takes the student's name from JUPYTERHUB_USER."""
    text = (Z2JH / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["tini", "--", "course-start"]' in text
    assert "libnss-wrapper" in text
    script = Z2JH / "course-start.sh"
    assert script.stat().st_mode & 0o111, "course-start.sh must be executable"
    body = script.read_text()
    assert "jovyan:x:$(id -u):$(id -g)" in body and body.rstrip().endswith('exec "$@"')
