"""tools/bench_browser.py runs, and what it measures happened: never a timing assertion.

For one lesson (the model lesson, 04) the benchmark presses a key on its explorer's last slider
and drags it, in the same JupyterLab and Chromium as test_lab.py. Every press must have brought a
new picture, decoded in the page, the very picture the kernel sent for the slider's new value;
some of them shown by the page from frames it held (drawn ahead in the kernel); the drag must end
on a picture of the slider's final value. How long any of it took is printed, not checked: the machine
is shared.
"""

from __future__ import annotations

import sys

import pytest

from _course import REPO, lesson_paths

sys.path.insert(0, str(REPO / "tools"))


def test_the_browser_benchmark_measures_every_explorer_of_lesson_04(lab, browser):
    import bench_browser

    lessons = [p for p in lesson_paths() if p.stem.startswith("04_")]
    if not lessons:
        pytest.skip("no lesson 04")
    results = bench_browser.bench_lesson(browser, lab, lessons[0], presses=3)
    bench_browser.print_table(results, "not measured")
    assert results, "no explorer found"
    for r in results:
        assert "median_ms" in r, f"{r['explorer']}: {r.get('failed') or r.get('skipped')}"
        assert r["presses"] == 3 and all(row["total_ms"] > 0 for row in r["rows"])
        # Each press shows exactly the picture the kernel sent for the slider's new values: drawn when
        # the value arrived, or a frame drawn ahead that the page held and showed at the key press.
        assert all(row["shown_sha"] and row["shown_sha"] == row.get("kernel_sha") for row in r["rows"]), \
            [(row["page"], row["shown_sha"], row.get("kernel_sha")) for row in r["rows"]]
        # The frames of a hand's first steps were sent when the page showed the explorer, and the
        # frames one step further while the kernel idled: the page answers presses itself.
        assert r["page"] >= 1, [row["page"] for row in r["rows"]]
        drag = r["drag"]
        assert drag["values_sent"] >= 1 and drag["frames_drawn"] >= 1, drag
        assert drag["latest_wins"], f"the last frame drawn is not the slider's final value: {drag}"
        assert drag["shown_is_last_sent"], f"the page does not show the kernel's last picture: {drag}"
