"""Build deploy/z2jh/Dockerfile here and run the image with no network (``make image-test``).

    python3 deploy/z2jh/image_test.py [--no-cache] [--keep-daemon]

1. Docker's engine: uses the running one, or (as root) starts Debian's ``dockerd`` with no bridge,
   no iptables and no NAT (``--bridge=none --iptables=false --ip-masq=false``), and stops it at the
   end. No network is ever created: the build runs with ``--network host``, the container with
   ``--network none``.
2. The base image: no registry is reachable here, so a minimal Debian bookworm with python3 and
   python3-venv is made with ``debootstrap --variant=minbase`` and ``docker import``-ed as
   ``gpu-ml-course-base:bookworm-minbase`` (once; kept for the next run). It is passed as the build
   argument ``BASE``; the Dockerfile's default stays the official ``python:3.11-slim-bookworm``.
3. The build context: the repository's files as a fresh clone has them (``git ls-files``: tracked and
   untracked-but-not-ignored), plus, in ``deploy/z2jh/build-extra/``, the host's CA bundle for pip
   and, when the course's dependencies name ``torch``, PyTorch's CPU wheel (``pip download``
   from this machine's wheels: a CUDA build is refused).
4. Runs, with ``--network none``: lesson 01 executed and lesson 09's first kernel-lab check
   (``smoke/in_container.py``); then the image's own command, ``jupyterhub-singleuser``, with a
   stand-in for the hub's API inside the container (``smoke/stub_hub.py``), until its REST API
   answers the user's token (and refuses another).

5. Submissions private with the uids of ``values.yaml`` (``hub.extraConfig.course-uids``): on one
   exchange folder shared by every container (the ReadWriteMany volume on Kubernetes), the
   instructor (uid 10001, the graders' group 9000) releases lesson 04, two learners (uids 10002
   and 10003, groups of their own) fetch and submit it, learner 2 fails to read learner 1's
   submission by its exact path or to list ``inbound``, and the instructor collects both. Then
   the same with both learners as the chart's default uid 1000: learner 2 reads it, which is
   why the values give each user their own uid.

Reports the image size, the build time and the time from ``docker run`` to an answering API, and
writes them to ``build/image/report.json``. Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "image"
HERE = Path(__file__).resolve().parent
BASE_TAG = "gpu-ml-course-base:bookworm-minbase"
IMAGE_TAG = "gpu-ml-course:image-test"
CONTAINER = "gpuc-image-test"
MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
START_TIMEOUT_S = 180


def log(msg: str) -> None:
    print(f"image-test: {msg}", flush=True)


def sh(*cmd, check=True, capture=False, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=check, text=True,
                          capture_output=capture, **kw)


def docker(*args, **kw) -> subprocess.CompletedProcess:
    # The legacy builder: Debian's engine has no buildx plugin, and the build needs nothing BuildKit adds.
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    return sh("docker", *args, env=env, **kw)


# ----------------------------------------------------------------------------------- the engine

def engine_up() -> bool:
    return docker("info", check=False, capture=True).returncode == 0


def start_engine() -> subprocess.Popen | None:
    """The running engine, or one started here (root only); None when one was already running."""
    if shutil.which("docker") is None:
        sys.exit("image-test: no docker client (apt-get install docker.io)")
    if engine_up():
        return None
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        sys.exit("image-test: Docker's engine is not running and cannot be started here "
                 "(needs root and dockerd: apt-get install docker.io)")
    WORK.mkdir(parents=True, exist_ok=True)
    logf = open(WORK / "dockerd.log", "a")  # noqa: SIM115 (the daemon's log, open while it runs)
    proc = subprocess.Popen(["dockerd", "--bridge=none", "--iptables=false", "--ip-masq=false"],
                            stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not engine_up():
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"image-test: dockerd did not start (see {WORK / 'dockerd.log'})")
        time.sleep(0.5)
    log(f"started dockerd (pid {proc.pid}, no bridge, no iptables)")
    return proc


def stop_engine(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log(f"stopped dockerd (pid {proc.pid})")


# ------------------------------------------------------------------------------------- the base

def base_image() -> float | None:
    """Make the local base once: seconds it took, or None when it was there already."""
    if docker("image", "inspect", BASE_TAG, check=False, capture=True).returncode == 0:
        return None
    if shutil.which("debootstrap") is None:
        sys.exit("image-test: debootstrap missing (apt-get install debootstrap)")
    rootfs = WORK / "rootfs"
    shutil.rmtree(rootfs, ignore_errors=True)
    log(f"debootstrap bookworm (minbase, python3, python3-venv) into {rootfs}: a few minutes")
    start = time.monotonic()
    sh("debootstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
       "bookworm", rootfs, MIRROR, stdout=subprocess.DEVNULL)
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    docker("import", "-", BASE_TAG, stdin=tar.stdout, stdout=subprocess.DEVNULL)
    if tar.wait() != 0:
        sys.exit("image-test: tar of the base failed")
    shutil.rmtree(rootfs, ignore_errors=True)
    return time.monotonic() - start


# ------------------------------------------------------------------------------------ the context

def needs_torch() -> bool:
    """Do the dependencies the image installs (the course, classroom and hub extras) name torch?"""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    deps = [*project.get("dependencies", []), *extras.get("classroom", []), *extras.get("hub", [])]
    return any(d.split(";")[0].strip().lower().startswith("torch") and
               d.split(";")[0].strip().lower()[5:6] in ("", "=", "<", ">", "!", "~", "[", " ") for d in deps)


def locked(name: str) -> str | None:
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line.lower().startswith(f"{name}=="):
            return line.split("==", 1)[1].strip()
    return None


def context() -> Path:
    """The files a fresh clone has, plus build-extra's CA bundle and wheels."""
    ctx = WORK / "context"
    shutil.rmtree(ctx, ignore_errors=True)
    files = sh("git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
               capture=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, ctx / rel)
    extra = ctx / "deploy" / "z2jh" / "build-extra"
    extra.mkdir(parents=True, exist_ok=True)
    for wheel in (HERE / "build-extra").glob("*.whl"):     # wheels someone brought (git ignores them)
        shutil.copy2(wheel, extra / wheel.name)
    if HOST_CA.exists():
        shutil.copy2(HOST_CA, extra / "ca-certificates.crt")
    if needs_torch() and not list(extra.glob("torch-*.whl")):
        version = locked("torch")
        spec = f"torch=={version}" if version else "torch"
        log(f"the course needs torch: bringing the CPU build into the context ({spec})")
        sh(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.11", "-d", extra, spec)
    for wheel in extra.glob("torch-*.whl"):
        if "+cpu" not in wheel.name:
            sys.exit(f"image-test: {wheel.name} is not PyTorch's CPU build: the image must not carry CUDA "
                     "(put torch-VERSION+cpu-...whl in deploy/z2jh/build-extra/)")
    return ctx


# ------------------------------------------------------------------------------------- the runs

def run_smoke() -> dict:
    out = docker("run", "--rm", "--network", "none", "-v", f"{HERE / 'smoke'}:/smoke:ro", IMAGE_TAG,
                 "python", "/smoke/in_container.py", check=False, capture=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        sys.exit(f"image-test: the lesson or the kernel check failed in the container ({out.returncode}):\n"
                 f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return json.loads(lines[-1])


PROBE = """
import sys, urllib.request, urllib.error
req = urllib.request.Request("http://127.0.0.1:8888/user/jovyan/api/" + sys.argv[1],
                             headers={"Authorization": "token " + sys.argv[2]} if sys.argv[2] else {})
try:
    with urllib.request.urlopen(req, timeout=5) as r:
        print(r.status, r.read()[:300].decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read()[:300].decode())
except OSError as e:
    print(0, e)
"""


def probe(path: str, token: str) -> tuple[int, str]:
    out = docker("exec", CONTAINER, "python", "-c", PROBE, path, token, check=False, capture=True)
    status, _, body = out.stdout.strip().partition(" ")
    return (int(status) if status.isdigit() else 0), body


def run_singleuser() -> dict:
    """The image's own command, its API answering the user's token and refusing another."""
    user_token, server_token = secrets.token_hex(16), secrets.token_hex(16)
    env = {"JUPYTERHUB_API_TOKEN": server_token, "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
           "JUPYTERHUB_CLIENT_ID": "jupyterhub-user-jovyan", "JUPYTERHUB_USER": "jovyan",
           "JUPYTERHUB_SERVICE_PREFIX": "/user/jovyan/", "JUPYTERHUB_BASE_URL": "/",
           "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:8888/user/jovyan/",
           "JUPYTERHUB_OAUTH_CALLBACK_URL": "/user/jovyan/oauth_callback",
           "JUPYTERHUB_OAUTH_SCOPES": '["access:servers!user=jovyan"]',
           "JUPYTERHUB_OAUTH_ACCESS_SCOPES": '["access:servers!user=jovyan"]',
           "STUB_USER_TOKEN": user_token}
    docker("rm", "-f", CONTAINER, check=False, capture=True)
    start = time.monotonic()
    docker("run", "-d", "--name", CONTAINER, "--network", "none", "-v", f"{HERE / 'smoke'}:/smoke:ro",
           *[a for k, v in env.items() for a in ("-e", f"{k}={v}")], IMAGE_TAG, stdout=subprocess.DEVNULL)
    try:
        docker("exec", "-d", CONTAINER, "python", "/smoke/stub_hub.py")
        deadline = start + START_TIMEOUT_S
        while True:
            status, body = probe("status", user_token)
            if status == 200:
                break
            running = docker("inspect", "-f", "{{.State.Running}}", CONTAINER, capture=True).stdout.strip()
            if running != "true" or time.monotonic() > deadline:
                logs = docker("logs", "--tail", "60", CONTAINER, check=False, capture=True)
                sys.exit(f"image-test: jupyterhub-singleuser did not answer in {START_TIMEOUT_S} s "
                         f"(last: {status} {body[:200]}):\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}")
            time.sleep(0.5)
        start_s = time.monotonic() - start
        contents = probe("contents", user_token)
        refused = {"another token": probe("contents", secrets.token_hex(16)), "no token": probe("contents", "")}
        problems = [] if contents[0] == 200 and '"type": "directory"' in contents[1] else [f"contents: {contents}"]
        problems += [f"{what}: {got}" for what, got in refused.items()
                     if got[0] != 403 or '"type"' in got[1]]
        if problems:
            sys.exit("image-test: jupyterhub-singleuser's API: " + "; ".join(problems))
        version = json.loads(body).get("started") and probe("", user_token)[1]
        return {"start_s": round(start_s, 1), "api": "answers the user's token (200), refuses another (403) "
                "and none (403)", "server": version[:120] if version else ""}
    finally:
        docker("rm", "-f", CONTAINER, check=False, capture=True)


EXCHANGE_IN = "/srv/nbgrader/exchange"      # deploy/z2jh/nbgrader_config.py
COURSE_ID = "gpu-ml-course"
INSTRUCTOR = ("k8s-instructor", 10001, 9000)     # values.yaml: 10000 + user id; the graders' group
LEARNERS = [("k8s-learner1", 10002, 10002), ("k8s-learner2", 10003, 10003)]


def as_pod(user: tuple[str, int, int], home: Path, exchange: Path, script: str) -> subprocess.CompletedProcess:
    """One pod of ``user``: their uid and group, their home volume, the shared exchange, no network."""
    name, uid, gid = user
    return docker("run", "--rm", "--network", "none", "--user", f"{uid}:{gid}",
                  "-v", f"{home}:/home/jovyan", "-v", f"{exchange}:{EXCHANGE_IN}",
                  "-e", f"JUPYTERHUB_USER={name}", "-e", f"USER={name}", IMAGE_TAG,
                  "bash", "-c", script, check=False, capture=True)


def exchange_round(users: list[tuple[str, int, int]], tag: str) -> dict:
    """Release, fetch and submit on one exchange; can learner 2 read learner 1's submission?"""
    root = WORK / f"exchange-{tag}"
    shutil.rmtree(root, ignore_errors=True)
    exchange, homes = root / "exchange", root / "homes"
    exchange.mkdir(parents=True)
    exchange.chmod(0o1777)                 # the volume's root, set once by the cluster's admin
    instructor, *learners = users
    for name, uid, gid in users:
        home = homes / name
        home.mkdir(parents=True, exist_ok=True)
        os.chown(home, uid, gid)
        home.chmod(0o700)                  # a home volume of one's own (fsGroup: the user's group)

    def must(user, script, what):
        out = as_pod(user, homes / user[0], exchange, f"set -e\n{script}")
        if out.returncode != 0:
            sys.exit(f"image-test: {what} failed as uid {user[1]}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
        return out

    course = f"{EXCHANGE_IN}/{COURSE_ID}"
    must(instructor, (f"python -m course_lib.exercises --root /opt/gpu-ml-course nbgrader ~/course --lesson 04_roofline >/dev/null\n"
                      "cd ~/course && nbgrader generate_assignment 04_roofline --force >/dev/null\n"
                      f"install -d -m 755 {course} {course}/outbound && install -d -m 2733 {course}/inbound\n"
                      "nbgrader release_assignment 04_roofline --force >/dev/null"), "release")
    for learner in learners:
        must(learner, "cd ~ && nbgrader fetch_assignment 04_roofline >/dev/null && nbgrader submit 04_roofline >/dev/null",
             f"{learner[0]}'s fetch and submit")
    theirs = sorted((exchange / COURSE_ID / "inbound").glob(f"{learners[0][0]}+04_roofline+*/04_roofline.ipynb"))
    if not theirs:
        sys.exit(f"image-test: no submission of {learners[0][0]} in the exchange")
    inside = shlex.quote(f"{EXCHANGE_IN}/{theirs[0].relative_to(exchange)}")   # the name holds spaces
    own = as_pod(learners[0], homes / learners[0][0], exchange, f"head -c 64 {inside}")
    read = as_pod(learners[1], homes / learners[1][0], exchange, f"head -c 64 {inside}")
    listing = as_pod(learners[1], homes / learners[1][0], exchange, f"ls {course}/inbound")
    collect = as_pod(instructor, homes / instructor[0], exchange,
                     "cd ~/course && nbgrader collect 04_roofline >/dev/null && ls submitted")
    return {"uids": {n: f"{u}:{g}" for n, u, g in users},
            "learner1_reads_own": own.returncode == 0 and bool(own.stdout.strip()),
            "learner2_reads_learner1": read.returncode == 0 and bool(read.stdout.strip()),
            "learner2_lists_inbound": listing.returncode == 0,
            "instructor_collected": sorted(collect.stdout.split()) if collect.returncode == 0 else collect.stderr[-300:]}


def run_exchange() -> dict:
    private = exchange_round([INSTRUCTOR, *LEARNERS], "per-user-uids")
    names = sorted(n for n, _, _ in LEARNERS)
    if (not private["learner1_reads_own"] or private["learner2_reads_learner1"] or private["learner2_lists_inbound"]
            or private["instructor_collected"] != names):
        sys.exit(f"image-test: with per-user uids the exchange is not private or not collected: {private}")
    shared = exchange_round([INSTRUCTOR, *[(n, 1000, 100) for n, _, _ in LEARNERS]], "one-uid")
    if not shared["learner2_reads_learner1"]:
        sys.exit(f"image-test: with one uid for all learners learner 2 should read learner 1's submission "
                 f"(the check above could not fail): {shared}")
    return {"per_user_uids": private, "one_uid_1000_for_all": shared}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-cache", action="store_true", help="build every layer again")
    parser.add_argument("--keep-daemon", action="store_true", help="leave a dockerd started here running")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    engine = start_engine()
    try:
        report: dict = {"base": BASE_TAG}
        made = base_image()
        if made is not None:
            report["base_made_s"] = round(made, 1)
        ctx = context()
        report["wheels_in_context"] = sorted(p.name for p in (ctx / "deploy/z2jh/build-extra").glob("*.whl"))
        log(f"building {IMAGE_TAG} from deploy/z2jh/Dockerfile with BASE={BASE_TAG} (pip reaches PyPI)")
        start = time.monotonic()
        build = docker("build", "--network", "host", *(["--no-cache"] if args.no_cache else []),
                       "--build-arg", f"BASE={BASE_TAG}", "-f", ctx / "deploy/z2jh/Dockerfile",
                       "-t", IMAGE_TAG, ctx, check=False, capture=True)
        (WORK / "build.log").write_text(build.stdout + build.stderr)
        if build.returncode != 0:
            sys.exit(f"image-test: docker build failed (log {WORK / 'build.log'}):\n{(build.stdout + build.stderr)[-4000:]}")
        report["build_s"] = round(time.monotonic() - start, 1)
        report["build_cached_steps"] = build.stdout.count("Using cache")
        size = int(docker("image", "inspect", "-f", "{{.Size}}", IMAGE_TAG, capture=True).stdout.strip())
        report["image_size_mb"] = round(size / 1e6)
        log(f"built in {report['build_s']} s ({report['build_cached_steps']} steps from cache); "
            f"image {report['image_size_mb']} MB")
        report["in_container"] = run_smoke()
        log(f"in the container (--network none): {json.dumps(report['in_container'])}")
        report["singleuser"] = run_singleuser()
        log(f"jupyterhub-singleuser answered {report['singleuser']['start_s']} s after docker run")
        start = time.monotonic()
        report["exchange"] = run_exchange()
        report["exchange"]["seconds"] = round(time.monotonic() - start, 1)
        log(f"exchange with per-user uids: private, collected; with one uid for all: learner 2 reads learner 1's "
            f"submission ({report['exchange']['seconds']} s)")
        (WORK / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        log(f"report: {WORK / 'report.json'}")
        print(json.dumps(report, indent=2))
        return 0
    finally:
        if not args.keep_daemon:
            stop_engine(engine)


if __name__ == "__main__":
    sys.exit(main())
