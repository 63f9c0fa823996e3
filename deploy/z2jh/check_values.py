"""Check deploy/z2jh/values.yaml: it parses, every key is one the jupyterhub Helm chart defines,
and it lets in only the people it names.

    python deploy/z2jh/check_values.py [values.yaml ...]

No registry package carries the chart's ``values.schema.json`` (it ships inside the chart, from
the chart repository, which this machine cannot reach), so the keys below were taken from the
chart's own default ``values.yaml`` and ``values.schema.yaml`` in the
jupyterhub/zero-to-jupyterhub-k8s repository (read with the project's code search): every leaf of
the values file must be one of them, or sit under a key whose content the chart passes through
(``hub.config`` is free-form traitlets configuration; volumes are Kubernetes objects).
The memory guarantee is checked against the load test by ``deploy/sizing.py --check``.

Who gets in (``login_problems``). A values file fails when:

- it names no authenticator: the chart then uses its default, the dummy authenticator, which
  takes any user name with any password (the chart's own values.yaml: ``auth.type: dummy``);
- it names one that checks no personal secret: ``dummy``, ``null``, ``shared-password`` (one
  password for everyone, or none), or a dummy/shared password is set at all;
- it sets ``allow_all: true``: with an OAuthenticator that is anyone with an account at the
  provider;
- nobody is named who may log in (``allowed_users``, or the OAuthenticator's organisations,
  teams, groups or domains);
- the admins are not exactly one (``--max-admins``, default 1: the instructor), or admin rights
  come from a group (``admin_groups``: whoever the provider puts in it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

CHART_KEYS = {
    # singleuser (chart values.yaml)
    "singleuser.image.name", "singleuser.image.tag", "singleuser.image.pullPolicy",
    "singleuser.defaultUrl", "singleuser.startTimeout", "singleuser.cmd", "singleuser.uid",
    "singleuser.fsGid", "singleuser.extraEnv", "singleuser.lifecycleHooks",
    "singleuser.memory.guarantee", "singleuser.memory.limit",
    "singleuser.cpu.guarantee", "singleuser.cpu.limit",
    "singleuser.storage.type", "singleuser.storage.capacity", "singleuser.storage.homeMountPath",
    "singleuser.storage.extraVolumes", "singleuser.storage.extraVolumeMounts",
    "singleuser.storage.dynamic.storageClass",
    # culling (chart values.yaml: cull.*)
    "cull.enabled", "cull.users", "cull.removeNamedServers", "cull.timeout", "cull.every",
    "cull.concurrency", "cull.maxAge",
    # images on every node before class, and packing learners onto few nodes
    "prePuller.hook.enabled", "prePuller.continuous.enabled",
    "scheduling.userScheduler.enabled", "scheduling.podPriority.enabled",
    "scheduling.userPlaceholder.enabled", "scheduling.userPlaceholder.replicas",
    # logging out stops the user's server (chart values.yaml: hub.shutdownOnLogout)
    "hub.shutdownOnLogout",
}
# Keys whose content the chart hands on without a schema of its own (values.schema.yaml:
# hub.config has additionalProperties: true; volumes and env are Kubernetes objects).
PASS_THROUGH = ("hub.config", "hub.extraConfig", "singleuser.storage.extraVolumes",
                "singleuser.storage.extraVolumeMounts", "singleuser.extraEnv", "singleuser.lifecycleHooks")


def leaves(node, prefix: str = ""):
    if isinstance(node, dict) and node and not any(prefix == p for p in PASS_THROUGH):
        for key, value in node.items():
            yield from leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix


# Authenticators that check no secret of the person's own (JupyterHub's entry-point names and classes).
NO_PERSONAL_SECRET = {"dummy", "null", "shared-password", "sharedpassword",
                      "jupyterhub.auth.dummyauthenticator", "dummyauthenticator.dummyauthenticator",
                      "jupyterhub.auth.nullauthenticator", "nullauthenticator.nullauthenticator",
                      "jupyterhub.authenticators.shared.sharedpasswordauthenticator"}
# Traitlets that name who may log in, on Authenticator or on an OAuthenticator's own section.
WHO_KEYS = ("allowed_users", "allowed_organizations", "allowed_teams", "allowed_groups", "allowed_projects",
            "allowed_google_groups", "hosted_domain", "allowed_idps", "allowed_domains")


def login_problems(values: dict, max_admins: int = 1) -> list[str]:
    """Why this values file would let in someone it does not name (empty: it does not)."""
    config = ((values.get("hub") or {}).get("config") or {})
    problems = []
    authenticator = str((config.get("JupyterHub") or {}).get("authenticator_class") or "").strip()
    if not authenticator:
        problems.append("no hub.config.JupyterHub.authenticator_class: the chart's default is the dummy "
                        "authenticator, which lets anyone in under any name")
    elif authenticator.lower() in NO_PERSONAL_SECRET or authenticator.lower().rsplit(".", 1)[-1] in {
            "dummyauthenticator", "nullauthenticator", "sharedpasswordauthenticator"}:
        problems.append(f"authenticator_class {authenticator!r} checks no password of the person's own")
    for section in ("DummyAuthenticator", "SharedPasswordAuthenticator"):
        for key in ("password", "user_password", "admin_password"):
            if (config.get(section) or {}).get(key):
                problems.append(f"hub.config.{section}.{key} is set: one password for everyone")
    sections = {name: sec for name, sec in config.items() if isinstance(sec, dict)
                and (name == "Authenticator" or name.endswith("Authenticator"))}
    named = sorted(f"{name}.{key}" for name, sec in sections.items() for key in WHO_KEYS if sec.get(key))
    for name, sec in sections.items():
        if sec.get("allow_all"):
            problems.append(f"hub.config.{name}.allow_all is true: anyone the authenticator accepts gets in "
                            "(with an OAuthenticator, anyone with an account at the provider)")
    if not named:
        problems.append("nobody is named who may log in: set Authenticator.allowed_users, or the "
                        f"authenticator's own list ({', '.join(WHO_KEYS[1:])})")
    admins = [u for sec in sections.values() for u in (sec.get("admin_users") or [])]
    if len(set(admins)) != max_admins:
        problems.append(f"{len(set(admins))} admin user(s) {sorted(set(admins))}: expected {max_admins} "
                        "(the instructor) in Authenticator.admin_users")
    for name, sec in sections.items():
        if sec.get("admin_groups"):
            problems.append(f"hub.config.{name}.admin_groups makes admins of whoever the provider puts in a group")
    return problems


def check(path: Path, max_admins: int = 1) -> list[str]:
    values = yaml.safe_load(path.read_text())
    if not isinstance(values, dict):
        return [f"{path}: not a mapping"]
    allowed = CHART_KEYS | set(PASS_THROUGH)
    problems = [f"{path}: {key} is not a key of the jupyterhub chart" for key in leaves(values)
                if key not in allowed]
    return problems + [f"{path}: {p}" for p in login_problems(values, max_admins)]


def placeholders(path: Path) -> list[str]:
    """Values still to fill in before a deployment (``REPLACE`` in them)."""
    return [key for key, value in _leaf_values(yaml.safe_load(path.read_text())) if "REPLACE" in str(value)]


def _leaf_values(node, prefix: str = ""):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaf_values(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaf_values(value, f"{prefix}[{i}]")
    else:
        yield prefix, node


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path(__file__).with_name("values.yaml")])
    parser.add_argument("--max-admins", type=int, default=1, help="how many admin users the class has (1: the instructor)")
    parser.add_argument("--deploy", action="store_true", help="also fail on placeholders still to fill in (REPLACE...)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    failed = False
    for path in args.paths:
        problems = check(path, args.max_admins)
        todo = placeholders(path)
        if args.deploy:
            problems += [f"{path}: {key} is still a placeholder" for key in todo]
        for line in problems:
            print(line)
        if not problems:
            print(f"{path}: parses; {sum(1 for _ in leaves(yaml.safe_load(path.read_text())))} keys, all the chart's; "
                  "only the people it names get in"
                  + (f"; to fill in before deploying: {', '.join(todo)}" if todo else ""))
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
