"""Check a built course website (`make site` runs this on build/site): offline and complete.

- every lesson (notebooks/NN_*.py) and exercise (exercises/NN_*.py) has its page;
- every lesson page shows figures: at least one image, and each explorer as its figure followed
  by the note saying where it is interactive;
- every image, script, stylesheet, frame or media source is a file inside the site that exists and
  is not empty: no ``http(s)://`` or ``//host`` source anywhere (plain hyperlinks may leave the site),
  and no ``url(http...)`` in the site's CSS;
- every internal hyperlink resolves to a file of the site;
- MathJax is the vendored copy, and search is built (search.html, searchindex.js naming every lesson);
- the catalog and models pages list every accelerator (with its source) and every model.

    python tools/check_site.py [build/site]

Prints one line per problem and exits 1 if there is any; takes a second or two.
"""

from __future__ import annotations

import html
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Attributes that make the browser fetch something (a hyperlink, <a href>, does not).
FETCHING = {("img", "src"), ("img", "srcset"), ("script", "src"), ("link", "href"), ("iframe", "src"),
            ("source", "src"), ("source", "srcset"), ("video", "src"), ("video", "poster"),
            ("audio", "src"), ("embed", "src"), ("object", "data"), ("input", "src"), ("track", "src")}
EXPLORER_NOTE = "course-explorer-note"
CSS_URL = re.compile(r"url\(\s*['\"]?\s*((?:https?:)?//[^)'\"]+)", re.IGNORECASE)


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.fetches: list[tuple[str, str, str]] = []    # (tag, attribute, value)
        self.links: list[str] = []
        self.events: list[str] = []                       # "img" and "note", in page order
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for (t, a) in FETCHING:
            if t == tag and attrs.get(a):
                if tag == "link" and not ({"stylesheet", "icon", "preload", "prefetch", "modulepreload",
                                           "manifest", "shortcut icon"} & set((attrs.get("rel") or "").split())):
                    continue     # <link rel="next"/"index"/"search">: navigation, fetched only when followed
                if a == "srcset":
                    for part in attrs[a].split(","):
                        if part.strip():
                            self.fetches.append((tag, a, part.split()[0]))
                else:
                    self.fetches.append((tag, a, attrs[a]))
        if tag == "img" and attrs.get("src"):
            self.events.append("img")
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if EXPLORER_NOTE in (attrs.get("class") or "").split():
            self.events.append("note")

    def handle_data(self, data):
        self.text.append(data)


def _plain(text: str) -> str:
    """Text as compared: whitespace collapsed, Sphinx's smart quotes and dashes undone."""
    table = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                           "\u2014": "-", "\u2026": "..."})
    return " ".join(html.unescape(text).translate(table).replace("---", "-").replace("--", "-").split())


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def _external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme and parts.scheme not in ("data",) or url.startswith("//"))


def _target(site: Path, page: Path, url: str) -> Path | None:
    """The file an internal URL points at (None for anchors-only, data: or mailto:)."""
    parts = urlsplit(url)
    if parts.scheme or not parts.path:
        return None
    base = site if parts.path.startswith("/") else page.parent
    target = (base / unquote(parts.path.lstrip("/"))).resolve()
    if target.is_dir():
        target = target / "index.html"
    return target


def check(site: Path) -> list[str]:
    problems: list[str] = []
    if not (site / "index.html").is_file():
        return [f"{site}: no index.html (was the site built?)"]
    site = site.resolve()

    # --- every HTML page: offline sources, internal links
    pages = {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site)
        if rel.parts[0] in ("_static", "_sources"):
            continue
        page = pages[rel.as_posix()] = _parse(path)
        for tag, attr, url in page.fetches:
            if _external(url):
                problems.append(f"{rel}: <{tag} {attr}> fetches from outside the site: {url}")
                continue
            target = _target(site, path, url)
            if target is None:
                continue
            if not target.is_file():
                problems.append(f"{rel}: <{tag} {attr}={url!r}> is missing from the site")
            elif target.stat().st_size == 0:
                problems.append(f"{rel}: <{tag} {attr}={url!r}> is an empty file")
        for url in page.links:
            if _external(url) or url.startswith(("mailto:", "javascript:")):
                continue
            target = _target(site, path, url)
            if target is not None and not target.exists():
                problems.append(f"{rel}: link {url!r} leads nowhere in the site")
    for css in site.rglob("*.css"):
        for match in CSS_URL.finditer(css.read_text(encoding="utf-8", errors="replace")):
            problems.append(f"{css.relative_to(site)}: url() fetches from outside the site: {match.group(1)}")

    # --- lessons and exercises
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    exercises = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.py"))
    if not lessons:
        problems.append("no lessons found under notebooks/")
    for folder, sources in (("notebooks", lessons), ("exercises", exercises)):
        for source in sources:
            key = f"{folder}/{source.stem}.html"
            if key not in pages:
                problems.append(f"{key}: page missing")
    for source in lessons:
        key = f"notebooks/{source.stem}.html"
        page = pages.get(key)
        if page is None:
            continue
        images = page.events.count("img")
        if images == 0:
            problems.append(f"{key}: shows no figure")
        if "MathJax" not in (site / key).read_text(encoding="utf-8") and "mathjax" not in str(page.fetches):
            problems.append(f"{key}: does not load MathJax")
        notes = [i for i, event in enumerate(page.events) if event == "note"]
        if "explorer(" in source.read_text(encoding="utf-8") and not notes:
            problems.append(f"{key}: the lesson builds an explorer but the page shows none as a figure")
        for i in notes:
            if i == 0 or page.events[i - 1] != "img":
                problems.append(f"{key}: an explorer note without its figure before it")
    if not (site / "_static" / "mathjax" / "tex-mml-chtml.js").is_file():
        problems.append("_static/mathjax/tex-mml-chtml.js: vendored MathJax missing")

    # --- search
    index = site / "searchindex.js"
    if not (site / "search.html").is_file():
        problems.append("search.html missing")
    if not index.is_file() or index.stat().st_size < 1000:
        problems.append("searchindex.js missing or empty")
    else:
        text = index.read_text(encoding="utf-8")
        for source in lessons:
            if f"notebooks/{source.stem}" not in text:
                problems.append(f"searchindex.js does not index notebooks/{source.stem}")

    # --- data pages
    from course_lib.economics import get_model, list_models
    from course_lib.hardware import get_accelerator, list_accelerators

    for key, names, source_of in (
            ("catalog.html", list_accelerators(), lambda n: get_accelerator(n).source),
            ("models.html", list_models(), lambda n: get_model(n).source)):
        page = pages.get(key)
        if page is None:
            problems.append(f"{key}: page missing")
            continue
        text = _plain(" ".join(page.text))
        for name in names:
            if name not in text:
                problems.append(f"{key}: {name} missing")
            elif _plain(source_of(name)) not in text:
                problems.append(f"{key}: the source of {name} is missing")
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    site = Path(argv[0]) if argv else ROOT / "build" / "site"
    problems = check(site)
    for problem in problems:
        print(f"check_site: {problem}")
    n_pages = len(list(site.rglob("*.html")))
    print(f"check_site: {site}: {n_pages} HTML files, "
          + ("all checks passed" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
