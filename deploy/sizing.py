"""How many learners fit on one node: computed from the load test's per-learner figures.

    python deploy/sizing.py                         # the committed measurements (deploy/load/*.json)
    python deploy/sizing.py build/hub/load-20.json  # a fresh run of tools/hub_load.py

Per learner, the load test measured the peak memory of their processes (JupyterLab server, the
lesson's kernel and nbclient's kernel for ``progress``) and the CPU seconds to run lesson 01,
``progress`` and a submission. From the run with the most learners and no failure:

- memory request (``singleuser.memory.guarantee``) = the measured peak per learner, rounded up to
  64 MiB, plus 25 % headroom; the limit is twice that (a learner's own experiments);
- a node keeps 10 % of its memory and 0.5 core for the system and Kubernetes;
- learners per node = free memory / memory request (memory binds: learners are idle most of
  the time, so CPU is shared, not reserved);
- "all at once": if every learner on the node does the load test's session (start a server,
  run lesson 01, ``progress``, submit) at the same moment, the cores are shared and it takes
  about learners x CPU-seconds / free cores.

``--check deploy/z2jh/values.yaml`` fails if the values file's memory guarantee is below the
computed request.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODES = [("4 vCPU / 16 GiB", 4, 16), ("8 vCPU / 32 GiB", 8, 32), ("16 vCPU / 64 GiB", 16, 64),
         ("32 vCPU / 128 GiB", 32, 128), ("64 vCPU / 256 GiB", 64, 256)]
SYSTEM_MEM_FRACTION = 0.10
SYSTEM_CORES = 0.5
HEADROOM = 1.25
MIB = 2**20


def load(paths: list[Path]) -> tuple[dict, list[dict]]:
    """The run with the most learners and no failure (else the largest run), and all runs."""
    runs = [json.loads(p.read_text()) for p in paths]
    if not runs:
        raise FileNotFoundError("no load-test results: run make hub-load N=10")
    clean = [r for r in runs if r["failures"] == 0 and r["servers_started"] == r["learners"]]
    return max(clean or runs, key=lambda r: r["learners"]), runs


def cpu_per_learner(run: dict, runs: list[dict]) -> float:
    """CPU-seconds per learner: from the largest clean run that counted each process once.

    Runs before ``cpu_accounting`` was recorded also added waited-for children to their parents
    (an upper bound, up to twice the truth); they are used only when there is no other.
    """
    exact = [r for r in runs if r.get("cpu_accounting") and r["failures"] == 0]
    return max(exact, key=lambda r: r["learners"])["cpu_s_per_learner"]["mean"] if exact else \
        run["cpu_s_per_learner"]["mean"]


def request_mib(run: dict) -> int:
    peak = run["peak_rss_per_learner_mib"]["max"]
    return int(math.ceil(peak * HEADROOM / 64) * 64)


def table(run: dict, runs: list[dict]) -> str:
    req = request_mib(run)
    cpu = cpu_per_learner(run, runs)
    lines = [f"measured with {run['learners']} learners at once on {run['cores']} cores "
             f"({run['failures']} failures): peak {run['peak_rss_per_learner_mib']['max']:.0f} MiB per learner; "
             f"{cpu:.1f} CPU-s per learner's session",
             f"memory request {req} MiB, limit {2 * req} MiB",
             "",
             "| node | learners per node (memory) | all of them do the session at once (CPU) |",
             "|---|---:|---:|"]
    for name, cores, gib in NODES:
        free_mib = gib * 1024 * (1 - SYSTEM_MEM_FRACTION)
        n = int(free_mib // req)
        burst_s = n * cpu / (cores - SYSTEM_CORES)
        lines.append(f"| {name} | {n} | about {burst_s:.0f} s |")
    return "\n".join(lines)


def check_values(run: dict, values: Path) -> None:
    text = values.read_text()
    memory = re.search(r"^  memory:\n\s+guarantee:\s*(\d+)Mi\b.*\n\s+limit:\s*(\d+)Mi\b", text, re.MULTILINE)
    if not memory:
        raise SystemExit(f"{values}: no singleuser.memory guarantee and limit in Mi (like 576Mi)")
    have, limit, need = int(memory.group(1)), int(memory.group(2)), request_mib(run)
    if have < need or limit < 2 * need:
        raise SystemExit(f"{values}: memory guarantee {have}Mi / limit {limit}Mi are below the measured "
                         f"request {need} MiB / limit {2 * need} MiB: set them from `python deploy/sizing.py`")
    print(f"{values}: memory guarantee {have}Mi and limit {limit}Mi cover the measured request ({need} MiB)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="*", type=Path)
    parser.add_argument("--check", type=Path, help="a Helm values file to check against the request")
    args = parser.parse_args(argv)
    paths = args.results or sorted((HERE / "load").glob("load-*.json"))
    run, runs = load(paths)
    print(table(run, runs))
    if args.check:
        check_values(run, args.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
