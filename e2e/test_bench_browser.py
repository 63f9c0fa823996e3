"""tools/bench_browser.py runs, and what it measures happened: never a timing assertion.

For one lesson (the model lesson, 04) the benchmark presses a key on its explorer's last slider
and drags it, in the same JupyterLab and Chromium as test_lab.py. Every press must have brought a
new picture, decoded in the page, answered by one update in the kernel, the presses after the
first from frames drawn ahead; the drag must end on a picture of the slider's final value. How long any of it took is printed, not checked: the machine
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
        assert all(row.get("updates_in_kernel") == 1 for row in r["rows"]), \
            [row.get("updates_in_kernel") for row in r["rows"]]
        assert all(row["png_bytes"] > 1000 and row["bytes_in"] >= row["png_bytes"] for row in r["rows"])
        # The first press is drawn when it arrives; the next step of the same slider was drawn
        # ahead while the kernel idled, and is shown from that frame.
        assert not r["rows"][0]["drawn_ahead"] and r["drawn_ahead"] >= 1, [row["drawn_ahead"] for row in r["rows"]]
        drag = r["drag"]
        assert drag["values_sent"] >= 1 and drag["frames_drawn"] >= 1, drag
        assert drag["latest_wins"], f"the last frame drawn is not the slider's final value: {drag}"
