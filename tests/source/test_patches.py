"""The mysql-replication patches are installed only on the release they were written for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.source import patches

CONSTRAINTS = Path(__file__).resolve().parents[2] / "constraints.txt"


def test_the_patches_are_written_for_the_pinned_release():
    pinned = re.search(r"^mysql-replication==(\S+)$", CONSTRAINTS.read_text(), re.M).group(1)
    assert patches.WRITTEN_FOR == pinned
    patches.check_version.__wrapped__()  # the installed one is the pinned one
    from importlib.metadata import version  # lazy: the reference the record is read against

    assert patches.version() == version("mysql-replication")


def test_another_release_is_refused_with_what_to_install(monkeypatch):
    monkeypatch.setattr(patches, "version", lambda: "1.1.0")
    with pytest.raises(CdcflowError) as e:
        patches.check_version.__wrapped__()
    text = str(e.value)
    assert "mysql-replication 1.1.0 is installed" in text and f"mysql-replication=={patches.WRITTEN_FOR}" in text
