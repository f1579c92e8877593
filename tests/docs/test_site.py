"""The docs site (mkdocs.yml) builds in strict mode, as `make docs` builds it: a broken link, a
missing anchor, a page left out of the nav or an included example file that is gone fails
`make test`.  The build takes a few seconds and needs no network.  The built site is then read
as the README says to read it, opened from the disk in Debian's Chromium: its search answers
(a search index fetched as JSON cannot load from file://), the home page's diagram fits its
box, and no option name of the CLI reference breaks across lines."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("docs") / "site"
    return out, build(REPO / "mkdocs.yml", out)


def test_the_site_builds_in_strict_mode(site):
    out, done = site
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (out / "index.html").is_file()


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The same settings over a one-page site whose page links to a page that is not there."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# A page\n\nSee [the missing one](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(
        f"INHERIT: {REPO / 'mkdocs.yml'}\ndocs_dir: {tmp_path / 'docs'}\nnav:\n  - index.md\n")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "missing.md" in done.stderr, done.stderr


# -- the built site in a browser, opened from the disk --------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's, not a Playwright download
WINDOW = {"width": 1280, "height": 900}  # a laptop's window: the width the reader had


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright  # lazy: only these tests drive a browser

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def opened(browser, site, page_path: str):
    """A page of the built site, opened from the disk as the README says (file://)."""
    out, done = site
    assert done.returncode == 0, done.stderr
    page = browser.new_page(viewport=WINDOW)
    page.set_default_timeout(30_000)
    try:
        page.goto((out / page_path).as_uri())
        yield page
    finally:
        page.close()


def test_search_answers_in_a_site_opened_from_the_disk(browser, site):
    with opened(browser, site, "index.html") as page:
        page.fill("input.md-search__input", "snapshot")
        results = page.locator(".md-search-result__item")
        results.first.wait_for(state="visible")  # none ever came before: the index did not load from file://
        assert results.count() > 0
        assert "matching document" in page.locator(".md-search-result__meta").inner_text()


def test_the_home_page_diagrams_fit_their_box(browser, site):
    with opened(browser, site, "index.html") as page:
        blocks = page.evaluate("""() => [...document.querySelectorAll('article pre > code')]
            .map(c => ({text: c.innerText.split('\\n')[0], scroll: c.scrollWidth, width: c.clientWidth}))""")
        assert blocks, "the home page has no code block"
        cut = [b for b in blocks if b["scroll"] > b["width"]]
        assert not cut, f"cut at {WINDOW['width']} px (scrolled sideways): {cut}"


def test_the_cli_reference_reads_without_broken_names(browser, site):
    """Every option name in the options tables is on one line, and every option says what it does."""
    with opened(browser, site, "reference/cli.html") as page:
        broken = page.evaluate("""() => [...document.querySelectorAll('article table td:first-child code')]
            .filter(c => c.getClientRects().length > 1).map(c => c.innerText)""")
        assert not broken, f"option names broken across lines: {sorted(set(broken))}"
        rows = page.evaluate("""() => [...document.querySelectorAll('article table tr')]
            .filter(r => r.querySelector('td')).map(r => [...r.querySelectorAll('td')].map(td => td.innerText.trim()))""")
        assert rows and all(len(r) == 4 for r in rows)
        undescribed = sorted({r[0] for r in rows if not r[3]})
        assert not undescribed, f"options without a description: {undescribed}"
