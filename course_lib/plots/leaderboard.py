"""Draw the kernel lab's class leaderboard (``course_lib.kernels.leaderboard``): one panel per
puzzle, one bar per ranked learner, its predicted time; the learners not ranked are listed."""

from __future__ import annotations

from . import _check_result

__all__ = ["plot_leaderboard"]


def plot_leaderboard(board, title: str | None = None):
    """Horizontal bars of predicted time (us), fastest on top, one panel per puzzle; returns the Figure."""
    import matplotlib.pyplot as plt

    board = _check_result("board", board, "kernels.leaderboard.Leaderboard", "leaderboard()")
    n = len(board.puzzles)
    fig, axes = plt.subplots(n, 1, figsize=(7.5, 1.2 + 1.6 * n), squeeze=False)
    for ax, puzzle in zip(axes[:, 0], board.puzzles):
        entries = board.of(puzzle)
        ranked = [e for e in entries if e.ranked]
        names = [f"{e.rank}. {e.student}" for e in ranked]
        ax.barh(range(len(ranked)), [e.t_s * 1e6 for e in ranked], color="C0")
        ax.set_yticks(range(len(ranked)))
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        left_out = [e.student for e in entries if not e.ranked]
        note = f"; not ranked: {', '.join(left_out)}" if left_out else ""
        ax.set_title(f"{puzzle}{note}", fontsize=9, loc="left")
        ax.set_xlabel("predicted time (us)", fontsize=8)
    fig.suptitle(title or f"Kernel-lab leaderboard, {board.accelerator}", fontsize=10)
    fig.tight_layout()
    return fig
