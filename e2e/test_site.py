"""The built course website (``make site`` -> build/site) in Debian's Chromium, offline.

The site is served from loopback by ``http.server`` (a thread, a free port). Every HTML page is
opened with every request to another host aborted, and the test checks what a reader gets:

- no request failed (and none tried to leave the site: the site works offline);
- every ``<img>`` loaded (``naturalWidth > 0``);
- MathJax typeset the math on lesson 04 (``mjx-container`` elements are present);
- every internal hyperlink points to a file of the site;
- the search page lists lesson 04 for the query "roofline".

Screenshots of the index, lesson 04 and the catalog go to ``build/e2e/site_*.png``.

When build/site is missing the test is skipped (run ``make site`` first), unless
``COURSE_E2E_REQUIRED`` is set (``.ci/run`` sets it), in which case it fails.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from _course import BUILD_DIR, REPO

# A site built elsewhere can be tested with COURSE_E2E_SITE=<dir>.
SITE = Path(os.environ.get("COURSE_E2E_SITE", str(REPO / "build" / "site"))).resolve()
LESSON_04 = "notebooks/04_roofline.html"
SCREENSHOTS = {"index": "index.html", "lesson04": LESSON_04, "catalog": "catalog.html"}
PAGE_TIMEOUT_S = 30
MATHJAX_TIMEOUT_S = 30
SEARCH_TIMEOUT_S = 20


def _pages() -> list[str]:
    """Every HTML page of the site, relative to it; Sphinx's template fragments in _static/ are not pages."""
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                  if "_static" not in p.relative_to(SITE).parts)


@pytest.fixture(scope="module")
def site_url():
    """Serve build/site on a free loopback port for the module; skip (or fail) when it is not built."""
    if not (SITE / "index.html").exists():
        reason = f"{SITE} not built (run: make site)"
        if os.environ.get("COURSE_E2E_REQUIRED"):
            pytest.fail(f"site test required but cannot run: {reason}", pytrace=False)
        pytest.skip(f"site test skipped: {reason}")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def site_context(browser, site_url):
    """One browser context for the site: requests to other hosts are aborted and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    context.left_site, context.failed = [], []

    def route(r):
        if r.request.url.startswith(site_url + "/") or r.request.url == site_url:
            r.continue_()
        else:
            context.left_site.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    context.on("requestfailed", lambda req: context.failed.append(f"{req.url} ({req.failure})"))
    context.on("response", lambda resp: context.failed.append(f"{resp.url} (HTTP {resp.status})")
               if resp.status >= 400 else None)
    try:
        yield context
    finally:
        context.close()


# Loads every <img> (also lazy ones) and reports the ones that show nothing.
BROKEN_IMAGES_JS = """async () => {
  const imgs = [...document.images];
  for (const img of imgs) img.loading = "eager";
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done); img.addEventListener("error", done); setTimeout(done, 10000);
  })));
  return imgs.filter(img => !(img.naturalWidth > 0)).map(img => img.currentSrc || img.src || img.outerHTML);
}"""

INTERNAL_LINKS_JS = """(base) => [...document.querySelectorAll("a[href]")]
  .map(a => a.href).filter(href => href.startsWith(base + "/"))"""


def _target_exists(url: str) -> bool:
    path = unquote(urlsplit(url).path)
    target = SITE / path.lstrip("/")
    if path.endswith("/"):
        target = target / "index.html"
    return target.is_file()


def test_site_offline(site_context, site_url):
    problems: list[str] = []
    pages = _pages()
    assert "index.html" in pages and LESSON_04 in pages, f"pages found: {pages}"
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    page = site_context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    links: dict[str, set[str]] = {}
    for rel in pages:
        site_context.failed.clear()
        site_context.left_site.clear()
        page.errors.clear()
        page.goto(f"{site_url}/{rel}", wait_until="load", timeout=PAGE_TIMEOUT_S * 1000)
        broken = page.evaluate(BROKEN_IMAGES_JS)
        if rel == LESSON_04:
            try:
                page.wait_for_selector("mjx-container", state="attached", timeout=MATHJAX_TIMEOUT_S * 1000)
            except Exception:
                problems.append(f"{rel}: MathJax rendered no math (no mjx-container)")
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_S * 1000)
        problems += [f"{rel}: image did not load: {src}" for src in broken]
        problems += [f"{rel}: failed request: {f}" for f in site_context.failed]
        problems += [f"{rel}: request left the site (aborted): {u}" for u in site_context.left_site]
        problems += [f"{rel}: page error: {e}" for e in page.errors]
        for href in page.evaluate(INTERNAL_LINKS_JS, site_url):
            links.setdefault(href.split("#")[0].split("?")[0], set()).add(rel)
        for name, shot in SCREENSHOTS.items():
            if shot == rel:
                page.screenshot(path=str(BUILD_DIR / f"site_{name}.png"))
    for href, sources in sorted(links.items()):
        if not _target_exists(href):
            problems.append(f"link to a missing page {href[len(site_url):]} from {sorted(sources)}")
    page.close()
    if problems:
        pytest.fail(f"{len(problems)} problem(s) on the site:\n" + "\n".join(problems), pytrace=False)


def test_search_finds_roofline(site_context, site_url):
    page = site_context.new_page()
    try:
        site_context.failed.clear()
        page.goto(f"{site_url}/search.html?q=roofline", wait_until="load")
        page.wait_for_selector("#search-results li a", timeout=SEARCH_TIMEOUT_S * 1000)
        hrefs = page.eval_on_selector_all("#search-results li a", "els => els.map(a => a.href)")
        assert any(urlsplit(h).path.endswith("/" + LESSON_04) for h in hrefs), \
            f"search for 'roofline' does not list {LESSON_04}: {hrefs}"
        assert not site_context.failed, f"failed requests on the search page: {site_context.failed}"
    finally:
        page.close()
