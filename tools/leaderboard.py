"""``make leaderboard``: rank a class's passing kernels by predicted time (course_lib.kernels.leaderboard).

    python tools/leaderboard.py SUBMITTED [--puzzles histogram,warp_sum] [--accelerator "H100 SXM"]
                                [--assignment 09_kernel_lab] [--plot leaderboard.png]

SUBMITTED is nbgrader's submitted/ folder (submitted/<student>/<assignment>/<notebook>). Prints the
table; with --plot, also saves the figure. Exit status 0 even when nobody is ranked.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submitted")
    parser.add_argument("--puzzles", default="histogram,warp_sum,conv1d")
    parser.add_argument("--accelerator", default="H100 SXM")
    parser.add_argument("--assignment", default="09_kernel_lab")
    parser.add_argument("--plot", default=None, help="save the figure here (a .png or .svg path)")
    args = parser.parse_args(argv)
    from course_lib.kernels.leaderboard import leaderboard
    board = leaderboard(args.submitted, args.puzzles, args.accelerator, args.assignment)
    print(board.table())
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        from course_lib.plots.leaderboard import plot_leaderboard
        plot_leaderboard(board).savefig(args.plot, dpi=120)
        print(f"figure: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
