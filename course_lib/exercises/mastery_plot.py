"""The mastery map as a figure: one bar per concept, split into passed, attempted, not attempted."""

from __future__ import annotations

import numpy as np

from course_lib._validate import check_items
from course_lib.exercises.mastery import STATES, ConceptMastery
from course_lib.plots import new_axes

__all__ = ["plot_mastery"]

#: Colours of the three states (passed, attempted, not attempted).
_COLOURS = ("#2e7d32", "#f9a825", "#cfd8dc")


def plot_mastery(rows, ax=None, title: str | None = None):
    """Horizontal stacked bars of ``course_lib.exercises.mastery.concept_mastery`` (or a class's concepts):
    the share of exercises (or students) per state, one bar per concept, lesson by lesson."""
    rows = check_items("rows", rows, ConceptMastery, "course_lib.exercises.mastery.concept_mastery, or a class's "
                       "class_mastery(...).concepts")
    fig, ax = new_axes(ax, figsize=(7.5, max(2.5, 0.32 * len(rows) + 1.2)))
    labels = [f"{r.lesson} {r.concept}" for r in rows]
    counts = np.array([[r.passed, r.attempted, r.not_attempted] for r in rows], dtype=float)
    totals = np.maximum(counts.sum(axis=1, keepdims=True), 1)
    shares = counts / totals
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for column, (state, colour) in enumerate(zip(STATES, _COLOURS)):
        ax.barh(y, shares[:, column], left=left, color=colour, label=state, height=0.7)
        for yi, share, start, count in zip(y, shares[:, column], left, counts[:, column]):
            if share >= 0.12:
                ax.text(start + share / 2, yi, f"{count:.0f}", ha="center", va="center", fontsize=8,
                        color="white" if column == 0 else "black")
        left += shares[:, column]
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of {rows[0].unit}")
    ax.grid(False)
    ax.legend(ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, fontsize=8)
    if title:
        ax.set_title(title, pad=22)
    fig.subplots_adjust(left=0.3, right=0.97, top=1 - 0.9 / fig.get_figheight(),
                        bottom=0.55 / fig.get_figheight())
    return fig
