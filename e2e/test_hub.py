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
4. The instructor collects, autogrades, generates and releases feedback; the gradebook must hold
   full marks and two points fewer.
5. Each learner clicks **Fetch Feedback**, opens their feedback and sees their own score.
6. File permissions, checked as the learners (``runuser``): neither can read the other's home, the
   other's submission in the exchange (even by its exact path) or the instructor's course.

Two further tests break one thing each and show that the checks above catch it: a submission
made readable to other learners, and a grade missing from the gradebook.

Runs only with ``COURSE_HUB_TEST=1`` (``make hub-test`` sets it; ``make e2e`` collects this file
and skips it). Screenshots: ``build/e2e/hub/``. Needs root (it creates system users), Debian's Chromium,
Playwright and configurable-http-proxy in build/vendor (``make hub-test`` installs it). Skipped with
the reason otherwise, failed instead when ``COURSE_E2E_REQUIRED`` is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    page.fill("#password_input", hub.password)
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
    hub.user_api(learner, token, "PUT", f"/contents/{path}", {"type": "notebook", "format": "json", "content": nb})


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
