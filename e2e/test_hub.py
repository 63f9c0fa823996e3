"""A class on a real JupyterHub: one assignment, from release to feedback, with real users.

The hub is the one ``make hub`` runs (``tools/hub.py``: JupyterHub, configurable-http-proxy,
LocalProcessSpawner, every user a system user, nbgrader's exchange). The test resets it (deletes
the ``gpuc-*`` users, their homes and the exchange), starts it, and removes it all again at the end.

1. The instructor (``gpuc-instructor``, in a terminal: nbgrader's command line as that user)
   generates and releases lesson 04's assignment, built from ``solutions/`` by ``build_nbgrader``.
2. Two learners log in in Chromium and follow the class's nbgitpuller link (the course appears in
   ``~/gpu-ml-course``), open nbgrader's Assignments panel and click **Fetch**.
3. Learner 1 answers every exercise; learner 2 leaves 04.1 as the stub and gets 04.2 wrong. Their
   answers are saved through their own servers' contents API (what JupyterLab's save does). Both
   click **Submit**.
   Each also adds a cell with a kernel for lesson 09's warp-shuffle sum (``warp_sum_kernel``):
   learner 1's is right, learner 2's lets the lanes past the end return before the shuffles.
4. The instructor collects, runs the kernel lab's leaderboard over the course's ``submitted/``
   (``tools/leaderboard.py`` from the course checkout, in the hub's environment): learner 1's kernel
   is ranked, learner 2's is listed as failing its check (a warp-sync error) and not ranked, and
   nobody's ``histogram_kernel`` (none was written) is listed as missing. Then the instructor
   autogrades, generates and releases feedback; the gradebook must hold full marks and two points
   fewer (the added cell changes no score).
5. Each learner clicks **Fetch Feedback**, opens their feedback and sees their own score.
6. File permissions, checked as the learners (``runuser``): neither can read the other's home, the
   other's submission in the exchange (even by its exact path) or the instructor's course.

Then an attacker's view (``test_learner1_gets_nothing_that_is_not_theirs``): learner 1, holding
their own password, API token and login cookie, tries to log in as learner 2 and as the instructor,
to reach their servers (REST, contents, files, kernels over the websocket, the OAuth redirect),
to call the hub's admin and user-management endpoints and the proxy's API, and to read learner
2's submission, the gradebook, the instructor's source and the password files from learner 1's own
kernel. Every attempt must be refused on its HTTP status (or the error the kernel gets) and return
no data: no canary planted in the victims' files, no user, contents or kernel model. Each
credential is first shown to work on learner 1's own things, so a refusal is not an accident.
``test_a_token_is_refused_after_logout``: after learner 1 logs out, their cookie, their API
token and their server's token are all refused.

Further tests break one thing each and show that the checks above catch it: a submission
made readable to other learners, every user given the same password (``shared-password``), every
user given access to every server (``wide-scope``, a hub restarted with ``HUB_BROKEN``), and a
grade missing from the gradebook. ``HUB_BROKEN=shared-password make hub-test`` (or ``wide-scope``)
runs the whole test against the broken hub: the attacker's test then fails.

Runs only with ``COURSE_HUB_TEST=1`` (``make hub-test`` sets it; ``make e2e`` collects this file
and skips it). Screenshots: ``build/e2e/hub/``. Needs root (it creates system users), Debian's Chromium,
Playwright and configurable-http-proxy in build/vendor (``make hub-test`` installs it). Skipped with
the reason otherwise, failed instead when ``COURSE_E2E_REQUIRED`` is set.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
from pathlib import Path

import pytest
import requests

from _course import BUILD_DIR, REPO

sys.path.insert(0, str(REPO / "tools"))
import hub as hubtool  # noqa: E402  (tools/hub.py)

SHOTS = BUILD_DIR / "hub"
LESSON = "04_roofline"
INSTRUCTOR = hubtool.INSTRUCTOR
L1, L2 = hubtool.LEARNERS
TIMEOUT_MS = 120_000


def _points(lesson: str) -> float:
    """One point per exercise of the lesson (build_nbgrader's graded cells), counted from its solutions."""
    from course_lib.exercises import find_regions
    text = (REPO / "solutions" / f"{lesson}.py").read_text(encoding="utf-8")
    return float(len({r.exercise_id for r in find_regions(text)}))


# Learner 1 answers everything; learner 2 leaves 04.1 as the stub and gets 04.2 wrong.
EXPECTED = {L1: _points(LESSON), L2: _points(LESSON) - 2}


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the hub test needs root (it creates system users and spawns servers as them)"
    if not hubtool.CHP.exists():
        return f"{hubtool.CHP} missing (make hub-test installs configurable-http-proxy from npm)"
    if not Path(hubtool.BASE_PYTHON).exists():
        return f"{hubtool.BASE_PYTHON} missing (apt-get install python3-venv)"
    if not shutil.which("runuser") or not shutil.which("useradd"):
        return "runuser/useradd not found"
    return None


def _skip_or_fail(reason: str):
    if os.environ.get("COURSE_E2E_REQUIRED"):
        pytest.fail(f"hub test required but cannot run: {reason}", pytrace=False)
    pytest.skip(f"hub test skipped: {reason}; set COURSE_E2E_REQUIRED=1 to make this an error")


@pytest.fixture(scope="module")
def hub(e2e_tools):
    if not os.environ.get("COURSE_HUB_TEST"):
        # make e2e collects this file too; the hub test resets system users, so it runs only
        # when asked: make hub-test (which .ci/run calls) sets COURSE_HUB_TEST=1.
        pytest.skip("hub test runs with make hub-test (COURSE_HUB_TEST=1): it creates system users")
    reason = _unavailable()
    if reason:
        _skip_or_fail(reason)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    hubtool.clean()                      # a fresh class: no users, no exchange
    try:
        yield hubtool.start()
    finally:
        hubtool.clean()


def as_user(user: str, *cmd: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command as a hub user, in the hub's environment (what their terminal would do)."""
    home = f"/home/{user}"
    env = [f"PATH={hubtool.VENV / 'bin'}:/usr/bin:/bin", f"HOME={home}", "LANG=C.UTF-8", f"USER={user}"]
    result = subprocess.run(["runuser", "-u", user, "--", "env", "-i", *env, *cmd], cwd=cwd or home,
                            capture_output=True, text=True, timeout=900)
    if check and result.returncode != 0:
        pytest.fail(f"as {user}: {' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                    f"{result.stderr[-3000:]}", pytrace=False)
    return result


def instructor_nbgrader(*args: str) -> str:
    return as_user(INSTRUCTOR, "nbgrader", *args, cwd=Path(f"/home/{INSTRUCTOR}/course")).stdout


def gradebook_scores() -> dict[str, float | None]:
    """Each learner's score for the lesson, read from the instructor's gradebook as the instructor."""
    code = ("import json\nfrom nbgrader.api import Gradebook, MissingEntry\n"
            "out = {}\n"
            "with Gradebook('sqlite:///gradebook.db') as gb:\n"
            f"    for s in {[L1, L2]!r}:\n"
            "        try:\n"
            f"            out[s] = gb.find_submission({LESSON!r}, s).score\n"
            "        except MissingEntry:\n"
            "            out[s] = None\n"
            "print(json.dumps(out))\n")
    out = as_user(INSTRUCTOR, "python", "-c", code, cwd=Path(f"/home/{INSTRUCTOR}/course")).stdout
    return json.loads(out.strip().splitlines()[-1])


def check_grades(scores: dict[str, float | None]) -> None:
    for learner, expected in EXPECTED.items():
        assert scores.get(learner) is not None, f"no grade for {learner} in the gradebook: {scores}"
        assert scores[learner] == pytest.approx(expected), f"{learner} scored {scores[learner]}, expected {expected}"


def readable_by(user: str, path: Path) -> bool:
    return as_user(user, "cat", str(path), check=False).returncode == 0


def submission_files(learner: str) -> list[Path]:
    inbound = hubtool.EXCHANGE / hubtool.COURSE_ID / "inbound"
    return sorted(inbound.glob(f"{learner}+{LESSON}+*/{LESSON}.ipynb"))


def check_privacy() -> None:
    """Neither learner reads the other's work (home, submission) nor the instructor's course."""
    inbound = hubtool.EXCHANGE / hubtool.COURSE_ID / "inbound"
    for me, other in ((L1, L2), (L2, L1)):
        theirs = [Path(f"/home/{other}/{LESSON}/{LESSON}.ipynb"), *submission_files(other),
                  Path(f"/home/{INSTRUCTOR}/course/gradebook.db"),
                  Path(f"/home/{INSTRUCTOR}/course/source/{LESSON}/{LESSON}.ipynb")]
        assert submission_files(other), f"no submission of {other} in {inbound}"
        for path in theirs:
            assert path.exists(), f"{path} should exist"
            assert not readable_by(me, path), f"{me} can read {path}"
        assert as_user(me, "ls", str(inbound), check=False).returncode != 0, f"{me} can list {inbound}"
        # and their own work stays theirs to read
        assert readable_by(me, Path(f"/home/{me}/{LESSON}/{LESSON}.ipynb"))
    for path in submission_files(L1) + submission_files(L2):
        assert readable_by(INSTRUCTOR, path), f"the instructor cannot read {path}"


# ------------------------------------------------------------------------------------ the browser

def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def login(browser, hub, user: str):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])     # each user's own password
    page.click("#login_submit")
    page.wait_for_url(re.compile(r"/(hub/spawn|hub/home|user/)"), timeout=TIMEOUT_MS)
    return context, page


def open_course_with_nbgitpuller(page, hub, user: str) -> None:
    page.goto(hubtool.nbgitpuller_link(hub.url, branch=hubtool._course_branch()), wait_until="domcontentloaded")
    page.wait_for_url(re.compile(r"/user/[^/]+/lab"), timeout=TIMEOUT_MS)
    page.wait_for_selector("#jp-main-dock-panel", timeout=TIMEOUT_MS)
    assert as_user(user, "test", "-f", f"/home/{user}/gpu-ml-course/notebooks/{LESSON}.py",
                   check=False).returncode == 0, "nbgitpuller did not put the course in ~/gpu-ml-course"
    page.wait_for_selector(".jp-Notebook", timeout=TIMEOUT_MS)   # the lesson the link opens
    dismiss_news(page)


def dismiss_news(page) -> None:
    """JupyterLab asks once whether to fetch Jupyter news; answer No so the toast covers nothing."""
    try:
        page.locator(".jp-toast-button", has_text="No").first.click(timeout=5000)
    except Exception:  # noqa: BLE001 (no toast: nothing to dismiss)
        pass


def open_assignments(page):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^\s*Nbgrader\s*$")).first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").first.click()
    page.wait_for_selector("#released_assignments_list", timeout=TIMEOUT_MS)


def wait_row(page, list_id: str, button: str | None = None, timeout_ms: int = TIMEOUT_MS):
    """A row of ``list_id`` naming the lesson (and with ``button``, if given)."""
    row = page.locator(f"#{list_id} .list_item", has_text=LESSON)
    if button:
        row = row.filter(has=page.locator("button", has_text=button))
    row.first.wait_for(timeout=timeout_ms)
    return row.first


# A kernel for lesson 09's puzzle 09.19 (warp_sum) that each learner adds to the notebook they
# submit, so the class leaderboard has something to rank on the hub: learner 1's is right; learner
# 2's returns the lanes past the end before the shuffles, so a lane named in the mask never arrives.
WARP_SUM = """from course_lib.kernels import cuda
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_sum_kernel(a, out):
    i = cuda.grid(1)
{load}
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
"""
WARP_SUM_RIGHT = WARP_SUM.format(load="    v = a[i] if i < a.size else 0.0")
WARP_SUM_WRONG = WARP_SUM.format(load="    if i >= a.size:\n        return\n    v = a[i]")


def answer(hub, learner: str, source_nb: dict, wrong: bool) -> None:
    """Fill the fetched notebook in through the learner's own server (as JupyterLab's save does)."""
    token = hub.api("POST", f"/users/{learner}/tokens", {"note": "e2e answers", "expires_in": 600})["token"]
    path = f"{LESSON}/{LESSON}.ipynb"
    model = hub.user_api(learner, token, "GET", f"/contents/{path}?content=1")
    solutions = {c["metadata"]["nbgrader"]["grade_id"]: c for c in source_nb["cells"]
                 if c["metadata"].get("nbgrader", {}).get("solution")}
    nb = model["content"]
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id not in solutions:
            continue
        code = "".join(solutions[grade_id]["source"])
        code = "\n".join(line for line in code.splitlines() if "### BEGIN SOLUTION" not in line
                         and "### END SOLUTION" not in line)
        if wrong and grade_id == "ex-04-1":
            continue                                   # left as the stub
        if wrong and grade_id == "ex-04-2":
            code += "\nt_gemv_us = t_gemv_us * 3   # a slip: three times the bound"
        cell["source"] = code
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": WARP_SUM_WRONG if wrong else WARP_SUM_RIGHT})
    hub.user_api(learner, token, "PUT", f"/contents/{path}", {"type": "notebook", "format": "json", "content": nb})


def check_leaderboard() -> None:
    """``tools/leaderboard.py`` over the course's submitted folder, as the instructor on the hub:
    learner 1's warp_sum kernel ranked, learner 2's refused with its reason, histogram missing."""
    tool = hubtool.SHARE / "course" / "tools" / "leaderboard.py"
    out = as_user(INSTRUCTOR, "python", str(tool), "submitted", "--puzzles", "warp_sum,histogram",
                  "--assignment", LESSON, cwd=Path(f"/home/{INSTRUCTOR}/course")).stdout
    (SHOTS / "leaderboard.txt").write_text(out)
    ranked = re.findall(r"^\s+(\d+)\. (\S+)\s+([\d.]+) us", out, re.M)
    refused = dict(re.findall(r"^\s+-\s+(\S+)\s+not ranked: (.*)$", out, re.M))
    warp_sum = out.split("warp_sum (")[1].split("histogram (")[0]
    assert [(r, s) for r, s, _ in ranked] == [("1", L1)], f"expected only {L1} ranked:\n{out}"
    assert float(ranked[0][2]) > 0, out
    assert re.search(rf"^\s+-\s+{L2}\s+not ranked: fails its check \(warp sync\)", warp_sum, re.M), out
    histogram = out.split("histogram (")[1]
    for learner in (L1, L2):
        assert re.search(rf"^\s+-\s+{learner}\s+not ranked: no function histogram_kernel in the notebook",
                         histogram, re.M), out
    assert set(refused) == {L1, L2}, out          # both listed for histogram; only L2 for warp_sum


def test_a_whole_assignment_cycle(hub, browser):
    # 1. The instructor releases lesson 04, built from the solutions.
    instructor_nbgrader("generate_assignment", LESSON, "--force")
    instructor_nbgrader("release_assignment", LESSON, "--force")
    source_nb = json.loads(Path(f"/home/{INSTRUCTOR}/course/source/{LESSON}/{LESSON}.ipynb").read_text())

    contexts = {}
    try:
        ictx, ipage = login(browser, hub, INSTRUCTOR)
        contexts[INSTRUCTOR] = ictx
        ipage.goto(f"{hub.url}/user/{INSTRUCTOR}/formgrader", wait_until="domcontentloaded")
        ipage.wait_for_selector(f"text={LESSON}", timeout=TIMEOUT_MS)
        shot(ipage, "01-instructor-formgrader-released")

        # 2-3. Each learner: log in, get the course by the nbgitpuller link, fetch, answer, submit.
        pages = {}
        for learner in (L1, L2):
            ctx, page = login(browser, hub, learner)
            contexts[learner] = ctx
            pages[learner] = page
            open_course_with_nbgitpuller(page, hub, learner)
            shot(page, f"02-{learner}-course-from-nbgitpuller")
            open_assignments(page)
            wait_row(page, "released_assignments_list", "Fetch").locator("button", has_text="Fetch").click()
            row = wait_row(page, "fetched_assignments_list", "Submit")
            shot(page, f"03-{learner}-fetched")
            answer(hub, learner, source_nb, wrong=(learner == L2))
            row.locator("button", has_text="Submit").click()
            wait_row(page, "submitted_assignments_list")
            shot(page, f"04-{learner}-submitted")
            assert submission_files(learner), f"{learner}'s submission did not reach the exchange"

        # 4. The instructor collects, grades and returns feedback.
        instructor_nbgrader("collect", LESSON)
        check_leaderboard()
        instructor_nbgrader("autograde", LESSON, "--force")
        instructor_nbgrader("generate_feedback", LESSON, "--force")
        instructor_nbgrader("release_feedback", LESSON)
        scores = gradebook_scores()
        check_grades(scores)
        ipage.goto(f"{hub.url}/user/{INSTRUCTOR}/formgrader/gradebook/{LESSON}/{LESSON}",
                   wait_until="domcontentloaded")
        ipage.wait_for_selector(f"text={L2}", state="attached", timeout=TIMEOUT_MS)  # names are hidden until hovered
        ipage.wait_for_timeout(1000)
        shot(ipage, "05-instructor-gradebook")

        # 5. Each learner fetches their feedback and sees their own score.
        for learner, page in pages.items():
            page.reload(wait_until="domcontentloaded")
            page.wait_for_selector("#jp-main-dock-panel", timeout=TIMEOUT_MS)
            open_assignments(page)
            row = wait_row(page, "submitted_assignments_list", "Fetch Feedback")
            row.locator("button", has_text="Fetch Feedback").click()
            view = page.locator("#submitted_assignments_list a", has_text="view feedback").first
            view.wait_for(timeout=TIMEOUT_MS)
            shot(page, f"06-{learner}-feedback-fetched")
            feedback = sorted(Path(f"/home/{learner}/{LESSON}/feedback").glob(f"*/{LESSON}.html"))
            assert feedback, f"no feedback in /home/{learner}/{LESSON}/feedback"
            token = hub.api("POST", f"/users/{learner}/tokens", {"note": "e2e feedback", "expires_in": 600})["token"]
            rel = feedback[-1].relative_to(f"/home/{learner}")
            page.goto(f"{hub.url}/user/{learner}/files/{rel}?token={token}", wait_until="domcontentloaded")
            text = page.inner_text("body")
            shot(page, f"07-{learner}-feedback")
            match = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", text)
            assert match, f"{learner}'s feedback shows no score:\n{text[:500]}"
            assert float(match.group(1)) == pytest.approx(EXPECTED[learner]), text[:300]
            other = L2 if learner == L1 else L1
            assert other not in text
    except BaseException:
        for user, ctx in contexts.items():
            for i, pg in enumerate(ctx.pages):
                try:
                    pg.screenshot(path=str(SHOTS / f"failure-{user}-{i}.png"))
                except Exception:  # noqa: BLE001 (best effort: keep the original error)
                    pass
        print((hubtool.STATE / "jupyterhub.log").read_text(errors="replace")[-4000:])
        raise
    finally:
        for ctx in contexts.values():
            ctx.close()

    # 6. Nobody reads what is not theirs.
    check_privacy()


# ------------------------------------------------------------------------ an attacker's view

# What a response may never carry when it is refused: data of another user. A canary is planted in
# learner 2's and the instructor's homes; JSON models have keys no error page has.
DATA_MARKERS = ('"kind": "user"', '"kind":"user"', '"last_activity"', '"type": "notebook"', '"type":"notebook"',
                '"type": "directory"', '"type":"directory"', '"execution_state"', '"token":')


class Leak(list):
    """What the attacker got: one line per refusal that did not happen."""

    def fail_if_any(self) -> None:
        assert not self, "access that should have been refused:\n  " + "\n  ".join(self)


def _xsrf(session: requests.Session, url_path: str = "/hub/") -> str | None:
    """The _xsrf cookie a browser would send to ``url_path`` (the hub's and each server's have their own)."""
    best = None
    for cookie in session.cookies:
        if cookie.name == "_xsrf" and url_path.startswith(cookie.path) and (best is None or len(cookie.path) > len(best.path)):
            best = cookie
    return best.value if best else None


def http_login(hub, user: str, password: str) -> tuple[requests.Session, requests.Response]:
    """The login form, as a browser posts it (with the form's _xsrf)."""
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=60)
    resp = session.post(f"{hub.url}/hub/login", allow_redirects=False, timeout=60,
                        data={"username": user, "password": password, "_xsrf": _xsrf(session) or ""})
    return session, resp


def whoami(hub, session: requests.Session | None = None, token: str | None = None) -> tuple[int, str | None]:
    headers = {"Authorization": f"token {token}"} if token else {}
    if session is not None:
        headers["X-XSRFToken"] = _xsrf(session) or ""
    resp = (session or requests).get(f"{hub.url}/hub/api/user", headers=headers, timeout=60)
    try:
        name = resp.json().get("name") if resp.status_code == 200 else None
    except ValueError:
        name = None
    return resp.status_code, name


def own_token(hub, session: requests.Session, user: str, note: str) -> str:
    """A token the learner makes for themselves with their login cookie (the hub's token page does this)."""
    resp = session.post(f"{hub.url}/hub/api/users/{user}/tokens", json={"note": note, "expires_in": 3600},
                        headers={"X-XSRFToken": _xsrf(session) or ""}, timeout=60)
    assert resp.status_code in (200, 201), f"{user} could not make their own token: {resp.status_code} {resp.text[:300]}"
    return resp.json()["token"]


def server_cookie(hub, session: requests.Session, user: str) -> None:
    """Open the learner's own JupyterLab once: the OAuth round trip sets the server's cookie."""
    resp = session.get(f"{hub.url}/user/{user}/lab", timeout=120)
    assert resp.status_code == 200 and any(c.name == f"jupyterhub-user-{user}" for c in session.cookies), \
        f"{user} could not open their own server: {resp.status_code} {resp.url}"


def ensure_server(hub, user: str, timeout_s: float = 180) -> None:
    """The user's server running (started with the admin token when it is not)."""
    model = hub.api("GET", f"/users/{user}")
    if not model.get("server"):
        try:
            hub.api("POST", f"/users/{user}/server")
        except urllib.error.HTTPError as err:
            if err.code not in (201, 202, 400):
                raise
    deadline = time.monotonic() + timeout_s
    while not hub.api("GET", f"/users/{user}").get("server"):
        assert time.monotonic() < deadline, f"{user}'s server did not start in {timeout_s} s"
        time.sleep(1)


def admin_token_for(hub, user: str, note: str) -> str:
    return hub.api("POST", f"/users/{user}/tokens", {"note": note, "expires_in": 1800})["token"]


async def _kernel_run(url: str, headers: dict, code: str, timeout_s: float = 120) -> str:
    """Run ``code`` in a kernel over its websocket (what JupyterLab does); its stdout."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect
    ws = await websocket_connect(HTTPRequest(url, headers=headers, connect_timeout=30))
    msg_id = secrets.token_hex(8)
    ws.write_message(json.dumps({
        "header": {"msg_id": msg_id, "username": "", "session": secrets.token_hex(8), "msg_type": "execute_request",
                   "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    out = []
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            raw = await asyncio.wait_for(ws.read_message(), max(1.0, deadline - time.monotonic()))
            if raw is None:
                raise ConnectionError("the kernel's websocket closed")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                raise RuntimeError("\n".join(msg["content"]["traceback"])[-2000:])
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out)
    finally:
        ws.close()


def run_async(coro):
    """Run a coroutine to its end in a thread of its own: Playwright's sync API holds this thread's loop."""
    box = {}

    def target():
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as err:  # noqa: BLE001 (handed back to the caller)
            box["error"] = err
    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def ws_refused(url: str, headers: dict) -> tuple[int | None, str]:
    """Try to open a websocket: the HTTP status it was refused with (None: it opened) and what came."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    async def attempt():
        try:
            ws = await websocket_connect(HTTPRequest(url, headers=headers, connect_timeout=30))
        except HTTPClientError as err:
            body = err.response.body.decode(errors="replace") if err.response is not None and err.response.body else ""
            return err.code, body
        try:
            got = await asyncio.wait_for(ws.read_message(), 3)
        except asyncio.TimeoutError:
            got = ""
        ws.close()
        return None, got or ""
    return run_async(attempt())


def new_kernel(hub, user: str, token: str) -> str:
    return hub.user_api(user, token, "POST", "/kernels", {"name": "python3"})["id"]


def outcome(resp: requests.Response) -> int | str:
    """The status a refusal is judged on: "login page" when redirects ended on the hub's login form
    (a request whose credential is no login: jupyterhub-singleuser sends it there through OAuth),
    "302 to ..." when a redirect was not followed, else the HTTP status."""
    if resp.history and urllib.parse.urlsplit(resp.url).path == "/hub/login":
        return "login page"
    if resp.status_code in (301, 302, 303, 307):
        target = urllib.parse.urlsplit(resp.headers.get("Location", "")).path
        return "login page" if target == "/hub/login" else f"302 to {target}"
    return resp.status_code


class Attacker:
    """Learner 1 with every credential they hold, and what they know of the victims."""

    def __init__(self, hub):
        self.hub = hub
        self.me = L1
        self.password = hub.passwords[L1]
        for user in (L1, L2, INSTRUCTOR):
            ensure_server(hub, user)
        self.session, resp = http_login(hub, L1, self.password)
        assert resp.status_code == 302, f"{L1} cannot log in with their own password: {resp.status_code}"
        assert whoami(hub, self.session) == (200, L1)
        server_cookie(hub, self.session, L1)
        self.token = own_token(hub, self.session, L1, "attacker's own token")
        assert whoami(hub, token=self.token) == (200, L1)
        self.cookie = next(c.value for c in self.session.cookies if c.name == "jupyterhub-hub-login")
        # The victims' things, made with their own tokens (as they would make them).
        self.canary = {}
        self.kernel = {}
        for victim in (L2, INSTRUCTOR):
            vtoken = admin_token_for(hub, victim, "victim's own")
            canary = f"canary-{victim}-{secrets.token_hex(8)}"
            hub.user_api(victim, vtoken, "PUT", "/contents/private-note.txt",
                         {"type": "file", "format": "text", "content": canary})
            self.canary[victim] = canary
            self.kernel[victim] = new_kernel(hub, victim, vtoken)
        self.markers = [*self.canary.values(), *self.kernel.values(), *hub.passwords.values(), *DATA_MARKERS]

    # -- the one rule: refused with an expected status, and nothing that is not the attacker's
    def refused(self, leak: Leak, what: str, resp, allowed=(403,)) -> None:
        """Refused: the outcome (HTTP status; "login page" when the redirects end on the hub's login
        form) is one of ``allowed``, and the body carries none of the victims' data."""
        status, body = (resp if isinstance(resp, tuple) else (outcome(resp), resp.text))
        found = [m for m in self.markers if m and m in body]
        if status not in allowed or found:
            leak.append(f"{what}: HTTP {status} (expected {' or '.join(map(str, allowed))})"
                        + (f", data returned: {', '.join(f[:24] for f in found)}" if found else ""))

    def credentials(self) -> dict[str, dict]:
        """How each credential rides on a request, and a page of learner 1's own it opens (the control).
        (jupyterhub-singleuser takes ?token= only when a browser navigates to a page, not on its API.)"""
        return {"login cookie": {"session": self.session, "control": "/api/contents"},
                "API token": {"headers": {"Authorization": f"token {self.token}"}, "control": "/api/contents"},
                "API token in ?token=": {"params": {"token": self.token}, "control": "/lab"}}

    def request(self, cred: dict, method: str, url: str, **kw) -> requests.Response:
        client = cred.get("session") or requests
        headers = dict(cred.get("headers", {}))
        if "session" in cred:
            headers["X-XSRFToken"] = _xsrf(cred["session"], urllib.parse.urlsplit(url).path) or ""
        return client.request(method, url, headers=headers, params=cred.get("params"), timeout=120, **kw)


def check_logins_refused(hub, attacker: Attacker) -> None:
    """Learner 1 cannot log in as learner 2 or the instructor with anything they hold."""
    leak = Leak()
    held = {"their password": attacker.password, "their API token": attacker.token,
            "their login cookie": attacker.cookie}
    for victim in (L2, INSTRUCTOR):
        for name in (victim, victim.upper()):
            for what, secret in held.items():
                session, resp = http_login(hub, name, secret)
                _, who = whoami(hub, session)
                if resp.status_code != 403 or who is not None or "jupyterhub-hub-login" in resp.headers.get("Set-Cookie", ""):
                    leak.append(f"{L1} logged in as {name!r} with {what}: login HTTP {resp.status_code}, "
                                f"then /hub/api/user says {who!r}")
    leak.fail_if_any()


def check_servers_refused(hub, attacker: Attacker) -> None:
    """Learner 1's cookie and token open nothing on learner 2's or the instructor's server."""
    leak = Leak()
    url = hub.url
    for what, cred in attacker.credentials().items():
        # First the control: the credential works on learner 1's own server.
        own = attacker.request(cred, "GET", f"{url}/user/{L1}{cred['control']}")
        assert own.status_code == 200, f"control: {L1}'s {what} does not open their own server ({own.status_code})"
        for victim in (L2, INSTRUCTOR):
            base = f"{url}/user/{victim}"
            probes = [("GET", "/api/contents", {}), ("GET", "/api/contents/private-note.txt?content=1", {}),
                      ("GET", "/files/private-note.txt", {}), ("GET", "/api/kernels", {}),
                      ("GET", "/api/sessions", {}), ("GET", "/api/terminals", {}),
                      ("POST", "/api/kernels", {"json": {"name": "python3"}}),
                      ("PUT", "/api/contents/planted.txt",
                       {"json": {"type": "file", "format": "text", "content": "from learner 1"}}),
                      ("GET", "/lab", {})]                   # the browser's way: through the hub's OAuth
            if victim == INSTRUCTOR:
                probes += [("GET", "/formgrader", {}), ("GET", "/formgrader/api/assignments", {}),
                           ("GET", "/api/contents/course/gradebook.db?content=1", {}),
                           ("GET", f"/api/contents/{hubtool.INSTRUCTOR_PASSWORDS}?content=1", {})]
            for method, path, kw in probes:
                resp = attacker.request(cred, method, base + path, **kw)
                page = not path.startswith("/api/")
                attacker.refused(leak, f"{L1} reached {victim}'s server: {method} {path} with their {what}",
                                 resp, allowed=(403, "login page") if page else (403,))
        # A kernel of theirs, over the websocket.
        ws_headers = dict(cred.get("headers", {}))
        if "session" in cred:
            ws_headers["Cookie"] = "; ".join(f"{c.name}={c.value}" for c in cred["session"].cookies)
        query = f"?token={attacker.token}" if "params" in cred else ""
        for victim in (L2, INSTRUCTOR):
            ws_url = f"ws://127.0.0.1:{hubtool.PORT}/user/{victim}/api/kernels/{attacker.kernel[victim]}/channels{query}"
            attacker.refused(leak, f"{L1} reached {victim}'s server: the websocket of their kernel with their {what}",
                             ws_refused(ws_url, ws_headers))
    # Nothing was planted, whatever the statuses said.
    for victim in (L2, INSTRUCTOR):
        if Path(f"/home/{victim}/planted.txt").exists():
            leak.append(f"{L1} reached {victim}'s server: wrote planted.txt into their home")
    leak.fail_if_any()


def check_admin_refused(hub, attacker: Attacker) -> None:
    """Learner 1 cannot list, make, change, delete or impersonate users, nor steer the hub or proxy."""
    leak = Leak()
    api = f"{hub.url}/hub/api"
    evil = "gpuc-evil"
    probes = [("GET", "/users", None), ("GET", f"/users/{L2}", None), ("GET", f"/users/{INSTRUCTOR}", None),
              ("POST", "/users", {"usernames": [evil]}), ("POST", f"/users/{evil}", {}),
              ("PATCH", f"/users/{L1}", {"admin": True}), ("PATCH", f"/users/{L2}", {"name": "gpuc-renamed"}),
              ("DELETE", f"/users/{L2}", None),
              ("POST", f"/users/{L2}/server", {}), ("DELETE", f"/users/{L2}/server", None),
              ("GET", f"/users/{L2}/tokens", None), ("POST", f"/users/{L2}/tokens", {"note": "stolen"}),
              # a token with more than learner 1 holds: refused as a bad request (400)
              ("POST", f"/users/{L1}/tokens", {"note": "wider", "scopes": ["admin:users"]}),
              ("POST", f"/users/{L1}/tokens", {"note": "wider", "scopes": ["access:servers"]}),
              ("GET", "/groups", None), ("POST", "/groups/evil", {}), ("GET", "/proxy", None),
              ("POST", "/proxy", None), ("GET", "/services", None), ("POST", "/shutdown", {})]
    for what, cred in attacker.credentials().items():
        for method, path, body in probes:
            resp = attacker.request(cred, method, api + path, **({"json": body} if body is not None else {}))
            allowed = (400, 403) if path == f"/users/{L1}/tokens" else (403, 404)
            attacker.refused(leak, f"{L1} called the admin API: {method} /hub/api{path} with their {what}",
                             resp, allowed=allowed)
        # The admin page: refused (403), or a token that is no login sent to the login page.
        resp = attacker.request(cred, "GET", f"{hub.url}/hub/admin", allow_redirects=False)
        attacker.refused(leak, f"{L1} opened the admin page with their {what}", resp, allowed=(403, "login page"))
    for what, headers in (("no token", {}), ("their API token", {"Authorization": f"token {attacker.token}"})):
        resp = requests.get(f"http://127.0.0.1:{hubtool.PORT + 1}/api/routes", headers=headers, timeout=30)
        attacker.refused(leak, f"{L1} read the proxy's routes with {what}", resp)
    # And nothing changed behind the statuses.
    users = {u["name"]: u for u in hub.api("GET", "/users")}
    if users[L1]["admin"] or any(u["admin"] for n, u in users.items() if n != INSTRUCTOR):
        leak.append(f"an admin other than {INSTRUCTOR}: {[n for n, u in users.items() if u['admin']]}")
    for name in (evil, "gpuc-renamed"):
        if name in users:
            leak.append(f"{L1} created the user {name}")
    if L2 not in users or not users[L2].get("server"):
        leak.append(f"{L1} deleted {L2} or stopped their server")
    leak.fail_if_any()


def check_files_refused(hub, attacker: Attacker) -> None:
    """From their own kernel (their own server, their own token) learner 1 reads nothing of others'."""
    leak = Leak()
    victims_files = [f"/home/{L2}/{LESSON}/{LESSON}.ipynb", f"/home/{L2}/private-note.txt",
                     f"/home/{INSTRUCTOR}/private-note.txt",
                     *map(str, submission_files(L2)),
                     f"/home/{INSTRUCTOR}/course/gradebook.db",
                     f"/home/{INSTRUCTOR}/course/source/{LESSON}/{LESSON}.ipynb",
                     f"/home/{INSTRUCTOR}/{hubtool.INSTRUCTOR_PASSWORDS}", str(hubtool.PASSWORDS),
                     str(hubtool.STATE / "admin-token"), str(hubtool.STATE / "jupyterhub.sqlite")]
    victims_dirs = [str(hubtool.EXCHANGE / hubtool.COURSE_ID / "inbound"), f"/home/{L2}", f"/home/{INSTRUCTOR}"]
    assert submission_files(L2), f"no submission of {L2} to try to read"
    code = ("import json, os, subprocess\nout = {}\n"
            f"for p in {victims_files!r} + [{f'/home/{L1}/{LESSON}/{LESSON}.ipynb'!r}]:\n"
            "    try:\n        data = open(p, 'rb').read()\n"
            "        out[p] = f'READ {len(data)} bytes: ' + data[:400].decode(errors='replace')\n"
            "    except OSError as e:\n        out[p] = type(e).__name__\n"
            f"for d in {victims_dirs!r}:\n"
            "    try:\n        out[d] = ' '.join(os.listdir(d))\n"
            "    except OSError as e:\n        out[d] = type(e).__name__\n"
            "r = subprocess.run(['nbgrader', 'list', '--inbound'], capture_output=True, text=True)\n"
            "out['nbgrader list --inbound'] = [r.returncode, r.stdout + r.stderr]\n"
            "print(json.dumps(out))\n")
    kernel = new_kernel(hub, L1, attacker.token)
    try:
        stdout = run_async(_kernel_run(f"ws://127.0.0.1:{hubtool.PORT}/user/{L1}/api/kernels/{kernel}/channels",
                                         {"Authorization": f"token {attacker.token}"}, code))
    finally:
        hub.user_api(L1, attacker.token, "DELETE", f"/kernels/{kernel}")
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out[f"/home/{L1}/{LESSON}/{LESSON}.ipynb"].startswith("READ"), \
        f"control: {L1} cannot read their own notebook from their kernel"
    for path in victims_files + victims_dirs:
        got = out[path]
        if got != "PermissionError" or any(m in got for m in attacker.markers):
            leak.append(f"{L1}'s kernel read {path}: {got[:60]!r} (expected PermissionError)")
    code_, text = out["nbgrader list --inbound"]
    if L2 in text:                     # a listing names the submission's author
        leak.append(f"{L1} listed the exchange's submissions with nbgrader (exit {code_}): {text[-200:]!r}")
    leak.fail_if_any()


def check_logout_revokes(hub) -> None:
    """After learner 1 logs out, their login cookie, own API token and their server's token are refused."""
    session, resp = http_login(hub, L1, hub.passwords[L1])
    assert resp.status_code == 302, f"{L1} cannot log in: {resp.status_code}"
    ensure_server(hub, L1)
    server_cookie(hub, session, L1)
    token = own_token(hub, session, L1, "made before logout")
    kernel = new_kernel(hub, L1, token)
    server_token = run_async(_kernel_run(
        f"ws://127.0.0.1:{hubtool.PORT}/user/{L1}/api/kernels/{kernel}/channels",
        {"Authorization": f"token {token}"},
        "import os; print(os.environ['JUPYTERHUB_API_TOKEN'])")).strip()
    # Controls: each works before logout.
    assert whoami(hub, session) == (200, L1)
    assert whoami(hub, token=token) == (200, L1)
    assert whoami(hub, token=server_token)[0] == 200
    cookie_header = "; ".join(f"{c.name}={c.value}" for c in session.cookies)
    resp = session.get(f"{hub.url}/hub/logout", timeout=120)
    assert resp.status_code == 200, f"logout: {resp.status_code}"
    leak = Leak()
    markers = [*DATA_MARKERS]
    replay = {"the login cookie (replayed)": {"Cookie": cookie_header},
              "their API token": {"Authorization": f"token {token}"},
              "their server's token": {"Authorization": f"token {server_token}"}}
    for what, headers in replay.items():
        for path in ("/hub/api/user", f"/hub/api/users/{L1}", f"/user/{L1}/api/contents", f"/user/{L1}/lab"):
            r = requests.get(hub.url + path, headers=headers, timeout=60)
            found = [m for m in markers if m in r.text]
            # The hub's API refuses (403); the (stopped) server's URLs, now the hub's, send a request
            # it cannot authenticate to the login page.
            allowed = (403,) if path.startswith("/hub/api") else (403, "login page")
            if outcome(r) not in allowed or found:
                leak.append(f"after logout, {what} still opens {path}: HTTP {outcome(r)} at {r.url}"
                            + (f", data: {found}" if found else ""))
    if hub.api("GET", f"/users/{L1}").get("server"):
        leak.append(f"{L1}'s server still runs after logout")
    leak.fail_if_any()


def test_learner1_gets_nothing_that_is_not_theirs(hub):
    if not submission_files(L2):
        pytest.skip("the assignment cycle did not run (nothing of learner 2's to try to read)")
    users = hub.api("GET", "/users")
    assert [u["name"] for u in users if u["admin"]] == [INSTRUCTOR], "the instructor must be the only admin"
    attacker = Attacker(hub)
    failures = []
    for check in (check_logins_refused, check_servers_refused, check_admin_refused, check_files_refused):
        try:
            check(hub, attacker)
        except AssertionError as err:            # run every check, then report all that failed
            failures.append(f"{check.__name__}: {err}")
    assert not failures, "\n".join(failures)


def test_a_token_is_refused_after_logout(hub):
    check_logout_revokes(hub)


# ------------------------------------------------------------- the checks catch a broken step

def test_privacy_check_fails_when_a_submission_is_readable(hub):
    """Break the exchange as nbgrader's own submit leaves it (0644): the check must catch it."""
    files = submission_files(L1)
    if not files:
        pytest.skip("the assignment cycle did not run (no submission to break)")
    paths = [*files, *{p.parent for p in files}]
    before = {p: p.stat().st_mode for p in paths}
    try:
        for path in files:
            path.chmod(0o644)
            path.parent.chmod(0o777)
        with pytest.raises(AssertionError, match="can read"):
            check_privacy()
    finally:
        for path, mode in before.items():
            path.chmod(mode)
    check_privacy()


def test_grade_check_fails_when_a_grade_is_missing(hub):
    """Remove learner 2's graded submission from the gradebook: the grade check must catch it."""
    scores = gradebook_scores()
    if scores.get(L2) is None:
        pytest.skip("the assignment cycle did not run (no grade to lose)")
    instructor_nbgrader("db", "student", "remove", L2, "--force")
    with pytest.raises(AssertionError, match=f"no grade for {L2}"):
        check_grades(gradebook_scores())


def test_denials_catch_a_shared_password(hub):
    """Give every user learner 1's password (a class password): the login check must catch it."""
    attacker = Attacker(hub)
    hubtool.set_passwords({user: hub.passwords[L1] for user in (INSTRUCTOR, *hubtool.LEARNERS)})
    try:
        with pytest.raises(AssertionError, match=f"{L1} logged in as '{L2}' with their password"):
            check_logins_refused(hub, attacker)
    finally:
        hubtool.set_passwords(hub.passwords)
    check_logins_refused(hub, attacker)


def test_denials_catch_a_scope_too_wide(hub):
    """Restart the hub with every user allowed into every server: the server check must catch it."""
    hubtool.stop()
    try:
        broken = hubtool.start(broken="wide-scope")
        attacker = Attacker(broken)
        with pytest.raises(AssertionError, match=f"{L1} reached {L2}'s server: GET /api/contents with their API token"):
            check_servers_refused(broken, attacker)
    finally:
        hubtool.stop()
        hubtool.start(broken="")
