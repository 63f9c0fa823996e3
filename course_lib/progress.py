"""A small progress bar for long measurements: an ipywidgets bar in a notebook, text elsewhere.

    with Progress(total=len(sizes), description="bandwidth") as bar:
        for size in sizes:
            ...
            bar.update()
"""

from __future__ import annotations

import sys

from ._validate import check_bool, check_int

__all__ = ["Progress"]


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Progress:
    """Progress over ``total`` steps; shows a widget bar in Jupyter, a text line otherwise."""

    def __init__(self, total: int, description: str = "", enabled: bool = True):
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise ValueError(f"total must be a non-negative integer, got {total!r}")
        self.total = total
        self.count = 0
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {type(description).__name__}")
        self.description = description
        self.enabled = check_bool("enabled", enabled)
        self._bar = None

    def __enter__(self):
        if self.enabled and _in_kernel():
            import ipywidgets as widgets
            from IPython.display import display
            self._bar = widgets.IntProgress(value=0, min=0, max=max(self.total, 1),
                                            description=self.description[:20],
                                            style={"description_width": "initial"})
            display(self._bar)
        return self

    def update(self, steps: int = 1) -> None:
        steps = check_int("steps", steps, min_value=0)
        self.count = min(self.total, self.count + steps)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.value = self.count
        else:
            sys.stderr.write(f"\r{self.description} {self.count}/{self.total}")
            sys.stderr.flush()

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.bar_style = "success" if exc[0] is None else "danger"
        elif self.enabled:
            sys.stderr.write("\n")
        return False
