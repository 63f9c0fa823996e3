"""Progress for long measurements, from tqdm: a widget in a notebook, a text bar elsewhere.

    with progress_bar(len(sizes), "bandwidth") as bar:
        for size in sizes:
            ...
            bar.update()

``tqdm.auto`` picks the display: an ipywidgets bar in Jupyter, a text line on stderr in a
terminal. Either shows the count, the rate and the time left.
"""

from __future__ import annotations

from .._validate import check_bool, check_int

__all__ = ["progress_bar"]

#: More steps than any of the course's measurements takes; a larger total is a mistake.
MAX_STEPS = 10 ** 6


def progress_bar(total: int, description: str = "", enabled: bool = True):
    """A ``tqdm.auto.tqdm`` bar over ``total`` steps (a context manager with ``update()``).

    With ``enabled=False`` it shows nothing and costs nothing.
    """
    from tqdm.auto import tqdm

    total = check_int("total", total, min_value=0, max_value=MAX_STEPS)
    enabled = check_bool("progress", enabled)      # every caller passes its own `progress` argument
    if not isinstance(description, str):
        raise TypeError(f"description must be a string, got {type(description).__name__} {description!r}")
    return tqdm(total=total, desc=description, disable=not enabled, unit="step", leave=True,
                mininterval=0.2)
