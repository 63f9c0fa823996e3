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
# No widget JavaScript from a CDN: an explorer shows its initial figure and a note (see below).
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

# ------------------------------------------------------------------ explorers (FigureExplorer)
# An explorer's output holds the live widget view, its initial figure (image/png) and a one-line
# note (text/plain, course_lib.widgets._base.NOTE_TEXT); JupyterLab renders the widget. Pages here
# have no kernel: HTML builds rank the image before the widget view (MyST-NB's default ranks the
# widget view first, 10; plain widgets without an image still select it, which shows nothing without
# widget JavaScript), and the transform below shows an explorer's figure *and* its note.
nb_mime_priority_overrides = [("html", "image/png", 5)]

EXPLORER_NOTE_CLASS = "course-explorer-note"     # tools/check_site.py looks for it


def _explorer_figures(app):
    from docutils import nodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    from course_lib.widgets._base import NOTE_TEXT

    class ExplorerFigureAndNote(SphinxPostTransform):
        """Before MyST-NB picks one mime type (priority 4): an explorer's bundle (widget view,
        image/png, text/plain holding NOTE_TEXT) becomes its figure followed by its note."""

        default_priority = 3

        def run(self, **kwargs):
            for bundle in list(self.document.findall(nodes.container)):
                if bundle.get("nb_element") != "mime_bundle":
                    continue
                by_type = {child.get("mime_type"): child for child in bundle.children}
                if not {"image/png", "text/plain", "application/vnd.jupyter.widget-view+json"} <= set(by_type):
                    continue
                note = by_type["text/plain"].astext().strip()
                if NOTE_TEXT not in note:
                    continue
                figure = list(by_type["image/png"].children)
                for element in figure:              # alt text: the note, not the file's hash name
                    for image in element.findall(nodes.image):
                        image["alt"] = note
                paragraph = nodes.paragraph(classes=[EXPLORER_NOTE_CLASS])
                paragraph += nodes.emphasis(text=note)
                bundle.replace_self(figure + [paragraph])

    app.add_post_transform(ExplorerFigureAndNote)


def setup(app):
    _explorer_figures(app)
