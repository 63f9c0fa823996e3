"""Sphinx configuration of the course website (`make site`). Sources are assembled into
build/site-src by tools/build_site.py; this file is copied there. Nothing is fetched: MathJax is
vendored from the npm package at build time, ipywidgets' JavaScript is not loaded."""

import os

project = "How GPUs execute machine learning"
author = "The course authors"
extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
myst_enable_extensions = ["dollarmath", "amsmath"]
# Exercise pages go from the title (H1) to numbered exercises (H3) on purpose.
suppress_warnings = ["myst.header"]

# Every lesson is executed on every build; the exercises are shown as stubs (they raise by design).
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_excludepatterns = ["exercises/*"]
nb_merge_streams = True
# No widget JavaScript from a CDN: an explorer shows its text fallback and a note to open the lesson.
nb_ipywidgets_js = {}

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_extra_path = ["_extra"]
# MathJax from the copy under _static/mathjax (npm package `mathjax`, copied at build time).
mathjax_path = "mathjax/tex-mml-chtml.js"
html_theme_options = {
    "repository_url": f"https://github.com/{os.environ.get('COURSE_REPO', 'OWNER/REPO')}",
    "use_repository_button": False,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
html_last_updated_fmt = None
