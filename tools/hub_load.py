"""Load test of the class hub: N learners at once, through the hub's REST API, on loopback.

    python tools/hub_load.py --learners 10          (make hub-load N=10; the hub must be running)

Each simulated learner ``gpuc-loadNNN`` is created through the REST API with the admin token
(the hub's authenticator creates the system user), then, all learners at once:

1. starts their server (``POST /hub/api/users/<name>/server``) and waits until it is ready;
2. runs lesson 01 in a kernel on their own server, cell by cell, over the kernel's websocket
   (what JupyterLab's "Run all" does);
3. makes a workspace and runs ``progress`` on exercise 01 (nbclient, in the learner's kernel);
4. fetches and submits lesson 04's assignment with nbgrader (the instructor released it).

Then the instructor collects and autogrades every submission; nothing may be lost: every learner
must have a submission collected and a grade in the gradebook.

Bounded: at most 90 learners (the port range 18010-18099), a deadline for the whole run
(``--deadline-s``) and for each step. Measured: servers started, lessons completed, failures, p50
and p99 of the time to a running server and to a finished lesson, the peak memory (RSS summed
over each learner's processes, sampled every half second) and CPU seconds per learner. Written
to ``build/hub/load-N.json``; ``--cleanup`` deletes the load users afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pwd
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import jupytext

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hub as hubtool  # noqa: E402

MAX_LEARNERS = 90
LESSON = "notebooks/01_throughput_latency.py"
ASSIGNMENT = "04_roofline"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


# --------------------------------------------------------------------------------- measurement

class Sampler(threading.Thread):
    """Every half second: RSS of each user's processes (summed) and their CPU time (per pid, kept)."""

    def __init__(self, uids: dict[int, str], interval_s: float = 0.5):
        super().__init__(daemon=True)
        self.uids, self.interval_s = uids, interval_s
        self.peak_total_rss = 0
        self.peak_rss: dict[str, int] = {}
        self.cpu: dict[int, float] = {}          # pid -> utime + stime, last seen
        self.owner: dict[int, str] = {}
        self.stop_event = threading.Event()

    def sample(self) -> None:
        per_user: dict[str, int] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                uid = entry.stat().st_uid
                if uid not in self.uids:
                    continue
                with open(f"/proc/{entry.name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(entry.name)
            user = self.uids[uid]
            # fields[11], [12]: utime, stime (not cutime/cstime: children are sampled themselves,
            # and counting a waited-for child in its parent too would count it twice);
            # fields[21]: rss in pages. A process shorter than one interval is missed.
            self.cpu[pid] = (int(fields[11]) + int(fields[12])) / CLK_TCK
            self.owner[pid] = user
            per_user[user] = per_user.get(user, 0) + int(fields[21]) * PAGE
        for user, rss in per_user.items():
            self.peak_rss[user] = max(self.peak_rss.get(user, 0), rss)
        self.peak_total_rss = max(self.peak_total_rss, sum(per_user.values()))

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.sample()
            self.stop_event.wait(self.interval_s)

    def cpu_by_user(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, seconds in self.cpu.items():
            out[self.owner[pid]] = out.get(self.owner[pid], 0.0) + seconds
        return out


# --------------------------------------------------------------------------------- a learner

class Learner:
    def __init__(self, hub: hubtool.Hub, name: str):
        self.hub, self.name = hub, name
        self.t_server: float | None = None
        self.t_lesson: float | None = None
        self.t_done: float | None = None          # from the start of the run to the lesson's last cell
        self.t0 = time.monotonic()
        self.progress_done = False
        self.submitted = False
        self.error: str | None = None
        self.token: str | None = None

    async def call(self, fn, *args, **kw):
        return await asyncio.to_thread(fn, *args, **kw)

    async def start_server(self, timeout_s: float) -> None:
        t0 = time.monotonic()
        await self.call(self.hub.api, "POST", f"/users/{self.name}/server", timeout_s=timeout_s)
        while True:
            user = await self.call(self.hub.api, "GET", f"/users/{self.name}")
            server = user.get("servers", {}).get("")
            if server and server.get("ready"):
                break
            if time.monotonic() - t0 > timeout_s:
                raise TimeoutError(f"server not ready after {timeout_s:.0f} s")
            await asyncio.sleep(0.5)
        self.t_server = time.monotonic() - t0
        self.token = (await self.call(self.hub.api, "POST", f"/users/{self.name}/tokens",
                                      {"note": "load test", "expires_in": 3600}))["token"]

    async def execute(self, ws, session: str, code: str, timeout_s: float) -> None:
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": session,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"a cell ran longer than {timeout_s:.0f} s")
            raw = await asyncio.wait_for(ws.read_message(), left)
            if raw is None:
                raise ConnectionError("the kernel's websocket closed")
            if isinstance(raw, bytes):
                continue            # a message with binary buffers (a widget's): never the reply
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_reply":
                content = msg["content"]
                if content.get("status") != "ok":
                    raise RuntimeError(f"cell failed: {content.get('ename')}: {content.get('evalue')}"[:300])
                return

    async def kernel_work(self, cells: list[str], timeout_s: float) -> None:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        kernel = await self.call(self.hub.user_api, self.name, self.token, "POST", "/kernels",
                                 {"name": "python3"})
        url = f"ws://127.0.0.1:{hubtool.PORT}/user/{self.name}/api/kernels/{kernel['id']}/channels"
        ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {self.token}"}),
                                     max_message_size=64 * 2**20)
        session = uuid.uuid4().hex
        try:
            t0 = time.monotonic()
            for code in cells:
                await self.execute(ws, session, code, timeout_s)
            self.t_lesson = time.monotonic() - t0
            self.t_done = time.monotonic() - self.t0
            # progress on exercise 01 in a fresh workspace (nbclient starts its own kernel)
            await self.execute(ws, session, (
                "import pathlib, shutil, io, contextlib\n"
                "from course_lib.exercises import make_workspace, progress\n"
                "ws = pathlib.Path.home() / 'gpu-course'\n"
                "make_workspace(ws, out=lambda *a: None)\n"
                "one = pathlib.Path.home() / 'gpu-course-01'\n"
                "one.mkdir(exist_ok=True)\n"
                "shutil.copy(next(ws.glob('01_*.py')), one)\n"
                "_statuses = progress(one, out=lambda *a: None)\n"
                "assert _statuses, 'progress reported no exercise'\n"), timeout_s)
            self.progress_done = True
            await self.execute(ws, session, (
                "import subprocess\n"
                "for _cmd in (['nbgrader', 'fetch_assignment', %r], ['nbgrader', 'submit', %r]):\n"
                "    _r = subprocess.run(_cmd, cwd=pathlib.Path.home(), capture_output=True, text=True)\n"
                "    assert _r.returncode == 0, _r.stderr[-500:]\n") % (ASSIGNMENT, ASSIGNMENT), timeout_s)
            self.submitted = True
        finally:
            ws.close()
            await self.call(self.hub.user_api, self.name, self.token, "DELETE", f"/kernels/{kernel['id']}")

    async def run(self, cells: list[str], timeout_s: float) -> None:
        self.t0 = time.monotonic()
        try:
            await self.start_server(timeout_s)
            await self.kernel_work(cells, timeout_s)
        except Exception as exc:  # noqa: BLE001 (every failure is counted and reported)
            self.error = f"{type(exc).__name__}: {exc}"[:300]


def lesson_cells(path: Path) -> list[str]:
    nb = jupytext.read(path)
    return [c.source for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def instructor(*args: str) -> str | None:
    """Run nbgrader as the instructor; return None, or the end of its output when it failed."""
    course = Path(pwd.getpwnam(hubtool.INSTRUCTOR).pw_dir) / "course"
    out = hubtool._as_user(hubtool.INSTRUCTOR, "sh", "-c", f"cd {course} && nbgrader " + " ".join(args),
                           capture_output=True, text=True, check=False)
    return None if out.returncode == 0 else f"nbgrader {' '.join(args)}: {(out.stdout + out.stderr)[-400:]}"


def gradebook(names: list[str]) -> tuple[int, int]:
    """(submissions collected, grades recorded) for ``names``, read as the instructor."""
    course = Path(pwd.getpwnam(hubtool.INSTRUCTOR).pw_dir) / "course"
    code = ("import json, sys\nfrom nbgrader.api import Gradebook, MissingEntry\n"
            "names = json.loads(sys.argv[1]); graded = 0\n"
            "with Gradebook('sqlite:///gradebook.db') as gb:\n"
            "    for n in names:\n"
            "        try:\n"
            f"            s = gb.find_submission({ASSIGNMENT!r}, n)\n"
            "            graded += s.score is not None\n"
            "        except MissingEntry:\n"
            "            pass\n"
            "print(graded)\n")
    out = hubtool._as_user(hubtool.INSTRUCTOR, "sh", "-c", f"cd {course} && python -c \"$0\" '{json.dumps(names)}'",
                           code, capture_output=True, text=True, check=False)
    graded = int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else 0
    collected = sum((course / "submitted" / n / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists() for n in names)
    return collected, graded


async def main_async(args) -> dict:
    hub = hubtool.Hub()
    if not hub.up():
        sys.exit("hub_load: the hub is not running (make hub)")
    names = [f"gpuc-load{i:03d}" for i in range(1, args.learners + 1)]
    await asyncio.to_thread(hub.api, "POST", "/users", {"usernames": names}, timeout_s=300)
    for name in names:
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
    for step in (("generate_assignment", ASSIGNMENT, "--force"), ("release_assignment", ASSIGNMENT, "--force")):
        problem = instructor(*step)
        if problem:
            sys.exit(f"hub_load: {problem}")
    cells = lesson_cells(hubtool.SHARE / "course" / LESSON)
    uids = {pwd.getpwnam(n).pw_uid: n for n in names}
    sampler = Sampler(uids)
    sampler.start()
    learners = [Learner(hub, n) for n in names]
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.gather(*(l.run(cells, args.step_timeout_s) for l in learners)),
                               args.deadline_s)
    except asyncio.TimeoutError:
        for l in learners:
            if l.error is None and not l.submitted:
                l.error = f"not finished within the {args.deadline_s:.0f} s deadline"
    wall = time.monotonic() - t0
    sampler.sample()
    sampler.stop_event.set()
    cpu = sampler.cpu_by_user()

    submitted = [l.name for l in learners if l.submitted]
    t1 = time.monotonic()
    grade_errors = [instructor("collect", ASSIGNMENT, "--update")]
    grade_s = None
    if args.grade and submitted:
        grade_errors.append(instructor("autograde", ASSIGNMENT, "--force"))
        grade_s = time.monotonic() - t1
    collected, graded = gradebook(submitted)
    if not args.grade:
        graded = None

    servers = [l.t_server for l in learners if l.t_server is not None]
    lessons = [l.t_lesson for l in learners if l.t_lesson is not None]
    done = [l.t_done for l in learners if l.t_done is not None]
    result = {
        "learners": args.learners,
        "cores": os.cpu_count(),
        "servers_started": len(servers),
        "lessons_completed": len(lessons),
        "progress_completed": sum(1 for l in learners if l.progress_done),
        "submitted": len(submitted),
        "collected": collected,
        "graded": graded,
        "failures": sum(1 for l in learners if l.error),
        "errors": sorted({l.error for l in learners if l.error})[:10],
        "grading_errors": [e for e in grade_errors if e],
        "server_ready_s": {"p50": percentile(servers, 0.5), "p99": percentile(servers, 0.99),
                           "max": max(servers, default=None)},
        "lesson_s": {"p50": percentile(lessons, 0.5), "p99": percentile(lessons, 0.99),
                     "max": max(lessons, default=None)},
        "lesson_done_from_start_s": {"p50": percentile(done, 0.5), "p99": percentile(done, 0.99),
                                     "max": max(done, default=None)},
        "wall_s": wall,
        "collect_and_autograde_s": grade_s,
        "peak_rss_total_mib": sampler.peak_total_rss / 2**20,
        "peak_rss_per_learner_mib": {
            "mean": statistics.fmean(sampler.peak_rss.values()) / 2**20 if sampler.peak_rss else None,
            "max": max(sampler.peak_rss.values(), default=0) / 2**20},
        "cpu_accounting": "utime+stime of each process",
        "cpu_s_per_learner": {"mean": statistics.fmean(cpu.values()) if cpu else None,
                              "max": max(cpu.values(), default=None)},
    }
    return result


def cleanup(hub: hubtool.Hub) -> None:
    import subprocess
    for entry in pwd.getpwall():
        if entry.pw_name.startswith("gpuc-load"):
            try:
                hub.api("DELETE", f"/users/{entry.pw_name}/server", timeout_s=60)
            except Exception:  # noqa: BLE001 (already stopped, or the hub is gone)
                pass
    time.sleep(2)
    hubtool._kill_user_processes({e.pw_uid for e in pwd.getpwall() if e.pw_name.startswith("gpuc-load")})
    for entry in pwd.getpwall():
        if entry.pw_name.startswith("gpuc-load"):
            try:
                hub.api("DELETE", f"/users/{entry.pw_name}", timeout_s=60)
            except Exception:  # noqa: BLE001
                pass
            subprocess.run(["userdel", "--remove", entry.pw_name], stderr=subprocess.DEVNULL, check=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", "-n", type=int, default=10)
    parser.add_argument("--deadline-s", type=float, default=900.0, help="for the whole run")
    parser.add_argument("--step-timeout-s", type=float, default=600.0, help="for one step of one learner")
    parser.add_argument("--no-grade", dest="grade", action="store_false", help="skip collect and autograde")
    parser.add_argument("--cleanup", action="store_true", help="delete the load users afterwards")
    args = parser.parse_args(argv)
    if not 1 <= args.learners <= MAX_LEARNERS:
        parser.error(f"--learners must be 1..{MAX_LEARNERS} (one port each in 18010-18099), got {args.learners}")
    if os.geteuid() != 0:
        parser.error("run as root (the learners are system users)")
    hub = hubtool.Hub()
    cleanup(hub)                          # learners of an earlier run
    try:
        result = asyncio.run(main_async(args))
    finally:
        if args.cleanup:
            cleanup(hub)
    out = hubtool.STATE / f"load-{args.learners}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"hub_load: wrote {out}")
    ok = (result["failures"] == 0 and result["servers_started"] == args.learners
          and (not args.grade or result["graded"] == args.learners))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
