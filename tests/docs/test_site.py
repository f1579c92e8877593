"""The docs site (mkdocs.yml) builds in strict mode, as `make docs` builds it: a broken link, a
missing anchor, a page left out of the nav or an included example file that is gone fails
`make test`.  The build takes a few seconds and needs no network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_site_builds_in_strict_mode(tmp_path):
    done = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The same settings over a one-page site whose page links to a page that is not there."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# A page\n\nSee [the missing one](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(
        f"INHERIT: {REPO / 'mkdocs.yml'}\ndocs_dir: {tmp_path / 'docs'}\nnav:\n  - index.md\n")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "missing.md" in done.stderr, done.stderr
