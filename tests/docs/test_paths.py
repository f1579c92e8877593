"""Every repository path the docs name exists: README.md and every page under docs/.  A page that
names a file which was renamed or removed (`stages/filter.py` for `stages/filter_stage.py`) fails
here, so the docs cannot drift from the tree the way a lab notebook does."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A path as the docs write one: folders and a file with an extension of the repository's, or a
# folder of the repository's ending in '/'.  Names with a placeholder (`changefeeds/<id>.json`)
# and URLs are no paths of this tree.
_PATH = re.compile(r"(?<![\w/.<>:-])((?:[\w.-]+/)*[\w-]+\.(?:py|md|toml|yaml|yml|txt|json|sh|cfg|ini))(?![\w/<>-])")
_FOLDER = re.compile(r"`((?:include|tests|docs|plugins|dags|jobs)(?:/[\w.-]+)*/)`")
# Where a short path is relative to: the repository, the library, the development tools, the plugins.
_ROOTS = ("", "include/", "include/cdcflow/", "plugins/", "plugins/cdcflow_airflow/", "tests/", "docs/")
# Files of other projects or of a deployment, named for what they are, not of this tree.
_ELSEWHERE = {"errors.toml", "airflow.cfg", "results.json", "metadata.db", "connections.json",
              "demo-changefeed.toml", "changefeed.toml", "shop.toml", "dag.py", "large-txn-1000000.json"}
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()


def docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def named_paths(text: str) -> set[str]:
    """The paths a doc names in its text (Markdown links aside: see broken_links)."""
    text = _LINK.sub("]", re.sub(r"https?://\S+", "", text))
    return set(_PATH.findall(text)) | set(_FOLDER.findall(text))


def broken_links(doc: Path) -> set[str]:
    """A doc's relative Markdown links whose file is not there (the site's strict build checks the
    pages' links too; README's are checked only here)."""
    return {t for t in _LINK.findall(doc.read_text()) if "://" not in t and not (doc.parent / t).exists()}


def missing(names: set[str], files: list[str]) -> set[str]:
    have = set(files) | {str(Path(f).parent) + "/" for f in files} | {
        "/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/") + 1)}
    basenames = {Path(f).name for f in files}
    gone = set()
    for name in names:
        if name in _ELSEWHERE or Path(name).name in _ELSEWHERE and "/" not in name:
            continue
        if "/" not in name:
            if name not in basenames:
                gone.add(name)
        elif not any(root + name in have for root in _ROOTS):
            gone.add(name)
    return gone


def test_every_path_a_doc_names_exists():
    files = tracked()
    gone = {f"{doc.relative_to(REPO)}: {name}" for doc in docs()
            for name in missing(named_paths(doc.read_text()), files) | broken_links(doc)}
    assert not gone, "paths named in the docs that are not in the repository:\n" + "\n".join(sorted(gone))


def test_a_path_that_is_gone_is_found(tmp_path):
    files = tracked()
    text = "read by `binlog_table_maps.py` and `stages/filter.py`, written by `stages/filter_stage.py` and `sink/compaction.py`"
    assert missing(named_paths(text), files) == {"binlog_table_maps.py", "stages/filter.py"}
    (tmp_path / "docs").symlink_to(REPO / "docs")
    readme = tmp_path / "README.md"
    readme.write_text("[the guide](docs/guides/cli.md), [gone](docs/guides/nothing.md#x), [web](https://x.org/a.md)")
    assert broken_links(readme) == {"docs/guides/nothing.md"}
