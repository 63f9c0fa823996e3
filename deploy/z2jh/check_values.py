"""Check deploy/z2jh/values.yaml: it parses, and every key is one the jupyterhub Helm chart defines.

    python deploy/z2jh/check_values.py [values.yaml]

No registry package carries the chart's ``values.schema.json`` (it ships inside the chart, from
the chart repository, which this machine cannot reach), so the keys below were taken from the
chart's own default ``values.yaml`` and ``values.schema.yaml`` in the
jupyterhub/zero-to-jupyterhub-k8s repository (read with the project's code search): every leaf of
the values file must be one of them, or sit under a key whose content the chart passes through
(``hub.config`` is free-form traitlets configuration; volumes are Kubernetes objects).
The memory guarantee is checked against the load test by ``deploy/sizing.py --check``.
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


def check(path: Path) -> list[str]:
    values = yaml.safe_load(path.read_text())
    if not isinstance(values, dict):
        return [f"{path}: not a mapping"]
    allowed = CHART_KEYS | set(PASS_THROUGH)
    return [f"{path}: {key} is not a key of the jupyterhub chart" for key in leaves(values)
            if key not in allowed]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path(__file__).with_name("values.yaml")
    problems = check(path)
    for line in problems:
        print(line)
    if not problems:
        print(f"{path}: parses; {sum(1 for _ in leaves(yaml.safe_load(path.read_text())))} keys, all the chart's")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
